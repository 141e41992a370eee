"""Store records built by hand for tests of what reads them (tests only)."""

from __future__ import annotations

from typing import Any

from nasviz.store import StoredEvaluation


def evaluation(arch: str = "a", value: float | None = None, **fields: Any) -> StoredEvaluation:
    """A :class:`StoredEvaluation` with ``arch`` and ``value``; other fields as given, else those
    of the first evaluation of step 1 that succeeded (failed when ``value`` is ``None``)."""
    base: dict[str, Any] = {"index": 0, "step": 1, "cost": None, "status": "ok" if value is not None else "failed",
                            "error": None, "info": {}, "created": 0.0}
    return StoredEvaluation(arch=arch, value=value, **{**base, **fields})
