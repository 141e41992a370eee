"""OTMANN's label tables as one object: the layer kind, group and mismatch cost of every label.

Paper 001 Sec. 3 compares layers by their labels (the mismatch cost ``M``, Tables 1, 4, 5) and
weighs them by a mass whose rule depends on the layer's *kind* (processing units, pooling, fc,
decision, input, output). A :class:`LabelTable` holds both for a set of labels.

* :data:`BUILTIN` is the tables of :mod:`~nasviz.spaces.label_costs` (NAS-Bench-201 cells,
  NASBOT's MLP and CNN layers) in one block-diagonal matrix; an
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

from nasviz.spaces.label_costs import INCOMPATIBLE_COST, LABEL_INDEX, LABEL_MISMATCH, LAYER_GROUPS, LAYER_KINDS

#: The layer kinds OTMANN's mass rule knows (:func:`~nasviz.kernels.otmann.masses.layer_masses`).
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
        groups = {label: LAYER_GROUPS.get(label) or _KIND_GROUP[kind] for label, kind in kinds.items() if kind in _KIND_GROUP}
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
BUILTIN = LabelTable(LAYER_KINDS, LABEL_INDEX, LABEL_MISMATCH, LAYER_GROUPS)

__all__ = ["BUILTIN", "KINDS", "LabelTable"]
