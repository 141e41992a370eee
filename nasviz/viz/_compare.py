"""Comparing runs: best-so-far / regret curves across seeds, final values, parallel coordinates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from nasviz.viz._common import SAFE_SEQUENCE, tidy_layout, LEGEND_BELOW, empty_figure, log_axis

#: Parallel coordinates draw at most this many lines (a random sample beyond it): thousands of
#: WebGL lines take seconds to draw on a small machine and read as one colour anyway.
MAX_PARALLEL_LINES = 1000

#: What the curves' x axis may count: evaluations, cumulative cost (a table's in full evaluations,
#: live training's in seconds),
#: or wall-clock seconds since the run started. Runs read as ``RunCurve`` objects with ``costs`` and
#: ``seconds`` ``(n,)`` beside ``values``.
X_AXES = {"evaluations": "evaluations", "cost": "cumulative cost", "seconds": "wall clock (s)"}
#: The run's field each axis reads.
_AXIS_FIELD = {"cost": "costs", "seconds": "seconds"}
#: Grid points of a cost or wall-clock axis.
AXIS_POINTS = 200

_COLOURS = SAFE_SEQUENCE  # Okabe-Ito: the old Tableau palette put red next to green


def best_so_far(values: np.ndarray) -> np.ndarray:
    """Running maximum ``(n,)`` ignoring failures (NaN): NaN until the first success."""
    v = np.asarray(values, dtype=float)
    filled = np.where(np.isnan(v), -np.inf, v)
    out = np.maximum.accumulate(filled) if len(v) else filled
    return np.where(np.isfinite(out), out, np.nan)


@dataclass
class CurvesInfo:
    """Per group (strategy): ``x`` evaluation counts (or costs, seconds: ``axis``) ``(L,)``, ``mean``
    and ``se`` ``(L,)`` of the best-so-far value (or regret = optimum - best) across runs, ``n`` runs
    reaching each x."""

    groups: list[str]
    x: list[np.ndarray]
    mean: list[np.ndarray]
    se: list[np.ndarray]
    n: list[np.ndarray]
    regret: bool
    metric: str
    axis: str = "evaluations"

    def to_frame(self) -> pd.DataFrame:
        """Long table for export: group, evaluations (or cost, seconds), mean, se, runs."""
        y = "regret" if self.regret else "best"
        return pd.concat([pd.DataFrame({"strategy": g, self.axis: x, f"mean_{y}": m, f"se_{y}": s, "runs": n})
                          for g, x, m, s, n in zip(self.groups, self.x, self.mean, self.se, self.n)],
                         ignore_index=True) if self.groups else pd.DataFrame()


def _group(curve) -> str:
    """What a run is averaged with: its configuration group, else its strategy (older callers)."""
    return getattr(curve, "group", "") or curve.strategy


def _stack(curves: Sequence, regret: bool, axis: str = "evaluations") -> tuple[np.ndarray, np.ndarray]:
    """``(x (L,), M (runs, L))``: best-so-far (or regret) with NaN past a run's end, by evaluation,
    or on a grid of ``AXIS_POINTS`` costs / seconds (a run's value at ``x`` is its best among the
    evaluations made by then; NaN before its first and after its last)."""
    bests = []
    for c in curves:
        b = best_so_far(c.values)
        if regret:
            if c.optimum is None:
                raise ValueError(f"run {c.run_id} has no known optimum (live training): plot best values instead")
            b = c.optimum - b
        bests.append(b)
    if axis == "evaluations":
        L = max(len(b) for b in bests)
        M = np.full((len(curves), L), np.nan)
        for i, b in enumerate(bests):
            M[i, : len(b)] = b
        return np.arange(1, L + 1), M
    if axis not in X_AXES:
        raise ValueError(f"the x axis is one of {', '.join(X_AXES)}, got {axis!r}")
    at = [np.asarray(getattr(c, _AXIS_FIELD[axis]), dtype=float) for c in curves]
    top = max((float(a[-1]) for a in at if len(a)), default=0.0)
    grid = np.linspace(top / AXIS_POINTS, top, AXIS_POINTS) if top > 0 else np.zeros(1)
    M = np.full((len(curves), len(grid)), np.nan)
    for i, (b, a) in enumerate(zip(bests, at)):
        k = np.searchsorted(a, grid * (1 + 1e-9), side="right")  # evaluations made by each grid point
        inside = (k > 0) & (grid <= a[-1] if len(a) else False)
        M[i, inside] = b[k[inside] - 1]
    return grid, M


def _get_curves_info(curves: Sequence, regret: bool = False, axis: str = "evaluations") -> CurvesInfo:
    """Group :class:`nasviz.dashboard.explorer.comparison.RunCurve` by configuration (``group``); mean and standard error across the
    runs (seeds) that have reached each evaluation (s.e. 0 with a single run). Runs without a
    successful evaluation yet (a study's run waiting for its worker, a run whose every evaluation
    failed) are left out until they have one."""
    groups: dict[str, list] = {}
    for c in curves:
        if np.any(np.isfinite(np.asarray(c.values, dtype=float))):
            groups.setdefault(_group(c), []).append(c)
    xs, means, ses, ns = [], [], [], []
    for runs in groups.values():
        x, M = _stack(runs, regret, axis)
        n = np.sum(np.isfinite(M), axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(n > 0, np.nansum(M, axis=0) / np.maximum(n, 1), np.nan)
            dev = np.where(np.isfinite(M), (M - mean[None, :]) ** 2, 0.0).sum(axis=0)
            se = np.where(n > 1, np.sqrt(dev / np.maximum(n - 1, 1)) / np.sqrt(np.maximum(n, 1)), 0.0)
        keep = n > 0
        xs.append(x[keep])
        means.append(mean[keep])
        ses.append(se[keep])
        ns.append(n[keep])
    metric = curves[0].metric if curves else "value"
    return CurvesInfo(list(groups), xs, means, ses, ns, regret, metric, axis)


def _corners(*series: np.ndarray) -> np.ndarray:
    """Indices ``(K,)`` of the points a line through ``series`` (equal-length ``(L,)`` arrays) needs:
    the ends and every point where some series changes on either side. Dropping the rest is
    lossless for a piecewise-linear line, and best-so-far curves are flat almost everywhere, so a
    5,000-evaluation run draws a few dozen points instead of 5,000 (a lighter page)."""
    L = len(series[0])
    if L <= 2:
        return np.arange(L)
    stacked = np.stack([np.nan_to_num(np.asarray(a, dtype=float), nan=np.inf) for a in series])
    step = np.any(stacked[:, 1:] != stacked[:, :-1], axis=0)  # (L-1,) change between i and i+1
    keep = np.zeros(L, dtype=bool)
    keep[[0, -1]] = True
    keep[1:] |= step
    keep[:-1] |= step
    return np.flatnonzero(keep)


def _get_curves_plot(info: CurvesInfo, height: int = 400) -> go.Figure:
    if not info.groups:
        return empty_figure("no evaluation in the chosen runs yet", height)
    fig = go.Figure()
    for k, g in enumerate(info.groups):
        c = _COLOURS[k % len(_COLOURS)]
        keep = _corners(info.mean[k], info.se[k], info.n[k])
        x, m, s, n = info.x[k][keep], info.mean[k][keep], info.se[k][keep], info.n[k][keep]
        lower = m - s
        if info.regret and np.all(m > 0):  # log axis: keep the band's lower edge on the plot
            lower = np.maximum(lower, m / 10)
        fig.add_trace(go.Scatter(x=np.concatenate([x, x[::-1]]), y=np.concatenate([m + s, lower[::-1]]),
                                 fill="toself", fillcolor=c, opacity=0.2, line=dict(width=0), hoverinfo="skip",
                                 showlegend=False, legendgroup=g))
        fig.add_trace(go.Scatter(x=x, y=m, mode="lines", name=f"{g} ({int(info.n[k].max())} runs)", legendgroup=g,
                                 line=dict(color=c, width=2), customdata=np.stack([s, n], axis=1),
                                 hovertemplate="%{x:.4g} " + X_AXES[info.axis] + ": %{y:.4g} ± %{customdata[0]:.3g} "
                                               "(%{customdata[1]} runs)<extra>" + g + "</extra>"))
    y = "regret (optimum − best so far)" if info.regret else f"best {info.metric} so far"
    fig.update_layout(height=height, xaxis_title=X_AXES[info.axis], yaxis_title=y, margin=dict(l=50, r=20, t=50, b=80),
                      legend=LEGEND_BELOW,
                      title=dict(text=f"{'Regret' if info.regret else 'Best so far'}: mean ± standard error across seeds", x=0))
    if info.regret and all(np.all(m > 0) for m in info.mean):
        fig.update_yaxes(**log_axis(np.concatenate(info.mean)))
    return tidy_layout(fig)


def plot_curves(curves, regret: bool = False, axis: str = "evaluations") -> go.Figure:
    """Best so far (or regret) against evaluations, cumulative cost or wall clock (:data:`X_AXES`)."""
    return _get_curves_plot(_get_curves_info(curves, regret, axis))


def curves_table(curves, regret: bool = False, axis: str = "evaluations") -> pd.DataFrame:
    """The curves figure's data (for CSV export): strategy, x, mean, s.e., runs."""
    return _get_curves_info(curves, regret, axis).to_frame()


def final_table(curves: Sequence) -> pd.DataFrame:
    """Per strategy: runs, evaluations (mean), final best value and final regret, mean ± s.e."""
    rows = []
    groups: dict[str, list] = {}
    for c in curves:
        groups.setdefault(_group(c), []).append(c)
    for g, runs in groups.items():
        finals = np.array([np.nanmax(c.values) if np.isfinite(c.values).any() else np.nan for c in runs])
        regrets = np.array([(c.optimum - f) if c.optimum is not None else np.nan for c, f in zip(runs, finals)])

        def se(v):
            v = v[np.isfinite(v)]
            return float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else 0.0

        rows.append({"strategy": g, "runs": len(runs), "evaluations": float(np.mean([len(c.values) for c in runs])),
                     "final best (mean)": float(np.nanmean(finals)) if np.isfinite(finals).any() else None,
                     "final best (s.e.)": se(finals),
                     "final regret (mean)": float(np.nanmean(regrets)) if np.isfinite(regrets).any() else None,
                     "final regret (s.e.)": se(regrets)})
    return pd.DataFrame(rows)


@dataclass
class FinalValuesInfo:
    """Per group the sorted final best values ``(runs,)`` and their ECDF levels ``(runs,)``."""

    groups: list[str]
    values: list[np.ndarray]
    ecdf: list[np.ndarray]
    metric: str


def _get_final_values_info(curves: Sequence) -> FinalValuesInfo:
    groups: dict[str, list] = {}
    for c in curves:
        if np.isfinite(c.values).any():
            groups.setdefault(_group(c), []).append(float(np.nanmax(c.values)))
    vals = [np.sort(np.array(v)) for v in groups.values()]
    return FinalValuesInfo(list(groups), vals, [np.arange(1, len(v) + 1) / len(v) for v in vals],
                           curves[0].metric if curves else "value")


def _get_final_values_plot(info: FinalValuesInfo, height: int = 340) -> go.Figure:
    if not info.groups:
        return empty_figure("no successful evaluation in the chosen runs", height)
    fig = go.Figure()
    for k, g in enumerate(info.groups):
        x = np.concatenate([info.values[k][:1], info.values[k]])  # the step starts at 0
        fig.add_trace(go.Scatter(x=x, y=np.concatenate([[0.0], info.ecdf[k]]), mode="lines+markers", line_shape="hv", name=g,
                                 line=dict(color=_COLOURS[k % len(_COLOURS)])))
    fig.update_layout(height=height, xaxis_title=f"final best {info.metric}", yaxis_title="fraction of runs ≤ x",
                      yaxis_range=[0, 1.05], margin=dict(l=50, r=20, t=50, b=80), legend=LEGEND_BELOW,
                      title=dict(text="Empirical distribution of the final best value", x=0))
    return tidy_layout(fig)


def plot_final_values(curves) -> go.Figure:
    return _get_final_values_plot(_get_final_values_info(curves))


@dataclass
class ParallelInfo:
    """One row per successful evaluation: ``frame`` with the architecture's operation in each slot
    (one column per slot, e.g. NB201's six edges), the value, strategy and run; ``operations`` the
    category order of every axis."""

    frame: pd.DataFrame
    edges: list[str]
    operations: list[str]
    metric: str


@dataclass(frozen=True)
class SlotAxes:
    """The operation slots to draw as parallel axes (plain data from the space, made by
    :func:`nasviz.dashboard.explorer.comparison.slot_axes`): ``names`` one per slot (NB201's
    edges ``0->1``, ...), ``choices`` the category order of every axis, ``of`` each evaluated
    architecture string -> its operation per slot (``len(names)`` entries)."""

    names: tuple[str, ...]
    choices: tuple[str, ...]
    of: Mapping[str, tuple[str, ...]]


def _get_parallel_info(curves: Sequence, slots: SlotAxes) -> ParallelInfo:
    """The runs' successful evaluations, one row each, with a column per slot of ``slots``.
    ``curves`` are :class:`nasviz.dashboard.explorer.comparison.RunCurve` of one space."""
    edges = [f"edge {name}".replace("->", "→") for name in slots.names]
    rows = []
    for c in curves:
        for a, v in zip(c.archs, c.values):
            if np.isfinite(v):
                rows.append({**dict(zip(edges, slots.of[a])), "value": float(v), "strategy": _group(c),
                             "run": c.run_id, "arch": a})
    return ParallelInfo(pd.DataFrame(rows), edges, list(slots.choices), curves[0].metric if curves else "value")


def _get_parallel_plot(info: ParallelInfo, height: int = 420) -> go.Figure:
    if info.frame.empty:
        return empty_figure("no successful evaluation in the chosen runs", height)
    f = info.frame
    shown = f"{len(f):,}"
    if len(f) > MAX_PARALLEL_LINES:
        f = f.sample(MAX_PARALLEL_LINES, random_state=0)
        shown = f"a random {MAX_PARALLEL_LINES:,} of {len(info.frame):,}"
    index = {op: i for i, op in enumerate(info.operations)}
    short = [op.replace("nor_conv_", "conv ").replace("avg_pool_3x3", "pool").replace("skip_connect", "skip")
             for op in info.operations]
    # Axis labels short ("0→1": the title says they are edges) and level. Every slot axis has the
    # same categories in the same order, so only the first names them: names on every axis ran into
    # the lines and the next axis's names on a half-width chart. The value axis is coloured by
    # itself, so a colour bar beside it only covered its ticks.
    dims = [dict(label=e.removeprefix("edge "), values=f[e].map(index).to_numpy(), tickvals=list(range(len(short))),
                 ticktext=short if i == 0 else [""] * len(short), range=[-0.3, len(short) - 0.7])
            for i, e in enumerate(info.edges)]
    dims.append(dict(label=_short_metric(info.metric), values=f["value"].to_numpy()))
    values = f["value"].to_numpy()
    # Colour from the 10th percentile up: a few diverged trainings (NB201: ~10% accuracy) would
    # otherwise squeeze every good cell into one colour.
    cmin = float(np.quantile(values, 0.1)) if len(values) > 9 else float(values.min())
    fig = go.Figure(go.Parcoords(line=dict(color=values, colorscale="Viridis", showscale=False, cmin=cmin,
                                           cmax=float(values.max())),
                                 dimensions=dims, labelangle=0, labelside="top"))
    fig.update_layout(height=height, margin=dict(l=70, r=50, t=120, b=30),
                      title=dict(text=f"Evaluated cells by edge operation ({shown})", x=0,
                                 subtitle=dict(text=f"axes: the edges, then {info.metric}; colour: {info.metric} "
                                                    "(yellow high), from its 10th percentile up")))
    return tidy_layout(fig)


def _short_metric(metric: str, limit: int = 10) -> str:
    """The value axis's label: a long column name ran into the subtitle (the subtitle names it whole)."""
    return metric if len(metric) <= limit else metric[:limit - 1] + "…"


def plot_parallel(curves, slots: SlotAxes) -> go.Figure:
    return _get_parallel_plot(_get_parallel_info(curves, slots))


def evaluations_table(curves, slots: SlotAxes | None) -> pd.DataFrame:
    """One row per successful evaluation (for CSV export): the parallel-coordinates data, with a
    column per operation slot when ``slots`` is given (``None``: a space without slots, or runs
    of several spaces)."""
    if slots is not None:
        return _get_parallel_info(curves, slots).frame
    return pd.DataFrame([{"value": float(v), "strategy": _group(c), "run": c.run_id, "arch": a}
                         for c in curves for a, v in zip(c.archs, c.values) if np.isfinite(v)],
                        columns=["value", "strategy", "run", "arch"])
