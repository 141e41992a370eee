"""The candidate pool in 2-D: classical MDS of the kernel's distances, coloured by the GP."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from nasviz.viz._common import LEGEND_BELOW, OKABE_ITO, stacked_note, tidy_layout, OUTLINE, add_note, empty_figure


def classical_mds(distances: np.ndarray, dim: int = 2) -> np.ndarray:
    """Classical (Torgerson) multidimensional scaling.

    ``B = -1/2 J D^(2) J`` with ``J = I - 11^T/n`` (double centring of the squared distances);
    the embedding is ``V_k sqrt(lambda_k)`` for the ``dim`` largest eigenvalues (negative ones,
    which non-Euclidean distances produce, are clipped to zero). Signs are fixed so the largest
    absolute coordinate of each axis is positive, making the picture stable across refreshes.

    Parameters
    ----------
    distances : ndarray (n, n), symmetric, non-negative
    dim : int

    Returns
    -------
    ndarray (n, dim)
    """
    D = np.asarray(distances, dtype=float)
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise ValueError(f"distances must be a square matrix, got shape {D.shape}")
    if not np.all(np.isfinite(D)):
        raise ValueError("distances contain NaN or infinite entries")
    n = D.shape[0]
    if n == 0:
        return np.zeros((0, dim))
    D = 0.5 * (D + D.T)
    sq = D**2
    B = -0.5 * (sq - sq.mean(axis=0, keepdims=True) - sq.mean(axis=1, keepdims=True) + sq.mean())
    vals, vecs = np.linalg.eigh(B)
    order = np.argsort(vals)[::-1][:dim]
    coords = vecs[:, order] * np.sqrt(np.clip(vals[order], 0.0, None))
    if coords.shape[1] < dim:
        coords = np.hstack([coords, np.zeros((n, dim - coords.shape[1]))])
    flip = np.sign(coords[np.abs(coords).argmax(axis=0), np.arange(dim)])
    return coords * np.where(flip == 0, 1.0, flip)


@dataclass
class PoolInfo:
    """The pool plot's data; the pool's arrays have shape ``(n_pool,)``, the evaluated
    architectures' ``(n_evaluated,)`` (embedded in the same MDS as the pool)."""

    x: np.ndarray
    y: np.ndarray
    archs: list[str]
    mean: np.ndarray | None
    std: np.ndarray | None
    selected: np.ndarray  # bool
    qualities: np.ndarray | None
    step: int | None = None
    distance_name: str = ""
    note: str | None = None
    evaluated_x: np.ndarray | None = None
    evaluated_y: np.ndarray | None = None
    evaluated_archs: list[str] | None = None
    evaluated_values: np.ndarray | None = None


def _optional(values, n: int, name: str) -> np.ndarray | None:
    if values is None:
        return None
    a = np.asarray(values, dtype=float).reshape(-1)
    if a.shape[0] != n:
        raise ValueError(f"{name} has {a.shape[0]} entries for a pool of {n}")
    return a


def _get_pool_info(
    archs: Sequence[str],
    distances: np.ndarray,
    mean=None,
    std=None,
    selected: Sequence[int] = (),
    qualities=None,
    step: int | None = None,
    distance_name: str = "",
    evaluated: Sequence[str] = (),
    evaluated_values=None,
) -> PoolInfo:
    """Embed the pool with :func:`classical_mds` of ``distances`` and attach GP data.

    ``distances`` is ``(n + m, n + m)``: the ``n`` pool members first, then the ``m``
    ``evaluated`` architectures (already observed, with ``evaluated_values`` ``(m,)``), embedded
    together so a teacher sees where the pool lies relative to what the search has measured.
    ``mean``/``std``/``qualities`` are per pool member (n,), ``selected`` indices into the pool.
    """
    n, m = len(archs), len(evaluated)
    D = np.asarray(distances, dtype=float)
    if D.shape != (n + m, n + m):
        raise ValueError(f"distances has shape {D.shape} for a pool of {n} and {m} evaluated architectures")
    coords = classical_mds(D, 2) if n + m else np.zeros((0, 2))
    mask = np.zeros(n, dtype=bool)
    for i in selected:
        if not 0 <= int(i) < n:
            raise ValueError(f"selected index {i} is outside the pool of {n}")
        mask[int(i)] = True
    info = PoolInfo(coords[:n, 0], coords[:n, 1], list(archs), _optional(mean, n, "mean"), _optional(std, n, "std"),
                    mask, _optional(qualities, n, "qualities"), step, distance_name)
    if m:
        info.evaluated_x, info.evaluated_y = coords[n:, 0], coords[n:, 1]
        info.evaluated_archs = list(evaluated)
        info.evaluated_values = _optional(evaluated_values, m, "evaluated_values")
    return info


def positions_shared(x: np.ndarray, y: np.ndarray, resolution: float = 0.005) -> np.ndarray:
    """For each point, how many points of ``(x, y)`` (each ``(n,)``) share its spot: equal within
    ``resolution`` of the larger axis span (well below a marker's size). Candidates at the same
    kernel distance from every other one (equivalent cells) are drawn on one spot, and a late
    pool of 100 candidates looked like 2 circles. Shape ``(n,)``, int."""
    if not len(x):
        return np.zeros(0, dtype=int)
    span = max(float(np.ptp(x)), float(np.ptp(y)), 1e-12)
    keys = [(round(a / (resolution * span)), round(b / (resolution * span))) for a, b in zip(x, y)]
    counts: dict[tuple[int, int], int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    return np.array([counts[key] for key in keys], dtype=int)


def _distinct_spots(shared: np.ndarray) -> int:
    """How many spots the points occupy: each point on a spot of k counts 1/k."""
    return int(round(float(np.sum(1.0 / shared)))) if len(shared) else 0


def _get_pool_plot(info: PoolInfo, height: int = 420) -> go.Figure:
    """Pool members as points: colour = GP mean, size = GP std, selected batch as stars; the
    subtitle says how many candidates share a spot."""
    n = len(info.archs)
    if n == 0:
        return empty_figure("no candidate pool in this step (random search keeps none)", height)
    shared = positions_shared(info.x, info.y)
    hover = []
    for i, a in enumerate(info.archs):
        parts = [a] + ([f"{shared[i]} candidates on this spot"] if shared[i] > 1 else [])
        if info.mean is not None:
            parts.append(f"GP mean {info.mean[i]:.4g}")
        if info.std is not None:
            parts.append(f"GP std {info.std[i]:.3g}")
        if info.qualities is not None:
            parts.append(f"k-DPP quality {info.qualities[i]:.3g}")
        if info.selected[i]:
            parts.append("<b>selected</b>")
        hover.append("<br>".join(parts))
    if info.std is not None and np.ptp(info.std) > 0:
        size = 7 + 18 * (info.std - info.std.min()) / np.ptp(info.std)
    else:
        size = np.full(n, 10.0)
    marker = dict(size=size, line=dict(width=0.5, color=OUTLINE), opacity=0.85)
    if info.mean is not None:
        marker.update(color=info.mean, colorscale="Viridis", showscale=True, colorbar=dict(title="GP mean"))
    fig = go.Figure(go.Scatter(x=info.x, y=info.y, mode="markers", marker=marker, text=hover,
                               hovertemplate="%{text}<extra></extra>", name="pool"))
    if info.evaluated_archs:
        values = info.evaluated_values
        text = [a if values is None or not np.isfinite(values[i]) else f"{a}<br>measured {values[i]:.4g}"
                for i, a in enumerate(info.evaluated_archs)]
        fig.add_trace(go.Scatter(
            x=info.evaluated_x, y=info.evaluated_y, mode="markers", name="evaluated so far", text=text,
            marker=dict(symbol="x-thin", size=9, line=dict(width=1.5, color=OUTLINE)),
            hovertemplate="%{text}<extra>evaluated</extra>",
        ))
    sel = np.flatnonzero(info.selected)
    if len(sel):
        fig.add_trace(go.Scatter(
            x=info.x[sel], y=info.y[sel], mode="markers", name="selected batch",
            marker=dict(symbol="star", size=18, color="rgba(0,0,0,0)", line=dict(width=2.5, color=OKABE_ITO["vermillion"])),
            hoverinfo="skip",
        ))
    title = "Candidate pool (classical MDS" + (f" of {info.distance_name}" if info.distance_name else "") + ")"
    if info.step is not None:
        title += f", step {info.step}"
    fig.update_layout(height=height, margin=dict(l=40, r=20, t=50, b=30), title=dict(text=title, x=0),
                      xaxis=dict(title="MDS 1", zeroline=False), yaxis=dict(title="MDS 2", zeroline=False),
                      legend=LEGEND_BELOW, showlegend=bool(len(sel)) or bool(info.evaluated_archs))
    spots = _distinct_spots(shared)
    notes = [info.note or ("size = GP std" if info.std is not None else None),
             stacked_note(n, spots, "candidates", "spots")]
    return tidy_layout(add_note(fig, "; ".join(t for t in notes if t) or None))


def plot_pool(archs, distances, mean=None, std=None, selected=(), qualities=None, step=None, distance_name="",
              evaluated=(), evaluated_values=None) -> go.Figure:
    """Pool embedding figure, evaluated architectures overlaid (see :func:`_get_pool_info`)."""
    return _get_pool_plot(_get_pool_info(archs, distances, mean, std, selected, qualities, step, distance_name,
                                         evaluated, evaluated_values))
