"""POT, imported on first use.

Importing ``ot`` imports its backend layer, which imports torch: about two seconds on a cold
start. The dashboard's forms load every kernel class to ask which representations it reads, so a
module-level ``import ot`` made every first page pay for a solver it does not call.
"""

from __future__ import annotations

from functools import lru_cache
from types import ModuleType
from typing import Any, Callable


@lru_cache(maxsize=None)
def pot() -> ModuleType:
    """The ``ot`` package (imported once, on the first call)."""
    import ot

    return ot


@lru_cache(maxsize=None)
def network_simplex() -> Callable[..., Any] | None:
    """POT's exact network simplex (``ot.lp.emd_wrap.emd_c``, the solver behind ``ot.emd``) called
    without ``ot.emd``'s per-call Python checks, or ``None`` on a POT layout without it."""
    try:
        from ot.lp.emd_wrap import emd_c
    except ImportError:  # pragma: no cover - older / newer POT layouts
        return None
    return emd_c
