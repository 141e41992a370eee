"""Interpretability figures: NAS-BOWL Fig. 2, WL features as small graphs, gradient-guided mutation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from nasviz.viz._common import LEGEND_BELOW, OUTLINE, empty_figure
from nasviz.viz._graph import OP_COLOURS


@dataclass
class OperationProfileInfo:
    """Per operation (paper 002 Fig. 2): ``counts`` (number of nodes with that operation),
    ``gradient`` (mean derivative over the architectures with that count), ``value_mean`` /
    ``value_std`` of their true values and ``n`` (how many architectures); lists per operation."""

    operations: list[str]
    counts: list[list[int]]
    gradient: list[list[float]]
    value_mean: list[list[float]]
    value_std: list[list[float]]
    n: list[list[int]]


def _get_operation_profile_info(profiles: Sequence) -> OperationProfileInfo:
    """From :func:`nasviz.interpret.operation_gradient_profile` results (with values)."""
    for p in profiles:
        if p.value_mean is None:
            raise ValueError(f"profile of {p.operation!r} has no true values; pass values to operation_gradient_profile")
    return OperationProfileInfo([p.operation for p in profiles], [list(p.counts) for p in profiles],
                                [list(p.mean_gradient) for p in profiles], [list(p.value_mean) for p in profiles],
                                [list(p.value_std) for p in profiles], [list(p.n_archs) for p in profiles])


def _get_operation_profile_plot(info: OperationProfileInfo, metric: str = "value", height: int = 380) -> go.Figure:
    if not info.operations:
        return empty_figure("no operation occurs in the sampled cells", height)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=["Mean derivative of the GP mean", f"True {metric}: mean ± std"])
    for k, op in enumerate(info.operations):
        colour = OP_COLOURS.get(op, None)
        hover = [f"{c} node(s): {n} architectures" for c, n in zip(info.counts[k], info.n[k])]
        fig.add_trace(go.Scatter(x=info.counts[k], y=info.gradient[k], mode="lines+markers", name=op,
                                 legendgroup=op, line=dict(color=colour), hovertext=hover,
                                 hovertemplate="%{hovertext}<br>derivative %{y:.4g}<extra>" + op + "</extra>"),
                      row=1, col=1)
        fig.add_trace(go.Scatter(x=info.counts[k], y=info.value_mean[k], mode="lines+markers", name=op,
                                 legendgroup=op, showlegend=False, line=dict(color=colour),
                                 error_y=dict(type="data", array=info.value_std[k], thickness=1), hovertext=hover,
                                 hovertemplate="%{hovertext}<br>mean %{y:.4g}<extra>" + op + "</extra>"),
                      row=1, col=2)
    fig.add_hline(y=0, line=dict(color="#999", dash="dot"), row=1, col=1)
    for c in (1, 2):
        fig.update_xaxes(title_text="number of nodes with this operation", dtick=1, row=1, col=c)
    fig.update_layout(height=height, margin=dict(l=50, r=20, t=60, b=90), legend=LEGEND_BELOW,
                      title=dict(text="Operation feature derivatives vs how often the operation occurs (NAS-BOWL Fig. 2)", x=0))
    return fig


def plot_operation_profile(profiles, metric: str = "value") -> go.Figure:
    return _get_operation_profile_plot(_get_operation_profile_info(profiles), metric)


@dataclass
class FeatureGraphInfo:
    """A WL feature drawn as a small tree: node positions ``x``/``y`` ``(k,)``, ``labels``,
    ``edges`` as ``(source, target)`` in data-flow direction, ``title`` with the gradient."""

    x: np.ndarray
    y: np.ndarray
    labels: list[str]
    edges: list[tuple[int, int]]
    title: str


def _get_feature_graph_info(tree, gradient: float) -> FeatureGraphInfo:
    """``tree``: :class:`nasviz.dashboard.explorer.interpretation.FeatureTree`. The root is on the left for ``->`` children
    (its successors to the right) and on the right for ``<-`` children (predecessors to the left);
    each child's edge follows the data flow."""
    n = len(tree.labels)
    depth = np.zeros(n)
    side = np.ones(n)
    for i in range(1, n):
        p = tree.parent[i]
        side[i] = 1.0 if tree.direction[i] == "->" else -1.0
        depth[i] = depth[p] + side[i]
    y = np.zeros(n)
    for d in np.unique(depth):  # spread the nodes of one column vertically, in order of appearance
        members = np.flatnonzero(depth == d)
        y[members] = np.linspace(0.5, -0.5, len(members)) if len(members) > 1 else 0.0
    edges = [(tree.parent[i], i) if tree.direction[i] == "->" else (i, tree.parent[i]) for i in range(1, n)]
    return FeatureGraphInfo(depth, y, list(tree.labels), edges, f"gradient {gradient:+.3g}")


def _get_feature_graph_plot(info: FeatureGraphInfo, height: int = 220) -> go.Figure:
    fig = go.Figure()
    for u, v in info.edges:
        fig.add_annotation(x=info.x[v], y=info.y[v], ax=info.x[u], ay=info.y[u], xref="x", yref="y", axref="x",
                           ayref="y", showarrow=True, arrowhead=2, arrowwidth=1.2, arrowcolor="#999",
                           standoff=12, startstandoff=12, text="")
    colours = [OP_COLOURS.get(l, "#9467bd") for l in info.labels]
    fig.add_trace(go.Scatter(x=info.x, y=info.y, mode="markers+text", text=[l.replace("_", " ") for l in info.labels],
                             textposition="top center", textfont=dict(size=10),
                             marker=dict(size=16, color=colours, line=dict(width=1, color=OUTLINE)),
                             hovertext=info.labels, hovertemplate="%{hovertext}<extra></extra>"))
    fig.update_xaxes(visible=False, range=[info.x.min() - 0.6, info.x.max() + 0.6])
    fig.update_yaxes(visible=False, range=[info.y.min() - 0.5, info.y.max() + 0.6])
    fig.update_layout(height=height, showlegend=False, margin=dict(l=5, r=5, t=30, b=5), plot_bgcolor="rgba(0,0,0,0)",
                      title=dict(text=info.title, x=0, font=dict(size=12)))
    return fig


def plot_feature_graph(tree, gradient: float) -> go.Figure:
    return _get_feature_graph_plot(_get_feature_graph_info(tree, gradient))


@dataclass
class MutationInfo:
    """Gradient-guided mutation of one cell (paper 002 App. C): ``joint`` ``(E, n_ops)`` probability
    that edge ``e`` becomes operation ``o``; ``where`` ``(E,)``; row labels name the current op."""

    joint: np.ndarray
    where: np.ndarray
    rows: list[str]
    operations: list[str]


def _get_mutation_info(probabilities: dict) -> MutationInfo:
    """From :func:`nasviz.dashboard.explorer.interpretation.mutation_probabilities`."""
    joint = np.asarray(probabilities["joint"], dtype=float)
    if not np.isclose(joint.sum(), 1.0):
        raise ValueError(f"mutation probabilities sum to {joint.sum():.4g}, not 1")
    rows = [f"edge {k + 1}: {op}" for k, op in enumerate(probabilities["ops"])]
    return MutationInfo(joint, np.asarray(probabilities["where"], dtype=float), rows, list(probabilities["operations"]))


def _get_mutation_plot(info: MutationInfo, height: int = 340) -> go.Figure:
    fig = make_subplots(rows=1, cols=2, column_widths=[0.25, 0.75], shared_yaxes=True, horizontal_spacing=0.02,
                        subplot_titles=["P(mutate this edge)", "P(edge becomes operation)"])
    fig.add_trace(go.Bar(x=info.where, y=info.rows, orientation="h", marker_color="#4c78a8",
                         hovertemplate="%{y}: %{x:.3f}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Heatmap(z=info.joint, x=info.operations, y=info.rows, colorscale="Blues",
                             text=np.vectorize(lambda v: f"{v:.2f}" if v > 0 else "")(info.joint),
                             texttemplate="%{text}", showscale=False,
                             hovertemplate="%{y} → %{x}: %{z:.3f}<extra></extra>"), row=1, col=2)
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(autorange="reversed", row=1, col=1)
    fig.update_layout(height=height, showlegend=False, margin=dict(l=20, r=20, t=60, b=40),
                      title=dict(text="Gradient-guided mutation of this cell (NAS-BOWL App. C)", x=0))
    return fig


def plot_mutation(probabilities: dict) -> go.Figure:
    return _get_mutation_plot(_get_mutation_info(probabilities))


def plot_slot_importance(slots, drop, se, baseline: float) -> go.Figure:
    """Bars of permutation importance per operation slot (with ± s.e.), largest first."""
    drop, se = np.asarray(drop, dtype=float), np.asarray(se, dtype=float)
    order = np.argsort(-drop)
    fig = go.Figure(go.Bar(x=[slots[i] for i in order], y=drop[order], error_y=dict(type="data", array=se[order]),
                           hovertemplate="%{x}: the correlation falls by %{y:.3f}<extra></extra>"))
    fig.update_layout(height=320, margin=dict(l=50, r=20, t=50, b=40), yaxis_title="fall of Spearman's rho",
                      xaxis_title="operation slot (edge)",
                      title=dict(text=f"Operation-slot importance (GP's rank correlation before shuffling: "
                                      f"{baseline:.3f})", x=0))
    return fig
