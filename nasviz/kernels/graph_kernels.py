"""Graph-kernel baselines of NAS-BOWL Table 1 (paper 002 §5.1), computed by GraKeL.

Paper 002 compares its WL kernel with three other graph kernels used as GP covariances: random
walk (RW), shortest path (SP) and the multiscale Laplacian (MLP; Kondor & Pan 2016, called
``mlg`` here so that it is not mistaken for the MLP layer space). This module adapts GraKeL's
``fit`` / ``transform`` kernels to nasviz's :class:`~nasviz.kernels.base.Kernel` protocol
(components computed once, combined per likelihood step). What GraKeL sees:

* the graph is :meth:`Architecture.reduced` (zero operations removed, identities bypassed) with
  each node labelled by its operation (``input`` / ``output`` included) and given to GraKeL as an
  adjacency matrix;
* **RW** (:class:`RandomWalkKernel`, GraKeL ``RandomWalkLabeled``): *directed*. The geometric
  random-walk kernel on the direct product graph, ``k(G, G') = 1^T (I - lamda W_x)^{-1} 1``, with
  ``W_x`` linking ``(u, u') -> (v, v')`` when ``u -> v`` and ``u' -> v'`` are edges whose end labels
  agree (GraKeL's labelled product; walks of length 0 count every node pair). Computed exactly
  (GraKeL's ``baseline`` method: the inverse of the product matrix); the ``fast`` conjugate-gradient
  variant returned NaN for ``lamda = 1`` on NAS-Bench-101 cells. Architectures are DAGs, so ``W_x``
  is nilpotent and the series is finite for every ``lamda`` (GraKeL's divergence guard never
  fires). Parallel edges count once per copy (adjacency weights);
* **SP** (:class:`ShortestPathKernel`, GraKeL ``ShortestPath(with_labels=True)``): *directed*.
  The dot product of counts of ``(label(u), label(v), d(u, v))`` over node pairs joined by a
  directed shortest path (unreachable pairs do not count); parallel edges count once;
* **MLP** (:class:`MultiscaleLaplacianKernel`, GraKeL ``MultiscaleLaplacian``, the fast version
  with sampled vertices): *undirected* (the Laplacian needs a symmetric adjacency; paper 002
  §5.1 notes that this conversion is what costs MLP its accuracy), node features one-hot over
  the labels seen when the kernel was fitted (a label first seen later gets the zero vector).
  NAS-BOWL's code fed the label's integer index as a one-dimensional feature instead;
  ``features="index"`` does that.

Every kernel is cosine-normalised, ``k(a, b) / sqrt(k(a, a) k(b, b))`` (unit prior variance, as
NAS-BOWL normalises), and has no hyperparameter of its own: the GP learns only its amplitude and
noise. RW and SP are pairwise quantities: raw values are cached per pair of reduced graphs, so a
growing training set computes only its new pairs. MLP projects every graph onto a basis sampled
from the graphs it was *fitted* on (``n_samples`` vertices, ``P`` eigenvectors per level), so its
values depend on that set: like the Auto-Keras edit kernel it declares ``pairwise_components =
False``, refits on a square ``components(X, X)`` whose set contains the current reference (a
training set), and reuses that basis for every other call (predictions).
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.kernels.base import Components, Hyperparameter, Kernel, feature_distances, unique_reduced

__all__ = ["GraKeLKernel", "MultiscaleLaplacianKernel", "RandomWalkKernel", "ShortestPathKernel", "grakel_graph"]

GRAM = "gram"


def grakel_graph(arch: Architecture, *, directed: bool = True, binary: bool = False,
                 features: Mapping[str, Any] | None = None) -> list:
    """``[adjacency (n, n), {node: label}]``, GraKeL's input for one (already reduced) graph.

    ``directed=False`` symmetrises the adjacency; ``binary`` counts parallel edges once;
    ``features`` maps a label to what GraKeL gets as the node's label (a feature vector for MLP).
    """
    n = arch.n_nodes
    A = np.zeros((n, n))
    for u, v in arch.edges:
        A[u, v] += 1.0
    if binary:
        A = np.minimum(A, 1.0)
    if not directed:
        A = np.maximum(A, A.T)
    labels = {i: (label if features is None else features[label]) for i, label in enumerate(arch.labels)}
    return [A, labels]


def _normalised(raw: np.ndarray, diag_a: np.ndarray, diag_b: np.ndarray, ids_a: np.ndarray,
                ids_b: np.ndarray) -> np.ndarray:
    """``raw / sqrt(diag_a diag_b)``, shape of ``raw``. A graph GraKeL sees no feature in (a cell
    without edges has no path, no walk beyond length 0 for SP) has ``k(a, a) = 0``: it is given 1
    with itself (same graph id) and 0 with every other graph, which keeps the matrix PSD."""
    with np.errstate(invalid="ignore", divide="ignore"):
        K = raw / np.sqrt(np.outer(diag_a, diag_b))
    empty = ~np.isfinite(K)
    K[empty] = (ids_a[:, None] == ids_b[None, :])[empty]
    return K


class GraKeLKernel(Kernel):
    """A normalised GraKeL kernel as a nasviz kernel (module docstring). Component ``"gram"``:
    the normalised kernel matrix ``(len(a), len(b))``; no hyperparameters."""

    positive_definite = True
    #: Whether GraKeL sees the edge directions.
    directed: ClassVar[bool] = True

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        return []

    def combine(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> np.ndarray:
        if GRAM not in components:
            raise ValueError(f"components lack {GRAM!r}; compute them with {type(self).__name__}.components")
        return np.asarray(components[GRAM], dtype=float)

    def combine_with_gradients(self, components: Mapping[str, np.ndarray],
                               theta: Sequence[float] | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
        return self.combine(components, theta), []

    def diagonal_components(self, archs: Sequence[Architecture]) -> dict[str, np.ndarray]:
        """``k(a, a) = 1`` after normalisation, shape ``(len(archs),)``."""
        return {GRAM: np.ones(len(archs))}

    def distances(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        """Feature-space distance ``sqrt(2 - 2 k(a, b))`` of the normalised kernel."""
        K = self.components(archs_a, archs_b)[GRAM]
        return {GRAM: feature_distances(K, np.ones(len(archs_a)), np.ones(len(archs_b)))}


class _PairwiseGraKeLKernel(GraKeLKernel):
    """RW / SP: exact pairwise values, cached per pair of reduced graphs (NaN = not computed)."""

    def __init__(self) -> None:
        self._graphs: list[Architecture] = []
        self._index: dict[Architecture, int] = {}
        self._raw = np.full((0, 0), np.nan)

    def _grakel(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _input(self, r: Architecture) -> list:
        return grakel_graph(r, directed=self.directed)

    def _ids(self, archs: Sequence[Architecture]) -> np.ndarray:
        graphs, where = unique_reduced(archs)
        ids = np.empty(len(graphs), dtype=np.intp)
        for k, g in enumerate(graphs):
            i = self._index.get(g)
            if i is None:
                i = self._index[g] = len(self._graphs)
                self._graphs.append(g)
            ids[k] = i
        self._grow()
        return ids[where]

    def _grow(self) -> None:
        n = len(self._graphs)
        if self._raw.shape[0] < n:
            grown = np.full((max(n, 2 * self._raw.shape[0], 16),) * 2, np.nan)
            grown[: self._raw.shape[0], : self._raw.shape[0]] = self._raw
            self._raw = grown

    def _fill(self, rows: np.ndarray, cols: np.ndarray) -> None:
        """Compute the missing raw values between graph ids ``rows`` x ``cols`` (and their diagonals)."""
        for ids in (rows, cols):
            for i in ids[np.isnan(self._raw[ids, ids])]:
                g = [self._input(self._graphs[i])]
                self._raw[i, i] = float(self._grakel().fit(g).transform(g)[0, 0])
        missing = np.isnan(self._raw[np.ix_(rows, cols)])
        r, c = rows[missing.any(axis=1)], cols[missing.any(axis=0)]
        if len(r) == 0:
            return
        if set(r.tolist()) == set(c.tolist()):  # a square block: GraKeL computes each pair once
            r = c
            block = self._grakel().fit_transform([self._input(self._graphs[j]) for j in c])
        else:
            kernel = self._grakel().fit([self._input(self._graphs[j]) for j in c])
            block = kernel.transform([self._input(self._graphs[i]) for i in r])  # (len(r), len(c))
        self._raw[np.ix_(r, c)] = block
        self._raw[np.ix_(c, r)] = block.T

    def components(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        ia = self._ids(archs_a)
        ib = ia if archs_b is archs_a else self._ids(archs_b)
        ua, ub = np.unique(ia), np.unique(ib)
        if len(ua) and len(ub):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", category=np.exceptions.ComplexWarning)
                self._fill(ua, ub)
        return {GRAM: _normalised(self._raw[np.ix_(ia, ib)], self._raw[ia, ia], self._raw[ib, ib], ia, ib)}


class RandomWalkKernel(_PairwiseGraKeLKernel):
    """Labelled geometric random-walk kernel (GraKeL ``RandomWalkLabeled``, exact), directed.

    Parameters
    ----------
    lamda : float
        Weight ``lamda^k`` of walks of length ``k``; any positive value converges on DAGs.
    """

    name = "rw"

    def __init__(self, lamda: float = 0.5) -> None:
        super().__init__()
        if not lamda > 0:
            raise ValueError(f"lamda must be positive, got {lamda!r}")
        self.lamda = float(lamda)

    def _grakel(self):
        from grakel.kernels import RandomWalkLabeled

        return RandomWalkLabeled(lamda=self.lamda, method_type="baseline", kernel_type="geometric")


class ShortestPathKernel(_PairwiseGraKeLKernel):
    """Labelled shortest-path kernel (GraKeL ``ShortestPath(with_labels=True)``), directed."""

    name = "sp"

    def _input(self, r: Architecture) -> list:
        return grakel_graph(r, directed=True, binary=True)

    def _grakel(self):
        from grakel.kernels import ShortestPath

        return ShortestPath(with_labels=True, algorithm_type="floyd_warshall")


class MultiscaleLaplacianKernel(GraKeLKernel):
    """Fast multiscale Laplacian graph kernel (GraKeL ``MultiscaleLaplacian``), undirected.

    Parameters (GraKeL's names; defaults are those of NAS-BOWL's code: ``L = 1``, ``P = 3``,
    ``n_samples = 5``, ``gamma = heta = 0.01``)
    ----------
    L : int
        Neighbourhood levels (paper 002 Table 1's "number of neighbours").
    P : int
        Eigenvectors kept per level.
    n_samples : int
        Vertices sampled from the fitted graphs to build each level's basis.
    gamma, heta : float
        Regularisers of the covariance and Laplacian matrices.
    features : {"onehot", "index"}
        Node features: one-hot labels, or NAS-BOWL's code's integer label index.
    seed : int
        GraKeL's ``random_state`` (the vertex samples).
    """

    name = "mlg"
    directed = False
    #: The basis depends on the fitted set: a GP must not assemble Gram matrices from blocks
    #: computed at different times (see ``nasviz.gp.ComponentsCache``).
    pairwise_components = False

    def __init__(self, L: int = 1, P: int = 3, n_samples: int = 5, gamma: float = 0.01, heta: float = 0.01,
                 features: str = "onehot", seed: int = 0) -> None:
        if features not in ("onehot", "index"):
            raise ValueError(f"features must be 'onehot' or 'index', got {features!r}")
        if int(L) < 1 or int(P) < 1 or int(n_samples) < 1:
            raise ValueError(f"L, P and n_samples must be positive integers, got {L!r}, {P!r}, {n_samples!r}")
        self.L, self.P, self.n_samples = int(L), int(P), int(n_samples)
        self.gamma, self.heta = float(gamma), float(heta)
        self.features, self.seed = features, int(seed)
        self._vocab: dict[str, int] = {}
        self._fitted = None
        self._reference: frozenset[Architecture] = frozenset()
        self._reps: dict[Architecture, tuple[np.ndarray, float]] = {}

    def _feature_map(self) -> dict[str, tuple[float, ...]]:
        size = len(self._vocab)
        if self.features == "index":
            return {label: (float(i),) for label, i in self._vocab.items()}
        return {label: tuple(float(i == j) for j in range(size)) for label, i in self._vocab.items()}

    def _inputs(self, graphs: Sequence[Architecture]) -> list:
        features = self._feature_map()
        zero = (0.0,) * len(next(iter(features.values()), (0.0,)))
        return [grakel_graph(g, directed=False, binary=True, features={l: features.get(l, zero) for l in g.labels})
                for g in graphs]

    def fit(self, archs: Sequence[Architecture]) -> None:
        """Sample the basis from the reduced graphs of ``archs`` (usually the training set)."""
        from grakel.kernels import MultiscaleLaplacian

        graphs, _ = unique_reduced(archs)
        if not graphs:
            raise ValueError("MLG: fit needs at least one architecture")
        for g in graphs:
            for label in g.labels:
                self._vocab.setdefault(label, len(self._vocab))
        # GraKeL keeps the P largest eigenvalues of the sampled vertices' Gram matrix and fails when
        # fewer than P vertices are sampled (e.g. two cells that reduce to input -> output): keep
        # as many as there are then.
        sampled = min(sum(g.n_nodes for g in graphs), self.n_samples)
        kernel = MultiscaleLaplacian(L=self.L, P=min(self.P, sampled), n_samples=self.n_samples, gamma=self.gamma,
                                     heta=self.heta, random_state=self.seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=np.exceptions.ComplexWarning)
            kernel.fit(self._inputs(graphs))
        self._fitted, self._reference, self._reps = kernel, frozenset(graphs), {}

    def _represent(self, graphs: list[Architecture]) -> list[tuple[np.ndarray, float]]:
        """Each graph's ``(S^-1, log det S)`` in the fitted basis: GraKeL's own ``transform``
        first step (``parse_input`` in transform mode), kept per graph until the next fit."""
        new = [g for g in dict.fromkeys(graphs) if g not in self._reps]
        if new:
            self._fitted._method_calling = 3  # what GraKeL's Kernel.transform sets before parse_input
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", category=np.exceptions.ComplexWarning)
                for g, rep in zip(new, self._fitted.parse_input(self._inputs(new))):
                    self._reps[g] = rep
        return [self._reps[g] for g in graphs]

    def _raw(self, reps_a: list, reps_b: list) -> np.ndarray:
        op = self._fitted.pairwise_operation
        return np.array([[op(x, y) for y in reps_b] for x in reps_a]).reshape(len(reps_a), len(reps_b))

    def components(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        ga, ia = unique_reduced(archs_a)
        gb, ib = (ga, ia) if archs_b is archs_a else unique_reduced(archs_b)
        if self._fitted is None:  # no basis yet: fit on everything asked for
            self.fit(list(ga) + [g for g in gb if g not in set(ga)])
        elif set(ga) == set(gb) and set(ga) > self._reference:  # a grown training set: refit
            self.fit(ga)
        ra, rb = self._represent(ga), self._represent(gb)
        raw = self._raw(ra, rb)
        da = np.array([self._raw([x], [x])[0, 0] for x in ra])
        db = da if gb is ga else np.array([self._raw([y], [y])[0, 0] for y in rb])
        ids = {g: k for k, g in enumerate(dict.fromkeys([*ga, *gb]))}
        K = _normalised(raw, da, db, np.array([ids[g] for g in ga]), np.array([ids[g] for g in gb]))
        return {GRAM: K[np.ix_(ia, ib)]}
