"""Weisfeiler-Lehman subtree kernel on directed node-labelled graphs (NAS-BOWL, paper 002).

Eq. (3.1) of paper 002 with equal weights ``w_h = 1`` (its App. A, following Shervashidze et
al.)::

    k_WL^H(G, G') = sum_{h=0..H} k_base(phi_h(G), phi_h(G'))

``phi_h(G)`` counts the WL labels of iteration ``h`` (Algorithm 2 of paper 002): at ``h = 0`` the
node operations, at ``h`` the label of iteration ``h - 1`` followed by the sorted multiset of the
neighbours' labels of iteration ``h - 1``. The kernel runs on :meth:`Architecture.reduced`
(``none`` removed, ``skip_connect`` bypassed, dead nodes pruned), so cells whose reduced graphs
are isomorphic get identical features. Parallel edges (the multiplicity the reduction keeps,
``x + x``) count once per copy in a node's multiset of neighbour labels, so from ``h = 1`` on the
all-``skip_connect`` NB201 cell (``output <- (input, input, input, input)``) and the direct skip
(``output <- (input)``) have different features; at ``h = 0`` they look alike.

Relabelling direction
---------------------
Algorithm 2 says "neighbours"; NAS-BOWL's code uses out-neighbours only. All three are offered
(``direction="out"``, ``"in"``, ``"both"``: in- and out-neighbours as two separate multisets).
The default is **out-neighbours**, chosen by measurement: with the surrogate benchmark of paper
002 §5.1 on the shared NB201 test-accuracy table (50 train / 400 test, 20 splits, seed 0,
log-error targets, ML-II; ``python -m nasviz bench surrogate --kernel wl:direction=...``) the
Spearman correlations were out 0.867 / 0.855, both 0.868 / 0.851, in 0.848 / 0.852 (cifar10 /
cifar100, standard errors 0.006-0.015). Direction is kept either way (paper 002 §5.1 shows that
undirected variants lose accuracy). With ``"out"`` a depth-1 feature reads as an operation and
what consumes it, e.g. ``nor_conv_3x3 -> (nor_conv_1x1, output)``; with ``"in"`` as an operation
and what feeds it, ``nor_conv_3x3 <- (input)``.

Labels are human-readable strings, not hashes: the string is itself the (injective) compression
of Algorithm 2 line 8, nested like ``nor_conv_3x3 <- (avg_pool_3x3 <- (input), input)``. Nodes
with no neighbour in the chosen direction (the input for ``"in"``) keep their bare label. The
vocabulary of each depth is global to the kernel instance and grows as new architectures arrive;
old feature columns never move, and each architecture's sparse counts are cached.

Base kernels (``base``): ``"dot"``, the dot product of count vectors; ``"oa"``, the
optimal-assignment / histogram-intersection kernel ``sum_f min(a_f, b_f)`` (Kriege et al.,
paper 002 App. C), computed without pairwise loops as ``sum_{t>=1} [a >= t] . [b >= t]`` (counts
are non-negative integers, and ``min(a, b) = #{t >= 1: a >= t and b >= t}``), i.e. a few sparse
indicator-matrix products.

Components: ``"h0" .. "hH"``, where ``"hk"`` is the kernel with features of iterations ``0..k``
(Eq. 3.1 with ``H = k``), cosine-normalised when ``normalize=True`` (``k(a,b) / sqrt(k(a,a)
k(b,b))`` on the concatenated feature vector, so every architecture has unit prior variance).
The single hyperparameter ``h`` is discrete in ``0..H``; :meth:`combine` picks the component, and
the GP chooses ``h`` by comparing optimised marginal likelihoods (paper 002 §3.1).
"""

from __future__ import annotations

from collections import Counter
from typing import Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from nasviz.arch import Architecture
from nasviz.kernels.base import Components, Hyperparameter, Kernel, PreparedRows, feature_distances, unique_reduced

BASES = ("dot", "oa")
DIRECTIONS = ("out", "in", "both")


def wl_labels(arch: Architecture, h_max: int, direction: str = "out") -> list[list[str]]:
    """WL labels of every node for iterations ``0..h_max`` (Algorithm 2 of paper 002, lines 5-9).

    Runs on ``arch`` as given (callers pass ``arch.reduced()``). Returns ``labels[h][v]``, a list
    of ``h_max + 1`` lists of ``n_nodes`` strings.

    Algorithm 2 sets ``l_h(v) = f(l_{h-1}(v), sorted {l_{h-1}(u) : u in N(v)})``. We write the
    equivalent *unfolding tree*: the node's operation followed by the sorted labels of iteration
    ``h - 1`` of its neighbours (``"<-"`` in-neighbours, ``"->"`` out-neighbours), e.g.
    ``"output <- (nor_conv_3x3 <- (input), input)"`` at ``h = 2``. It is injective in the same
    sense (``l_{h-1}(v)`` is the truncation of this tree), so the counts and kernel are those of
    Algorithm 2, and the names stay short enough to show. A node with no neighbour in the chosen
    direction keeps its bare operation.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    pred, succ = arch.predecessors(), arch.successors()
    current = list(arch.labels)
    out = [current]
    for _ in range(h_max):
        new = []
        for v in range(arch.n_nodes):
            name = arch.labels[v]
            if direction in ("in", "both") and pred[v]:
                name += " <- (" + ", ".join(sorted(current[u] for u in pred[v])) + ")"
            if direction in ("out", "both") and succ[v]:
                name += " -> (" + ", ".join(sorted(current[u] for u in succ[v])) + ")"
            new.append(name)
        current = new
        out.append(current)
    return out


class WLKernel(Kernel):
    """Weisfeiler-Lehman subtree kernel (paper 002 Eq. 3.1, Algorithm 2).

    Parameters
    ----------
    h_max : int
        Largest WL iteration ``H`` (the GP picks ``h`` in ``0..H``). NAS-BOWL finds ``H <= 2``
        enough for NAS-Bench cells.
    base : {"dot", "oa"}
        Base kernel on the count vectors: dot product or optimal assignment (sum of minima).
    normalize : bool
        Cosine-normalise the kernel of each depth (unit diagonal).
    direction : {"out", "in", "both"}
        Neighbours used in relabelling (see the module docstring for why ``"out"`` is default).
    """

    name = "wl"
    positive_definite = True

    def __init__(self, h_max: int = 2, base: str = "dot", normalize: bool = True, direction: str = "out") -> None:
        if not isinstance(h_max, (int, np.integer)) or isinstance(h_max, bool) or h_max < 0:
            raise ValueError(f"h_max must be a non-negative integer, got {h_max!r}")
        if base not in BASES:
            raise ValueError(f"base must be one of {', '.join(BASES)}, got {base!r}")
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
        self.h_max = int(h_max)
        self.base = base
        self.normalize = bool(normalize)
        self.direction = direction
        #: per depth: feature name -> column index (grows, columns never move)
        self._vocab: list[dict[str, int]] = [{} for _ in range(self.h_max + 1)]
        self._names: list[list[str]] = [[] for _ in range(self.h_max + 1)]
        #: reduced architecture -> per depth (column indices, counts)
        self._counts: dict[Architecture, list[tuple[np.ndarray, np.ndarray]]] = {}

    # ------------------------------------------------------------------ protocol
    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        return [
            Hyperparameter(
                "h", float(self.h_max), (0.0, float(self.h_max)), log_scale=False,
                discrete=tuple(float(h) for h in range(self.h_max + 1)),
            )
        ]

    def component_names(self) -> list[str]:
        return [f"h{h}" for h in range(self.h_max + 1)]

    def components(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        """``{"h0": K_0, ..., "hH": K_H}``, each ``(len(a), len(b))``.

        ``K_k`` is Eq. (3.1) with ``H = k`` (features of iterations ``0..k``), normalised to unit
        diagonal when ``normalize`` is set.
        """
        same = archs_b is archs_a
        rows_a = self._rows(archs_a)
        rows_b = rows_a if same else self._rows(archs_b)
        out: Components = {}
        cum = np.zeros((len(archs_a), len(archs_b)))
        diag_a = np.zeros(len(archs_a))
        diag_b = np.zeros(len(archs_b))
        for h in range(self.h_max + 1):
            A = self._matrix(rows_a, h)
            B = A if same else self._matrix(rows_b, h)
            cum = cum + self._base_gram(A, B)
            diag_a = diag_a + self._base_diag(A)
            diag_b = diag_a if same else diag_b + self._base_diag(B)
            out[f"h{h}"] = self._normalised(cum, diag_a, diag_b)
        return out

    def combine(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> np.ndarray:
        """The kernel of depth ``h = theta[0]`` (an integer in ``0..H``): ``components["h<h>"]``."""
        h = self._depth(theta)
        return np.asarray(components[f"h{h}"])

    def combine_with_gradients(
        self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """``h`` is discrete: its gradient is reported as zeros (the GP compares likelihoods)."""
        K = self.combine(components, theta)
        return K, [np.zeros_like(K)]

    def distances(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        """Feature-space distance ``sqrt(k(a,a) + k(b,b) - 2 k(a,b))`` for each depth component."""
        comps = self.components(archs_a, archs_b)
        diag_a = self.diagonal_components(archs_a)
        diag_b = self.diagonal_components(archs_b)
        return {name: feature_distances(K, diag_a[name], diag_b[name]) for name, K in comps.items()}

    def prepare_rows(self, archs: Sequence[Architecture]) -> PreparedRows:
        """One row per distinct reduced graph of ``archs``: its count matrix of each depth
        (widened with zero columns as the vocabulary grows) and its cumulative base-kernel
        diagonal per depth, computed once."""
        archs = tuple(archs)
        graphs, index = unique_reduced(archs)
        rows = self._rows(graphs)
        mats = [self._matrix(rows, h) for h in range(self.h_max + 1)]
        diags = np.cumsum([self._base_diag(M) for M in mats], axis=0) if graphs else np.zeros((self.h_max + 1, 0))
        return PreparedRows(archs, index, len(graphs), {"mats": mats, "diags": diags})

    def components_prepared(self, rows: PreparedRows, archs_b: Sequence[Architecture]) -> Components:
        """:meth:`components` of the prepared rows against ``archs_b``, ``(rows.n_rows, len(b))`` each."""
        rows_b = self._rows(archs_b)  # first: new features enter the vocabulary
        mats, diags = rows.data["mats"], rows.data["diags"]
        out: Components = {}
        cum = np.zeros((rows.n_rows, len(archs_b)))
        diag_b = np.zeros(len(archs_b))
        for h in range(self.h_max + 1):
            width = len(self._names[h])
            A = mats[h]
            if A.shape[1] < width:  # features first seen after preparing: zero counts in every row
                A = mats[h] = sp.csr_matrix((A.data, A.indices, A.indptr), shape=(A.shape[0], width))
            B = self._matrix(rows_b, h)
            cum = cum + self._base_gram(A, B)
            diag_b = diag_b + self._base_diag(B)
            out[f"h{h}"] = self._normalised(cum, diags[h], diag_b)
        return out

    def diagonal_components(self, archs: Sequence[Architecture]) -> dict[str, np.ndarray]:
        """``k(a, a)`` of each component, shape ``(len(archs),)`` each (cheap: no ``m x m`` matrix)."""
        rows = self._rows(archs)
        out, diag = {}, np.zeros(len(archs))
        for h in range(self.h_max + 1):
            diag = diag + self._base_diag(self._matrix(rows, h))
            out[f"h{h}"] = np.where(diag > 0, 1.0, 0.0) if self.normalize else diag.copy()
        return out

    # ------------------------------------------------------------------ explicit features
    def features(self, archs: Sequence[Architecture], h: int | None = None) -> tuple[sp.csr_matrix, list[str], np.ndarray]:
        """Explicit WL feature vectors of iterations ``0..h`` (default ``H``), concatenated.

        Returns
        -------
        phi : scipy.sparse.csr_matrix, shape (len(archs), F)
            Counts (unnormalised) of each feature in each architecture.
        names : list of str, length F
            Human-readable name of each column (the WL label, e.g. ``"nor_conv_3x3"`` at
            depth 0, ``"nor_conv_3x3 <- (input, nor_conv_1x1)"`` at depth 1).
        depths : ndarray of int, shape (F,)
            The WL iteration each column belongs to.
        """
        h = self.h_max if h is None else int(h)
        if not 0 <= h <= self.h_max:
            raise ValueError(f"h must be in 0..{self.h_max}, got {h}")
        rows = self._rows(archs)
        mats = [self._matrix(rows, d) for d in range(h + 1)]
        names = [name for d in range(h + 1) for name in self._names[d][: mats[d].shape[1]]]
        depths = np.concatenate([np.full(mats[d].shape[1], d, dtype=int) for d in range(h + 1)])
        return sp.hstack(mats, format="csr"), names, depths

    def vocabulary_size(self) -> list[int]:
        """Number of distinct features seen so far at each depth."""
        return [len(v) for v in self._vocab]

    # ------------------------------------------------------------------ internals
    def _depth(self, theta: Sequence[float] | None) -> int:
        if theta is None:
            return self.h_max
        value = float(np.asarray(theta, dtype=float).reshape(-1)[0])
        h = int(round(value))
        if abs(value - h) > 1e-9 or not 0 <= h <= self.h_max:
            raise ValueError(f"WL depth h must be an integer in 0..{self.h_max}, got {value}")
        return h

    def _rows(self, archs: Sequence[Architecture]) -> list[list[tuple[np.ndarray, np.ndarray]]]:
        rows = []
        for i, arch in enumerate(archs):
            if not isinstance(arch, Architecture):
                raise ValueError(f"archs[{i}] is a {type(arch).__name__}, not an Architecture")
            key = arch.reduced()
            cached = self._counts.get(key)
            if cached is None:
                cached = self._extract(key)
                self._counts[key] = cached
            rows.append(cached)
        return rows

    def _extract(self, arch: Architecture) -> list[tuple[np.ndarray, np.ndarray]]:
        per_depth = []
        for h, labels in enumerate(wl_labels(arch, self.h_max, self.direction)):
            vocab, names = self._vocab[h], self._names[h]
            counts = Counter(labels)
            cols = np.empty(len(counts), dtype=np.int64)
            vals = np.empty(len(counts), dtype=float)
            for j, (name, c) in enumerate(counts.items()):
                idx = vocab.get(name)
                if idx is None:
                    idx = vocab[name] = len(names)
                    names.append(name)
                cols[j], vals[j] = idx, c
            per_depth.append((cols, vals))
        return per_depth

    def _matrix(self, rows: list[list[tuple[np.ndarray, np.ndarray]]], h: int) -> sp.csr_matrix:
        n_cols = len(self._names[h])
        if not rows:
            return sp.csr_matrix((0, n_cols))
        cols = np.concatenate([r[h][0] for r in rows])
        vals = np.concatenate([r[h][1] for r in rows])
        indptr = np.concatenate([[0], np.cumsum([len(r[h][0]) for r in rows])])
        return sp.csr_matrix((vals, cols, indptr), shape=(len(rows), n_cols))

    def _base_gram(self, A: sp.csr_matrix, B: sp.csr_matrix) -> np.ndarray:
        # Both sides are built after all their features entered the vocabulary: same width.
        assert A.shape[1] == B.shape[1]
        if self.base == "dot":
            return np.asarray((A @ B.T).toarray())
        # Optimal assignment: sum_f min(a_f, b_f) = sum_{t >= 1} [a >= t] . [b >= t].
        top = int(min(A.max() if A.nnz else 0, B.max() if B.nnz else 0))
        G = np.zeros((A.shape[0], B.shape[0]))
        for t in range(1, top + 1):
            At = (A >= t).astype(float)
            Bt = At if B is A else (B >= t).astype(float)
            G += np.asarray((At @ Bt.T).toarray())
        return G

    def _base_diag(self, A: sp.csr_matrix) -> np.ndarray:
        if self.base == "dot":
            return np.asarray(A.multiply(A).sum(axis=1)).ravel()
        return np.asarray(A.sum(axis=1)).ravel()

    def _normalised(self, K: np.ndarray, diag_a: np.ndarray, diag_b: np.ndarray) -> np.ndarray:
        if not self.normalize:
            return K.copy()
        # Every reduced graph has at least its input and output node, so diagonals are > 0.
        return K / np.sqrt(np.outer(diag_a, diag_b))
