"""OTMANN's label tables: the layer kind and the label-mismatch cost of every layer label.

Paper 001 Sec. 3 compares layers by their labels (the mismatch cost ``M``, Tables 1, 4, 5) and
weighs them by a mass whose rule depends on the layer's *kind* (processing units, pooling, fc,
decision, input, output). A :class:`LabelTable` holds both for a set of labels.

* :data:`BUILTIN` covers the label sets nasviz had before spaces declared their own (NAS-Bench-201
  cells, NASBOT's MLP and CNN layers) in one block-diagonal matrix; an
  :class:`~nasviz.kernels.otmann.OTMANNKernel` built without a space uses it.
* :meth:`LabelTable.from_space` reads a space's ``layers`` representation
  (:meth:`~nasviz.spaces.base.SearchSpace.layer_kinds`,
  :meth:`~nasviz.spaces.base.SearchSpace.label_mismatch`); ``make_kernel("otmann", space=...)``
  builds the kernel with it, so a new space brings its own table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from nasviz.arch import INPUT, OUTPUT

#: Stand-in for the paper's infinite label cost: any value > 2 yields the same optimum.
INCOMPATIBLE_COST = 1e3
#: Non-assignment cost per unit of mass (App. A.1: the costs of M are relative to it).
NON_ASSIGNMENT_COST = 1.0
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

#: Layer kinds decide the mass rule (built-in labels).
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
#: Groups decide App. A's "grouped" structural penalty (built-in labels).
_GROUP: dict[str, str] = {
    **{label: "rectifier" for label in MLP_RECTIFIERS},
    **{label: "sigmoid" for label in MLP_SIGMOIDS},
    **{label: "conv" for label in ("conv3", "conv5", "conv7", "res3", "res5", "res7", "nor_conv_1x1", "nor_conv_3x3")},
    **{label: "pool" for label in ("max-pool", "avg-pool", "avg_pool_3x3")},
    "fc": "fc",
}
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



#: The layer kinds OTMANN's mass rule knows (:func:`~nasviz.kernels.otmann.layer_masses`).
KINDS: frozenset[str] = frozenset({"input", "output", "unit", "res", "fc", "pool", "decision"})
#: The structure group of a kind, for labels the built-in groups do not name.
_KIND_GROUP = {"unit": "conv", "res": "conv", "pool": "pool", "fc": "fc"}


@dataclass(frozen=True)
class LabelTable:
    """Layer kinds and label-mismatch costs for a set of labels.

    Attributes
    ----------
    kinds : mapping label -> kind
        One of :data:`KINDS`.
    index : mapping label -> int
        Row / column of each label in ``mismatch``.
    mismatch : ndarray (L, L)
        ``M(l, l')``, symmetric, 0 on the diagonal, finite (an infinite cost is stored as
        :data:`INCOMPATIBLE_COST`: any value above 2 gives the same optimum, App. A.1).
    groups : mapping label -> group
        App. A's structure group of each processing label (``conv``, ``pool``, ...).
    """

    kinds: Mapping[str, str]
    index: Mapping[str, int]
    mismatch: np.ndarray
    groups: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def build(cls, kinds: Mapping[str, str], labels: tuple[str, ...], matrix: np.ndarray) -> "LabelTable":
        """A checked table: every label with a kind has a row, kinds are known, ``matrix`` is
        ``(L, L)``, symmetric, non-negative with a zero diagonal. Raises ``ValueError``."""
        labels = tuple(str(label) for label in labels)
        M = np.asarray(matrix, dtype=float)
        if M.shape != (len(labels), len(labels)):
            raise ValueError(f"OTMANN: a label-mismatch matrix for {len(labels)} labels must be "
                             f"({len(labels)}, {len(labels)}), got {M.shape}")
        if np.isnan(M).any() or (M < 0).any() or not np.array_equal(M, M.T) or np.diag(M).any():
            raise ValueError("OTMANN: the label-mismatch matrix must be symmetric, non-negative, with a zero diagonal")
        missing = sorted(set(kinds) - set(labels))
        if missing:
            raise ValueError(f"OTMANN: label(s) {', '.join(missing)} have a layer kind but no row in the mismatch matrix")
        unknown = sorted({k for k in kinds.values() if k not in KINDS})
        if unknown:
            raise ValueError(f"OTMANN: unknown layer kind(s) {', '.join(unknown)}; known: {', '.join(sorted(KINDS))}")
        M = np.minimum(M, INCOMPATIBLE_COST)
        M.setflags(write=False)
        groups = {label: _GROUP.get(label) or _KIND_GROUP[kind] for label, kind in kinds.items() if kind in _KIND_GROUP}
        return cls(dict(kinds), {label: i for i, label in enumerate(labels)}, M, groups)

    @classmethod
    def from_space(cls, space) -> "LabelTable":
        """The table of a space's ``layers`` representation."""
        labels, matrix = space.label_mismatch()
        return cls.build(space.layer_kinds(), labels, matrix)

    def kind(self, label: str, node: int | None = None) -> str:
        """The kind of ``label``; ``ValueError`` naming the label (and node) if it has none."""
        try:
            return self.kinds[label]
        except KeyError:
            where = f" at node {node}" if node is not None else ""
            raise ValueError(f"OTMANN: unknown layer label {label!r}{where}; known labels: "
                             f"{', '.join(sorted(self.kinds))}") from None


#: The built-in table (NB201 cells, NASBOT's MLP and CNN layers).
BUILTIN = LabelTable(_KIND, LABEL_INDEX, LABEL_MISMATCH, _GROUP)
