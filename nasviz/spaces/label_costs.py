"""OTMANN label-mismatch costs and layer kinds (paper 001 Sec. 3, Tables 1, 4, 5, App. A).

The spaces own their label tables (:meth:`~nasviz.spaces.base.SearchSpace.label_mismatch`);
the OTMANN kernel (:mod:`nasviz.kernels.otmann`) reads them from here.

The label-mismatch penalty ``M(l(i), l(j))`` is paid per unit of mass moved from a layer labelled
``l(i)`` to one labelled ``l(j)``; its values are relative to the non-assignment penalty of 1 per
unit of mass (App. A.1). Three label families:

* **MLPs** (Table 5, :data:`MLP_LABELS`): rectifiers among themselves and sigmoids among
  themselves 0.1, rectifier vs sigmoid 0.25; the decision layers ``linear`` (regression) and
  ``softmax`` (classification) and the input / output layers match only themselves.
* **CNNs** (Table 4, :data:`CNN_LABELS`): convolutions by kernel size (3 vs 5: 0.2, 3 vs 7: 0.3,
  5 vs 7: 0.2), max- vs avg-pool 0.25, plus App. A's res blocks
  ``M(res k, conv j) = 0.9 M(conv k, conv j) + 0.1`` and ``M(res k, res j) = M(conv k, conv j)``.
* **NAS-Bench-201 cells** (:data:`NB201_LABELS`): conv1x1 vs conv3x3 0.2 (Table 1's conv3 vs
  conv5), a convolution never matches the pooling layer, input / output only themselves.

"Infinite" costs are the large finite :data:`INCOMPATIBLE_COST`: any value above 2 gives the same
optimum (leaving both masses unassigned costs 2), and every table satisfies
``M(x, z) <= M(x, y) + M(y, z)``, the condition of Theorem 3 under which ``d`` is a
pseudo-distance. :data:`LABEL_MISMATCH` stacks the three tables block-diagonally (indexed by
:data:`LABEL_INDEX`) so one lookup serves every family.

:data:`LAYER_KINDS` says which mass rule a label follows (:mod:`nasviz.kernels.otmann.masses`), :data:`LAYER_GROUPS`
which group of App. A's grouped structural penalty it belongs to (:mod:`nasviz.kernels.otmann.paths`).
"""

from __future__ import annotations

import numpy as np

from nasviz.arch import INPUT, OUTPUT

#: Stand-in for the paper's infinite label cost: any value > 2 yields the same optimum.
INCOMPATIBLE_COST = 1e3
#: Non-assignment cost per unit of mass (App. A.1: the costs of M are relative to it).
NON_ASSIGNMENT_COST = 1.0

_INF = INCOMPATIBLE_COST

# ---------------------------------------------------------------------------- MLPs: Table 5
#: Labels of paper 001 Table 5 (MLPs) in the order of :data:`MLP_LABEL_MISMATCH`.
#: relu..elu are rectifiers, logistic / tanh sigmoids; linear (regression) and softmax
#: (classification) are decision layers; input / output are the paper's ip / op.
MLP_LABELS: tuple[str, ...] = (
    "relu", "crelu", "leaky-relu", "softplus", "elu", "logistic", "tanh", "linear", "softmax", INPUT, OUTPUT,
)
MLP_RECTIFIERS: tuple[str, ...] = ("relu", "crelu", "leaky-relu", "softplus", "elu")
MLP_SIGMOIDS: tuple[str, ...] = ("logistic", "tanh")


def _mlp_mismatch() -> np.ndarray:
    """Table 5, shape ``(11, 11)``: 0 on the diagonal, rectifier-rectifier and sigmoid-sigmoid
    0.1, rectifier-sigmoid 0.25, everything else (linear, softmax, ip, op with anything but
    themselves) incompatible. ``<rec>`` of the table stands for leaky-relu, softplus and elu."""
    n = len(MLP_LABELS)
    M = np.full((n, n), _INF)
    idx = {label: i for i, label in enumerate(MLP_LABELS)}
    for group in (MLP_RECTIFIERS, MLP_SIGMOIDS):
        ids = [idx[label] for label in group]
        M[np.ix_(ids, ids)] = 0.1
    rec = [idx[label] for label in MLP_RECTIFIERS]
    sig = [idx[label] for label in MLP_SIGMOIDS]
    M[np.ix_(rec, sig)] = 0.25
    M[np.ix_(sig, rec)] = 0.25
    np.fill_diagonal(M, 0.0)
    return M


#: Paper 001 Table 5, indexed by :data:`MLP_LABELS` (``INCOMPATIBLE_COST`` for a blank).
MLP_LABEL_MISMATCH: np.ndarray = _mlp_mismatch()
MLP_LABEL_MISMATCH.setflags(write=False)

# ---------------------------------------------------------------------------- CNNs: Table 4
#: Labels of paper 001 Table 4 (CNNs) plus the res blocks of App. A.
CNN_LABELS: tuple[str, ...] = (
    "conv3", "conv5", "conv7", "res3", "res5", "res7", "max-pool", "avg-pool", "fc", "softmax", INPUT, OUTPUT,
)


def _cnn_mismatch() -> np.ndarray:
    """Table 4 plus the res rule of App. A, shape ``(12, 12)``:
    ``M(res k, conv j) = 0.9 M(conv k, conv j) + 0.1``, ``M(res k, res j) = M(conv k, conv j)``."""
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

# ---------------------------------------------------------------------------- NAS-Bench-201
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

# ---------------------------------------------------------------------------- kinds and groups
#: Mass rule of each label (:func:`nasviz.kernels.otmann.masses.layer_masses`): ``unit`` (units x
#: incoming units), ``res`` (twice that), ``fc`` (0.1 times that), ``pool`` (incoming units),
#: ``decision`` / ``input`` / ``output`` (the zeta rule of Sec. 3).
LAYER_KINDS: dict[str, str] = {
    **{label: "unit" for label in MLP_RECTIFIERS + MLP_SIGMOIDS},
    "conv3": "unit", "conv5": "unit", "conv7": "unit",
    "res3": "res", "res5": "res", "res7": "res",
    "fc": "fc",
    "max-pool": "pool", "avg-pool": "pool", "avg_pool_3x3": "pool",
    "nor_conv_1x1": "unit", "nor_conv_3x3": "unit",
    "linear": "decision", "softmax": "decision",
    INPUT: "input", OUTPUT: "output",
}
#: Group of each processing label in App. A's grouped structural penalty (others: none).
LAYER_GROUPS: dict[str, str] = {
    **{label: "rectifier" for label in MLP_RECTIFIERS},
    **{label: "sigmoid" for label in MLP_SIGMOIDS},
    **{label: "conv" for label in ("conv3", "conv5", "conv7", "res3", "res5", "res7", "nor_conv_1x1", "nor_conv_3x3")},
    **{label: "pool" for label in ("max-pool", "avg-pool", "avg_pool_3x3")},
    "fc": "fc",
}
#: Groups of App. A's grouped structural penalty (MLP: rectifier, sigmoid; CNN: conv, pool, fc).
STRUCTURE_GROUPS: tuple[str, ...] = ("rectifier", "sigmoid", "conv", "pool", "fc")


# ---------------------------------------------------------------------------- one table for all
def _combined_mismatch() -> tuple[dict[str, int], np.ndarray]:
    """One block-diagonal matrix over all label sets, shape ``(L, L)`` with ``L`` the distinct
    labels (labels shared by several sets, i.e. input / output / softmax / linear, are one row).
    Cross-set pairs are incompatible, which keeps the triangle inequality of ``M`` (any path
    through another set pays >= INF)."""
    labels: list[str] = []
    for table in (NB201_LABELS, MLP_LABELS, CNN_LABELS):
        for label in table:
            if label not in labels:
                labels.append(label)
    index = {label: i for i, label in enumerate(labels)}
    M = np.full((len(labels), len(labels)), _INF)
    tables = ((NB201_LABELS, NB201_LABEL_MISMATCH), (MLP_LABELS, MLP_LABEL_MISMATCH), (CNN_LABELS, CNN_LABEL_MISMATCH))
    for table_labels, table in tables:
        ids = np.array([index[label] for label in table_labels])
        M[np.ix_(ids, ids)] = np.minimum(M[np.ix_(ids, ids)], table)
    return index, M


#: Row of each label in :data:`LABEL_MISMATCH`.
LABEL_INDEX: dict[str, int]
#: All three tables in one block-diagonal matrix, indexed by :data:`LABEL_INDEX`.
LABEL_MISMATCH: np.ndarray
LABEL_INDEX, LABEL_MISMATCH = _combined_mismatch()
LABEL_MISMATCH.setflags(write=False)



def layer_kind(label: str) -> str:
    """OTMANN's kind of a label (``input``, ``output``, ``unit``, ``res``, ``fc``, ``pool``,
    ``decision``): which mass rule it follows (:mod:`nasviz.kernels.otmann.masses`)."""
    if label not in LAYER_KINDS:
        raise ValueError(f"OTMANN: unknown layer label {label!r}; known labels: {', '.join(sorted(LAYER_KINDS))}")
    return LAYER_KINDS[label]

__all__ = [
    "CNN_LABELS", "CNN_LABEL_MISMATCH", "INCOMPATIBLE_COST", "LABEL_INDEX", "LABEL_MISMATCH", "LAYER_GROUPS",
    "LAYER_KINDS", "layer_kind", "MLP_LABELS", "MLP_LABEL_MISMATCH", "MLP_RECTIFIERS", "MLP_SIGMOIDS", "NB201_LABELS",
    "NB201_LABEL_MISMATCH", "NON_ASSIGNMENT_COST", "STRUCTURE_GROUPS",
]
