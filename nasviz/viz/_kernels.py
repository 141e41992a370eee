"""Kernel explorer figures: distance vs performance, Auto-Keras kernel quality, surrogate quality."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from nasviz.viz._common import (MAX_SCATTER_POINTS, OKABE_ITO, SAFE_SEQUENCE, add_note, empty_figure, log_axis,
                                tidy_layout)


# ----------------------------------------------------------------------------- distance vs performance
@dataclass
class DistancePerformanceInfo:
    """Pairs ``i < j`` of one kernel's distance: ``distance`` and ``difference`` (``|y_i - y_j|``)
    each ``(p,)`` after downsampling; ``rho`` / ``pvalue`` Spearman's rank correlation over *all*
    ``n_pairs`` pairs (NaN if undefined, e.g. constant distances)."""

    kernel: str
    distance: np.ndarray
    difference: np.ndarray
    rho: float
    pvalue: float
    n_pairs: int
    note: str | None = None


def _get_distance_performance_info(kernel: str, D: np.ndarray, values: Sequence[float],
                                   max_points: int = MAX_SCATTER_POINTS, seed: int = 0) -> DistancePerformanceInfo:
    """``D`` ``(n, n)`` symmetric distances, ``values`` ``(n,)``. A kernel whose distance tracks
    performance has a large positive rho (similar architectures perform alike)."""
    D = np.asarray(D, dtype=float)
    y = np.asarray(values, dtype=float)
    n = len(y)
    if D.shape != (n, n):
        raise ValueError(f"distance matrix of {kernel!r} has shape {D.shape} for {n} values")
    iu, ju = np.triu_indices(n, k=1)
    d, dy = D[iu, ju], np.abs(y[iu] - y[ju])
    if len(d) >= 3 and np.ptp(d) > 0 and np.ptp(dy) > 0:
        from scipy.stats import spearmanr  # here, not at import: scipy.stats costs ~0.3 s on a cold page

        res = spearmanr(d, dy)
        rho, p = float(res[0]), float(res[1])
    else:
        rho, p = float("nan"), float("nan")
    note = None
    if len(d) > max_points:
        keep = np.random.default_rng(seed).choice(len(d), max_points, replace=False)
        note = f"showing {max_points:,} of {len(d):,} pairs"
        d, dy = d[keep], dy[keep]
    return DistancePerformanceInfo(kernel, d, dy, rho, p, len(iu), note)


def _get_distance_performance_plot(infos: Sequence[DistancePerformanceInfo], metric: str = "value",
                                   height: int = 340) -> go.Figure:
    if not infos:
        return empty_figure("choose at least one kernel", height)
    titles = [f"{i.kernel}: Spearman ρ = {i.rho:.3f}" if np.isfinite(i.rho) else f"{i.kernel}: ρ undefined"
              for i in infos]
    fig = make_subplots(rows=1, cols=len(infos), subplot_titles=titles, horizontal_spacing=0.06)
    for c, info in enumerate(infos, start=1):
        fig.add_trace(go.Scattergl(x=info.distance, y=info.difference, mode="markers", name=info.kernel,
                                   marker=dict(size=4, opacity=0.35),
                                   hovertemplate="distance %{x:.4g}<br>|Δ| %{y:.4g}<extra>" + info.kernel + "</extra>"),
                      row=1, col=c)
        fig.update_xaxes(title_text="distance", row=1, col=c)
    fig.update_yaxes(title_text=f"|difference in {metric}|", row=1, col=1)
    fig.update_layout(height=height, showlegend=False, margin=dict(l=50, r=20, t=60, b=40),
                      title=dict(text="Pairwise distance vs performance difference", x=0))
    note = infos[0].note and f"{infos[0].note} (ρ over all {infos[0].n_pairs:,} pairs)"
    return tidy_layout(add_note(fig, note))


def plot_distance_performance(distances: dict[str, np.ndarray], values, metric: str = "value") -> go.Figure:
    """One scatter per kernel (``distances``: kernel -> ``(n, n)``)."""
    return _get_distance_performance_plot(
        [_get_distance_performance_info(k, D, values) for k, D in distances.items()], metric)


# ----------------------------------------------------------------------------- Auto-Keras kernel quality
def scale_to_unit(M: np.ndarray) -> np.ndarray:
    """Min-max scaling of all entries to ``[-1, 1]`` (paper 003 §5.4); a constant matrix maps to 0."""
    M = np.asarray(M, dtype=float)
    lo, hi = float(np.min(M)), float(np.max(M))
    if hi <= lo:
        return np.zeros_like(M)
    return 2.0 * (M - lo) / (hi - lo) - 1.0


@dataclass
class KernelQualityInfo:
    """Paper 003 §5.4: ``K`` (kernel matrix) and ``P`` (``P_ij = -|c_i - c_j|``), both ``(n, n)``
    scaled to ``[-1, 1]``, and ``mse`` their mean squared difference (lower: the kernel's notion of
    similarity matches performance similarity)."""

    kernel: str
    K: np.ndarray
    P: np.ndarray
    mse: float


def _get_kernel_quality_info(kernel: str, K: np.ndarray, values: Sequence[float]) -> KernelQualityInfo:
    y = np.asarray(values, dtype=float)
    K = np.asarray(K, dtype=float)
    if K.shape != (len(y), len(y)):
        raise ValueError(f"kernel matrix of {kernel!r} has shape {K.shape} for {len(y)} values")
    Ks, Ps = scale_to_unit(K), scale_to_unit(-np.abs(y[:, None] - y[None, :]))
    return KernelQualityInfo(kernel, Ks, Ps, float(np.mean((Ks - Ps) ** 2)))


def _get_kernel_quality_plot(infos: Sequence[KernelQualityInfo], height: int = 360) -> go.Figure:
    if not infos:
        return empty_figure("choose at least one kernel", height)
    titles = [f"K: {i.kernel} (MSE vs P = {i.mse:.3f})" for i in infos] + ["P: performance similarity"]
    # Lower MSE means K's scaled values lie closer to P's; it compares values entry by entry, not
    # orders, so it can rank kernels opposite to Spearman's rho (the page's caption says why).
    fig = make_subplots(rows=1, cols=len(infos) + 1, subplot_titles=titles, horizontal_spacing=0.04)
    mats = [i.K for i in infos] + [infos[0].P]
    for c, M in enumerate(mats, start=1):
        fig.add_trace(go.Heatmap(z=M, zmin=-1, zmax=1, colorscale="Greys_r", showscale=c == len(mats),
                                 hovertemplate="%{y}, %{x}: %{z:.3f}<extra></extra>"), row=1, col=c)
        fig.update_yaxes(autorange="reversed", showticklabels=False, row=1, col=c)
        fig.update_xaxes(showticklabels=False, row=1, col=c)
    fig.update_layout(height=height, margin=dict(l=20, r=20, t=60, b=20),
                      # short title, the rest in the subtitle's lines: a title does not wrap and was cut at 390 px
                      title=dict(text="Kernel quality (Auto-Keras §5.4)", x=0,
                                 subtitle=dict(text="K and P scaled to [-1, 1], best first; lighter = more similar")))
    best = min(infos, key=lambda i: i.mse)
    return tidy_layout(add_note(fig, f"lower MSE = closer to P (here {best.kernel}); it can disagree with ρ"
                                if len(infos) > 1 else "lower MSE = closer to P"))


def plot_kernel_quality(matrices: dict[str, np.ndarray], values) -> go.Figure:
    return _get_kernel_quality_plot([_get_kernel_quality_info(k, K, values) for k, K in matrices.items()])


# ----------------------------------------------------------------------------- surrogate quality
@dataclass
class SurrogateInfo:
    """Per kernel: Spearman mean and standard error; the last trial's test predictions
    (``truth``, ``mean``, ``std`` each ``(m,)``) for the predicted-vs-true panel. ``error_scale``:
    values are accuracies in percent, so the panel shows error ``100 - value`` on log-log axes
    as paper 002 Fig. 8 does (where a few diverged trainings would otherwise flatten the rest)."""

    kernels: list[str]
    rho_mean: np.ndarray
    rho_se: np.ndarray
    truth: list[np.ndarray]
    mean: list[np.ndarray]
    std: list[np.ndarray]
    error_scale: bool = False


def _get_surrogate_info(results: Sequence) -> SurrogateInfo:
    """``results``: :class:`nasviz.dashboard.explorer.kernels.SurrogateQuality` objects (or anything with the same fields)."""
    truth = [np.asarray(r.truth, dtype=float) for r in results]
    mean = [np.asarray(r.mean, dtype=float) for r in results]
    everything = np.concatenate(truth + mean) if results else np.zeros(0)
    error_scale = bool(len(everything)) and bool(np.all((everything >= 0) & (everything < 100)))
    if error_scale:
        truth, mean = [100.0 - t for t in truth], [100.0 - m for m in mean]
    return SurrogateInfo([r.kernel for r in results], np.array([r.spearman_mean for r in results]),
                         np.array([r.spearman_se for r in results]), truth, mean,
                         [np.asarray(r.std, dtype=float) for r in results], error_scale)


def _get_surrogate_plot(info: SurrogateInfo, metric: str = "value", height: int = 380) -> go.Figure:
    if not info.kernels:
        return empty_figure("no surrogate results yet", height)
    fig = make_subplots(rows=1, cols=2, column_widths=[0.35, 0.65], horizontal_spacing=0.1,
                        subplot_titles=["Spearman ρ (mean ± s.e. over trials)",
                                        "Predicted vs true, last trial (± 1 s.d. of the GP posterior)"])
    fig.add_trace(go.Bar(x=info.kernels, y=info.rho_mean, error_y=dict(type="data", array=info.rho_se),
                         marker_color=OKABE_ITO["blue"], showlegend=False,
                         hovertemplate="%{x}: ρ = %{y:.3f}<extra></extra>"), row=1, col=1)
    lo, hi = np.inf, -np.inf
    for k, t, m, s in zip(info.kernels, info.truth, info.mean, info.std):
        fig.add_trace(go.Scatter(x=t, y=m, mode="markers", name=k, error_y=dict(type="data", array=s, thickness=0.8),
                                 marker=dict(size=5, opacity=0.7)), row=1, col=2)
        if len(t):
            lo, hi = min(lo, t.min(), m.min()), max(hi, t.max(), m.max())
    if np.isfinite(lo):
        fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=dict(dash="dot", color="#999"),
                                 showlegend=False, hoverinfo="skip"), row=1, col=2)
    fig.update_yaxes(range=[min(0.0, float(np.min(info.rho_mean - info.rho_se)) - 0.05), 1.0], row=1, col=1)
    what = f"error (100 − {metric})" if info.error_scale else metric
    fig.update_xaxes(title_text=f"true {what}", row=1, col=2)
    fig.update_yaxes(title_text=f"predicted {what}", row=1, col=2)
    if info.error_scale:  # log-log, as paper 002 Fig. 8
        shown = np.concatenate([np.concatenate([t, m]) for t, m in zip(info.truth, info.mean)] or [np.ones(1)])
        fig.update_xaxes(**log_axis(shown), row=1, col=2)
        fig.update_yaxes(**log_axis(shown), row=1, col=2)
    fig.update_layout(height=height, margin=dict(l=50, r=20, t=60, b=40), legend=dict(orientation="h", y=-0.2),
                      colorway=list(SAFE_SEQUENCE))
    return tidy_layout(fig)


def plot_surrogate_quality(results: Sequence, metric: str = "value") -> go.Figure:
    return _get_surrogate_plot(_get_surrogate_info(results), metric)
