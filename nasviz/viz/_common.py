"""Helpers shared by the figure builders: downsampling and on-plot notes."""

from __future__ import annotations

import math
import re
from typing import Any, Iterable, Sequence

import numpy as np
import plotly.graph_objects as go

#: Scatter traces keep at most this many points by default (browsers slow down beyond a few thousand).
MAX_SCATTER_POINTS = 2000
#: Heatmaps show at most this many rows/columns by default (n^2 cells are sent to the browser).
MAX_HEATMAP_SIZE = 150
#: Okabe & Ito's palette (Color Universal Design, 2008): eight colours told apart with every common
#: colour-vision deficiency. Every categorical colour of the figures comes from here; continuous
#: scales are Viridis / Cividis (also safe), diverging ones blue-orange.
OKABE_ITO = {
    "black": "#000000", "orange": "#E69F00", "sky blue": "#56B4E9", "bluish green": "#009E73",
    "yellow": "#F0E442", "blue": "#0072B2", "vermillion": "#D55E00", "reddish purple": "#CC79A7",
}
#: The palette in the order traces take it (black left out: invisible on the dark theme).
SAFE_SEQUENCE = tuple(OKABE_ITO[c] for c in ("blue", "orange", "bluish green", "vermillion", "sky blue",
                                              "reddish purple", "yellow"))
#: Marker outlines: a mid grey that stays visible on the light and on the dark theme.
OUTLINE = "#8a8a8a"
#: Legends go under the plot, left-aligned: the top right corner is where the chart toolbar
#: (zoom, download, full screen) appears, and a legend there is hidden under it. They are placed
#: against the bottom of the figure (``yref="container"``), under the x axis's title: placed by a
#: fraction of the plot's height they sat on the title whenever the plot was short.
LEGEND_BELOW = dict(orientation="h", yref="container", yanchor="bottom", y=0.0, xanchor="left", x=0.0)
#: Pixels at the top of a figure kept for the chart toolbar (about 25 px tall): the title starts
#: below them, so at 390 px, where the toolbar spans the width, it no longer covers the title.
TOOLBAR_ROOM = 30
#: Pixels under the plot area for the x axis's ticks and title, then the legend below them.
AXIS_TITLE_ROOM, LEGEND_ROOM = 55, 30


def log_axis(values: Any) -> dict[str, Any]:
    """Settings of a log axis for the positive ``values`` shown on it.

    Over two decades or more Plotly labels 2 and 5 between the powers of ten and the labels run
    together; there only the decades are labelled (as 10^k), with unlabelled minor ticks between.
    Over a shorter span Plotly labels the ticks between two powers of ten by their first digit
    alone ("2", "3" ... for 0.2, 0.3 ...), which reads as the wrong number; there the ticks are
    chosen here (1, 2 and 5 times a power of ten, or every digit when fewer than two of those
    fall in the span) and labelled with their whole value.
    """
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v) & (v > 0)]
    axis: dict[str, Any] = {"type": "log"}
    if not v.size:
        return axis
    low, high = float(v.min()), float(v.max())
    if np.log10(high / low) >= 2:
        axis.update(dtick=1, exponentformat="power", minor=dict(ticks="outside", ticklen=3, showgrid=False))
        return axis
    ticks = _log_ticks(low, high, (1, 2, 5))
    if sum(low <= t <= high for t in ticks) < 2 and high > 1.2 * low:
        # a narrow span: every digit, but only near the data (Plotly pads a short range a little);
        # a constant series keeps 1, 2, 5, since Plotly then draws a wide range of its own choosing
        near = [t for t in _log_ticks(low, high, range(1, 10)) if low / 1.1 <= t <= high * 1.1]
        ticks = sorted(set(ticks) | set(near))
    axis.update(tickmode="array", tickvals=ticks, ticktext=[f"{t:.3g}" for t in ticks])
    return axis


def _log_ticks(low: float, high: float, mantissas: Iterable[int]) -> list[float]:
    """``m * 10^k`` for every mantissa from a decade below ``low`` to a decade above ``high``
    (the axis's autorange pads the data; ticks off the drawn range are not shown)."""
    first, last = math.floor(np.log10(low)) - 1, math.ceil(np.log10(high)) + 1
    return [float(f"{m * 10.0 ** k:.3g}") for k in range(first, last + 1) for m in mantissas]


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
    """Write ``text`` (e.g. "showing 2,000 of 10,000 points") under the figure's title, as its
    subtitle, or, in a figure without a title, in the top-right corner. In the corner a note sat
    on the subplot titles (it hid the last kernel's Spearman rho on the Kernels page)."""
    if not text:
        return fig
    title = fig.layout.title.text if fig.layout.title is not None else None
    if title:
        old = fig.layout.title.subtitle.text if fig.layout.title.subtitle is not None else None
        # a line each: a subtitle does not wrap, and one long line was cut on a phone
        fig.update_layout(title=dict(subtitle=dict(text="<br>".join(t for t in (old, text) if t),
                                                   font=dict(size=11, color="#888"))))
    else:
        fig.add_annotation(
            text=text, xref="paper", yref="paper", x=1.0, y=1.02, xanchor="right", yanchor="bottom",
            showarrow=False, font=dict(size=11, color="#888"),
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


#: Characters of a wrapped title line: a half-width column at 1,400 px, or a phone, holds about 50
#: characters of a 12 px title (:func:`wrap_title`).
TITLE_LINE_CHARS = 48
#: Pixels each further line of a wrapped title takes (a 12 px font and its spacing).
TITLE_LINE_PX = 18


def wrap_title(text: str, width: int = TITLE_LINE_CHARS) -> str:
    """A long one-line title (an architecture's string: NAS-Bench-201's are 95 characters) broken
    into lines of at most ``width`` characters, joined by Plotly's ``<br>``; a figure clips a title
    at its right edge instead of wrapping it. Lines break after ``+``, ``|``, ``,`` or a space, the
    string's own separators; a run without one is cut at ``width``. Removing each ``<br>`` gives the text
    back."""
    pieces = [p for p in re.split(r"(?<=[+|, ])", text) if p]
    lines: list[str] = []
    line = ""
    for piece in pieces:
        while len(piece) > width:  # no separator for a whole line: cut it
            if line:
                lines.append(line)
                line = ""
            lines.append(piece[:width])
            piece = piece[width:]
        if len(line) + len(piece) > width and line:
            lines.append(line)
            line = ""
        line += piece
    if line:
        lines.append(line)
    return "<br>".join(lines)


def clear_of_toolbar(fig: go.Figure) -> go.Figure:
    """Pin a figure's title :data:`TOOLBAR_ROOM` pixels below its top, under the chart toolbar's
    strip, and grow the top margin to hold it (and its subtitle). A figure without a title is left
    as it is. The dashboard applies it to every figure it shows (at 390 px the toolbar spans the
    width and covered centred panel titles such as the Kernels page's component names)."""
    layout = fig.layout
    title = layout.title.text if layout.title is not None else None
    if not title:
        return fig
    fig.update_layout(title=dict(yref="container", y=1.0, yanchor="top", pad=dict(t=TOOLBAR_ROOM)))
    subtitle = layout.title.subtitle.text if layout.title.subtitle is not None else None
    lines = (subtitle.count("<br>") + 1) if subtitle else 0
    top = layout.margin.t
    extra = TITLE_LINE_PX * title.count("<br>")  # a title wrapped over several lines (wrap_title)
    fig.update_layout(margin=dict(t=max(top if top is not None else 0, TOOLBAR_ROOM + 45 + 20 * lines + extra)))
    return fig


def tidy_layout(fig: go.Figure) -> go.Figure:
    """Keep a figure's title clear of the chart toolbar and its legend clear of the x axis's title.

    The title is pinned :data:`TOOLBAR_ROOM` pixels below the figure's top (the toolbar's strip),
    the top margin grows to hold both, and a horizontal legend moves to the figure's bottom edge
    with room for the axis title above it (:data:`LEGEND_BELOW`). Figures call it last.
    """
    layout = fig.layout
    clear_of_toolbar(fig)
    margin = {k: getattr(layout.margin, k) for k in ("l", "r", "t", "b")}
    legend_shown = layout.showlegend is not False and len(fig.data) > 1
    if legend_shown and (layout.legend.orientation == "h" or layout.legend.y is not None):
        fig.update_layout(legend=LEGEND_BELOW)
        has_x_title = bool(layout.xaxis.title.text) if layout.xaxis is not None else False
        margin["b"] = max(margin["b"] or 0, (AXIS_TITLE_ROOM if has_x_title else 30) + LEGEND_ROOM)
    fig.update_layout(margin={k: v for k, v in margin.items() if v is not None})
    return fig


def identical_groups(series: Sequence[np.ndarray], rtol: float = 1e-6) -> list[list[int]]:
    """Indices of ``series`` (1-d arrays) grouped by equal values (NaN equal to NaN, lengths
    equal): each group is drawn as one line, so a chart can say how many lines lie on top of each
    other instead of showing 2 lines for 15 curves. Groups in first-seen order."""
    groups: list[list[int]] = []
    for i, a in enumerate(series):
        a = np.asarray(a, dtype=float)
        for group in groups:
            b = np.asarray(series[group[0]], dtype=float)
            if a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=0.0, equal_nan=True):
                group.append(i)
                break
        else:
            groups.append([i])
    return groups


def stacked_note(n_items: int, n_marks: int, what: str, marks: str = "lines") -> str | None:
    """``"15 curves drawn as 2 lines: identical ones lie on top of each other"`` (None when every
    item has its own mark): a chart that draws fewer marks than its data says so."""
    if n_marks >= n_items:
        return None
    return f"{n_items:,} {what} drawn as {n_marks:,} {marks}: identical ones lie on top of each other"
