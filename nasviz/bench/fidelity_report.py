"""Regret against cumulative cost, and issue 50's goal, from the runs of ``bench search`` on tables
with fidelities (``--tables fidelity``, :mod:`nasviz.bench.protocol`).

Cost is counted in **full evaluations**: the cost of evaluating every architecture of the table at
its full budget, averaged (:meth:`~nasviz.objectives.fidelity_table.FidelityTableObjective.full_cost_unit`:
NAS-Bench-101's mean ``train_seconds_108``, 200 epochs on NAS-Bench-201, the digits table's mean
``train_seconds``). A run's regret at cost ``c`` is the table's full-budget optimum minus the best
full-budget value among its evaluations whose cumulative cost is at most ``c``; a run with no
full-budget evaluation by then has no regret there (``NaN``, counted in ``runs_without_full``),
and a mean over runs with such a run is ``inf`` (nothing found is not a small regret).

Issue 50's goal for a multi-fidelity strategy ``M`` on one table (:func:`fidelity_goal`):

* **one third of the cost**: ``M``'s mean regret at cost ``C / 3`` is at most the single-fidelity
  default's mean regret after 100 evaluations, ``C`` being the default's mean cumulative cost of
  those 100 evaluations (both by the same cost model);
* **equal cost**: at the cost of 30 full evaluations ``M``'s mean regret is at most 0.7 times that
  of Optuna's TPE with its HyperbandPruner (``optuna-tpe-hyperband``).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

#: Issue 50's figures (module docstring).
COST_FRACTION = 1 / 3
EQUAL_COST = 30.0
RATIO = 0.7
PEER = "optuna-tpe-hyperband"


def regret_at_cost(run: dict[str, Any], cost: float) -> float:
    """The run's regret once it has spent ``cost`` full evaluations (``NaN``: no full result yet)."""
    costs = run.get("costs")
    if not costs:
        return math.nan
    k = int(np.searchsorted(np.asarray(costs), float(cost) * (1 + 1e-12), side="right"))
    if k == 0:
        return math.nan
    best = run["trajectory"][k - 1]
    return float(run["optimum"] - best) if best == best else math.nan


def cost_statistics(regrets: Sequence[float]) -> dict[str, Any]:
    """Mean (``inf`` when a run has no full result), s.e., median of the finite ones, and counts."""
    r = np.asarray(regrets, dtype=float)
    finite = r[np.isfinite(r)]
    missing = int(r.size - finite.size)
    return {"mean": float(finite.mean()) if finite.size and not missing else (math.inf if r.size else None),
            "se": float(finite.std(ddof=1) / math.sqrt(finite.size)) if finite.size > 1 else 0.0,
            "median": float(np.median(finite)) if finite.size else None,
            "runs": int(r.size), "runs_without_full": missing}


def cost_summary(runs: list[dict[str, Any]], checkpoints: Sequence[float], grid_points: int = 60) -> dict[str, Any]:
    """One strategy's runs on one table against cost: statistics at ``checkpoints`` (full
    evaluations), the mean +- s.e. curve on a grid up to the largest cost the runs reached, and
    what the runs spent (evaluations, full evaluations, cost)."""
    out: dict[str, Any] = {"regret_at_cost": {f"{c:g}": cost_statistics([regret_at_cost(r, c) for r in runs])
                                              for c in checkpoints}}
    spent = [r["costs"][-1] for r in runs if r.get("costs")]
    top = max(spent) if spent else 0.0
    grid = np.linspace(top / grid_points, top, grid_points) if top > 0 else np.zeros(0)
    curve = [cost_statistics([regret_at_cost(r, c) for r in runs]) for c in grid]
    out["regret_by_cost"] = {"cost": [float(c) for c in grid], "mean": [s["mean"] for s in curve],
                             "se": [s["se"] for s in curve], "runs_without_full": [s["runs_without_full"] for s in curve]}
    out["cost_spent_mean"] = float(np.mean(spent)) if spent else None
    out["evaluations_mean"] = float(np.mean([len(r["trajectory"]) for r in runs])) if runs else None
    out["full_evaluations_mean"] = float(np.mean([r.get("full_evaluations", 0) for r in runs])) if runs else None
    return out


def cost_after(runs: list[dict[str, Any]], evaluations: int) -> float:
    """The mean cumulative cost (full evaluations) of the runs' first ``evaluations`` evaluations."""
    return float(np.mean([r["costs"][min(evaluations, len(r["costs"])) - 1] for r in runs]))


def fidelity_goal(default_runs: list[dict[str, Any]], candidate_runs: list[dict[str, Any]],
                  peer_runs: list[dict[str, Any]], evaluations: int = 100) -> dict[str, Any]:
    """Issue 50's two checks on one table (module docstring), with the figures they compare."""
    def mean(values: Sequence[float]) -> float:
        return cost_statistics(values)["mean"]

    default_regret = mean([_regret_after(r, evaluations) for r in default_runs])
    default_cost = cost_after(default_runs, evaluations)
    at_third = default_cost * COST_FRACTION
    candidate_third = mean([regret_at_cost(r, at_third) for r in candidate_runs])
    candidate_equal = mean([regret_at_cost(r, EQUAL_COST) for r in candidate_runs])
    peer_equal = mean([regret_at_cost(r, EQUAL_COST) for r in peer_runs])
    third = candidate_third <= default_regret
    equal = candidate_equal <= RATIO * peer_equal
    return {"default_regret": default_regret, "default_cost": default_cost, "third_cost": at_third,
            "candidate_regret_at_third": candidate_third, "one_third_met": bool(third),
            "candidate_regret_at_30": candidate_equal, "peer_regret_at_30": peer_equal,
            "ratio_to_peer": candidate_equal / peer_equal if peer_equal > 0 else (0.0 if candidate_equal == 0 else math.inf),
            "equal_cost_met": bool(equal), "met": bool(third and equal)}


def _regret_after(run: dict[str, Any], evaluations: int) -> float:
    traj = run["trajectory"]
    best = traj[min(evaluations, len(traj)) - 1]
    return float(run["optimum"] - best) if best == best else math.nan


__all__ = ["COST_FRACTION", "EQUAL_COST", "PEER", "RATIO", "cost_after", "cost_statistics", "cost_summary",
           "fidelity_goal", "regret_at_cost"]
