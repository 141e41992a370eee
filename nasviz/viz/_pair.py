"""Two architectures side by side: OTMANN's transport plan and TW's per-edge mass differences."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from nasviz.viz._common import empty_figure


@dataclass
class TransportPlanInfo:
    """The plan ``(n_a + 1, n_b + 1)`` with row/column labels (layer index and label; the last is
    the non-assignment layer), each pair's cost ``(n_a + 1, n_b + 1)`` (label mismatch + ``nu_str``
    x structural, non-assignment cost on the extra row/column) and the three cost terms."""

    plan: np.ndarray
    cost: np.ndarray
    rows: list[str]
    cols: list[str]
    terms: dict[str, float]
    distance: float
    normalised: float


def _get_transport_plan_info(tp) -> TransportPlanInfo:
    """From a :class:`nasviz.kernels.otmann.TransportPlan` (paper 001 Eq. (6)): its arrays and
    numbers are read, nothing of the kernel is imported."""
    plan = np.asarray(tp.plan, dtype=float)
    n_a, n_b = len(tp.labels_a), len(tp.labels_b)
    if plan.shape != (n_a + 1, n_b + 1):
        raise ValueError(f"plan has shape {plan.shape} for {n_a} and {n_b} layers")
    cost = np.full(plan.shape, float(tp.unit_non_assignment))
    cost[:n_a, :n_b] = np.asarray(tp.label_costs) + tp.nu_str * np.asarray(tp.structural_costs)
    cost[n_a, n_b] = 0.0
    rows = [f"A{i}: {l}" for i, l in enumerate(tp.labels_a)] + ["A: unassigned"]
    cols = [f"B{j}: {l}" for j, l in enumerate(tp.labels_b)] + ["B: unassigned"]
    terms = {"label mismatch": float(tp.label_cost), f"structural (× ν={tp.nu_str:g})": float(tp.nu_str * tp.structural_cost),
             "non-assignment": float(tp.non_assignment_cost)}
    return TransportPlanInfo(plan, cost, rows, cols, terms, float(tp.distance), float(tp.normalised))


def _get_transport_plan_plot(info: TransportPlanInfo, height: int = 420) -> go.Figure:
    fig = make_subplots(rows=1, cols=2, column_widths=[0.68, 0.32], horizontal_spacing=0.16,
                        subplot_titles=["Mass moved from A's layers (rows) to B's (columns)",
                                        f"Cost terms (total {info.distance:.4g}, normalised {info.normalised:.3f})"])
    # The unassigned -> unassigned corner only balances the augmented program (zero cost): leave it
    # out of the colour scale, where it would dwarf every real layer-to-layer flow.
    z = info.plan.copy()
    z[-1, -1] = np.nan
    text = np.where(z > 1e-9, np.vectorize(lambda v: f"{v:.3g}")(np.nan_to_num(z)), "")
    fig.add_trace(go.Heatmap(z=z, x=info.cols, y=info.rows, colorscale="Blues", text=text,
                             texttemplate="%{text}", customdata=info.cost, showscale=False,
                             hovertemplate="%{y} → %{x}<br>mass %{z:.4g}<br>cost per unit %{customdata:.3g}<extra></extra>"),
                  row=1, col=1)
    fig.update_yaxes(autorange="reversed", row=1, col=1)
    fig.add_trace(go.Bar(x=list(info.terms.values()), y=list(info.terms), orientation="h",
                         marker_color=["#4c78a8", "#f58518", "#e45756"],
                         hovertemplate="%{y}: %{x:.4g}<extra></extra>"), row=1, col=2)
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    fig.update_layout(height=height, showlegend=False, margin=dict(l=20, r=20, t=60, b=40),
                      title=dict(text="OTMANN transport plan", x=0))
    return fig


def plot_transport_plan(tp) -> go.Figure:
    return _get_transport_plan_plot(_get_transport_plan_info(tp))


@dataclass
class TreeMassInfo:
    """TW's operation-tree edges that differ: ``labels`` ("n=2 · group conv → conv"),
    ``mass_a`` / ``mass_b`` / ``contribution`` each ``(e,)``; ``total`` = ``sum(contribution)`` = W_o."""

    labels: list[str]
    mass_a: np.ndarray
    mass_b: np.ndarray
    contribution: np.ndarray
    total: float


def _get_tree_mass_info(rows: Sequence, top: int = 15) -> TreeMassInfo:
    """``rows``: :class:`nasviz.dashboard.explorer.pairs.TreeEdgeMass`, largest contribution first; keeps the
    ``top`` edges with a non-zero contribution (the total is over all)."""
    total = float(sum(r.contribution for r in rows))
    kept = [r for r in rows if r.contribution > 1e-12][:top]
    labels = [f"n={r.order} · {r.level} {r.node}" for r in kept]
    return TreeMassInfo(labels, np.array([r.mass_a for r in kept]), np.array([r.mass_b for r in kept]),
                        np.array([r.contribution for r in kept]), total)


def _get_tree_mass_plot(info: TreeMassInfo, height: int = 420) -> go.Figure:
    if not info.labels:
        return empty_figure("identical n-gram measures: W_o = 0", height)
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.03, column_widths=[0.5, 0.5],
                        subplot_titles=["Subtree mass ω(Γ(v)) in A and B", f"w_e |ω_A − ω_B| / N  (sum W_o = {info.total:.4g})"])
    fig.add_trace(go.Bar(y=info.labels, x=info.mass_a, name="A", orientation="h", marker_color="#4c78a8"), row=1, col=1)
    fig.add_trace(go.Bar(y=info.labels, x=info.mass_b, name="B", orientation="h", marker_color="#f58518"), row=1, col=1)
    fig.add_trace(go.Bar(y=info.labels, x=info.contribution, name="contribution", orientation="h",
                         marker_color="#e45756", showlegend=False), row=1, col=2)
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_layout(height=max(height, 28 * len(info.labels) + 120), barmode="group",
                      margin=dict(l=20, r=20, t=60, b=40), legend=dict(orientation="h", y=-0.1),
                      title=dict(text="TW operation tree: edges that carry the distance", x=0))
    return fig


def plot_tree_masses(rows: Sequence, top: int = 15) -> go.Figure:
    return _get_tree_mass_plot(_get_tree_mass_info(rows, top))
