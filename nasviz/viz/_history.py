"""Optimisation history: every evaluation and the best-so-far line, with the optimum when known."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from nasviz.rounding import format_value
from nasviz.viz._common import (LEGEND_BELOW, MAX_SCATTER_POINTS, OKABE_ITO, add_note, empty_figure, even_subsample,
                                finite_or_none, tidy_layout)


@dataclass
class HistoryInfo:
    """What the history plot shows.

    ``x``/``values``/``archs`` are the plotted evaluations (1-based evaluation numbers; shape
    ``(m,)`` with ``m <= n_ok``); ``best_x``/``best`` the best-so-far step line at every
    improvement plus the last evaluation (exact, never downsampled).
    """

    x: np.ndarray
    values: np.ndarray
    archs: list[str]
    best_x: np.ndarray
    best: np.ndarray
    optimum: float | None
    n_total: int
    n_ok: int
    n_failed: int
    metric: str = "value"
    note: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: the step a replay shows and its evaluation numbers (first, last), marked on the plot
    marked_step: int | None = None
    marked_range: tuple[int, int] | None = None
    #: decimals of the values (their resolution) for the hover text; None: 6 significant digits
    decimals: int | None = None


def _get_history_info(
    evaluations: Sequence[Mapping[str, Any]],
    optimum: float | None = None,
    metric: str = "value",
    max_points: int = MAX_SCATTER_POINTS,
    minimise: bool = False,
    marked_step: int | None = None,
    decimals: int | None = None,
) -> HistoryInfo:
    """Compute the history plot's data from evaluation records in evaluation order.

    Parameters
    ----------
    evaluations : sequence of mappings with ``value`` (float or None), ``arch`` (str) and
        optionally ``status``; failed evaluations (``value`` None or ``status`` not ``"ok"``)
        count towards the evaluation number but are not plotted and never become the best.
    optimum : float, optional
        The best value in the benchmark, drawn as a dashed line.
    max_points : int
        Cap on plotted evaluations; beyond it an evenly spaced subset plus every improvement
        is kept and ``note`` says so.
    minimise : bool
        The values (and ``optimum``) are scores of a minimised metric, minus its values: the best
        so far is found on the scores and the plot shows the metric's own values (lower is better).
    marked_step : int, optional
        A step to mark (the one a replay shows): its evaluations (``step`` field) get a band.
    decimals : int, optional
        The values' resolution, for the hover and the optimum's label.
    """
    if max_points < 2:
        raise ValueError(f"max_points must be at least 2, got {max_points}")
    n = len(evaluations)
    values = _measured_values(evaluations)
    ok = np.flatnonzero(np.isfinite(values))
    running, improved = _best_so_far(values, ok)
    best_idx = improved + ([n - 1] if len(ok) and improved[-1] != n - 1 else [])
    shown_pos = even_subsample(len(ok), max_points, keep=[int(np.searchsorted(ok, i)) for i in improved])
    shown = ok[shown_pos] if len(ok) else ok
    note = f"showing {len(shown):,} of {len(ok):,} evaluations" if len(shown) < len(ok) else None
    sign = -1.0 if minimise else 1.0
    best_optimum = finite_or_none(optimum)
    in_step = [i + 1 for i, ev in enumerate(evaluations) if marked_step is not None and ev.get("step") == marked_step]
    return HistoryInfo(
        x=shown + 1,
        values=sign * values[shown],
        archs=[str(evaluations[i].get("arch", "")) for i in shown],
        best_x=np.asarray(best_idx, dtype=int) + 1,
        best=sign * running[best_idx] if best_idx else np.array([]),
        optimum=None if best_optimum is None else sign * best_optimum,
        n_total=n,
        n_ok=len(ok),
        n_failed=n - len(ok),
        metric=f"{metric} (lower is better)" if minimise else metric,
        note=note,
        marked_step=marked_step if in_step else None,
        marked_range=(min(in_step), max(in_step)) if in_step else None,
        decimals=decimals,
    )


def _measured_values(evaluations: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """Each evaluation's value ``(n,)``; NaN where it failed or has no finite value."""
    values = np.full(len(evaluations), np.nan)
    for i, ev in enumerate(evaluations):
        if ev.get("status", "ok") in (None, "ok"):
            v = finite_or_none(ev.get("value"))
            if v is not None:
                values[i] = v
    return values


def _best_so_far(values: np.ndarray, ok: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """The best value so far after each evaluation ``(n,)`` (``-inf`` before the first success),
    and the indices where it rises."""
    n = len(values)
    running = np.fmax.accumulate(np.where(np.isfinite(values), values, -np.inf)) if n else np.array([])
    before = np.concatenate([[-np.inf], running[:-1]]) if n else running
    return running, [int(i) for i in ok[values[ok] > before[ok]]]


def _get_history_plot(info: HistoryInfo, height: int = 380) -> go.Figure:
    """Scatter of evaluations, best-so-far step line, dashed optimum."""
    if info.n_ok == 0:
        return empty_figure("no successful evaluation yet", height)
    fig = go.Figure()
    # SVG markers up to a few thousand points (sharper, and visible to browser tests); WebGL beyond.
    trace = go.Scatter if len(info.x) <= 1000 else go.Scattergl
    fig.add_trace(trace(
        x=info.x, y=info.values, mode="markers", name="evaluation",
        marker=dict(size=6, color=OKABE_ITO["blue"], opacity=0.6), text=info.archs,
        hovertemplate="evaluation %{x}<br>%{y:" + _hover_format(info.decimals) + "}<br>%{text}<extra></extra>",
    ))
    if info.marked_range is not None:  # the replayed step: a band over its evaluations
        first, last = info.marked_range
        fig.add_vrect(x0=first - 0.5, x1=last + 0.5, fillcolor=OKABE_ITO["orange"], opacity=0.25, line_width=0, layer="below",
                      annotation_text=f"step {info.marked_step}", annotation_position="top left")
    fig.add_trace(go.Scatter(
        x=info.best_x, y=info.best, mode="lines", name="best so far", line=dict(color=OKABE_ITO["vermillion"], width=2, shape="hv"),
    ))
    if info.optimum is not None:
        fig.add_hline(y=info.optimum, line=dict(color=OKABE_ITO["bluish green"], dash="dash"),
                      annotation_text=f"optimum {format_value(info.optimum, info.decimals)}",
                      annotation_position="top left")
    fig.update_layout(
        height=height, margin=dict(l=50, r=20, t=40, b=70), xaxis_title="evaluation", yaxis_title=info.metric,
        legend=LEGEND_BELOW,
        title=dict(text="Optimisation history", x=0, xanchor="left"),
    )
    return tidy_layout(add_note(fig, info.note))


def _hover_format(decimals: int | None) -> str:
    """A d3 number format for the values: their resolution, else 6 significant digits."""
    return ".6~g" if decimals is None else f".{int(decimals)}f"


def plot_history(evaluations, optimum=None, metric="value", max_points=MAX_SCATTER_POINTS,
                 minimise: bool = False, marked_step=None, decimals=None) -> go.Figure:
    """Optimisation history figure from evaluation records (see :func:`_get_history_info`)."""
    return _get_history_plot(_get_history_info(evaluations, optimum, metric, max_points, minimise, marked_step,
                                               decimals))
