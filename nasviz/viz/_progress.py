"""Progress of a run: evaluations / budget, elapsed time, time per step and a status line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

import numpy as np

from nasviz.rounding import format_value
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


class StepProgress(Protocol):
    """What the progress reads of one step (:class:`nasviz.dashboard.watching.StepSummary` is one)."""

    step: int
    n_evaluations: int
    budget: int
    elapsed: float
    step_seconds: float | None
    best_value: float | None
    best_arch: str | None


def get_progress_info(
    status: str,
    steps: Sequence[StepProgress],
    *,
    budget: int = 0,
    pause: float = 0.0,
    n_evaluations: int | None = None,
    decimals: int | None = None,
    shown: Callable[[float | None], float | None] | None = None,
) -> ProgressInfo:
    """Summarise a run from its status and its steps (oldest first).

    ``budget`` is the run's (the newest step's own ``budget`` wins: a resumed run may have been
    given more); ``pause`` the seconds the search pauses after each step (teaching), on top of a
    step's ``step_seconds``, its computing time; ``n_evaluations`` overrides the newest step's count
    (the store counts evaluations as they land, which can be ahead of the last step); ``decimals``
    the values' resolution (:func:`nasviz.rounding.run_decimals`). ``shown`` turns a stored score
    into the metric's own value (a minimised metric's runs store minus it): ``best_value`` and the
    status line's "best" are that value, never the score.
    """
    last = steps[-1] if steps else None
    budget = int((last.budget if last is not None else 0) or budget or 0)
    n = int(n_evaluations if n_evaluations is not None else (last.n_evaluations if last is not None else 0))
    step = int(last.step) if last is not None else 0
    elapsed = (finite_or_none(last.elapsed) if last is not None else None) or 0.0
    step_times = np.array([finite_or_none(s.step_seconds) or np.nan for s in steps], dtype=float)
    per_step = float(np.nanmean(step_times)) if np.isfinite(step_times).any() else None
    last_step = finite_or_none(last.step_seconds) if last is not None else None
    best = finite_or_none(last.best_value) if last is not None else None
    if shown is not None:
        best = shown(best)
    best_arch = last.best_arch if last is not None else None
    status = str(status)
    fraction = min(1.0, n / budget) if budget > 0 else 0.0
    pause = finite_or_none(pause) or 0.0
    info = ProgressInfo(status=status, step=step, n_evaluations=n, budget=budget, fraction=fraction, elapsed=elapsed,
                        seconds_per_step=per_step, last_step_seconds=last_step, pause=pause, best_value=best,
                        best_arch=best_arch, status_line="")
    parts = [status, f"step {step}", f"{n}/{budget} evaluations" if budget else f"{n} evaluations",
             f"elapsed {format_seconds(elapsed)}",
             f"{step_time_detail(info)} per step" if per_step is not None else "- per step"]
    if best is not None:
        parts.append(f"best {format_value(best, decimals)}")
    info.status_line = " · ".join(parts)
    return info
