"""Progress of a run: evaluations / budget, elapsed time, time per step and a status line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from nasviz.rounding import format_value, run_decimals
from nasviz.viz._common import finite_or_none


@dataclass
class ProgressInfo:
    """Numbers behind the progress bar and the status line."""

    status: str
    step: int
    n_evaluations: int
    budget: int
    fraction: float
    elapsed: float
    seconds_per_step: float | None
    last_step_seconds: float | None
    #: seconds the search pauses after each step (teaching), not part of ``seconds_per_step``
    pause: float
    best_value: float | None
    best_arch: str | None
    status_line: str


def format_seconds(s: float | None) -> str:
    """``0.123 -> '123 ms'``, ``12.3 -> '12.3 s'``, ``300 -> '5 min 00 s'``, ``None -> '-'``."""
    if s is None:
        return "-"
    if s < 1:
        return f"{s * 1000:.0f} ms"
    if s < 120:
        return f"{s:.1f} s"
    return f"{int(s // 60)} min {int(s % 60):02d} s"


def step_time_text(info: "ProgressInfo") -> str:
    """What one step takes on the wall clock, e.g. ``"1.2 s"``; with a pause the computing time is
    apart: the metric "Time per step" once read 6 ms during a 2 s pause."""
    if info.seconds_per_step is None:
        return "-"
    return format_seconds(info.seconds_per_step + info.pause)


def step_time_detail(info: "ProgressInfo") -> str:
    """``"6 ms computing + 2.0 s pause"`` (or ``"6 ms computing"`` without a pause)."""
    computing = f"{format_seconds(info.seconds_per_step)} computing"
    return computing + (f" + {format_seconds(info.pause)} pause" if info.pause > 0 else "")


def get_progress_info(
    status: str,
    config: Mapping[str, Any],
    snapshots: Sequence[Mapping[str, Any]] = (),
    n_evaluations: int | None = None,
) -> ProgressInfo:
    """Summarise a run from its status, its stored config and its snapshots (plain dicts, oldest first).

    ``config`` needs ``budget`` (or the snapshots' ``budget``), and ``step_delay`` when the
    search pauses after each step; ``n_evaluations`` overrides
    the count from the latest snapshot (the store counts evaluations as they land, which can be
    ahead of the last snapshot). A snapshot's ``step_seconds`` is the step's computing time; the
    pause comes on top of it.
    """
    last = snapshots[-1] if snapshots else {}
    config = config or {}
    budget = int(last.get("budget") or config.get("budget") or 0)
    n = int(n_evaluations if n_evaluations is not None else last.get("n_evaluations", 0))
    step = int(last.get("step", 0))
    elapsed = finite_or_none(last.get("elapsed")) or 0.0
    step_times = np.array([finite_or_none(s.get("step_seconds")) or np.nan for s in snapshots], dtype=float)
    per_step = float(np.nanmean(step_times)) if np.isfinite(step_times).any() else None
    last_step = finite_or_none(last.get("step_seconds"))
    best = finite_or_none(last.get("best_value"))
    best_arch = last.get("best_arch")
    status = str(status)
    fraction = min(1.0, n / budget) if budget > 0 else 0.0
    pause = finite_or_none(config.get("step_delay")) or 0.0
    info = ProgressInfo(status=status, step=step, n_evaluations=n, budget=budget, fraction=fraction, elapsed=elapsed,
                        seconds_per_step=per_step, last_step_seconds=last_step, pause=pause, best_value=best,
                        best_arch=best_arch, status_line="")
    parts = [status, f"step {step}", f"{n}/{budget} evaluations" if budget else f"{n} evaluations",
             f"elapsed {format_seconds(elapsed)}",
             f"{step_time_detail(info)} per step" if per_step is not None else "- per step"]
    if best is not None:
        parts.append(f"best {format_value(best, run_decimals(config))}")
    info.status_line = " · ".join(parts)
    return info
