"""OTMANN: optimal transport distance between neural architectures (NASBOT, paper 001).

A network is a labelled DAG of layers. OTMANN matches the *mass* (amount of computation) of the
layers of one network to those of another, paying (paper 001, Sec. 3):

* ``phi_lmm``: the label-mismatch penalty ``M(l(i), l(j))`` per unit of mass moved from layer
  ``i`` to layer ``j`` (Table 1 / 4 / 5 of the paper);
* ``phi_nas``: 1 per unit of mass left unassigned in either network;
* ``nu_str * phi_str``: the structural penalty, the mean absolute difference of the six path
  lengths (shortest / longest / random-walk, from the input and to the output) per unit moved.

The matching program (3) is solved as the optimal transport program (6) of App. A.1: each
network gets an extra "non-assignment" layer whose supply is the other network's total mass,
with cost 1 to and from every real layer and 0 between the two dummies. The exact network
simplex of POT (the solver behind ``ot.emd``) solves it. ``d`` is the optimum and
``dbar = d / (tm(G1) + tm(G2))`` the normalised distance (Sec. 3, after Theorem 1).

The kernel is the ensemble of Sec. 4.1, Eq. (4)::

    k(x, x') = alpha * exp(-sum_i beta_i d_i^p) + alpha_bar * exp(-sum_i beta_bar_i dbar_i^p_bar)

over ``nu_str in {0.1, 0.2, 0.4, 0.8}`` with ``p = 1``, ``p_bar = 2`` (the paper's values). The
distances for every ``nu_str`` are the kernel's components, so a GP re-weights them without
recomputing a single transport problem.

Architectures this module understands (after :meth:`Architecture.reduced`):

* **NAS-Bench-201 cells** (no widths): labels ``nor_conv_1x1``, ``nor_conv_3x3``,
  ``avg_pool_3x3``. Every operation outputs ``cell_channels`` channels (default 16, NB201's
  first stage) and a node *sums* its inputs, so a convolution's mass is ``C * C`` and a
  pooling layer's is ``C`` (paper: conv = units x incoming units, pool = incoming units).
  ``NB201_LABEL_MISMATCH`` follows Table 1 in spirit: conv1x1 vs conv3x3 costs 0.2 (Table 1's
  conv3 vs conv5), a convolution never matches a pooling layer (incompatible), input / output
  match only themselves. ``skip_connect`` and ``none`` never reach the kernel: ``reduced()``
  removes them. Parallel edges (the multiplicity the reduction keeps, ``x + x``) do not change
  a cell's masses (a node sums its inputs into ``C`` channels) nor its shortest / longest path
  lengths; the random-walk lengths average over incoming / outgoing edges once per copy.
* **Layer-space MLPs** (widths = units): labels of App. A (Table 5) in ``MLP_LABELS`` with
  ``MLP_LABEL_MISMATCH``; ``linear`` (regression) and ``softmax`` (classification) are the
  decision layers (Sec. 2.2). A layer *concatenates* its inputs (Sec. 2.2), so its mass is
  ``units x sum of the parents' units``; the input layer's units are its width if given,
  else 1 (the data dimension is problem dependent).
* **Layer-space CNNs** (Table 4): ``CNN_LABELS`` / ``CNN_LABEL_MISMATCH`` with the ``res``
  rule of App. A (``M(res k, conv j) = 0.9 M(conv k, conv j) + 0.1``), res mass twice a
  conv's, fc mass multiplied by 0.1 (App. A, "Other details").

Input, output and decision layers get the zeta rule of Sec. 3: ``lm(ip) = lm(op) = zeta *
sum(processing masses)`` and each of the ``|DL|`` decision layers ``zeta / |DL|`` of it, with
``zeta = 0.1``. Deviation: a network with no processing mass at all (an NB201 cell that is
only skip connections, or all ``none``) would have zero total mass and an undefined ``dbar``;
its non-processing layers get unit mass instead (documented in :func:`layer_masses`).

"Infinite" label costs are the large finite number :data:`INCOMPATIBLE_COST`: any value above
2 gives the same optimum (App. A.1: leaving both masses unassigned costs 2), and every matrix
here satisfies ``M(x, z) <= M(x, y) + M(y, z)``, the condition of Theorem 3 under which ``d``
(not ``dbar``) is a pseudo-distance with the triangle inequality.

The kernel is not positive definite (``positive_definite = False``);
:meth:`OTMANNKernel.psd_matrix` adds the smallest jitter that makes a Gram matrix
Cholesky-factorable and reports how much (``last_jitter``).
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import ot

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.kernels.base import Components, Hyperparameter, Kernel, make_psd
from nasviz.spaces.base import LABELLED_DAG, LAYERS

try:  # the exact network simplex behind ot.emd, without its per-call Python overhead
    from ot.lp.emd_wrap import emd_c as _emd_c
except ImportError:  # pragma: no cover - older / newer POT layouts
    _emd_c = None

#: Stand-in for the paper's infinite label cost: any value > 2 yields the same optimum.
INCOMPATIBLE_COST = 1e3
#: Non-assignment cost per unit of mass (App. A.1: the costs of M are relative to it).
NON_ASSIGNMENT_COST = 1.0
#: The paper's zeta (Sec. 3): input/output/decision mass as a fraction of processing mass.
ZETA = 0.1
#: The paper's nu_str ensemble (Sec. 4.1).
DEFAULT_NU_STR: tuple[float, ...] = (0.1, 0.2, 0.4, 0.8)

_INF = INCOMPATIBLE_COST

# ---------------------------------------------------------------------------- label tables
#: Labels of paper 001 Table 5 (MLPs) in the order of :data:`MLP_LABEL_MISMATCH`.
#: relu..elu are rectifiers, logistic / tanh sigmoids; linear (regression) and softmax
#: (classification) are decision layers; input / output are the paper's ip / op.
MLP_LABELS: tuple[str, ...] = (
    "relu", "crelu", "leaky-relu", "softplus", "elu", "logistic", "tanh", "linear", "softmax", INPUT, OUTPUT,
)
MLP_RECTIFIERS: tuple[str, ...] = ("relu", "crelu", "leaky-relu", "softplus", "elu")
MLP_SIGMOIDS: tuple[str, ...] = ("logistic", "tanh")


def _mlp_mismatch() -> np.ndarray:
    """Table 5: 0 on the diagonal, rectifier-rectifier and sigmoid-sigmoid 0.1, rectifier-
    sigmoid 0.25, everything else (linear, softmax, ip, op with anything but themselves)
    incompatible. ``<rec>`` of the table stands for leaky-relu, softplus and elu."""
    n = len(MLP_LABELS)
    M = np.full((n, n), _INF)
    idx = {label: i for i, label in enumerate(MLP_LABELS)}
    groups = (MLP_RECTIFIERS, MLP_SIGMOIDS)
    for g in groups:
        for x in g:
            for y in g:
                M[idx[x], idx[y]] = 0.1
    for x in MLP_RECTIFIERS:
        for y in MLP_SIGMOIDS:
            M[idx[x], idx[y]] = M[idx[y], idx[x]] = 0.25
    np.fill_diagonal(M, 0.0)
    return M


#: Paper 001 Table 5, indexed by :data:`MLP_LABELS` (``INCOMPATIBLE_COST`` for a blank).
MLP_LABEL_MISMATCH: np.ndarray = _mlp_mismatch()
MLP_LABEL_MISMATCH.setflags(write=False)

#: Labels of paper 001 Table 4 (CNNs) plus the res blocks of App. A.
CNN_LABELS: tuple[str, ...] = (
    "conv3", "conv5", "conv7", "res3", "res5", "res7", "max-pool", "avg-pool", "fc", "softmax", INPUT, OUTPUT,
)


def _cnn_mismatch() -> np.ndarray:
    """Table 4 plus the res rule of App. A: ``M(res k, conv j) = 0.9 M(conv k, conv j) + 0.1``,
    ``M(res k, res j) = M(conv k, conv j)``."""
    n = len(CNN_LABELS)
    M = np.full((n, n), _INF)
    idx = {label: i for i, label in enumerate(CNN_LABELS)}
    conv = {(3, 3): 0.0, (3, 5): 0.2, (3, 7): 0.3, (5, 5): 0.0, (5, 7): 0.2, (7, 7): 0.0}
    conv.update({(b, a): v for (a, b), v in list(conv.items())})
    for (k, j), v in conv.items():
        M[idx[f"conv{k}"], idx[f"conv{j}"]] = v
        M[idx[f"res{k}"], idx[f"res{j}"]] = v
        M[idx[f"res{k}"], idx[f"conv{j}"]] = M[idx[f"conv{j}"], idx[f"res{k}"]] = 0.9 * v + 0.1 * NON_ASSIGNMENT_COST
    M[idx["max-pool"], idx["avg-pool"]] = M[idx["avg-pool"], idx["max-pool"]] = 0.25
    np.fill_diagonal(M, 0.0)
    return M


#: Paper 001 Table 4 (+ res rule), indexed by :data:`CNN_LABELS`.
CNN_LABEL_MISMATCH: np.ndarray = _cnn_mismatch()
CNN_LABEL_MISMATCH.setflags(write=False)

#: NAS-Bench-201 operations that survive ``reduced()``, plus input / output.
NB201_LABELS: tuple[str, ...] = ("nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3", INPUT, OUTPUT)
#: conv1x1 vs conv3x3 = 0.2 (Table 1's conv3 vs conv5); conv vs pool incompatible (Table 1);
#: input / output match only themselves.
NB201_LABEL_MISMATCH: np.ndarray = np.array(
    [
        [0.0, 0.2, _INF, _INF, _INF],
        [0.2, 0.0, _INF, _INF, _INF],
        [_INF, _INF, 0.0, _INF, _INF],
        [_INF, _INF, _INF, 0.0, _INF],
        [_INF, _INF, _INF, _INF, 0.0],
    ]
)
NB201_LABEL_MISMATCH.setflags(write=False)

# Layer kinds decide the mass rule; groups decide the App. A "grouped" structural penalty.
_KIND: dict[str, str] = {
    **{label: "unit" for label in MLP_RECTIFIERS + MLP_SIGMOIDS},
    "conv3": "unit", "conv5": "unit", "conv7": "unit",
    "res3": "res", "res5": "res", "res7": "res",
    "fc": "fc",
    "max-pool": "pool", "avg-pool": "pool", "avg_pool_3x3": "pool",
    "nor_conv_1x1": "unit", "nor_conv_3x3": "unit",
    "linear": "decision", "softmax": "decision",
    INPUT: "input", OUTPUT: "output",
}
_GROUP: dict[str, str] = {
    **{label: "rectifier" for label in MLP_RECTIFIERS},
    **{label: "sigmoid" for label in MLP_SIGMOIDS},
    **{label: "conv" for label in ("conv3", "conv5", "conv7", "res3", "res5", "res7", "nor_conv_1x1", "nor_conv_3x3")},
    **{label: "pool" for label in ("max-pool", "avg-pool", "avg_pool_3x3")},
    "fc": "fc",
}
def layer_kind(label: str) -> str:
    """OTMANN's kind of a label (``input``, ``output``, ``unit``, ``res``, ``fc``, ``pool``,
    ``decision``): what its mass is (:func:`layer_masses`)."""
    if label not in _KIND:
        raise ValueError(f"OTMANN: unknown layer label {label!r}; known labels: {', '.join(sorted(_KIND))}")
    return _KIND[label]


#: Groups of App. A's grouped structural penalty (MLP: rectifier, sigmoid; CNN: conv, pool, fc).
STRUCTURE_GROUPS: tuple[str, ...] = ("rectifier", "sigmoid", "conv", "pool", "fc")


def _combined_mismatch() -> tuple[dict[str, int], np.ndarray]:
    """One block-diagonal matrix over all label sets (labels shared by several sets, i.e.
    input / output / softmax / linear, are one row). Cross-set pairs are incompatible, which
    keeps the triangle inequality of ``M`` (any path through another set pays >= INF)."""
    labels: list[str] = []
    for table in (NB201_LABELS, MLP_LABELS, CNN_LABELS):
        for label in table:
            if label not in labels:
                labels.append(label)
    index = {label: i for i, label in enumerate(labels)}
    M = np.full((len(labels), len(labels)), _INF)
    for table_labels, table in ((NB201_LABELS, NB201_LABEL_MISMATCH), (MLP_LABELS, MLP_LABEL_MISMATCH), (CNN_LABELS, CNN_LABEL_MISMATCH)):
        ids = np.array([index[label] for label in table_labels])
        M[np.ix_(ids, ids)] = np.minimum(M[np.ix_(ids, ids)], table)
    return index, M


LABEL_INDEX, LABEL_MISMATCH = _combined_mismatch()
LABEL_MISMATCH.setflags(write=False)


# ---------------------------------------------------------------------------- per-arch work
def layer_masses(arch: Architecture, *, zeta: float = ZETA, cell_channels: int = 16) -> np.ndarray:
    """Layer masses ``lm(u)`` of paper 001 Sec. 3, shape ``(n_nodes,)``.

    Processing layers: ``units x incoming units`` (conv / MLP layers), twice that for res
    blocks, 0.1 times that for fc (App. A), incoming units for pooling. Cells without widths
    use ``cell_channels`` for every layer and sum their inputs (NB201), so incoming units =
    ``cell_channels``; layer spaces concatenate, so incoming units = sum of parents' units.
    Input / output: ``zeta * sum(processing)``; decision layers share ``zeta * sum(processing)``
    equally. If the processing mass is 0 the non-processing layers get unit mass (deviation:
    keeps ``dbar`` defined for empty cells).
    """
    n = arch.n_nodes
    labels = arch.labels
    for u, label in enumerate(labels):
        if label not in _KIND:
            raise ValueError(f"OTMANN: unknown layer label {label!r} at node {u}; known labels: {', '.join(sorted(_KIND))}")
    if labels[0] != INPUT or labels[-1] != OUTPUT:
        raise ValueError(f"OTMANN: node 0 must be labelled {INPUT!r} and the last node {OUTPUT!r}, got {labels[0]!r} and {labels[-1]!r}")
    pred = arch.predecessors()
    out_units = np.zeros(n)
    masses = np.zeros(n)
    widths = arch.widths
    order = arch.topological_order()
    for u in order:
        kind = _KIND[labels[u]]
        if widths is None:
            incoming = float(cell_channels) if pred[u] else 0.0
            own = float(cell_channels)
        else:
            incoming = float(sum(out_units[p] for p in pred[u]))
            own = widths[u]
        if kind == "input":
            # Cells: the input carries C channels. Layer spaces: the input layer's width if
            # given (the data dimension), else 1.
            out_units[u] = own if own is not None else 1.0
        elif kind in ("unit", "res", "fc"):
            if own is None or own <= 0:
                raise ValueError(f"OTMANN: layer {u} ({labels[u]!r}) needs a positive width (units), got {own!r}")
            factor = {"unit": 1.0, "res": 2.0, "fc": 0.1}[kind]
            masses[u] = factor * float(own) * incoming
            out_units[u] = float(own)
        elif kind == "pool":
            masses[u] = incoming
            out_units[u] = incoming
    processing = float(masses.sum())
    base = zeta * processing if processing > 0 else 1.0
    decision = [u for u in range(n) if _KIND[labels[u]] == "decision"]
    for u in range(n):
        kind = _KIND[labels[u]]
        if kind in ("input", "output"):
            masses[u] = base
        elif kind == "decision":
            masses[u] = base / len(decision)
    return masses


def path_lengths(arch: Architecture, hop: np.ndarray | None = None) -> np.ndarray:
    """The six path lengths of paper 001 Sec. 2 / App. A.3 (Algorithm 1), shape ``(n, 6)``.

    Columns: ``[ip-sp, ip-lp, ip-rw, op-sp, op-lp, op-rw]``: shortest / longest / random-walk
    number of hops from the input to each layer and from each layer to the output. The
    random walk from the input averages over parents (walking back), the one to the output
    over children, as Algorithm 1 does. ``hop`` (shape ``(n,)``) weights the hops for App. A's
    grouped variant: a hop towards the output out of ``u`` counts ``hop[u]``, a hop from the
    input into ``v`` counts ``hop[v]`` (1 everywhere by default). Lengths with no path (only in
    an empty, edge-less cell) are 0.
    """
    n = arch.n_nodes
    hop = np.ones(n) if hop is None else np.asarray(hop, dtype=float)
    pred, succ = arch.predecessors(), arch.successors()
    order = arch.topological_order()
    ip = np.full((n, 3), np.nan)
    op = np.full((n, 3), np.nan)
    ip[0] = 0.0
    for v in order:
        parents = [p for p in pred[v] if not np.isnan(ip[p, 0])]
        if v == 0 or not parents:
            continue
        vals = ip[parents]
        ip[v] = (vals[:, 0].min() + hop[v], vals[:, 1].max() + hop[v], vals[:, 2].mean() + hop[v])
    op[n - 1] = 0.0
    for u in reversed(order):
        children = [c for c in succ[u] if not np.isnan(op[c, 0])]
        if u == n - 1 or not children:
            continue
        vals = op[children]
        op[u] = (vals[:, 0].min() + hop[u], vals[:, 1].max() + hop[u], vals[:, 2].mean() + hop[u])
    return np.nan_to_num(np.hstack([ip, op]), nan=0.0)


@dataclass(frozen=True)
class _Rep:
    """Per-architecture data: label indices (n,), masses (n,), path-length features (n, k)."""

    labels: np.ndarray
    masses: np.ndarray
    paths: np.ndarray
    total: float


def _prepare(arch: Architecture, zeta: float, cell_channels: int, structure: str) -> _Rep:
    arch = arch.reduced()
    masses = layer_masses(arch, zeta=zeta, cell_channels=cell_channels)
    paths = path_lengths(arch)
    if structure == "grouped":
        # App. A: average the structural matrix over "all layers" and each layer group, where a
        # group's path lengths count only hops through that group's layers. Averaging the six
        # columns of each block equals one mean over all concatenated columns.
        blocks = [paths]
        for group in _groups_for(arch):
            hop = np.array([1.0 if _GROUP.get(label) == group else 0.0 for label in arch.labels])
            blocks.append(path_lengths(arch, hop))
        paths = np.hstack(blocks)
    labels = np.array([LABEL_INDEX[label] for label in arch.labels], dtype=np.intp)
    return _Rep(labels, masses, paths, float(masses.sum()))


def _groups_for(arch: Architecture) -> tuple[str, ...]:
    """The App. A groups of the label family of ``arch`` (same set for every arch of a family,
    so structural matrices of two archs always have the same number of columns)."""
    labels = set(arch.labels)
    if labels & set(MLP_RECTIFIERS + MLP_SIGMOIDS) or "linear" in labels:
        return ("rectifier", "sigmoid")
    if labels & {"nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3"} or arch.widths is None:
        return ("conv", "pool")
    return ("conv", "pool", "fc")


# ---------------------------------------------------------------------------- the OT program
def _cost_blocks(rep_a: _Rep, rep_b: _Rep) -> tuple[np.ndarray, np.ndarray]:
    """``C_lmm`` and ``C_str`` of Sec. 3, each ``(n_a, n_b)``."""
    c_lmm = LABEL_MISMATCH[np.ix_(rep_a.labels, rep_b.labels)]
    if rep_a.paths.shape[1] != rep_b.paths.shape[1]:
        raise ValueError("OTMANN: the two architectures come from different label families (grouped structure)")
    c_str = np.abs(rep_a.paths[:, None, :] - rep_b.paths[None, :, :]).mean(axis=2)
    return c_lmm, c_str


def _augmented(c: np.ndarray) -> np.ndarray:
    """``C' = [[C, 1], [1, 0]]`` of App. A.1, shape ``(n_a + 1, n_b + 1)``, C-contiguous."""
    n_a, n_b = c.shape
    out = np.empty((n_a + 1, n_b + 1))
    out[:n_a, :n_b] = c
    out[:n_a, n_b] = NON_ASSIGNMENT_COST
    out[n_a, :n_b] = NON_ASSIGNMENT_COST
    out[n_a, n_b] = 0.0
    return out


def _supplies(rep_a: _Rep, rep_b: _Rep) -> tuple[np.ndarray, np.ndarray]:
    """``y1 = [lm(G1), tm(G2)]``, ``y2 = [lm(G2), tm(G1)]`` of App. A.1 (equal totals)."""
    y1 = np.append(rep_a.masses, rep_b.total)
    y2 = np.append(rep_b.masses, rep_a.total)
    y2 *= y1.sum() / y2.sum()  # remove float round-off: the solver needs equal totals
    return y1, y2


def _emd_value(y1: np.ndarray, y2: np.ndarray, cost: np.ndarray) -> float:
    """Optimum of the OT program (6). The C solver is called directly; anything but an optimal
    exit (code 1) goes through ``ot.emd2``, which retries and warns."""
    if _emd_c is not None:
        result = _emd_c(y1, y2, cost, 100000, 1)
        if result[-1] == 1:
            return float(result[1])
    return float(ot.emd2(y1, y2, cost, numItermax=1_000_000))


@dataclass(frozen=True)
class TransportPlan:
    """The OTMANN solution between two architectures, for the transport-plan view.

    ``plan`` has shape ``(n_a + 1, n_b + 1)``: row / column ``n_a`` / ``n_b`` is the
    non-assignment layer. ``label_cost = <Z, C_lmm>``, ``structural_cost = <Z, C_str>``
    (unweighted; the objective uses ``nu_str * structural_cost``), ``non_assignment_cost`` =
    mass left unassigned in either network (Eq. (7) of App. A.1); ``distance`` is their
    weighted sum and ``normalised`` = ``distance / (tm_a + tm_b)``.
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


def transport_plan(
    arch_a: Architecture,
    arch_b: Architecture,
    nu_str: float = 0.5,
    *,
    zeta: float = ZETA,
    cell_channels: int = 16,
    structure: str = "paths",
) -> TransportPlan:
    """Solve program (6) for one pair with ``ot.emd`` and split the optimum into its terms.

    Both architectures are compared through ``reduced()`` (the returned ``arch_a`` /
    ``arch_b`` are the reduced graphs whose nodes the plan indexes).
    """
    _check_structure(structure)
    red_a, red_b = arch_a.reduced(), arch_b.reduced()
    rep_a = _prepare(red_a, zeta, cell_channels, structure)
    rep_b = _prepare(red_b, zeta, cell_channels, structure)
    c_lmm, c_str = _cost_blocks(rep_a, rep_b)
    y1, y2 = _supplies(rep_a, rep_b)
    plan = ot.emd(y1, y2, _augmented(c_lmm + nu_str * c_str))
    n_a, n_b = c_lmm.shape
    core = plan[:n_a, :n_b]
    label_cost = float((core * c_lmm).sum())
    structural_cost = float((core * c_str).sum())
    nas = float(plan[n_a, :n_b].sum() + plan[:n_a, n_b].sum()) * NON_ASSIGNMENT_COST
    distance = label_cost + nu_str * structural_cost + nas
    return TransportPlan(
        red_a, red_b, red_a.labels, red_b.labels, rep_a.masses, rep_b.masses, plan, c_lmm, c_str,
        float(nu_str), label_cost, structural_cost, nas, distance, distance / (rep_a.total + rep_b.total),
    )


def _check_structure(structure: str) -> None:
    if structure not in ("paths", "grouped"):
        raise ValueError(f"structure must be 'paths' (Sec. 3) or 'grouped' (App. A), got {structure!r}")


def _solve_pairs(reps_a: Sequence[_Rep], reps_b: Sequence[_Rep], pairs: np.ndarray, nus: np.ndarray) -> np.ndarray:
    """OTMANN ``d`` for index pairs ``(i, j)`` into ``reps_a`` x ``reps_b``, shape ``(P, len(nus))``.

    Cost blocks are built vectorised for all pairs with the same layer counts; only the
    network-simplex calls run one pair at a time.
    """
    out = np.empty((len(pairs), len(nus)))
    if len(pairs) == 0:
        return out
    sizes_a = np.array([len(r.masses) for r in reps_a])
    sizes_b = np.array([len(r.masses) for r in reps_b])
    key = sizes_a[pairs[:, 0]] * 10_000 + sizes_b[pairs[:, 1]]
    for k in np.unique(key):
        sel = np.nonzero(key == k)[0]
        ia, ib = pairs[sel, 0], pairs[sel, 1]
        n_a, n_b = sizes_a[ia[0]], sizes_b[ib[0]]
        la = np.stack([reps_a[i].labels for i in ia])  # (P, n_a)
        lb = np.stack([reps_b[j].labels for j in ib])
        pa = np.stack([reps_a[i].paths for i in ia])  # (P, n_a, k)
        pb = np.stack([reps_b[j].paths for j in ib])
        c_lmm = LABEL_MISMATCH[la[:, :, None], lb[:, None, :]]  # (P, n_a, n_b)
        c_str = np.abs(pa[:, :, None, :] - pb[:, None, :, :]).mean(axis=3)
        # augmented costs C' for every pair and nu at once: (P, K, n_a + 1, n_b + 1)
        cost = np.empty((len(sel), len(nus), n_a + 1, n_b + 1))
        cost[:, :, :n_a, :n_b] = c_lmm[:, None] + nus[None, :, None, None] * c_str[:, None]
        cost[:, :, n_a, :n_b] = NON_ASSIGNMENT_COST
        cost[:, :, :n_a, n_b] = NON_ASSIGNMENT_COST
        cost[:, :, n_a, n_b] = 0.0
        # supplies y1 = [lm(G1), tm(G2)], demands y2 = [lm(G2), tm(G1)] (App. A.1)
        ma = np.stack([reps_a[i].masses for i in ia])
        mb = np.stack([reps_b[j].masses for j in ib])
        ta, tb = ma.sum(1), mb.sum(1)
        y1 = np.concatenate([ma, tb[:, None]], axis=1)
        y2 = np.concatenate([mb, ta[:, None]], axis=1)
        y2 *= (y1.sum(1) / y2.sum(1))[:, None]  # exact equal totals for the solver
        for row in range(len(sel)):
            a, b = y1[row], y2[row]
            for c in range(len(nus)):
                out[sel[row], c] = _emd_value(a, b, cost[row, c])
    return out


# Worker-side state for the process pool (set once per worker by the initializer).
_WORKER: dict = {}


def _worker_init(reps_a, reps_b, nus) -> None:
    _WORKER.update(reps_a=reps_a, reps_b=reps_b, nus=nus)


def _worker_solve(pairs: np.ndarray) -> np.ndarray:
    return _solve_pairs(_WORKER["reps_a"], _WORKER["reps_b"], pairs, _WORKER["nus"])


# ---------------------------------------------------------------------------- the kernel
class OTMANNKernel(Kernel):
    """The NASBOT kernel ensemble over OTMANN distances (paper 001 Sec. 4.1, Eq. (4)).

    Parameters
    ----------
    nu_str : sequence of float
        Structural trade-offs of the ensemble (paper: 0.1, 0.2, 0.4, 0.8).
    p, p_bar : float
        Exponents of ``d`` and ``dbar`` in Eq. (4) (paper: 1 and 2).
    zeta : float
        Mass fraction of input / output / decision layers (paper: 0.1).
    cell_channels : int
        Channels of every operation in cells without widths (NB201).
    structure : {"paths", "grouped"}
        ``"paths"``: the six path lengths of Sec. 3; ``"grouped"``: App. A's average with the
        path lengths through each layer group.
    n_jobs : int or None
        Worker processes for large matrices. ``None``: up to 2 (as many as the load average
        leaves idle) when more than ``parallel_min_pairs`` transport problems are new (a pool
        costs ~0.1 s to start and is slower than one process on a saturated machine).

    Components (each ``(len(a), len(b))``): ``"d_{nu}"`` and ``"dbar_{nu}"`` per ``nu_str``.
    Hyperparameters: ``alpha``, ``alpha_bar``, ``beta_{nu}``, ``beta_bar_{nu}``.
    """

    name = "otmann"
    reads = frozenset({LABELLED_DAG, LAYERS})
    positive_definite = False

    def __init__(
        self,
        nu_str: Sequence[float] = DEFAULT_NU_STR,
        p: float = 1.0,
        p_bar: float = 2.0,
        zeta: float = ZETA,
        cell_channels: int = 16,
        structure: str = "paths",
        n_jobs: int | None = None,
        parallel_min_pairs: int = 20000,
    ) -> None:
        nus = tuple(float(v) for v in nu_str)
        if not nus or any(v <= 0 for v in nus):
            raise ValueError(f"nu_str must be a non-empty list of positive numbers, got {nu_str!r}")
        if not (0 < zeta < 1):
            raise ValueError(f"zeta must lie in (0, 1) (paper 001 Sec. 3), got {zeta!r}")
        if p <= 0 or p > 2 or p_bar <= 0 or p_bar > 2:
            raise ValueError(f"p and p_bar must lie in (0, 2] (paper 001 Sec. 2.2), got {p!r}, {p_bar!r}")
        if cell_channels <= 0:
            raise ValueError(f"cell_channels must be positive, got {cell_channels!r}")
        _check_structure(structure)
        self.nu_str = nus
        self.p, self.p_bar = float(p), float(p_bar)
        self.zeta = float(zeta)
        self.cell_channels = int(cell_channels)
        self.structure = structure
        self.n_jobs = n_jobs
        self.parallel_min_pairs = int(parallel_min_pairs)
        self._kidx: dict[str, int] = {}
        self._reps: list[_Rep] = []
        # d between cached architectures, (len(nu_str), cap, cap); NaN = not solved yet
        self._D = np.full((len(nus), 0, 0), np.nan)
        #: Typical scales of d and dbar (median over the first components call), for defaults.
        self._scale_d = np.ones(len(nus))
        self._scale_dbar = np.full(len(nus), 0.1)
        self._scaled = False
        #: Jitter added by the last :meth:`psd_matrix` call.
        self.last_jitter = 0.0

    # ------------------------------------------------------------------ names
    def _d_name(self, nu: float) -> str:
        return f"d_{nu:g}"

    def _dbar_name(self, nu: float) -> str:
        return f"dbar_{nu:g}"

    @property
    def component_names(self) -> list[str]:
        return [self._d_name(v) for v in self.nu_str] + [self._dbar_name(v) for v in self.nu_str]

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        k = len(self.nu_str)
        hps = [Hyperparameter("alpha", 1.0, (1e-3, 1e3)), Hyperparameter("alpha_bar", 1.0, (1e-3, 1e3))]
        for i, nu in enumerate(self.nu_str):
            b = 1.0 / (k * self._scale_d[i] ** self.p)
            hps.append(Hyperparameter(f"beta_{nu:g}", b, (b * 1e-3, b * 1e3)))
        for i, nu in enumerate(self.nu_str):
            b = 1.0 / (k * self._scale_dbar[i] ** self.p_bar)
            hps.append(Hyperparameter(f"beta_bar_{nu:g}", b, (b * 1e-3, b * 1e3)))
        return hps

    # ------------------------------------------------------------------ distances
    def _index(self, arch: Architecture) -> int:
        key = arch.canonical_key()
        i = self._kidx.get(key)
        if i is None:
            self._reps.append(_prepare(arch, self.zeta, self.cell_channels, self.structure))
            i = self._kidx[key] = len(self._reps) - 1
        return i

    def _pool_size(self, n_pairs: int) -> int:
        if self.n_jobs is not None:
            return max(1, int(self.n_jobs))
        if n_pairs < self.parallel_min_pairs:
            return 1
        cpus = os.cpu_count() or 1
        try:  # a pool only pays when cores are idle: on a saturated machine it is slower
            idle = cpus - os.getloadavg()[0]
        except OSError:  # pragma: no cover - platforms without load averages
            idle = cpus
        return max(1, min(2, cpus, int(idle)))

    def _solve(self, reps_a: list[_Rep], reps_b: list[_Rep], pairs: np.ndarray) -> np.ndarray:
        nus = np.array(self.nu_str)
        workers = self._pool_size(len(pairs))
        if workers <= 1 or len(pairs) < 2 * workers:
            return _solve_pairs(reps_a, reps_b, pairs, nus)
        # Interleaved chunks balance the work (pair sizes are sorted by the caller's order).
        chunks = [pairs[w::workers] for w in range(workers)]
        import multiprocessing as mp

        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
        with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_init, initargs=(reps_a, reps_b, nus)) as pool:
            results = list(pool.map(_worker_solve, chunks))
        out = np.empty((len(pairs), len(nus)))
        for w in range(workers):
            out[w::workers] = results[w]
        return out

    def otmann_distances(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> np.ndarray:
        """Raw OTMANN ``d`` for every ``nu_str``, shape ``(len(nu_str), len(a), len(b))``.

        Per-architecture masses and path lengths are computed once (cached by canonical key;
        isomorphic graphs have the same distance), and every solved pair is cached, so a
        growing training set only solves its new pairs.
        """
        ia = np.array([self._index(a) for a in archs_a], dtype=np.intp)
        ib = np.array([self._index(b) for b in archs_b], dtype=np.intp)
        n = len(self._reps)
        if self._D.shape[1] < n:
            cap = max(n, 2 * self._D.shape[1], 16)
            grown = np.full((len(self.nu_str), cap, cap), np.nan)
            old = self._D.shape[1]
            grown[:, :old, :old] = self._D
            grown[:, np.arange(cap), np.arange(cap)] = 0.0
            self._D = grown
        rows, cols = np.unique(ia), np.unique(ib)
        ii, jj = np.nonzero(np.isnan(self._D[0][np.ix_(rows, cols)]))
        if len(ii):
            pa, pb = np.minimum(rows[ii], cols[jj]), np.maximum(rows[ii], cols[jj])
            cap = self._D.shape[1]
            flat = np.unique(pa * cap + pb)  # each unordered pair once (d is symmetric)
            pairs = np.stack([flat // cap, flat % cap], axis=1)
            values = self._solve(self._reps, self._reps, pairs)  # (P, K)
            self._D[:, pairs[:, 0], pairs[:, 1]] = values.T
            self._D[:, pairs[:, 1], pairs[:, 0]] = values.T
        return self._D[:, ia[:, None], ib[None, :]]

    def total_masses(self, archs: Sequence[Architecture]) -> np.ndarray:
        """``tm(G)`` of each architecture, shape ``(len(archs),)``."""
        return np.array([self._reps[self._index(a)].total for a in archs])

    def components(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        """``d_{nu}`` and ``dbar_{nu} = d / (tm_a + tm_b)`` per ``nu_str``, each ``(len(a), len(b))``."""
        d = self.otmann_distances(archs_a, archs_b)
        tm = self.total_masses(archs_a)[:, None] + self.total_masses(archs_b)[None, :]
        dbar = d / tm[None]
        if not self._scaled and np.any(d[0] > 0):
            self._set_scales(d, dbar)
        comps: Components = {}
        for i, nu in enumerate(self.nu_str):
            comps[self._d_name(nu)] = d[i]
        for i, nu in enumerate(self.nu_str):
            comps[self._dbar_name(nu)] = dbar[i]
        return comps

    def _set_scales(self, d: np.ndarray, dbar: np.ndarray) -> None:
        """Default betas put the median pair of the first components call (usually the
        training Gram) at exp(-1) in each half of Eq. (4); the paper samples the betas from
        their posterior instead, so only ML-II's starting point depends on this."""
        for i in range(len(self.nu_str)):
            vd, vb = d[i].ravel(), dbar[i].ravel()
            vd, vb = vd[vd > 0], vb[vb > 0]
            if len(vd):
                self._scale_d[i] = float(np.median(vd))
                self._scale_dbar[i] = float(np.median(vb))
        self._scaled = True

    # ------------------------------------------------------------------ kernel
    def _split_theta(self, theta: Sequence[float] | None) -> tuple[float, float, np.ndarray, np.ndarray]:
        theta = self.default_theta() if theta is None else np.asarray(theta, dtype=float)
        k = len(self.nu_str)
        if theta.shape != (2 + 2 * k,):
            raise ValueError(f"theta must have {2 + 2 * k} entries (alpha, alpha_bar, {k} betas, {k} beta_bars), got shape {theta.shape}")
        return float(theta[0]), float(theta[1]), theta[2 : 2 + k], theta[2 + k :]

    def _stacks(self, components: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        try:
            dp = np.stack([np.asarray(components[self._d_name(v)]) for v in self.nu_str]) ** self.p
            dbp = np.stack([np.asarray(components[self._dbar_name(v)]) for v in self.nu_str]) ** self.p_bar
        except KeyError as exc:
            raise ValueError(f"components lack {exc.args[0]!r}; expected {self.component_names}") from None
        return dp, dbp

    def combine(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> np.ndarray:
        """Eq. (4): ``alpha exp(-sum beta_i d_i^p) + alpha_bar exp(-sum beta_bar_i dbar_i^p_bar)``."""
        alpha, alpha_bar, beta, beta_bar = self._split_theta(theta)
        dp, dbp = self._stacks(components)
        return alpha * np.exp(-np.tensordot(beta, dp, 1)) + alpha_bar * np.exp(-np.tensordot(beta_bar, dbp, 1))

    def combine_with_gradients(
        self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """``K`` and analytic ``dK/dtheta``: ``dK/dalpha = E``, ``dK/dbeta_i = -alpha E d_i^p``
        (likewise for the normalised half), in the order of :attr:`hyperparameters`."""
        alpha, alpha_bar, beta, beta_bar = self._split_theta(theta)
        dp, dbp = self._stacks(components)
        e = np.exp(-np.tensordot(beta, dp, 1))
        eb = np.exp(-np.tensordot(beta_bar, dbp, 1))
        grads = [e, eb] + [-alpha * e * dp[i] for i in range(len(beta))] + [-alpha_bar * eb * dbp[i] for i in range(len(beta_bar))]
        return alpha * e + alpha_bar * eb, grads

    def psd_matrix(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> tuple[np.ndarray, float]:
        """A square Gram matrix made Cholesky-factorable with :func:`make_psd`; returns
        ``(K, jitter)`` and stores the jitter in :attr:`last_jitter`."""
        K, jitter = make_psd(self.combine(components, theta))
        self.last_jitter = jitter
        return K, jitter

    def transport_plan(self, arch_a: Architecture, arch_b: Architecture, nu_str: float | None = None) -> TransportPlan:
        """:func:`transport_plan` with this kernel's settings (``nu_str`` defaults to the first)."""
        return transport_plan(
            arch_a, arch_b, self.nu_str[0] if nu_str is None else nu_str,
            zeta=self.zeta, cell_channels=self.cell_channels, structure=self.structure,
        )


__all__ = [
    "CNN_LABELS", "CNN_LABEL_MISMATCH", "layer_kind", "DEFAULT_NU_STR", "INCOMPATIBLE_COST", "LABEL_MISMATCH", "MLP_LABELS",
    "MLP_LABEL_MISMATCH", "NB201_LABELS", "NB201_LABEL_MISMATCH", "OTMANNKernel", "TransportPlan", "layer_masses",
    "path_lengths", "transport_plan",
]
