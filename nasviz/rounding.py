"""Numbers at their resolution: one rounding for the page, the command line and the exports.

A benchmark table writes its values with some number of decimals (NAS-Bench-201's 200-epoch
accuracies with 4, its 12-epoch test accuracies with 2): more digits than that are not in the data,
and fewer hide real differences (94.3 for 94.2967). A table's resolution is the most decimals any
row of a metric column writes (:func:`decimals_of`, kept in ``Table.decimals``); a run stores it
with its configuration (``value_decimals``) and every place that shows a run's values formats them
with :func:`format_value`. A live-training score is computed in float32 and carries noise after
the fourth decimal (99.12499785423279 for 99.125): :data:`TRAINING_DECIMALS`.

This module imports nothing from nasviz.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from typing import Any, Iterable, Mapping

#: More decimals than this are never shown (a table written with ``repr`` floats has 13).
MAX_DECIMALS = 6
#: Decimals of a score measured by live training (percent accuracy or R^2): float32 noise beyond.
TRAINING_DECIMALS = 4
#: Significant digits of a value whose resolution is unknown (a run stored before resolutions were).
FALLBACK_SIGNIFICANT = 6


def decimals_of(text: str) -> int:
    """The decimals ``text`` writes: ``"93.29"`` -> 2, ``"94"`` -> 0, ``"1.5e-3"`` -> 4 (capped
    at :data:`MAX_DECIMALS`); 0 for anything that is not a number."""
    try:
        exponent = Decimal(text.strip()).as_tuple().exponent
    except (InvalidOperation, AttributeError):
        return 0
    if not isinstance(exponent, int):  # NaN, Infinity
        return 0
    return min(max(0, -exponent), MAX_DECIMALS)


def column_decimals(texts: Iterable[str]) -> int:
    """The resolution of a column: the most decimals any of its cells writes."""
    return max((decimals_of(t) for t in texts), default=0)


def format_value(value: Any, decimals: int | None = None, missing: str = "-") -> str:
    """``value`` with ``decimals`` decimals (its resolution); with ``decimals`` unknown,
    :data:`FALLBACK_SIGNIFICANT` significant digits; ``missing`` for None, NaN or text."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return missing
    if not math.isfinite(v):
        return missing
    if decimals is None:
        return f"{v:.{FALLBACK_SIGNIFICANT}g}"
    return f"{round(v, int(decimals)):.{int(decimals)}f}"


def round_value(value: Any, decimals: int | None) -> float | None:
    """``value`` rounded to ``decimals`` (unchanged when unknown); None for None or NaN."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(v):
        return None
    return v if decimals is None else round(v, int(decimals))


def run_decimals(config: Mapping[str, Any] | None) -> int | None:
    """The resolution of a stored run's values: its ``value_decimals``, else :data:`TRAINING_DECIMALS`
    for a live-training run, else None (a table run stored before resolutions were kept)."""
    config = config or {}
    if config.get("value_decimals") is not None:
        return int(config["value_decimals"])
    if config.get("objective") == "train":
        return TRAINING_DECIMALS
    return None


def format_spread(std: Any, decimals: int | None) -> str:
    """A standard deviation at the values' resolution; one below it reads ``< 0.01`` (for two
    decimals) instead of a misleading ``0``."""
    try:
        s = float(std)
    except (TypeError, ValueError):
        return "-"
    if not math.isfinite(s):
        return "-"
    if decimals is None:
        return f"{s:.2g}"
    if s < 0.5 * 10 ** (-int(decimals)):
        return f"< {10 ** (-int(decimals)):.{int(decimals)}f}"
    return format_value(s, decimals)


def percent_ceiling(metric: str | None) -> float | None:
    """100 for a metric that is a percentage accuracy by its name (``*accuracy*``, ``acc``),
    the largest value it can take; None when the name does not say."""
    name = (metric or "").lower()
    return 100.0 if "accuracy" in name or name in ("acc", "top1") else None


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """A count with its noun in the right number: ``counted(1, "search", "searches")`` is
    "1 search", ``counted(6, "search", "searches")`` "6 searches" (``plural`` defaults to noun + "s"),
    so no message says "6 search(es)"."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"
