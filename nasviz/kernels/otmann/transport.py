"""The OTMANN transport program (paper 001 Sec. 3, program (3), solved as program (6) of App. A.1).

OTMANN matches the layer masses of network ``G1`` (``n1`` layers) to those of ``G2`` (``n2``
layers) with a plan ``Z`` of shape ``(n1, n2)`` minimising

    phi_lmm(Z) + phi_nas(Z) + nu_str * phi_str(Z)
      = <Z, C_lmm> + (mass left unassigned in G1 and G2) + nu_str <Z, C_str>

subject to row sums <= ``lm(G1)`` and column sums <= ``lm(G2)`` (program (3)). App. A.1
(Theorem 2) turns it into the balanced OT program (6): each network gets one extra
"non-assignment" layer whose supply is the other network's total mass, and

    C' = [[C_lmm + nu_str C_str, 1], [1, 0]]        shape (n1 + 1, n2 + 1)
    y1 = [lm(G1), tm(G2)],  y2 = [lm(G2), tm(G1)]

Its optimum is ``d(G1, G2)``; ``dbar = d / (tm(G1) + tm(G2))`` is the normalised distance (Sec. 3,
after Theorem 1). The exact network simplex of POT (the solver behind ``ot.emd``) solves it.

Per network the program needs only a :class:`NetworkSummary` (label rows of
:data:`~nasviz.spaces.label_costs.LABEL_MISMATCH`, masses, structural features).
:func:`solve_pairs` solves many pairs for several ``nu_str`` at once (cost blocks vectorised,
one simplex call per pair and ``nu_str``), :func:`solve_pairs_parallel` spreads them over worker
processes, and :func:`transport_plan` returns one pair's plan split into its terms for the views.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.kernels.pot_solver import network_simplex, pot
from nasviz.spaces.label_costs import LABEL_MISMATCH, NON_ASSIGNMENT_COST
from nasviz.kernels.otmann.labels import BUILTIN, LabelTable
from nasviz.kernels.otmann.masses import ZETA, layer_masses
from nasviz.kernels.otmann.paths import check_structure, structural_features


# ---------------------------------------------------------------------------- one network
@dataclass(frozen=True)
class NetworkSummary:
    """What program (6) needs of one network with ``n`` layers.

    ``labels`` (n,) rows of :data:`LABEL_MISMATCH`, ``masses`` (n,) ``lm(u)``, ``paths`` (n, k)
    structural features (:func:`~nasviz.kernels.otmann.paths.structural_features`), ``total``
    ``tm(G) = sum(masses)``.
    """

    labels: np.ndarray
    masses: np.ndarray
    paths: np.ndarray
    total: float

    def canonical(self) -> NetworkSummary:
        """The same network with its layers in a canonical order (sorted by label, mass and
        structural features). Program (6) does not depend on the order of the layers, so this
        is the same network; sorting makes isomorphic graphs numbered differently give the same
        arrays (masses and path lengths are sums that do not depend on the order of a layer's
        parents), hence bit-identical distances whichever of them a memo saw first."""
        keys = np.column_stack([self.labels, self.masses, self.paths])
        order = np.lexsort(keys.T[::-1])
        masses = self.masses[order]
        return NetworkSummary(self.labels[order], masses, self.paths[order], float(masses.sum()))


def summarise(arch: Architecture, zeta: float = ZETA, cell_channels: int = 16, structure: str = "paths",
              table: LabelTable = BUILTIN) -> NetworkSummary:
    """The :class:`NetworkSummary` of ``arch.reduced()``, layers in the reduced graph's order;
    label rows index ``table.mismatch`` (a space's table, or the built-in one)."""
    arch = arch.reduced()
    masses = layer_masses(arch, zeta=zeta, cell_channels=cell_channels, table=table)
    paths = structural_features(arch, structure, table.groups)
    labels = np.array([table.index[label] for label in arch.labels], dtype=np.intp)
    return NetworkSummary(labels, masses, paths, float(masses.sum()))


# ---------------------------------------------------------------------------- program (6)
def cost_blocks(net_a: NetworkSummary, net_b: NetworkSummary,
                mismatch: np.ndarray = LABEL_MISMATCH) -> tuple[np.ndarray, np.ndarray]:
    """``C_lmm`` and ``C_str`` of Sec. 3, each ``(n_a, n_b)`` (``mismatch``: the table's ``M``)."""
    c_lmm = mismatch[np.ix_(net_a.labels, net_b.labels)]
    if net_a.paths.shape[1] != net_b.paths.shape[1]:
        raise ValueError("OTMANN: the two architectures come from different label families (grouped structure)")
    c_str = np.abs(net_a.paths[:, None, :] - net_b.paths[None, :, :]).mean(axis=2)
    return c_lmm, c_str


def augmented(c: np.ndarray) -> np.ndarray:
    """``C' = [[C, 1], [1, 0]]`` of App. A.1, shape ``(n_a + 1, n_b + 1)``, C-contiguous."""
    n_a, n_b = c.shape
    out = np.empty((n_a + 1, n_b + 1))
    out[:n_a, :n_b] = c
    out[:n_a, n_b] = NON_ASSIGNMENT_COST
    out[n_a, :n_b] = NON_ASSIGNMENT_COST
    out[n_a, n_b] = 0.0
    return out


def supplies(net_a: NetworkSummary, net_b: NetworkSummary) -> tuple[np.ndarray, np.ndarray]:
    """``y1 = [lm(G1), tm(G2)]`` ``(n_a + 1,)`` and ``y2 = [lm(G2), tm(G1)]`` ``(n_b + 1,)`` of
    App. A.1, with equal totals."""
    y1 = np.append(net_a.masses, net_b.total)
    y2 = np.append(net_b.masses, net_a.total)
    y2 *= y1.sum() / y2.sum()  # remove float round-off: the solver needs equal totals
    return y1, y2


def emd_value(y1: np.ndarray, y2: np.ndarray, cost: np.ndarray) -> float:
    """Optimum of the OT program (6) for supplies ``y1`` ``(n,)``, demands ``y2`` ``(m,)`` and
    costs ``(n, m)``. The C solver is called directly; anything but an optimal exit (code 1)
    goes through ``ot.emd2``, which retries and warns."""
    solve = network_simplex()
    if solve is not None:
        result = solve(y1, y2, cost, 100000, 1)
        if result[-1] == 1:
            return float(result[1])
    return float(pot().emd2(y1, y2, cost, numItermax=1_000_000))


# ---------------------------------------------------------------------------- many pairs
def _batch_programs(
    nets_a: Sequence[NetworkSummary], nets_b: Sequence[NetworkSummary], nus: np.ndarray,
    mismatch: np.ndarray = LABEL_MISMATCH,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Program (6) for ``P`` pairs ``(nets_a[p], nets_b[p])`` of equal layer counts ``n_a``,
    ``n_b`` and every ``nu_str``: costs ``C'`` ``(P, K, n_a + 1, n_b + 1)``, supplies ``y1``
    ``(P, n_a + 1)`` and demands ``y2`` ``(P, n_b + 1)``, built vectorised over pairs."""
    n_a, n_b = len(nets_a[0].masses), len(nets_b[0].masses)
    la = np.stack([net.labels for net in nets_a])  # (P, n_a)
    lb = np.stack([net.labels for net in nets_b])
    pa = np.stack([net.paths for net in nets_a])  # (P, n_a, k)
    pb = np.stack([net.paths for net in nets_b])
    c_lmm = mismatch[la[:, :, None], lb[:, None, :]]  # (P, n_a, n_b)
    c_str = np.abs(pa[:, :, None, :] - pb[:, None, :, :]).mean(axis=3)
    cost = np.empty((len(nets_a), len(nus), n_a + 1, n_b + 1))
    cost[:, :, :n_a, :n_b] = c_lmm[:, None] + nus[None, :, None, None] * c_str[:, None]
    cost[:, :, n_a, :n_b] = NON_ASSIGNMENT_COST
    cost[:, :, :n_a, n_b] = NON_ASSIGNMENT_COST
    cost[:, :, n_a, n_b] = 0.0
    ma = np.stack([net.masses for net in nets_a])
    mb = np.stack([net.masses for net in nets_b])
    y1 = np.concatenate([ma, mb.sum(1)[:, None]], axis=1)
    y2 = np.concatenate([mb, ma.sum(1)[:, None]], axis=1)
    y2 *= (y1.sum(1) / y2.sum(1))[:, None]  # exact equal totals for the solver
    return cost, y1, y2


def solve_pairs(
    nets_a: Sequence[NetworkSummary], nets_b: Sequence[NetworkSummary], pairs: np.ndarray, nus: np.ndarray,
    mismatch: np.ndarray = LABEL_MISMATCH,
) -> np.ndarray:
    """OTMANN ``d`` for index pairs ``pairs`` ``(P, 2)`` into ``nets_a`` x ``nets_b`` and every
    ``nu_str`` in ``nus`` ``(K,)``; shape ``(P, K)``.

    Pairs with the same layer counts are built together (:func:`_batch_programs`); only the
    network-simplex calls run one pair at a time.
    """
    out = np.empty((len(pairs), len(nus)))
    if len(pairs) == 0:
        return out
    sizes_a = np.array([len(net.masses) for net in nets_a])
    sizes_b = np.array([len(net.masses) for net in nets_b])
    shape_key = sizes_a[pairs[:, 0]] * 10_000 + sizes_b[pairs[:, 1]]
    for key in np.unique(shape_key):
        sel = np.nonzero(shape_key == key)[0]
        cost, y1, y2 = _batch_programs([nets_a[i] for i in pairs[sel, 0]], [nets_b[j] for j in pairs[sel, 1]], nus,
                                        mismatch)
        for row, p in enumerate(sel):
            for c in range(len(nus)):
                out[p, c] = emd_value(y1[row], y2[row], cost[row, c])
    return out


# Worker-side state for the process pool (set once per worker by the initializer).
_WORKER: dict = {}


def _worker_init(nets_a, nets_b, nus, mismatch) -> None:
    _WORKER.update(nets_a=nets_a, nets_b=nets_b, nus=nus, mismatch=mismatch)


def _worker_solve(pairs: np.ndarray) -> np.ndarray:
    return solve_pairs(_WORKER["nets_a"], _WORKER["nets_b"], pairs, _WORKER["nus"], _WORKER["mismatch"])


def pool_size(n_pairs: int, n_jobs: int | None, parallel_min_pairs: int) -> int:
    """Worker processes for ``n_pairs`` new transport problems.

    ``n_jobs`` given: that many. Otherwise 1 below ``parallel_min_pairs`` (a pool costs ~0.1 s to
    start), else up to 2, as many as the load average leaves idle: on a saturated machine a pool
    is slower than one process.
    """
    if n_jobs is not None:
        return max(1, int(n_jobs))
    if n_pairs < parallel_min_pairs:
        return 1
    cpus = os.cpu_count() or 1
    try:
        idle = cpus - os.getloadavg()[0]
    except OSError:  # pragma: no cover - platforms without load averages
        idle = cpus
    return max(1, min(2, cpus, int(idle)))


def solve_pairs_parallel(
    nets_a: Sequence[NetworkSummary], nets_b: Sequence[NetworkSummary], pairs: np.ndarray, nus: np.ndarray, workers: int,
    mismatch: np.ndarray = LABEL_MISMATCH,
) -> np.ndarray:
    """:func:`solve_pairs` over ``workers`` processes (forked where possible); same ``(P, K)``
    result, each pair solved by the same code on the same inputs."""
    if workers <= 1 or len(pairs) < 2 * workers:
        return solve_pairs(nets_a, nets_b, pairs, nus, mismatch)
    # Interleaved chunks balance the work (pair sizes follow the caller's order).
    chunks = [pairs[w::workers] for w in range(workers)]
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_init, initargs=(nets_a, nets_b, nus, mismatch)) as pool:
        results = list(pool.map(_worker_solve, chunks))
    out = np.empty((len(pairs), len(nus)))
    for w in range(workers):
        out[w::workers] = results[w]
    return out


# ---------------------------------------------------------------------------- one plan, for views
@dataclass(frozen=True)
class TransportPlan:
    """The OTMANN solution between two architectures, for the transport-plan view.

    ``plan`` has shape ``(n_a + 1, n_b + 1)``: row / column ``n_a`` / ``n_b`` is the
    non-assignment layer. ``label_cost = <Z, C_lmm>``, ``structural_cost = <Z, C_str>``
    (unweighted; the objective uses ``nu_str * structural_cost``), ``non_assignment_cost`` =
    mass left unassigned in either network (Eq. (7) of App. A.1); ``distance`` is their
    weighted sum and ``normalised`` = ``distance / (tm_a + tm_b)``. ``masses_*`` ``(n_*,)``,
    ``label_costs`` / ``structural_costs`` ``(n_a, n_b)``.
    """

    arch_a: Architecture
    arch_b: Architecture
    labels_a: tuple[str, ...]
    labels_b: tuple[str, ...]
    masses_a: np.ndarray
    masses_b: np.ndarray
    plan: np.ndarray
    label_costs: np.ndarray
    structural_costs: np.ndarray
    nu_str: float
    label_cost: float
    structural_cost: float
    non_assignment_cost: float
    distance: float
    normalised: float
    #: Cost per unit of mass left unassigned (App. A.1), for views that draw the cost matrix.
    unit_non_assignment: float = NON_ASSIGNMENT_COST


def transport_plan(
    arch_a: Architecture,
    arch_b: Architecture,
    nu_str: float = 0.5,
    *,
    zeta: float = ZETA,
    cell_channels: int = 16,
    structure: str = "paths",
    table: LabelTable = BUILTIN,
) -> TransportPlan:
    """Solve program (6) for one pair with ``ot.emd`` and split the optimum into its terms.

    Both architectures are compared through ``reduced()`` (the returned ``arch_a`` /
    ``arch_b`` are the reduced graphs whose nodes the plan indexes).
    """
    check_structure(structure)
    red_a, red_b = arch_a.reduced(), arch_b.reduced()
    net_a = summarise(red_a, zeta, cell_channels, structure, table)
    net_b = summarise(red_b, zeta, cell_channels, structure, table)
    c_lmm, c_str = cost_blocks(net_a, net_b, table.mismatch)
    y1, y2 = supplies(net_a, net_b)
    plan = pot().emd(y1, y2, augmented(c_lmm + nu_str * c_str))
    n_a, n_b = c_lmm.shape
    core = plan[:n_a, :n_b]
    label_cost = float((core * c_lmm).sum())
    structural_cost = float((core * c_str).sum())
    nas = float(plan[n_a, :n_b].sum() + plan[:n_a, n_b].sum()) * NON_ASSIGNMENT_COST
    distance = label_cost + nu_str * structural_cost + nas
    return TransportPlan(
        red_a, red_b, red_a.labels, red_b.labels, net_a.masses, net_b.masses, plan, c_lmm, c_str,
        float(nu_str), label_cost, structural_cost, nas, distance, distance / (net_a.total + net_b.total),
    )


__all__ = [
    "NetworkSummary", "TransportPlan", "augmented", "cost_blocks", "emd_value", "pool_size", "solve_pairs",
    "solve_pairs_parallel", "summarise", "supplies", "transport_plan",
]
