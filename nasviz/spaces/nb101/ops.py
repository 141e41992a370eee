"""The constants of the NAS-Bench-101 space: operations, size limits, the published cell count.

A module of its own so that :mod:`.cell` and :mod:`.hashing` both read them without importing
each other.
"""

from __future__ import annotations

NAME = "nb101"

CONV3X3 = "conv3x3-bn-relu"
CONV1X1 = "conv1x1-bn-relu"
MAXPOOL3X3 = "maxpool3x3"

#: The three operations, in the order whose indices label vertices in the module hash.
OPERATIONS: tuple[str, ...] = (CONV3X3, CONV1X1, MAXPOOL3X3)

MAX_VERTICES = 7
MAX_EDGES = 9

#: The number of unique cells NAS-Bench-101 reports (its §2.3); :func:`count` computes it.
PUBLISHED_CELL_COUNT = 423_624

_INPUT_LABEL = -1
_OUTPUT_LABEL = -2
_OP_INDEX = {op: i for i, op in enumerate(OPERATIONS)}
