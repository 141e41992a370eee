"""Distance matrices of the evaluated architectures, one heatmap per kernel component."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from nasviz.viz._common import MAX_HEATMAP_SIZE, empty_figure, even_subsample, finite_or_none

ORDERS = ("evaluation", "value")


def heatmap_indices(values: Sequence[float | None], order: str = "evaluation", max_size: int = MAX_HEATMAP_SIZE) -> np.ndarray:
    """Which evaluations a heatmap shows, in display order. Shape ``(m,)``, ``m <= max_size``.

    ``order="evaluation"`` keeps evaluation order; ``"value"`` sorts by value, best first
    (failed evaluations last). Beyond ``max_size`` an evenly spaced subset of that order is kept,
    so the ordering's structure (blocks of similar architectures) survives the cap. Call it
    before computing distances so only the shown architectures are compared.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    if max_size < 2:
        raise ValueError(f"max_size must be at least 2, got {max_size}")
    v = np.array([finite_or_none(x) if finite_or_none(x) is not None else np.nan for x in values], dtype=float)
    idx = np.arange(len(v))
    if order == "value":
        idx = np.argsort(np.where(np.isfinite(v), -v, np.inf), kind="stable")
    return idx[even_subsample(len(idx), max_size)]


@dataclass
class DistanceMatrixInfo:
    """Per component an ``(m, m)`` matrix over the shown architectures, in display order."""

    components: dict[str, np.ndarray]
    archs: list[str]
    values: np.ndarray
    order: str
    n_total: int
    note: str | None = None


def _get_distance_matrix_info(
    components: Mapping[str, np.ndarray],
    archs: Sequence[str],
    values: Sequence[float | None],
    order: str = "evaluation",
    n_total: int | None = None,
) -> DistanceMatrixInfo:
    """Check and package component matrices computed on ``archs`` (already in display order,
    e.g. chosen by :func:`heatmap_indices`); ``n_total`` is how many were evaluated in all."""
    m = len(archs)
    comps = {}
    for name, mat in components.items():
        a = np.asarray(mat, dtype=float)
        if a.shape != (m, m):
            raise ValueError(f"component {name!r} has shape {a.shape} for {m} architectures")
        comps[name] = a
    vals = np.array([finite_or_none(x) if finite_or_none(x) is not None else np.nan for x in values], dtype=float)
    if vals.shape[0] != m:
        raise ValueError(f"{vals.shape[0]} values for {m} architectures")
    n_total = m if n_total is None else int(n_total)
    note = f"showing {m:,} of {n_total:,} evaluated architectures" if m < n_total else None
    return DistanceMatrixInfo(comps, list(archs), vals, order, n_total, note)


def _get_distance_panel(info: DistanceMatrixInfo, name: str, height: int = 300) -> go.Figure:
    """One component's ``(m, m)`` heatmap, square, with its own colour bar (components differ in scale)."""
    # Rows and columns are labelled "position: arch (value)" so the hover names both cells'
    # architectures while sending only 2m strings (per-cell text would be m^2 per refresh).
    labels = [f"{i}: {a} ({v:.4g})" for i, (a, v) in enumerate(zip(info.archs, info.values))]
    fig = go.Figure(go.Heatmap(
        # Viridis: no end near white or black, so neither theme's background can swallow the
        # nearest or the farthest pair (Magma's black end vanished on the dark theme)
        z=info.components[name], x=labels, y=labels, colorscale="Viridis", zmin=0.0,
        hovertemplate="%{y}<br>%{x}<br>distance %{z:.4g}<extra>" + name + "</extra>",
        colorbar=dict(thickness=8, len=0.9, tickfont=dict(size=9), title=dict(text="far", side="top")),
    ))
    fig.update_xaxes(showticklabels=False, constrain="domain")
    fig.update_yaxes(autorange="reversed", showticklabels=False, scaleanchor="x", constrain="domain")
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=40, b=10), title=dict(text=name, x=0.5, xanchor="center"))
    return fig


def plot_distance_panels(components, archs, values, order="evaluation", n_total=None) -> list[tuple[str, go.Figure]]:
    """One square heatmap per distance component, ``[(component, figure)]``, for a grid of page
    columns (:func:`~nasviz.dashboard.forms.chart_grid`), which the page stacks on a narrow
    screen: one multi-panel figure left OTMANN's eight components ~40 px wide on a phone.
    Checks as :func:`_get_distance_matrix_info`; the cap's note belongs in the caption
    (:func:`distance_note`)."""
    info = _get_distance_matrix_info(components, archs, values, order, n_total)
    if not info.components or not info.archs:
        return [("empty", empty_figure("no evaluated architectures to compare yet", 300))]
    return [(name, _get_distance_panel(info, name)) for name in info.components]


def distance_note(n_shown: int, n_total: int, order: str) -> str:
    """The caption's words for a set of distance panels: order, and the cap when there is one."""
    axis = "in evaluation order" if order == "evaluation" else "best value first"
    cap = f", an evenly spaced {n_shown:,} of {n_total:,}" if n_shown < n_total else ""
    return f"rows and columns: the evaluated architectures {axis}{cap}"
