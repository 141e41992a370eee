"""Distance matrices of the evaluated architectures, one heatmap per kernel component."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from nasviz.viz._common import MAX_HEATMAP_SIZE, add_note, empty_figure, even_subsample, finite_or_none

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


#: Heatmaps per row: OTMANN's eight components in one row left ~120 px per panel at 1280 px.
MAX_PANELS_PER_ROW = 4


def _get_distance_matrix_plot(info: DistanceMatrixInfo, height: int = 380) -> go.Figure:
    """One heatmap per component, at most :data:`MAX_PANELS_PER_ROW` to a row (``height`` per row)."""
    if not info.components or not info.archs:
        return empty_figure("no evaluated architectures to compare yet", height)
    names = list(info.components)
    cols = min(len(names), MAX_PANELS_PER_ROW)
    rows = -(-len(names) // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=names, horizontal_spacing=0.09,
                        vertical_spacing=0.12 if rows > 1 else 0.0)
    # Rows and columns are labelled "position: arch (value)" so the hover names both cells'
    # architectures while sending only 2m strings (per-cell text would be m^2 per refresh).
    labels = [f"{i}: {a} ({v:.4g})" for i, (a, v) in enumerate(zip(info.archs, info.values))]
    for k, name in enumerate(names):
        r, c = divmod(k, cols)
        fig.add_trace(go.Heatmap(
            # Viridis: no end near white or black, so neither theme's background can swallow the
            # nearest or the farthest pair (Magma's black end vanished on the dark theme)
            z=info.components[name], x=labels, y=labels, colorscale="Viridis", zmin=0.0,
            hovertemplate="%{y}<br>%{x}<br>distance %{z:.4g}<extra>" + name + "</extra>",
        ), row=r + 1, col=c + 1)
        fig.update_yaxes(autorange="reversed", showticklabels=False, row=r + 1, col=c + 1)
        fig.update_xaxes(showticklabels=False, row=r + 1, col=c + 1,
                         title_text="architectures in display order" if r == rows - 1 else None)
    for k in range(len(names)):  # components differ in scale: one colour bar per panel
        suffix = "" if k == 0 else str(k + 1)
        x_domain, y_domain = fig.layout[f"xaxis{suffix}"].domain, fig.layout[f"yaxis{suffix}"].domain
        fig.data[k].colorbar = dict(x=x_domain[1] + 0.005, y=(y_domain[0] + y_domain[1]) / 2, yanchor="middle",
                                    len=0.9 * (y_domain[1] - y_domain[0]), thickness=8, tickfont=dict(size=9),
                                    title=dict(text="far" if k % cols == cols - 1 or k == len(names) - 1 else "",
                                               side="top"))
    axis = "evaluation order" if info.order == "evaluation" else "ordered by value (best first)"
    fig.update_layout(height=height * rows, margin=dict(l=40, r=20, t=60, b=40),
                      title=dict(text=f"Distances between evaluated architectures, {axis}", x=0))
    return add_note(fig, info.note)


def plot_distance_matrices(components, archs, values, order="evaluation", n_total=None) -> go.Figure:
    """Distance heatmaps figure (see :func:`_get_distance_matrix_info`)."""
    return _get_distance_matrix_plot(_get_distance_matrix_info(components, archs, values, order, n_total))
