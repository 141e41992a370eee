"""The tree-Wasserstein kernel, Eq. (25) of paper 000, vectorised: per-architecture g-vectors
(App. F) and one L1 distance matrix per component."""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np
from scipy.spatial.distance import cdist

from nasviz.arch import Architecture
from nasviz.kernels.base import Components, Hyperparameter, Kernel, PreparedRows, unique_reduced
from nasviz.kernels.tw.measures import reduced_degree_measures, reduced_ngram_measure, chain_wasserstein, degree_measures, ngram_measure
from nasviz.kernels.tw.trees import Leaf, Node, OperationTree, Tree
from nasviz.spaces.base import LABELLED_DAG, OPERATION_TREE

#: Component names, in the order of ``lambda_1, lambda_2, lambda_3`` (Eq. (25)).
COMPONENTS: tuple[str, str, str] = ("operations", "in_degree", "out_degree")


class TreeWassersteinKernel(Kernel):
    """``k = exp(-(lambda_1 W_o + lambda_2 W_- + lambda_3 W_+))`` (Eq. (25) of paper 000).

    Parameters
    ----------
    ngram : int
        Longest n-gram, 1..3 (paper: 1-gram "TW" and 2-gram "TW-2G"; default 2).
    cumulative : bool
        ``W_o`` averages ``n = 1..ngram`` (default) or uses ``n = ngram`` only.
    tree : Tree or mapping group -> labels, optional
        The operation tree; a mapping declares the groups of an :class:`OperationTree`.
    leaf_weight : float
        ``a`` of the :class:`OperationTree` (ignored when ``tree`` is a :class:`Tree`).
    anchored : bool
        n-grams of order >= 2 may start at the input or end at the output (default, see the
        module docstring); ``False`` counts operation layers only, as App. F.

    Components (each ``(len(a), len(b))``): ``operations`` = ``W_o``, ``in_degree`` = ``W_-``,
    ``out_degree`` = ``W_+``. Hyperparameters ``lambda_1, lambda_2, lambda_3`` (log scale).
    """

    name = "tw"
    reads = frozenset({LABELLED_DAG, OPERATION_TREE})
    positive_definite = True

    def __init__(
        self,
        ngram: int = 2,
        cumulative: bool = True,
        tree: Tree | Mapping[str, Iterable[str]] | None = None,
        leaf_weight: float = 0.1,
        anchored: bool = True,
    ) -> None:
        if isinstance(ngram, bool) or not isinstance(ngram, (int, np.integer)) or not 1 <= int(ngram) <= 3:
            raise ValueError(f"ngram must be 1, 2 or 3, got {ngram!r}")
        self.ngram = int(ngram)
        self.cumulative = bool(cumulative)
        self.anchored = bool(anchored)
        self.tree: Tree = tree if isinstance(tree, Tree) else OperationTree(tree, leaf_weight)
        self.orders: tuple[int, ...] = tuple(range(1, self.ngram + 1)) if self.cumulative else (self.ngram,)
        # Column of each tree edge (keyed (n, v_e)) in the dense g-vectors; grows as leaves appear.
        self._columns: dict[tuple[int, Node], int] = {}
        self._features: dict[Architecture, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        return [
            Hyperparameter("lambda_1", 1.0, (1e-3, 1e3), rate=True),  # n-gram operations, W_o
            Hyperparameter("lambda_2", 1.0, (1e-3, 1e3), rate=True),  # in-degree, W_-
            Hyperparameter("lambda_3", 1.0, (1e-3, 1e3), rate=True),  # out-degree, W_+
        ]

    # -------------------------------------------------------------- per-architecture work
    def ngram_measures(self, arch: Architecture) -> dict[int, dict[Leaf, float]]:
        """``{n: omega_n}`` for the n-gram orders this kernel uses."""
        return {n: ngram_measure(arch, n, self.anchored) for n in self.orders}

    def _prepare(self, r: Architecture):
        """Cached ``(g columns, g values, positions, in_mass, out_mass)`` of a *reduced* graph."""
        feats = self._features.get(r)
        if feats is not None:
            return feats
        scale = 1.0 / len(self.orders)  # W_o is the mean over the orders
        g: dict[int, float] = {}
        for n in self.orders:
            for node, value in self.tree.embed(reduced_ngram_measure(r, n, self.anchored)).items():
                col = self._columns.setdefault((n, node), len(self._columns))
                g[col] = g.get(col, 0.0) + scale * value
        cols = np.fromiter(g.keys(), dtype=np.int64, count=len(g))
        vals = np.fromiter(g.values(), dtype=float, count=len(g))
        feats = (cols, vals, *reduced_degree_measures(r))
        self._features[r] = feats
        return feats

    def _operation_vectors(self, feats: Sequence[tuple]) -> np.ndarray:
        """Dense ``g(omega)`` matrix, shape ``(len(feats), n_edges_seen)``."""
        X = np.zeros((len(feats), max(len(self._columns), 1)))
        if feats:
            rows = np.repeat(np.arange(len(feats)), [len(f[0]) for f in feats])
            X[rows, np.concatenate([f[0] for f in feats])] = np.concatenate([f[1] for f in feats])
        return X

    @staticmethod
    def _cdf_vectors(feats: Sequence[tuple], grid: np.ndarray, which: int) -> np.ndarray:
        """Gap-weighted CDFs ``F(t_k) (t_{k+1} - t_k)``, shape ``(len(feats), len(grid) - 1)``."""
        F = np.zeros((len(feats), grid.size))
        if feats:
            rows = np.repeat(np.arange(len(feats)), [len(f[2]) for f in feats])
            cols = np.searchsorted(grid, np.concatenate([f[2] for f in feats]))
            np.add.at(F, (rows, cols), np.concatenate([f[which] for f in feats]))
        return np.cumsum(F, axis=1)[:, :-1] * np.diff(grid)[None, :]

    def _unique(self, archs: Sequence[Architecture]) -> tuple[list[tuple], np.ndarray]:
        """Features of the distinct reduced graphs of ``archs`` and each arch's row among them.

        Cells that reduce to the same graph (about 4 in 10 of 1,000 random NB201 cells) share
        their features and their rows of the distance matrices.
        """
        graphs, index = unique_reduced(archs)
        return [self._prepare(r) for r in graphs], index

    def components(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        """``W_o``, ``W_-``, ``W_+`` for all pairs, each ``(len(a), len(b))`` (Eqs. (2), (4))."""
        fa, ia = self._unique(archs_a)
        fb, ib = (fa, ia) if archs_b is archs_a else self._unique(archs_b)
        grid = np.unique(np.concatenate([f[2] for f in fa + fb])) if fa or fb else np.zeros(1)
        result: Components = {}
        pairs = [
            ("operations", self._operation_vectors(fa), self._operation_vectors(fb)),
            ("in_degree", self._cdf_vectors(fa, grid, 3), self._cdf_vectors(fb, grid, 3)),
            ("out_degree", self._cdf_vectors(fa, grid, 4), self._cdf_vectors(fb, grid, 4)),
        ]
        for name, A, B in pairs:
            if A.shape[1] == 0 or not len(A) or not len(B):
                result[name] = np.zeros((len(ia), len(ib)))
            else:
                result[name] = cdist(A, B, metric="cityblock")[np.ix_(ia, ib)]
        return result

    # -------------------------------------------------------------- a fixed candidate set
    def prepare_rows(self, archs: Sequence[Architecture]) -> PreparedRows:
        """One row per distinct reduced graph of ``archs``, with its features as matrices: the
        dense ``g`` vectors (widened with zero columns as new tree edges appear) and the degree
        CDF vectors of the last grid used (rebuilt only if a column brings a new position)."""
        archs = tuple(archs)
        feats, index = self._unique(archs)
        data = {"feats": feats, "ops": self._operation_vectors(feats),
                "positions": np.unique(np.concatenate([f[2] for f in feats])) if feats else np.zeros(1),
                "grid": None, "cdf": None}
        return PreparedRows(archs, index, len(feats), data)

    def components_prepared(self, rows: PreparedRows, archs_b: Sequence[Architecture]) -> Components:
        """:meth:`components` of the prepared rows against ``archs_b``, ``(rows.n_rows, len(b))``
        each; the rows' features are reused, so the cost is that of ``len(b)`` columns."""
        data = rows.data
        fb, ib = self._unique(archs_b)
        B = self._operation_vectors(fb)
        A = data["ops"]
        if A.shape[1] < B.shape[1]:  # tree edges first seen in archs_b: zero mass in every row
            A = data["ops"] = np.pad(A, ((0, 0), (0, B.shape[1] - A.shape[1])))
        grid = np.union1d(data["positions"], np.concatenate([f[2] for f in fb])) if fb else data["positions"]
        if data["grid"] is None or not np.array_equal(grid, data["grid"]):
            data["grid"] = grid
            data["cdf"] = (self._cdf_vectors(data["feats"], grid, 3), self._cdf_vectors(data["feats"], grid, 4))
        result: Components = {}
        pairs = [("operations", A, B), ("in_degree", data["cdf"][0], self._cdf_vectors(fb, grid, 3)),
                 ("out_degree", data["cdf"][1], self._cdf_vectors(fb, grid, 4))]
        for name, Ar, Br in pairs:
            if Ar.shape[1] == 0 or not len(Ar) or not len(Br):
                result[name] = np.zeros((rows.n_rows, len(ib)))
            else:
                result[name] = cdist(Ar, Br, metric="cityblock")[:, ib]
        return result

    def diagonal_components(self, archs: Sequence[Architecture]) -> dict[str, np.ndarray]:
        """``W_i(x, x) = 0`` for every architecture: shape ``(len(archs),)`` each."""
        return {name: np.zeros(len(archs)) for name in COMPONENTS}

    def pair_distances(self, x: Architecture, z: Architecture) -> dict[str, float]:
        """The three distances for one pair, from scratch and edge by edge (no caching).

        The straightforward computation (Eq. (2) summed over the tree's edges, the chain by
        its CDFs); :meth:`components` gives the same numbers for all pairs at once. Used by
        the benchmark as the per-pair baseline and by the tests as an independent check.
        """
        mx, mz = self.ngram_measures(x), self.ngram_measures(z)
        w_o = float(np.mean([self.tree.wasserstein(mx[n], mz[n]) for n in self.orders]))
        px, ix, ox = degree_measures(x)
        pz, iz, oz = degree_measures(z)
        return {
            "operations": w_o,
            "in_degree": chain_wasserstein(px, ix, pz, iz),
            "out_degree": chain_wasserstein(px, ox, pz, oz),
        }

    # -------------------------------------------------------------- kernel from components
    def _lambdas(self, theta: Sequence[float] | None) -> np.ndarray:
        lam = self.default_theta() if theta is None else np.asarray(theta, dtype=float)
        if lam.shape != (3,):
            raise ValueError(f"theta must hold (lambda_1, lambda_2, lambda_3), got shape {lam.shape}")
        if np.any(lam < 0) or not np.all(np.isfinite(lam)):
            raise ValueError(f"lambda_1..3 must be finite and non-negative, got {lam.tolist()}")
        return lam

    @staticmethod
    def _check(components: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        missing = [c for c in COMPONENTS if c not in components]
        if missing:
            raise ValueError(f"components lack {', '.join(missing)}; expected {', '.join(COMPONENTS)}")
        return [np.asarray(components[c], dtype=float) for c in COMPONENTS]

    def combine(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> np.ndarray:
        """Eq. (25): ``exp(-(lambda_1 W_o + lambda_2 W_- + lambda_3 W_+))``, shape of the components."""
        lam = self._lambdas(theta)
        W = self._check(components)
        return np.exp(-(lam[0] * W[0] + lam[1] * W[1] + lam[2] * W[2]))

    def combine_with_gradients(
        self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """``K`` and ``dK/dlambda_i = -W_i * K`` (Eqs. (29)-(31)), each the shape of the components."""
        K = self.combine(components, theta)
        return K, [-W * K for W in self._check(components)]
