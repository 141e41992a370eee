"""Learning curves: the validation score after every epoch of the evaluated architectures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from nasviz.viz._common import add_note, empty_figure, identical_groups, stacked_note, tidy_layout


@dataclass
class LearningCurveInfo:
    """``labels[i]``'s curve is ``curves[i]`` (length = its epochs), its final value ``finals[i]``."""

    labels: list[str]
    curves: list[np.ndarray]
    finals: np.ndarray
    metric: str
    note: str | None = None


def _get_learning_curve_info(curves: Mapping[str, Sequence[float]], metric: str = "validation accuracy",
                             max_curves: int = 15) -> LearningCurveInfo:
    """Keep the ``max_curves`` curves with the best final value (finite entries only)."""
    items = []
    for label, values in curves.items():
        a = np.asarray([np.nan if v is None else float(v) for v in values], dtype=float)
        if np.isfinite(a).any():
            items.append((label, a, float(a[np.isfinite(a)][-1])))
    items.sort(key=lambda t: -t[2])
    kept = items[:max_curves]
    note = f"the best {len(kept)} of {len(items)} curves" if len(items) > len(kept) else None
    return LearningCurveInfo([t[0] for t in kept], [t[1] for t in kept], np.array([t[2] for t in kept]), metric, note)


def _get_learning_curve_plot(info: LearningCurveInfo, height: int = 380) -> go.Figure:
    if not info.labels:
        return empty_figure("no learning curve recorded", height)
    fig = go.Figure()
    lo, hi = float(info.finals.min()), float(info.finals.max())
    # Equivalent cells of a table share their curve: one trace per group of identical curves,
    # its hover naming how many architectures it stands for (15 curves once showed as 2 lines).
    groups = identical_groups(info.curves)
    for group in groups:
        label, curve, final = info.labels[group[0]], info.curves[group[0]], info.finals[group[0]]
        shade = 0.0 if hi == lo else (final - lo) / (hi - lo)
        colour = f"hsl({int(220 - 180 * shade)}, 70%, 50%)"  # blue (worst shown) to orange (best)
        name = label if len(group) == 1 else f"{label} and {len(group) - 1} more with this curve"
        fig.add_trace(go.Scatter(x=np.arange(1, len(curve) + 1), y=curve, mode="lines+markers", name=name,
                                 line=dict(color=colour, width=1.5 + min(len(group) - 1, 4) * 0.75),
                                 marker=dict(size=4),
                                 hovertemplate="epoch %{x}: %{y:.4g}<extra>" + name + "</extra>"))
    fig.update_layout(height=height, showlegend=False, margin=dict(l=50, r=20, t=50, b=40),
                      xaxis=dict(title="epoch", dtick=1), yaxis=dict(title=info.metric),
                      title=dict(text="Learning curves (colour: final value, orange = best)", x=0))
    notes = [n for n in (info.note, stacked_note(len(info.labels), len(groups), "curves")) if n]
    return tidy_layout(add_note(fig, "; ".join(notes) or None))


def plot_learning_curves(curves: Mapping[str, Sequence[float]], metric: str = "validation accuracy",
                         max_curves: int = 15) -> go.Figure:
    """Learning-curve figure (see :func:`_get_learning_curve_info`)."""
    return _get_learning_curve_plot(_get_learning_curve_info(curves, metric, max_curves))


#: How a promotion and a stop are marked on the learning curves.
MARK_STYLE = {"promote": dict(symbol="triangle-up", color="#2ca02c", size=11),
              "stop": dict(symbol="x", color="#d62728", size=10)}


@dataclass
class FidelityCurveInfo:
    """Multi-fidelity learning curves: ``labels[i]``'s points ``(x[i], y[i])`` (budgets, values),
    and the promotions and stops ``marks`` (each ``{"label", "x", "y", "kind", "text"}``, kind
    ``"promote"`` or ``"stop"``, text the decision in words)."""

    labels: list[str]
    x: list[np.ndarray]
    y: list[np.ndarray]
    marks: list[dict]
    metric: str
    unit: str
    note: str | None = None


def _get_fidelity_curve_info(curves: Mapping[str, tuple[Sequence[float], Sequence[float]]], marks: Sequence[dict],
                             metric: str, unit: str = "epochs", max_curves: int = 40) -> FidelityCurveInfo:
    """Keep the ``max_curves`` trials that went furthest (highest budget, then best value there);
    marks of trials not kept are dropped with them."""
    items = []
    for label, (xs, ys) in curves.items():
        x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
        order = np.argsort(x, kind="stable")
        x, y = x[order], y[order]
        if len(x) and np.isfinite(y).any():
            items.append((label, x, y, (float(x[-1]), float(np.nanmax(y)))))
    items.sort(key=lambda t: (-t[3][0], -t[3][1]))
    kept = items[:max_curves]
    shown = {t[0] for t in kept}
    note = f"the {len(kept)} of {len(items)} trials that went furthest" if len(items) > len(kept) else None
    return FidelityCurveInfo([t[0] for t in kept], [t[1] for t in kept], [t[2] for t in kept],
                             [dict(m) for m in marks if m["label"] in shown], metric, unit, note)


def _get_fidelity_curve_plot(info: FidelityCurveInfo, height: int = 420) -> go.Figure:
    if not info.labels:
        return empty_figure("no evaluation at any budget yet", height)
    fig = go.Figure()
    for label, x, y in zip(info.labels, info.x, info.y):
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", name=label, showlegend=False,
                                 line=dict(color="#9aa5b1", width=1.2), marker=dict(size=4, color="#6b7785"),
                                 hovertemplate="%{x:g} " + info.unit + ": %{y:.4g}<extra>" + label + "</extra>"))
    for kind, words in (("promote", "promoted"), ("stop", "stopped")):
        chosen = [m for m in info.marks if m["kind"] == kind]
        if chosen:
            fig.add_trace(go.Scatter(x=[m["x"] for m in chosen], y=[m["y"] for m in chosen], mode="markers",
                                     name=words, marker=MARK_STYLE[kind], text=[m["text"] for m in chosen],
                                     customdata=[m["label"] for m in chosen],
                                     hovertemplate="%{customdata}<br>%{text}<extra>" + words + "</extra>"))
    fig.update_layout(height=height, margin=dict(l=50, r=20, t=50, b=40), legend=dict(orientation="h", y=-0.2),
                      xaxis=dict(title=f"budget ({info.unit})", type="log"), yaxis=dict(title=info.metric),
                      title=dict(text="Each trial's values budget by budget: ▲ promoted, ✕ stopped" +
                                 (f" — {info.note}" if info.note else ""), x=0))
    return fig


def plot_fidelity_curves(curves: Mapping[str, tuple[Sequence[float], Sequence[float]]], marks: Sequence[dict],
                         metric: str, unit: str = "epochs", max_curves: int = 40) -> go.Figure:
    """Multi-fidelity learning curves with promotions and stops marked (:func:`_get_fidelity_curve_info`)."""
    return _get_fidelity_curve_plot(_get_fidelity_curve_info(curves, marks, metric, unit, max_curves))
