"""The small figures that prove a lesson's takeaway on the Learn page: labelled bars (with
standard errors when there are several seeds), step lines against cost, and a search's
evaluations by network size."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from nasviz.viz._common import OKABE_ITO, SAFE_SEQUENCE, empty_figure, tidy_layout


def plot_lesson_bars(labels: Sequence[str], values: Sequence[float], errors: Sequence[float] | None = None,
                     title: str = "", axis: str = "", decimals: int = 2, height: int = 320) -> go.Figure:
    """One bar per label (``values`` (n,), ``errors`` (n,) drawn as ± bars when given), each in its
    own Okabe-Ito colour, its value written above the bar and above its error bar.

    The value is an annotation at the top of the error bar, not the bar's own ``text``: Plotly puts
    an outside text just above the bar's top, where the error bar's whisker runs through it."""
    if not len(labels):
        return empty_figure("nothing measured yet", height)
    v = np.asarray(values, dtype=float)
    e = np.zeros(len(v)) if errors is None else np.nan_to_num(np.asarray(errors, dtype=float))
    text = [f"{x:.{decimals}f}" + ("" if s == 0 else f" ± {s:.{decimals}f}") for x, s in zip(v, e)]
    fig = go.Figure(go.Bar(x=list(labels), y=v,
                           marker_color=[SAFE_SEQUENCE[k % len(SAFE_SEQUENCE)] for k in range(len(v))],
                           error_y=None if errors is None else dict(type="data", array=e, visible=True),
                           hovertemplate="%{x}: %{y:." + str(decimals) + "f}<extra></extra>"))
    tops = np.maximum(v, v + e)  # the error bar's upper end (the bar's top when there is none)
    for label, top_k, words in zip(labels, tops, text):
        fig.add_annotation(x=label, y=float(top_k), text=words, showarrow=False, yanchor="bottom", yshift=3)
    top = float(np.nanmax(tops)) if len(v) else 1.0
    fig.update_layout(height=height, title=dict(text=title, x=0), yaxis=dict(title=axis, range=[min(0.0, float(np.nanmin(v))) * 1.1, top * 1.25 or 1.0]),
                      margin=dict(l=50, r=20, t=50, b=40), showlegend=False)
    return tidy_layout(fig)


def plot_growth(values: Sequence[float], parameters: Sequence[float], start_up: int, metric: str = "value",
                height: int = 340) -> go.Figure:
    """A search's evaluations in order (``values`` (n,)), marker area growing with the network's
    parameter count (``parameters`` (n,)); the first ``start_up`` (random start-up) in orange, the
    model's choices in blue."""
    y = np.asarray(values, dtype=float)
    if not len(y):
        return empty_figure("no evaluation yet", height)
    p = np.asarray(parameters, dtype=float)
    size = 8 + 22 * (np.log10(np.maximum(p, 1)) - np.log10(max(np.nanmin(p), 1))) / max(np.ptp(np.log10(np.maximum(p, 1))), 1e-9)
    fig = go.Figure()
    for name, rows, colour in (("random start-up", slice(0, start_up), OKABE_ITO["orange"]),
                               ("chosen by the model", slice(start_up, None), OKABE_ITO["blue"])):
        x = np.arange(1, len(y) + 1)[rows]
        if len(x):
            fig.add_trace(go.Scatter(x=x, y=y[rows], mode="markers", name=name, customdata=p[rows],
                                     marker=dict(size=size[rows], color=colour, opacity=0.8),
                                     hovertemplate="evaluation %{x}: %{y:.2f}<br>%{customdata:,.0f} parameters"
                                                   "<extra></extra>"))
    fig.update_layout(height=height, title=dict(text="Every network trained, marker size = parameters", x=0),
                      xaxis=dict(title="evaluation", dtick=1), yaxis=dict(title=metric),
                      legend=dict(orientation="h", y=-0.2), margin=dict(l=50, r=20, t=50, b=40))
    return tidy_layout(fig)


def plot_prediction_check(groups: dict, metric: str = "value", height: int = 360) -> go.Figure:
    """Per label ``(predicted mean (k,), predicted s.d. (k,), measured (k,))`` of the candidates a
    search chose: measured against predicted, ± 2 s.d. as error bars, the diagonal dotted (a point
    whose bar crosses it was inside the GP's belief)."""
    fig = go.Figure()
    lo, hi = np.inf, -np.inf
    for k, (label, (pred, sd, y)) in enumerate(groups.items()):
        if not len(pred):
            continue
        fig.add_trace(go.Scatter(x=y, y=pred, mode="markers", name=label,
                                 marker=dict(size=7, color=SAFE_SEQUENCE[k % len(SAFE_SEQUENCE)], opacity=0.8),
                                 error_y=dict(type="data", array=2 * np.asarray(sd), thickness=1),
                                 hovertemplate="measured %{x:.2f}<br>predicted %{y:.2f}<extra>" + label + "</extra>"))
        lo, hi = min(lo, float(np.min(y)), float(np.min(pred))), max(hi, float(np.max(y)), float(np.max(pred)))
    if not np.isfinite(lo):
        return empty_figure("no model-based step yet", height)
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=dict(dash="dot", color="#999"),
                             showlegend=False, hoverinfo="skip"))
    fig.update_layout(height=height, title=dict(text="What the GP predicted for each cell it chose, and what was measured",
                                                x=0),
                      xaxis=dict(title=f"measured {metric}"), yaxis=dict(title="predicted (± 2 s.d.)"),
                      legend=dict(orientation="h", y=-0.2), margin=dict(l=50, r=20, t=50, b=40))
    return tidy_layout(fig)


def plot_lesson_steps(labels: Sequence[str], xs: Sequence[Sequence[float]], ys: Sequence[Sequence[float]],
                      title: str = "", x_axis: str = "", y_axis: str = "", height: int = 340) -> go.Figure:
    """One step line per label (``xs[k]``, ``ys[k]``: ``(n_k,)`` each; NaN in ``ys`` leaves a gap:
    nothing measured yet), each in its own Okabe-Ito colour, the legend under the x-axis title."""
    if not len(labels):
        return empty_figure("nothing measured yet", height)
    fig = go.Figure()
    for k, (label, x, y) in enumerate(zip(labels, xs, ys)):
        fig.add_trace(go.Scatter(x=list(map(float, x)), y=list(map(float, y)), name=str(label), mode="lines",
                                 line=dict(shape="hv", width=2.5, color=SAFE_SEQUENCE[k % len(SAFE_SEQUENCE)]),
                                 hovertemplate=f"{label}<br>%{{x:.1f}}: %{{y:.2f}}<extra></extra>"))
    fig.update_layout(height=height, title=dict(text=title, x=0), xaxis=dict(title=x_axis, rangemode="tozero"),
                      yaxis=dict(title=y_axis, rangemode="tozero"), margin=dict(l=50, r=20, t=50, b=90),
                      legend=dict(orientation="h", y=-0.3, x=0))
    return tidy_layout(fig)
