"""Summaries of search runs: regret by evaluation, final regret statistics, optimum found, timings.

Every run is plain data from :func:`nasviz.bench.search.run_one`: its best-so-far
``trajectory`` (one value per evaluation), the table's ``optimum``, the number of ``distinct``
architectures it evaluated and per-step timings. Simple regret after ``t`` evaluations is
``optimum - trajectory[t - 1]``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np

#: Regret at or below this counts as having found the optimum (table values have 4 decimals).
FOUND_TOLERANCE = 1e-9


def regret_at(run: dict[str, Any], t: int) -> float:
    """Simple regret of ``run`` after ``t`` evaluations (its last value if it stopped earlier)."""
    traj = run["trajectory"]
    if not traj:
        return math.nan
    best = traj[min(t, len(traj)) - 1]
    return float(run["optimum"] - best) if best == best else math.nan


def final_statistics(regrets: Sequence[float]) -> dict[str, Any]:
    """Mean, standard error, median, 90th percentile, max and how many runs found the optimum."""
    r = np.asarray([x for x in regrets if x == x], dtype=float)
    if not r.size:
        return {"runs": 0}
    return {
        "mean": float(r.mean()),
        "se": float(r.std(ddof=1) / np.sqrt(r.size)) if r.size > 1 else 0.0,
        "median": float(np.median(r)),
        "p90": float(np.percentile(r, 90)),
        "max": float(r.max()),
        "found_optimum": int(np.sum(r <= FOUND_TOLERANCE)),
        "runs": int(r.size),
    }


def report_tables(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The table entries of a ``bench search`` report (a one-table report is its own entry)."""
    return report["tables"] if "tables" in report else [report]


def table_label(entry: dict[str, Any]) -> str:
    """``FILE:METRIC`` of a report's table entry: the file's name, not its path, so that reports
    written on different machines name the same table alike."""
    return f"{Path(entry['table']).name}:{entry['metric']}"


def regret_curve(runs: Sequence[dict[str, Any]], budget: int) -> list[float]:
    """Mean regret after each evaluation ``1..budget`` over ``runs``, length ``budget``."""
    if not runs:
        return []
    R = np.array([[regret_at(run, t) for t in range(1, budget + 1)] for run in runs])
    return [float(x) for x in np.nanmean(R, axis=0)]


def summarise(runs: list[dict[str, Any]], checkpoints: list[int], budget: int | None = None) -> dict[str, Any]:
    """One strategy's runs on one table: regret at ``checkpoints`` (mean, median, std, s.e.),
    ``final`` statistics after ``budget`` evaluations, the regret curve, distinct cells, timings."""
    budget = budget or max(checkpoints)
    out: dict[str, Any] = {"regret_mean": {}, "regret_median": {}, "regret_std": {}, "regret_se": {}}
    for t in checkpoints:
        stats = final_statistics([regret_at(run, t) for run in runs])
        r = np.array([regret_at(run, t) for run in runs])
        r = r[np.isfinite(r)]
        out["regret_mean"][str(t)] = stats.get("mean")
        out["regret_median"][str(t)] = stats.get("median")
        out["regret_std"][str(t)] = float(r.std()) if r.size else None
        out["regret_se"][str(t)] = stats.get("se")
    out["final"] = final_statistics([regret_at(run, budget) for run in runs])
    out["regret_by_evaluation"] = regret_curve(runs, budget)
    distinct = [run["distinct"] for run in runs if "distinct" in run]
    if distinct:
        out["distinct_mean"] = float(np.mean(distinct))
        out["distinct_min"] = int(np.min(distinct))
    all_steps = [s["seconds"] for run in runs for s in run["steps"]]
    bo_steps = [s["seconds"] for run in runs for s in run["steps"] if s["bo"]]
    last_bo = [next((s["seconds"] for s in reversed(run["steps"]) if s["bo"]), math.nan) for run in runs]
    last_bo = [x for x in last_bo if x == x]
    out["step_seconds_mean"] = float(np.mean(all_steps)) if all_steps else None
    out["bo_step_seconds_mean"] = float(np.mean(bo_steps)) if bo_steps else None
    # The step that proposed the last batch: the GP then holds ~budget - batch observations.
    out["last_bo_step_seconds_median"] = float(np.median(last_bo)) if last_bo else None
    out["run_seconds_mean"] = float(np.mean([run["seconds"] for run in runs])) if runs else None
    out["runs"] = len(runs)
    return out


def goal_check(summary: dict[str, dict[str, Any]], candidate: str, peers: Sequence[str]) -> dict[str, Any] | None:
    """Issue 21's goal on one table: ``candidate``'s mean final regret is at most half of the
    better peer's (the peer with the lower mean), its 90th percentile no worse, and it found the
    optimum in at least as many runs. ``None`` if a name is missing."""
    present = [p for p in peers if p in summary and summary[p]["final"].get("runs")]
    if candidate not in summary or not present:
        return None
    best = min(present, key=lambda p: summary[p]["final"]["mean"])
    c, p = summary[candidate]["final"], summary[best]["final"]
    checks = {
        "mean_at_most_half": c["mean"] <= 0.5 * p["mean"],
        "p90_no_worse": c["p90"] <= p["p90"],
        "found_at_least": c["found_optimum"] >= p["found_optimum"],
    }
    return {"against": best, **checks, "met": all(checks.values())}


def batch_goal_check(summary: dict[str, dict[str, Any]], candidate: str, peer: str = "optuna-tpe") -> dict[str, Any] | None:
    """Issue 21's batch goal: a batch strategy (``bo-tw2g-kdpp5``, B = 5) is at least as good per
    evaluation as ``peer`` asking one cell at a time: its mean regret after each checkpoint's number
    of *evaluations* (not steps) is no higher. ``None`` if a name is missing."""
    if candidate not in summary or peer not in summary or not summary[peer]["final"].get("runs"):
        return None
    ours, theirs = summary[candidate]["regret_mean"], summary[peer]["regret_mean"]
    at = {k: bool(ours[k] <= theirs[k]) for k in theirs if k in ours}
    return {"against": peer, "checkpoints": at, "met": bool(at) and all(at.values())}


__all__ = ["FOUND_TOLERANCE", "batch_goal_check", "final_statistics", "goal_check", "regret_at", "regret_curve",
           "report_tables", "summarise", "table_label"]
