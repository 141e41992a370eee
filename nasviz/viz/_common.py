"""Helpers shared by the figure builders: downsampling and on-plot notes."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import plotly.graph_objects as go

#: Scatter traces keep at most this many points by default (browsers slow down beyond a few thousand).
MAX_SCATTER_POINTS = 2000
#: Heatmaps show at most this many rows/columns by default (n^2 cells are sent to the browser).
MAX_HEATMAP_SIZE = 150
#: Marker outlines: a mid grey that stays visible on the light and on the dark theme.
OUTLINE = "#8a8a8a"
#: Legends go under the plot, left-aligned: the top right corner is where the chart toolbar
#: (zoom, download, full screen) appears, and a legend there is hidden under it.
LEGEND_BELOW = dict(orientation="h", yanchor="top", y=-0.18, xanchor="left", x=0.0)


def log_axis(values: Any) -> dict[str, Any]:
    """Settings of a log axis for the positive ``values`` shown on it.

    Over two decades or more Plotly labels 2 and 5 between the powers of ten and the labels run
    together; there only the decades are labelled (as 10^k), with unlabelled minor ticks between.
    Over a shorter span its default labels are kept (decades alone would leave one label or none).
    """
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v) & (v > 0)]
    axis: dict[str, Any] = {"type": "log"}
    if v.size and np.log10(v.max() / v.min()) >= 2:
        axis.update(dtick=1, exponentformat="power", minor=dict(ticks="outside", ticklen=3, showgrid=False))
    return axis


def finite_or_none(value: Any) -> float | None:
    """``float(value)`` if it is a finite number, else ``None`` (failed evaluations, NaN, text)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def even_subsample(n: int, k: int, keep: Sequence[int] = ()) -> np.ndarray:
    """Sorted indices of at most ``k`` (+ ``len(keep)``) of ``range(n)``, evenly spaced.

    Indices in ``keep`` (e.g. the points where the best value improved) are always included, so
    a downsampled trace still shows every point a reader would look for. Shape ``(m,)``, int.
    """
    if n <= k:
        return np.arange(n)
    base = np.unique(np.linspace(0, n - 1, num=max(k, 2)).round().astype(int))
    return np.union1d(base, np.asarray(list(keep), dtype=int)).astype(int)


def add_note(fig: go.Figure, text: str | None) -> go.Figure:
    """Write ``text`` (e.g. "showing 2,000 of 10,000 points") in the figure's top-right corner."""
    if text:
        fig.add_annotation(
            text=text, xref="paper", yref="paper", x=1.0, y=1.02, xanchor="right", yanchor="bottom",
            showarrow=False, font=dict(size=11, color="#666"),
        )
    return fig


def empty_figure(message: str, height: int = 300) -> go.Figure:
    """A blank figure that says why there is nothing to draw yet."""
    fig = go.Figure()
    fig.add_annotation(text=message, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False,
                       font=dict(size=14, color="#666"))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.update_layout(height=height, margin=dict(l=20, r=20, t=30, b=20))
    return fig
