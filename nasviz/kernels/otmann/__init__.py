"""OTMANN: optimal transport distance between neural architectures (NASBOT, paper 001).

A network is a labelled DAG of layers. OTMANN matches the *mass* (amount of computation) of the
layers of one network to those of another, paying (paper 001, Sec. 3):

* ``phi_lmm``: the label-mismatch penalty ``M(l(i), l(j))`` per unit of mass moved from layer
  ``i`` to layer ``j`` (Tables 1 / 4 / 5 of the paper) -- :mod:`.costs`;
* ``phi_nas``: 1 per unit of mass left unassigned in either network;
* ``nu_str * phi_str``: the structural penalty, the mean absolute difference of the six path
  lengths (shortest / longest / random-walk, from the input and to the output) per unit moved --
  :mod:`.paths`.

Layer masses (:mod:`.masses`) follow Sec. 3 and App. A; the matching program (3) is solved as the
optimal transport program (6) of App. A.1 with one non-assignment layer per network
(:mod:`.transport`, memoised per pair by :mod:`.memo`); the NASBOT kernel, the ensemble of Sec. 4.1 Eq. (4) over several
``nu_str``, is :class:`OTMANNKernel` (:mod:`.kernel`).

Architectures this package understands (after :meth:`Architecture.reduced`):

* **NAS-Bench-201 cells** (no widths): labels ``nor_conv_1x1``, ``nor_conv_3x3``,
  ``avg_pool_3x3``; ``skip_connect`` and ``none`` never reach the kernel (``reduced()`` removes
  them). Every operation outputs ``cell_channels`` channels (default 16, NB201's first stage).
* **Layer-space MLPs** (widths = units): labels of App. A (Table 5) in :data:`MLP_LABELS`;
  ``linear`` (regression) and ``softmax`` (classification) are the decision layers (Sec. 2.2).
* **Layer-space CNNs** (Table 4): :data:`CNN_LABELS`, with App. A's res blocks.
"""

from __future__ import annotations

from nasviz.spaces.label_costs import (
    CNN_LABEL_MISMATCH,
    CNN_LABELS,
    INCOMPATIBLE_COST,
    LABEL_INDEX,
    LABEL_MISMATCH,
    LAYER_GROUPS,
    LAYER_KINDS,
    layer_kind,
    MLP_LABEL_MISMATCH,
    MLP_LABELS,
    MLP_RECTIFIERS,
    MLP_SIGMOIDS,
    NB201_LABEL_MISMATCH,
    NB201_LABELS,
    NON_ASSIGNMENT_COST,
    STRUCTURE_GROUPS,
)
from nasviz.kernels.otmann.kernel import (
    BETA_RANGE,
    DEFAULT_D_SCALE,
    DEFAULT_DBAR_SCALE,
    DEFAULT_NU_STR,
    OTMANNKernel,
    OTMANNScales,
)
from nasviz.kernels.otmann.labels import BUILTIN, KINDS, LabelTable
from nasviz.kernels.otmann.masses import ZETA, layer_masses
from nasviz.kernels.otmann.memo import DistanceMemo
from nasviz.kernels.otmann.paths import STRUCTURES, path_lengths, structural_features
from nasviz.kernels.otmann.transport import NetworkSummary, TransportPlan, summarise, transport_plan

__all__ = [
    "BETA_RANGE", "BUILTIN", "CNN_LABELS", "CNN_LABEL_MISMATCH", "DEFAULT_DBAR_SCALE", "DEFAULT_D_SCALE", "DEFAULT_NU_STR", "DistanceMemo", "INCOMPATIBLE_COST", "KINDS", "LABEL_INDEX", "LABEL_MISMATCH",
    "LAYER_GROUPS", "LAYER_KINDS", "LabelTable", "layer_kind", "MLP_LABELS", "MLP_LABEL_MISMATCH", "MLP_RECTIFIERS", "MLP_SIGMOIDS",
    "NB201_LABELS", "NB201_LABEL_MISMATCH", "NON_ASSIGNMENT_COST", "NetworkSummary", "OTMANNKernel", "OTMANNScales", "STRUCTURES",
    "STRUCTURE_GROUPS", "TransportPlan", "ZETA", "layer_masses", "path_lengths", "structural_features", "summarise",
    "transport_plan",
]
