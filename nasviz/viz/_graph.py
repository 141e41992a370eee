"""An architecture drawn as a DAG with operation labels (plotly, networkx layout)."""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
import plotly.graph_objects as go

from nasviz.arch import Architecture
from nasviz.viz._common import OKABE_ITO, OUTLINE, TITLE_LINE_PX, wrap_title

#: Graphs with more nodes than this show their labels on hover only (written out they overlap).
MAX_LABELLED_NODES = 16

#: Fixed colours for the operations people look for; others get a palette colour by first use.
#: All from Okabe & Ito's colour-blind-safe palette (no red against green: the two convolutions
#: are two blues, pooling orange, skip bluish green).
OP_COLOURS: dict[str, str] = {
    "input": "#7f7f7f", "output": "#7f7f7f", "none": "#e0e0e0", "skip_connect": OKABE_ITO["bluish green"],
    "nor_conv_1x1": OKABE_ITO["sky blue"], "nor_conv_3x3": OKABE_ITO["blue"], "avg_pool_3x3": OKABE_ITO["orange"],
}
_PALETTE = tuple(OKABE_ITO[c] for c in ("reddish purple", "vermillion", "yellow", "sky blue", "blue", "orange",
                                         "bluish green"))


@dataclass
class GraphInfo:
    """Node positions ``x``/``y`` (n,), labels and colours (n,), and edges as node-index pairs."""

    x: np.ndarray
    y: np.ndarray
    labels: list[str]
    colours: list[str]
    edges: list[tuple[int, int]]
    title: str


def _get_graph_info(arch: Architecture, title: str = "") -> GraphInfo:
    """Lay the DAG out left to right: a node's column is its longest-path depth from the input.

    Uses ``networkx.multipartite_layout`` with the depth as the layer, so parallel branches
    (e.g. a cell's convolution and pooling paths) are stacked in the same column.
    """
    g = arch.to_networkx()
    depth = {}
    for v in arch.topological_order():
        preds = arch.predecessors()[v]
        depth[v] = 1 + max((depth[u] for u in preds), default=-1)
    for v, d in depth.items():
        g.nodes[v]["layer"] = d
    pos = nx.multipartite_layout(g, subset_key="layer", align="vertical")
    extra: dict[str, str] = {}
    colours = []
    for label in arch.labels:
        if label not in OP_COLOURS and label not in extra:
            extra[label] = _PALETTE[len(extra) % len(_PALETTE)]
        colours.append(OP_COLOURS.get(label, extra.get(label, "#333")))
    labels = list(arch.labels)
    if arch.widths is not None:
        labels = [f"{l} ({w})" if w is not None else l for l, w in zip(labels, arch.widths)]
    xy = np.array([pos[i] for i in range(arch.n_nodes)], dtype=float)
    return GraphInfo(xy[:, 0], xy[:, 1], labels, colours, list(arch.edges), title)


def _get_graph_plot(info: GraphInfo, height: int = 300) -> go.Figure:
    """Nodes as labelled circles, edges as arrows."""
    fig = go.Figure()
    ex, ey, arrows = [], [], []
    columns = np.unique(np.round(info.x, 6))
    step = float(np.diff(columns).min()) if len(columns) > 1 else 1.0
    span_y = float(np.ptp(info.y)) or 1.0
    t = np.linspace(0.0, 1.0, 24)
    for u, v in info.edges:
        p0, p2 = np.array([info.x[u], info.y[u]]), np.array([info.x[v], info.y[v]])
        gap = round(abs(p2[0] - p0[0]) / step)
        if gap <= 1:  # neighbouring columns: a straight arrow
            curve = np.vstack([p0, p2])
        else:  # skips a column: bow outwards (a quadratic Bezier) so it does not cross the nodes between
            mid = (p0 + p2) / 2
            side = 1.0 if mid[1] >= np.median(info.y) else -1.0
            p1 = mid + np.array([0.0, side * 0.35 * span_y * min(gap - 1, 2)])
            curve = ((1 - t)[:, None] ** 2) * p0 + (2 * (1 - t) * t)[:, None] * p1 + (t[:, None] ** 2) * p2
        ex += [*curve[:, 0], None]
        ey += [*curve[:, 1], None]
        tail = curve[-2] if len(curve) > 2 else p0
        arrows.append(dict(x=p2[0], y=p2[1], ax=tail[0], ay=tail[1], xref="x", yref="y", axref="x", ayref="y",
                           showarrow=True, arrowhead=2, arrowsize=1.2, arrowwidth=1.2, arrowcolor="#999",
                           standoff=12, text=""))
    fig.add_trace(go.Scatter(x=ex, y=ey, mode="lines", line=dict(color="#999", width=1.2), hoverinfo="skip"))
    fig.update_layout(annotations=arrows)  # one layout update: add_annotation per edge is slow
    crowded = len(info.labels) > MAX_LABELLED_NODES  # 32-node wired graphs: labels on hover only
    fig.add_trace(go.Scatter(
        x=info.x, y=info.y, mode="markers" if crowded else "markers+text",
        text=[l.replace("_", " ") for l in info.labels], textposition="top center", textfont=dict(size=12),
        marker=dict(size=14 if crowded else 22, color=info.colours, line=dict(width=1, color=OUTLINE)),
        hovertext=info.labels, hovertemplate="%{hovertext}<extra></extra>",
    ))
    x_range, y_range = graph_ranges(info, ex, ey)
    fig.update_xaxes(visible=False, range=x_range)
    fig.update_yaxes(visible=False, range=y_range)
    title = wrap_title(info.title)  # a long string over lines: the figure clips one long line
    fig.update_layout(height=height + TITLE_LINE_PX * title.count("<br>"), showlegend=False, margin=dict(l=10, r=10, t=40, b=10),
                      title=dict(text=title, x=0, font=dict(size=12)), plot_bgcolor="rgba(0,0,0,0)")
    return fig


#: Room around the drawing, in data units: the node markers' radius, and above the top node its label.
_PAD, _LABEL_ROOM = 0.15, 0.25


def graph_ranges(info: GraphInfo, ex: list, ey: list) -> tuple[list[float] | None, list[float] | None]:
    """Axis ranges that hold every node, its label and every drawn edge point (``ex``/``ey``,
    ``None`` between edges): an arc that bows past the outermost nodes (a cell drawn in one row)
    was clipped when the range followed the nodes alone."""
    if not len(info.x):
        return None, None
    xs = np.array([v for v in ex if v is not None] + list(info.x), dtype=float)
    ys = np.array([v for v in ey if v is not None] + list(info.y), dtype=float)
    return ([float(xs.min()) - _PAD, float(xs.max()) + _PAD],
            [float(ys.min()) - 2 * _PAD, float(ys.max()) + 2 * _PAD + _LABEL_ROOM])


def plot_architecture(arch: Architecture, title: str = "") -> go.Figure:
    """An architecture's DAG figure (see :func:`_get_graph_info`)."""
    return _get_graph_plot(_get_graph_info(arch, title))
