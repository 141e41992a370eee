"""Traces of the GP's learned hyperparameters over the steps of a run (paper 000 Fig. 4)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from nasviz.viz._common import (MAX_SCATTER_POINTS, SAFE_SEQUENCE, add_note, empty_figure, even_subsample, finite_or_none,
                                identical_groups, log_axis, stacked_note, tidy_layout)


@dataclass
class HyperparameterInfo:
    """``steps`` (m,) and, per hyperparameter name, its value at each step (m,), NaN if absent."""

    steps: np.ndarray
    series: dict[str, np.ndarray]
    note: str | None = None


#: GP fit fields that are bookkeeping, not hyperparameters.
_SKIP = frozenset({"seconds", "n_obs", "jitter", "n_evaluations", "log_marginal_likelihood",
                   "initial_log_marginal_likelihood", "transform", "candidates"})


def flatten_hyperparameters(hp: Mapping[str, Any]) -> dict[str, float]:
    """``{"theta": {"lambda_1": .1}, "amplitude": 2, "noise": .01, "seconds": .3}`` ->
    ``{"lambda_1": .1, "amplitude": 2, "noise": .01}``: the kernel's ``theta`` entries first,
    then the GP's other numeric scalars, bookkeeping fields dropped. A flat mapping passes."""
    out: dict[str, float] = {}
    theta = hp.get("theta")
    if isinstance(theta, Mapping):
        out.update({str(k): v for k, v in theta.items() if finite_or_none(v) is not None})
    for k, v in hp.items():
        if k != "theta" and k not in _SKIP and not isinstance(v, (Mapping, list, str, bool)) and finite_or_none(v) is not None:
            out[str(k)] = v
    return out


def _get_hyperparameter_info(
    snapshots: Sequence[Mapping[str, Any]],
    key: str = "hyperparameters",
    max_points: int = MAX_SCATTER_POINTS,
) -> HyperparameterInfo:
    """Collect ``snapshot['strategy'][key]`` over the snapshots (see :func:`flatten_hyperparameters`).

    Names are kept in first-seen order; a step where a name is missing (e.g. before the GP
    is first fitted) holds NaN so the traces show the gap.
    """
    rows: list[tuple[int, Mapping[str, Any]]] = []
    for snap in snapshots:
        hp = (snap.get("strategy") or {}).get(key)
        hp = flatten_hyperparameters(hp) if isinstance(hp, Mapping) else {}
        if hp:
            rows.append((int(snap.get("step", len(rows) + 1)), hp))
    names: list[str] = []
    for _, hp in rows:
        names.extend(k for k in hp if k not in names and finite_or_none(hp[k]) is not None)
    keep = even_subsample(len(rows), max_points)
    steps = np.array([rows[i][0] for i in keep], dtype=int)
    series = {name: np.array([finite_or_none(rows[i][1].get(name)) or np.nan for i in keep], dtype=float) for name in names}
    note = f"showing {len(keep):,} of {len(rows):,} steps" if len(keep) < len(rows) else None
    return HyperparameterInfo(steps, series, note)


def _get_hyperparameter_plot(info: HyperparameterInfo, height: int = 320) -> go.Figure:
    """One line per hyperparameter; log y axis when all values are positive and span > 2 decades."""
    if not info.series:
        return empty_figure("no learned hyperparameters yet (the GP is fitted after the initial design)", height)
    fig = go.Figure()
    names = list(info.series)
    # Hyperparameters with the same values at every step (three at 0.001 on the default's
    # NAS-Bench-201 runs) would be one visible line under three legend entries: one trace each group.
    groups = identical_groups([info.series[n] for n in names], rtol=1e-3)
    for k, group in enumerate(groups):
        members = [names[i] for i in group]
        gp_level = all(m in ("amplitude", "noise") for m in members)  # the GP's own scale, dashed
        label = members[0] if len(members) == 1 else " = ".join(members) + " (one line)"
        fig.add_trace(go.Scatter(x=info.steps, y=info.series[members[0]], mode="lines+markers", name=label,
                                 marker=dict(size=4), line=dict(dash="dot" if gp_level else "solid",
                                                                color=SAFE_SEQUENCE[k % len(SAFE_SEQUENCE)])))
    allv = np.concatenate([v[np.isfinite(v)] for v in info.series.values()])
    log = allv.size > 0 and np.all(allv > 0) and allv.max() / allv.min() > 100
    fig.update_layout(height=height, margin=dict(l=50, r=20, t=40, b=40), xaxis_title="step",
                      yaxis=dict(title="value", **(log_axis(allv) if log else {"type": "linear"})),
                      title=dict(text="Learned hyperparameters", x=0), legend=dict(orientation="h", y=-0.25))
    notes = [n for n in (info.note, stacked_note(len(names), len(groups), "hyperparameters")) if n]
    return tidy_layout(add_note(fig, "; ".join(notes) or None))


def plot_hyperparameters(snapshots, key="hyperparameters") -> go.Figure:
    """Hyperparameter traces figure (see :func:`_get_hyperparameter_info`)."""
    return _get_hyperparameter_plot(_get_hyperparameter_info(snapshots, key))
