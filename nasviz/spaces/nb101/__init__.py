"""The NAS-Bench-101 cell space (NB101): cells of up to 7 vertices, 423,624 unique cells.

:mod:`.cell` holds the cell model, its text forms, pruning, the module hash, the enumeration and
the search moves; :mod:`.network` the NAS-Bench-101 network for live training. (Its
:class:`~nasviz.spaces.base.SearchSpace` comes with the NAS-Bench-101 integration.)
"""

from nasviz.spaces.nb101.cell import *  # noqa: F401,F403 - the cell module's names, as nasviz.spaces.nb101.X
from nasviz.spaces.nb101.cell import NB101Cell, InvalidCellError, NB101ParseError  # noqa: F401
