"""Plain optimal-transport and Gromov-Wasserstein kernels: the OT / GW baselines of paper 000 §4.1.

Both compare architectures as uniform probability measures over the layers (nodes, input and
output included) of their reduced graphs (:meth:`~nasviz.arch.Architecture.reduced`) and use
``k = exp(-lambda d)``.

* :class:`OTKernel` -- "the vanilla optimal transport (Wasserstein distance) in which we follow
  Kandasamy et al. (2018) to define the cost metric": the ground cost between layer ``i`` of ``x``
  and layer ``j`` of ``z`` is ``C_lab(i, j) + nu_str C_str(i, j)``, where ``C_lab`` is the
  operation-tree metric of the TW kernel (0 same label, 0.2 conv1x1 vs conv3x3, 2 across groups;
  the input and output pseudo-labels are groups of their own) and ``C_str`` is the mean absolute
  difference of four path lengths (shortest and longest path from the input, shortest and
  longest path to the output), as in OTMANN's structural term. Unlike OTMANN it is balanced
  OT (uniform masses, no non-assignment), solved exactly with POT's ``ot.emd2``.
* :class:`GWKernel` -- Gromov-Wasserstein (Mémoli 2011) between the graphs' structure matrices:
  hop counts of shortest paths in the undirected graph (nodes in different components are
  ``n_nodes`` apart), square loss, solved as POT's ``ot.gromov.gromov_wasserstein2`` does
  (:func:`gromov_wasserstein_square` repeats its steps exactly, 3x faster on these small graphs
  because it calls the network simplex directly). GW ignores the labels;
  it is a local optimum of a non-convex problem, so each pair is solved in a fixed orientation
  (by the graphs' canonical keys) to keep ``d(x, z) = d(z, x)``, and isomorphic graphs are at
  distance 0 (their true GW distance) without running the solver.

Neither distance is negative definite, so ``exp(-lambda d)`` need not be positive semi-definite
(paper 000 Table 2). As the paper does, :meth:`combine` adds jitter to the diagonal of a square
training Gram (a symmetric distance matrix with zero diagonal) until it is Cholesky-factorable
(:func:`~nasviz.kernels.base.make_psd`) and records the amount in ``kernel.last_jitter``
(0.0 when none was needed or the matrix is a cross-covariance). Gradients ignore the jitter
(a constant).

Distances are computed once per pair of distinct reduced graphs and cached on the kernel.

Parallel edges (the multiplicity :meth:`~nasviz.arch.Architecture.reduced` keeps, e.g. ``x + x``)
are invisible to both: OT's masses are uniform over layers and its path lengths count hops, GW's
structure matrix counts hops of the undirected graph. The all-``skip_connect`` NB201 cell
(``4x``) and the direct skip (``x``) are at distance 0.
"""

from __future__ import annotations

from itertools import product
from typing import Mapping, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.kernels.pot_solver import network_simplex, pot
from nasviz.spaces.base import LABELLED_DAG, OPERATION_TREE
from nasviz.kernels.base import Components, Hyperparameter, Kernel, make_psd, unique_reduced
from nasviz.kernels.tw import OperationTree, Tree


__all__ = ["GWKernel", "OTKernel", "gromov_wasserstein_square", "layer_path_lengths", "structure_matrix"]


def _emd_value(a: np.ndarray, b: np.ndarray, M: np.ndarray) -> float:
    """Exact OT cost ``min <P, M>`` over plans with marginals ``a`` ``(n,)``, ``b`` ``(m,)``."""
    solve = network_simplex()
    if solve is not None:
        _, cost, _, _, code = solve(a, b, np.ascontiguousarray(M, dtype=float), 100000, 1)
        if code == 1:  # OPTIMAL
            return float(cost)
    return float(pot().emd2(a, b, M))  # pragma: no cover - solver fallback


def layer_path_lengths(arch: Architecture) -> np.ndarray:
    """Path lengths of each node, shape ``(n_nodes, 4)``: shortest / longest from the input,
    shortest / longest to the output (in edges). Unreachable ends count as 0: these are the
    nodes of an edgeless reduced graph, the only kind :meth:`Architecture.reduced` leaves."""
    n = arch.n_nodes
    order = arch.topological_order()
    pred, succ = arch.predecessors(), arch.successors()
    inf = float("inf")
    s_in, l_in = [inf] * n, [-inf] * n
    s_in[0] = l_in[0] = 0.0
    for v in order:
        for u in pred[v]:
            s_in[v] = min(s_in[v], s_in[u] + 1)
            l_in[v] = max(l_in[v], l_in[u] + 1)
    s_out, l_out = [inf] * n, [-inf] * n
    s_out[n - 1] = l_out[n - 1] = 0.0
    for u in reversed(order):
        for v in succ[u]:
            s_out[u] = min(s_out[u], s_out[v] + 1)
            l_out[u] = max(l_out[u], l_out[v] + 1)
    L = np.array([s_in, l_in, s_out, l_out], dtype=float).T
    L[~np.isfinite(L)] = 0.0
    return L


def structure_matrix(arch: Architecture) -> np.ndarray:
    """Hop counts of shortest paths in the undirected graph, ``(n_nodes, n_nodes)``; nodes in
    different connected components are ``n_nodes`` apart (longer than any path)."""
    n = arch.n_nodes
    adj = [[] for _ in range(n)]
    for u, v in arch.edges:
        adj[u].append(v)
        adj[v].append(u)
    C = np.full((n, n), float(n))
    for s in range(n):
        C[s, s] = 0.0
        frontier, seen, d = [s], {s}, 0
        while frontier:
            d += 1
            nxt = []
            for u in frontier:
                for v in adj[u]:
                    if v not in seen:
                        seen.add(v)
                        C[s, v] = d
                        nxt.append(v)
            frontier = nxt
    return C


class _PairwiseKernel(Kernel):
    """Shared machinery: per-pair distances over distinct reduced graphs, cached; jittered Gram."""

    positive_definite = False
    component = ""

    def __init__(self) -> None:
        self._pairs: dict[tuple[Architecture, Architecture], float] = {}
        self._prepared: dict[Architecture, object] = {}
        #: Jitter the last :meth:`combine` added to the diagonal (0.0 if none).
        self.last_jitter: float = 0.0

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        return [Hyperparameter("lambda", 1.0, (1e-3, 1e3))]

    # subclasses: per-graph preparation and one pair's distance
    def _prepare(self, r: Architecture) -> object:
        raise NotImplementedError

    def _solve(self, px: object, pz: object) -> float:
        raise NotImplementedError

    def _orient(self, x: Architecture, z: Architecture) -> tuple[Architecture, Architecture]:
        """One fixed orientation per unordered pair so that d(x, z) = d(z, x) exactly."""
        return (x, z) if x.canonical_key() <= z.canonical_key() else (z, x)

    def _distance(self, x: Architecture, z: Architecture) -> float:
        if x == z:
            return 0.0
        x, z = self._orient(x, z)
        key = (x, z)
        d = self._pairs.get(key)
        if d is None:
            for r in key:
                if r not in self._prepared:
                    self._prepared[r] = self._prepare(r)
            d = self._pairs[key] = max(float(self._solve(self._prepared[x], self._prepared[z])), 0.0)
        return d

    def _unique(self, archs: Sequence[Architecture]) -> tuple[list[Architecture], np.ndarray]:
        return unique_reduced(archs)

    def components(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        """The distance matrix ``(len(a), len(b))`` under the component name of the kernel."""
        ua, ia = self._unique(archs_a)
        ub, ib = (ua, ia) if archs_b is archs_a else self._unique(archs_b)
        D = np.zeros((len(ua), len(ub)))
        if ua is ub:
            for i in range(len(ua)):
                for j in range(i + 1, len(ua)):
                    D[i, j] = D[j, i] = self._distance(ua[i], ua[j])
        else:
            for i, j in product(range(len(ua)), range(len(ub))):
                D[i, j] = self._distance(ua[i], ub[j])
        return {self.component: D[np.ix_(ia, ib)]}

    def _solve_plain(self, px: object, pz: object) -> float:
        raise NotImplementedError

    def pair_distances(self, x: Architecture, z: Architecture) -> dict[str, float]:
        """One pair from scratch with POT's public solver, no caches: the plain per-pair
        computation (the benchmark's baseline, and an independent check in the tests)."""
        rx, rz = self._orient(x.reduced(), z.reduced())
        if rx == rz:
            return {self.component: 0.0}
        return {self.component: max(float(self._solve_plain(self._prepare(rx), self._prepare(rz))), 0.0)}

    def _lambda(self, theta: Sequence[float] | None) -> float:
        lam = self.default_theta() if theta is None else np.asarray(theta, dtype=float).reshape(-1)
        if lam.shape != (1,) or not np.isfinite(lam[0]) or lam[0] < 0:
            raise ValueError(f"theta must be one finite non-negative lambda, got {np.asarray(theta).tolist()}")
        return float(lam[0])

    def _raw(self, components: Mapping[str, np.ndarray], theta) -> tuple[np.ndarray, np.ndarray]:
        if self.component not in components:
            raise ValueError(f"components lack {self.component!r}")
        D = np.asarray(components[self.component], dtype=float)
        return D, np.exp(-self._lambda(theta) * D)

    def combine(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> np.ndarray:
        """``exp(-lambda D)``; a training Gram (square, symmetric, zero diagonal) is jittered to
        positive definiteness and the jitter is stored in :attr:`last_jitter`."""
        D, K = self._raw(components, theta)
        self.last_jitter = 0.0
        if D.ndim == 2 and D.shape[0] == D.shape[1] and D.size and np.allclose(D, D.T) and not np.diag(D).any():
            K, self.last_jitter = make_psd(K)
        return K

    def combine_with_gradients(
        self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        K = self.combine(components, theta)
        D, raw = self._raw(components, theta)
        return K, [-D * raw]


class OTKernel(_PairwiseKernel):
    """Plain OT between uniform layer measures with a NASBOT-style cost (module docstring).

    Parameters
    ----------
    nu_str : float
        Weight of the structural cost (mean absolute difference of the four path lengths).
    tree : Tree or mapping group -> labels, optional
        Operation tree for the label cost (default: the TW kernel's :class:`OperationTree`).
    """

    name = "ot"
    reads = frozenset({LABELLED_DAG, OPERATION_TREE})
    component = "ot"

    def __init__(self, nu_str: float = 0.5, tree: Tree | Mapping | None = None) -> None:
        super().__init__()
        if not np.isfinite(nu_str) or nu_str < 0:
            raise ValueError(f"nu_str must be finite and non-negative, got {nu_str!r}")
        self.nu_str = float(nu_str)
        self.tree: Tree = tree if isinstance(tree, Tree) else OperationTree(tree)
        self._label_index: dict[str, int] = {}
        self._label_cost = np.zeros((0, 0))

    def _label_ids(self, arch: Architecture) -> np.ndarray:
        n = arch.n_nodes
        # Input and output are pseudo-labels of their own (a layer named "input" in the middle
        # of a graph is still an operation): key them by role.
        keys = ["<input>"] + list(arch.labels[1:-1]) + ["<output>"] if n >= 2 else list(arch.labels)
        new = [k for k in dict.fromkeys(keys) if k not in self._label_index]
        if new:
            for k in new:
                self._label_index[k] = len(self._label_index)
            labels = list(self._label_index)
            self._label_cost = np.array([[self.tree.distance((a,), (b,)) for b in labels] for a in labels])
        return np.array([self._label_index[k] for k in keys], dtype=np.int64)

    def _prepare(self, r: Architecture) -> tuple[np.ndarray, np.ndarray]:
        return self._label_ids(r), layer_path_lengths(r)

    def _cost(self, px, pz) -> np.ndarray:
        (lx, sx), (lz, sz) = px, pz
        return self._label_cost[np.ix_(lx, lz)] + self.nu_str * np.abs(sx[:, None, :] - sz[None, :, :]).mean(axis=2)

    def _solve(self, px, pz) -> float:
        C = self._cost(px, pz)
        return _emd_value(np.full(C.shape[0], 1.0 / C.shape[0]), np.full(C.shape[1], 1.0 / C.shape[1]), C)

    def _solve_plain(self, px, pz) -> float:
        C = self._cost(px, pz)
        return float(pot().emd2(np.full(C.shape[0], 1.0 / C.shape[0]), np.full(C.shape[1], 1.0 / C.shape[1]), C))

    def transport_plan(self, x: Architecture, z: Architecture) -> tuple[np.ndarray, np.ndarray]:
        """The optimal plan ``(n_x, n_z)`` between the reduced graphs' layers and its cost matrix."""
        px, pz = self._prepare(x.reduced()), self._prepare(z.reduced())
        (lx, sx), (lz, sz) = px, pz
        C = self._label_cost[np.ix_(lx, lz)] + self.nu_str * np.abs(sx[:, None, :] - sz[None, :, :]).mean(axis=2)
        return pot().emd(np.full(len(lx), 1.0 / len(lx)), np.full(len(lz), 1.0 / len(lz)), C), C


class GWKernel(_PairwiseKernel):
    """Gromov-Wasserstein between shortest-path structure matrices (module docstring).

    Parameters
    ----------
    max_iter : int
        Iterations of POT's conditional-gradient solver per pair.
    """

    name = "gw"
    component = "gw"

    def __init__(self, max_iter: int = 200) -> None:
        super().__init__()
        if int(max_iter) < 1:
            raise ValueError(f"max_iter must be >= 1, got {max_iter!r}")
        self.max_iter = int(max_iter)

    def _prepare(self, r: Architecture) -> np.ndarray:
        return structure_matrix(r)

    def _solve(self, Cx, Cz) -> float:
        p, q = np.full(len(Cx), 1.0 / len(Cx)), np.full(len(Cz), 1.0 / len(Cz))
        if network_simplex() is None:  # pragma: no cover - other POT layouts
            return pot().gromov.gromov_wasserstein2(Cx, Cz, p, q, loss_fun="square_loss", max_iter=self.max_iter)
        return gromov_wasserstein_square(Cx, Cz, p, q, self.max_iter)

    def _solve_plain(self, Cx, Cz) -> float:
        p, q = np.full(len(Cx), 1.0 / len(Cx)), np.full(len(Cz), 1.0 / len(Cz))
        return float(pot().gromov.gromov_wasserstein2(Cx, Cz, p, q, loss_fun="square_loss", max_iter=self.max_iter))


def gromov_wasserstein_square(
    C1: np.ndarray, C2: np.ndarray, p: np.ndarray, q: np.ndarray, max_iter: int = 200, tol: float = 1e-9
) -> float:
    """GW discrepancy with square loss by conditional gradient, step for step POT's
    ``ot.gromov.gromov_wasserstein2`` (same start, LPs, line search and stopping rule, hence the
    same local optimum; the tests check equality on NB201 cells) without its per-call overhead.

    ``min_T sum_{i,j,k,l} (C1[i,k] - C2[j,l])^2 T[i,j] T[k,l]`` over plans with marginals ``p``
    ``(n,)`` and ``q`` ``(m,)``, for symmetric ``C1`` ``(n, n)`` and ``C2`` ``(m, m)``: the
    Prop. 1 decomposition of Peyré et al. (2016), start ``p q^T``, direction from the exact LP on
    the gradient (network simplex, with ``q`` rescaled to ``p``'s total as ``ot.emd`` does -- the
    LP has ties, so its inputs must match bit for bit), exact quadratic line search, stop when
    the loss changes by less than ``tol`` absolutely or relatively.
    """
    constC = np.dot(np.dot(C1**2, p.reshape(-1, 1)), np.ones((1, len(q)))) + np.dot(
        np.ones((len(p), 1)), np.dot(q.reshape(1, -1), (C2**2).T)
    )
    hC2 = 2.0 * C2
    q_lp = q * p.sum() / q.sum()

    def tensor(G: np.ndarray) -> np.ndarray:
        return constC + -np.dot(np.dot(C1, G), hC2.T)

    G = p[:, None] * q[None, :]
    cost = float(np.sum(tensor(G) * G))
    for _ in range(int(max_iter)):
        old = cost
        grad = 2.0 * tensor(G)
        target = network_simplex()(p, q_lp, np.asarray(grad, dtype=np.float64, order="C"), 100000, 1, None, None)[0]
        delta = target - G
        dot = np.dot(np.dot(C1, delta), hC2.T)
        a = -float(np.sum(dot * delta))
        b = -2.0 * float(np.sum(dot * G))
        if a > 0:  # convex along the segment
            alpha = min(1.0, max(0.0, -b / (2.0 * a)))
        else:
            alpha = 1.0 if a + b < 0 else 0.0
        G = G + alpha * delta
        cost = cost + a * alpha**2 + b * alpha
        change = abs(cost - old)
        if change < tol or (cost != 0.0 and change / abs(cost) < tol):
            break
    return cost
