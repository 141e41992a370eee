"""Path-encoding kernel (BANANAS, White et al. 2021; the "BO-Path Encoding" baseline of paper 000 §4.1).

An architecture is encoded by the operation paths from its input to its output: each directed
input -> output path of the reduced graph (:meth:`~nasviz.arch.Architecture.reduced`) contributes
the label sequence of its intermediate nodes, e.g. ``("nor_conv_3x3", "avg_pool_3x3")``; the empty
sequence ``()`` is a direct input -> output connection (an identity path). The encoding is the
binary indicator of those sequences (BANANAS) or, with ``binary=False``, their counts.

The paths are derived from the graph itself, so the encoding is right for any DAG and any label
set, and cells with the same reduced graph share an encoding: a path
through ``none`` carries nothing and is absent, a ``skip_connect`` adds no operation to the
sequence. (NASLib's NB201 encoding used fixed "blueprints" in another package's operation order,
so two of its four "paths" were not input -> output paths.) The vocabulary of sequences grows as
new ones appear, so architectures of different sizes and label sets can be compared.

Parallel edges (the multiplicity :meth:`~nasviz.arch.Architecture.reduced` keeps: the
all-``skip_connect`` NB201 cell reduces to four input -> output edges) count once per copy in the
path counts, so ``binary=False`` tells ``4x`` from ``x``; the binary encoding (BANANAS, the
default) only records that the path exists, so it does not.

Kernel: ``k(x, z) = exp(-lambda * ||phi(x) - phi(z)||_1)`` -- a Laplacian kernel on the encodings
(for binary encodings the L1 distance is the Hamming distance), positive definite as a product of
one-dimensional Laplace kernels. ``dk/dlambda = -d k``.
"""

from __future__ import annotations

from collections import Counter
from typing import Mapping, Sequence

import numpy as np
from scipy.spatial.distance import cdist

from nasviz.arch import Architecture
from nasviz.spaces.base import LABELLED_DAG, PATHS
from nasviz.kernels.base import Components, Hyperparameter, Kernel, unique_reduced

__all__ = ["PathEncodingKernel", "operation_paths"]

Path = tuple[str, ...]


def _paths_of_reduced(r: Architecture, max_paths: int) -> Counter:
    n, last = r.n_nodes, r.n_nodes - 1
    pred = r.predecessors()
    # Count paths first (cheap): enumerating them is exponential in the worst case.
    count = [0] * n
    count[0] = 1
    for v in r.topological_order():
        if v:
            count[v] = sum(count[u] for u in pred[v])
    if count[last] > max_paths:
        raise ValueError(
            f"the architecture has {count[last]} input-to-output paths, more than max_paths={max_paths}"
        )
    # Label sequences of the paths from the input to each node (input label excluded).
    seqs: list[Counter] = [Counter() for _ in range(n)]
    seqs[0][()] = 1
    for v in r.topological_order():
        if v == 0:
            continue
        here = Counter()
        for u in pred[v]:
            for s, c in seqs[u].items():
                here[s if u == 0 else s + (r.labels[u],)] += c
        seqs[v] = here
    return seqs[last]


def operation_paths(arch: Architecture, max_paths: int = 100_000) -> Counter:
    """``{label sequence: number of input -> output paths with it}`` on ``arch.reduced()``.

    The sequences list the intermediate nodes' labels (input and output excluded); a cell with no
    input -> output path (all paths through ``none``) has none. Raises ``ValueError`` if the graph
    has more than ``max_paths`` paths.
    """
    return _paths_of_reduced(arch.reduced(), max_paths)


class PathEncodingKernel(Kernel):
    """``exp(-lambda * ||phi(x) - phi(z)||_1)`` on path encodings (see the module docstring).

    Parameters
    ----------
    binary : bool
        Indicator encoding as in BANANAS (default) or path counts.
    max_paths : int
        Refuse graphs with more input -> output paths than this (their encoding would explode).

    Component: ``paths`` = L1 (Hamming) distance between encodings, ``(len(a), len(b))``.
    Hyperparameter: ``lambda`` (log scale).
    """

    name = "path"
    reads = frozenset({LABELLED_DAG, PATHS})
    positive_definite = True

    def __init__(self, binary: bool = True, max_paths: int = 100_000) -> None:
        if int(max_paths) < 1:
            raise ValueError(f"max_paths must be >= 1, got {max_paths!r}")
        self.binary = bool(binary)
        self.max_paths = int(max_paths)
        self._columns: dict[Path, int] = {}
        self._features: dict[Architecture, tuple[np.ndarray, np.ndarray]] = {}

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        return [Hyperparameter("lambda", 0.5, (1e-3, 1e2))]

    @property
    def vocabulary(self) -> list[Path]:
        """The path sequences seen so far, in column order of :meth:`features`."""
        return list(self._columns)

    def _prepare(self, r: Architecture) -> tuple[np.ndarray, np.ndarray]:
        feats = self._features.get(r)
        if feats is None:
            paths = _paths_of_reduced(r, self.max_paths)
            cols = np.array([self._columns.setdefault(p, len(self._columns)) for p in paths], dtype=np.int64)
            vals = np.ones(len(paths)) if self.binary else np.array(list(paths.values()), dtype=float)
            feats = self._features[r] = (cols, vals)
        return feats

    def _unique(self, archs: Sequence[Architecture]) -> tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray]:
        graphs, index = unique_reduced(archs)
        return [self._prepare(r) for r in graphs], index

    def _dense(self, feats: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        X = np.zeros((len(feats), max(len(self._columns), 1)))
        if feats:
            rows = np.repeat(np.arange(len(feats)), [len(f[0]) for f in feats])
            X[rows, np.concatenate([f[0] for f in feats])] = np.concatenate([f[1] for f in feats])
        return X

    def features(self, archs: Sequence[Architecture]) -> tuple[np.ndarray, list[str]]:
        """Encodings ``(len(archs), n_paths)`` and readable names ``'input>op>...>output'``."""
        feats, index = self._unique(archs)
        X = self._dense(feats)[index]
        names = [">".join(("input", *p, "output")) for p in self._columns]
        return X[:, : len(names)], names

    def components(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        """``paths``: L1 distance between encodings, shape ``(len(a), len(b))``."""
        fa, ia = self._unique(archs_a)
        fb, ib = (fa, ia) if archs_b is archs_a else self._unique(archs_b)
        if not len(ia) or not len(ib):
            return {"paths": np.zeros((len(ia), len(ib)))}
        A, B = self._dense(fa), self._dense(fb)
        return {"paths": cdist(A, B, metric="cityblock")[np.ix_(ia, ib)]}

    def pair_distance(self, x: Architecture, z: Architecture) -> float:
        """The L1 distance for one pair from scratch (the plain per-pair computation)."""
        px, pz = operation_paths(x, self.max_paths), operation_paths(z, self.max_paths)
        if self.binary:
            return float(len(set(px) ^ set(pz)))
        return float(sum(abs(px.get(p, 0) - pz.get(p, 0)) for p in set(px) | set(pz)))

    def pair_distances(self, x: Architecture, z: Architecture) -> dict[str, float]:
        return {"paths": self.pair_distance(x, z)}

    def _lambda(self, theta: Sequence[float] | None) -> float:
        lam = self.default_theta() if theta is None else np.asarray(theta, dtype=float).reshape(-1)
        if lam.shape != (1,) or not np.isfinite(lam[0]) or lam[0] < 0:
            raise ValueError(f"theta must be one finite non-negative lambda, got {np.asarray(theta).tolist()}")
        return float(lam[0])

    def combine(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> np.ndarray:
        if "paths" not in components:
            raise ValueError("components lack 'paths'")
        return np.exp(-self._lambda(theta) * np.asarray(components["paths"], dtype=float))

    def combine_with_gradients(
        self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        K = self.combine(components, theta)
        return K, [-np.asarray(components["paths"], dtype=float) * K]
