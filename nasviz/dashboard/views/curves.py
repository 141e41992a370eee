"""Learning curves of the evaluated architectures: from live training (each evaluation's
per-epoch validation scores) or from a table with per-epoch columns (``<metric>_epoch_<E>``, as
``python -m nasviz tabulate`` writes them).

A multi-fidelity run (evaluations at several budgets) shows each trial's values budget by budget,
its own evaluations joined (a continued training adds its epochs to the curve it continues), with
every promotion and stop marked: the strategy's decisions from its steps' states and the
early-stopping rule's stops from the evaluations, each with its rank and rule in words."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from nasviz.dashboard.views.base import View, ViewOutput

if TYPE_CHECKING:
    from nasviz.dashboard.watching import RunWatcher

#: A table column holding one epoch of a learning curve: ``<metric>_epoch_<E>``.
EPOCH_COLUMN = re.compile(r"^(?P<metric>.+)_epoch_(?P<epoch>\d+)$")


def epoch_columns(metrics: list[str], preferred: str | None = None) -> tuple[str, list[str]] | None:
    """``(metric, its per-epoch columns in epoch order)`` of a table, the run's own metric first
    if it has a curve; ``None`` when the table has no per-epoch column."""
    by_metric: dict[str, list[tuple[int, str]]] = {}
    for name in metrics:
        m = EPOCH_COLUMN.match(name)
        if m:
            by_metric.setdefault(m.group("metric"), []).append((int(m.group("epoch")), name))
    if not by_metric:
        return None
    metric = preferred if preferred in by_metric else sorted(by_metric)[0]
    return metric, [name for _, name in sorted(by_metric[metric])]


def run_curves(run: "RunWatcher") -> tuple[dict[str, list[float]], str] | None:
    """``({architecture: curve}, what the curve measures)`` for the run's successful evaluations,
    or ``None`` when neither the evaluations nor the table carry curves."""
    objective = run.search.objective
    if objective.kind == "train":
        evaluations = run.store.evaluations(run.run_id)  # the watcher drops ``info``; read it here
        curves = {e.arch: list(e.info.get("valid_curve") or []) for e in evaluations
                  if e.status == "ok" and (e.info or {}).get("valid_curve")}
        return (curves, "validation score") if curves else None
    if not objective.table:
        return None
    from nasviz.dashboard.sources import table_from_path

    try:
        table = table_from_path(objective.table, run.space_name)
    except (ValueError, OSError):
        return None
    found = epoch_columns(table.metrics, objective.metric)
    if found is None:
        return None
    metric, columns = found
    curves: dict[str, list[float]] = {}
    for e in run.successful():
        arch = run.space.parse(e["arch"])
        if arch in table:
            i = table.index_of(arch)
            curves[e["arch"]] = [float(table.values[c][i]) for c in columns]
    return (curves, f"{metric} (table)") if curves else None


def fidelity_curves(run: "RunWatcher") -> tuple[dict[str, tuple[list[float], list[float]]], list[dict], str] | None:
    """``(curves, marks, unit)`` of a multi-fidelity run, ``None`` for any other: ``curves`` maps
    each trial to its ``(budgets, values)``, ``marks`` lists its promotions and stops."""
    from nasviz.fidelity.decisions import RungDecision

    if not any(e.get("fidelity") for e in run.evaluations):
        return None
    # live training: the stored info (the watcher's rows drop it) has each epoch's score and the rung decisions
    infos = ({e.index: e.info or {} for e in run.store.evaluations(run.run_id)}
             if run.search.objective.kind == "train" else {})
    curves: dict[str, tuple[list[float], list[float]]] = {}
    marks: list[dict] = []
    unit = "epochs"
    for e in run.successful():
        fid = e.get("fidelity") or {}
        unit = fid.get("unit", unit)
        xs, ys = curves.setdefault(e["arch"], ([], []))
        info = infos.get(e["index"]) or {}
        per_epoch = info.get("valid_curve")
        marks.extend(_mark(RungDecision.from_dict(d), unit) for d in info.get("rung_decisions") or ())
        if per_epoch:  # live training: every epoch run, after the budget it continued from
            start = float(fid.get("previous") or 0.0)
            xs.extend(start + k + 1 for k in range(len(per_epoch)))
            ys.extend(float(v) for v in per_epoch)
        elif fid:
            xs.append(float(fid["fidelity"]))
            ys.append(float(e["value"]))
        if fid.get("stop"):
            stop = RungDecision.from_dict(fid["stop"])
            marks.append(_mark(stop, unit))
    marks.extend(_mark(d, unit) for _, d in run.decisions)
    return curves, marks, unit


def _mark(decision, unit: str) -> dict:
    return {"label": decision.arch, "x": decision.fidelity, "y": decision.value, "kind": decision.action,
            "text": decision.describe(unit)}


class LearningCurveView(View):
    """Per-epoch validation curves of the evaluated architectures (the best ones)."""

    def applies(self, run: "RunWatcher") -> str | None:
        if not run.successful():
            return "No successful evaluation yet."
        if fidelity_curves_memo(run) is not None:
            return None
        if run_curves_memo(run) is None:
            return ("No learning curves: the run's table has no per-epoch columns (named like `cifar10_epoch_12`: "
                    "a metric, `_epoch_`, the epoch) and its evaluations were not trained here.")
        return None

    def render(self, run: "RunWatcher", **choices: Any) -> ViewOutput:
        from nasviz import viz

        found = fidelity_curves_memo(run)
        if found is not None:
            curves, marks, unit = found
            fig = viz.plot_fidelity_curves(curves, marks, str(run.search.objective.metric or "value"), unit)
            return ViewOutput([("chart_curves", fig)],
                              "Each line is one trial, measured at each budget it reached. A green triangle marks a "
                              "promotion to the next budget, a red cross a stop; hover over a mark for the trial's "
                              "rank at that budget and the rule that decided.")
        curves, what = run_curves_memo(run)
        fig = viz.plot_learning_curves(curves, what)
        return ViewOutput([("chart_curves", fig)],
                          "Each line is one evaluated architecture's score after every epoch; short budgets rank "
                          "architectures by how fast they learn, which is what low-fidelity values measure.")


def fidelity_curves_memo(run: "RunWatcher"):
    return run.memo(("fidelity-curves", len(run.evaluations), len(run.decisions)), lambda: fidelity_curves(run))


def run_curves_memo(run: "RunWatcher"):
    return run.memo(("curves", len(run.evaluations)), lambda: run_curves(run))
