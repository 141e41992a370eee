"""Choose one setting for every table, and check it leave-one-table-out (issue 21's protocol).

``python -m nasviz bench tuning --results R1.json R2.json ...`` reads reports of ``bench search
--tables ...`` (every configuration tried, each a strategy spec such as
``bo-tw2g-ucb:pool=exhaustive``) and applies a rule fixed before any result was seen:

* on each table, a configuration's score is its mean final regret relative to the reference
  peer's on the same table, seeds and budget (``optuna-tpe`` by default; it may come from
  another report), ``(mean + eps) / (mean_ref + eps)`` with ``eps = 0.01`` accuracy points so that a
  table where both find the optimum does not divide by zero;
* the chosen configuration minimises its *worst* score over the tables (one setting that must
  hold on every table), ties broken by the geometric mean of the scores;
* leave-one-table-out: for each table, the rule is applied to the other tables only, and the
  held-out table's score of that choice is reported. A choice that changes from fold to fold, or
  scores much worse held out, was fitted to particular tables.

Every configuration in the reports is listed with its scores, so the report is the record of
everything tried. For the chosen configuration the report also gives issue 21's goal on every table
(``goal``: against the better of ``optuna-tpe`` and ``optuna-gp``, :func:`~nasviz.bench.search_report.goal_check`),
and for every batch configuration (``batch_size`` above 1) the batch goal against ``optuna-tpe``
(``batch_goal``), whichever report the peers' runs come from.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from nasviz.bench.protocol import spec_batch_size
from nasviz.bench.search_report import report_tables, table_label
from nasviz.errors import InputError

DESCRIPTION = "choose one BO setting across tables from bench search reports, with a leave-one-table-out check"

#: Added to both mean regrets of a score (accuracy points).
EPS = 0.01


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", type=Path, nargs="+", required=True, help="bench search --tables reports (JSON)")
    parser.add_argument("--reference", default="optuna-tpe", help="the peer scores are relative to (default: optuna-tpe)")
    parser.add_argument("--exclude", default="", help="comma-separated strategies not to choose from (peers are never chosen)")


def _key(report: dict[str, Any], entry: dict[str, Any]) -> tuple[str, int, int, int]:
    """What makes two runs comparable: the table/metric, the seeds and the budget."""
    return table_label(entry), report["first_seed"], report["seeds"], report["budget"]


def collect(reports: list[dict[str, Any]], reference: str) -> dict[str, dict[str, dict[str, Any]]]:
    """``{config: {table label: {"score", "mean", "p90", "found", "runs"}}}`` over all reports.

    The reference may come from any report on the same table with the same seeds and budget
    (strategies are deterministic given their seed, so it need not be run again). One setting
    is scored on one seed set per table: a second seed set is refused, not silently preferred
    (``bench goal`` pools seed sets)."""
    refs = {_key(r, e): e["strategies"][reference] for r in reports for e in report_tables(r) if reference in e["strategies"]}
    out: dict[str, dict[str, dict[str, Any]]] = {}
    scored_on: dict[tuple[str, str], tuple[str, int, int, int]] = {}
    for report in reports:
        for entry in report_tables(report):
            key = _key(report, entry)
            label = key[0]
            ref = refs.get(key)
            if ref is None:
                raise InputError(f"no {reference!r} run on {label} with the seeds and budget of a report to score against")
            for name, summary in entry["strategies"].items():
                first = scored_on.setdefault((name, label), key)
                if first != key:
                    raise InputError(
                        f"{name!r} on {label} is in reports of two seed sets (first seed {first[1]} and {key[1]}): "
                        f"bench tuning scores one seed set; pass one set's reports, or pool them with bench goal")
                final = summary["final"]
                out.setdefault(name, {})[label] = {
                    "score": (final["mean"] + EPS) / (ref["final"]["mean"] + EPS), "mean": final["mean"],
                    "p90": final["p90"], "found": final["found_optimum"], "runs": final["runs"],
                }
    return out


def merged_summaries(reports: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{table label: {strategy: summary}}`` over all reports with the same seeds and budget as
    the first report on that table (a later report on other seeds is left out)."""
    keys: dict[str, tuple[str, int, int, int]] = {}
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for report in reports:
        for entry in report_tables(report):
            key = _key(report, entry)
            if keys.setdefault(key[0], key) == key:
                out.setdefault(key[0], {}).update(entry["strategies"])
    return out


def goals(reports: list[dict[str, Any]], chosen: str | None, candidates: list[str]) -> dict[str, dict[str, Any]]:
    """Per table: issue 21's goal for ``chosen`` and the batch goal of every batch candidate."""
    from nasviz.bench.search_report import batch_goal_check, goal_check

    out: dict[str, dict[str, Any]] = {}
    for label, summary in merged_summaries(reports).items():
        out[label] = {"goal": goal_check(summary, chosen, ("optuna-tpe", "optuna-gp")) if chosen else None,
                      "batch_goal": {c: batch_goal_check(summary, c) for c in candidates
                                     if c in summary and spec_batch_size(c) > 1}}
    return out


def choose(scores: dict[str, dict[str, dict[str, Any]]], tables: list[str], candidates: list[str]) -> str | None:
    """The candidate with the smallest worst score over ``tables`` (then geometric mean);
    ``None`` without tables (a leave-one-out fold of a single table) or a candidate run on all."""
    usable = [c for c in candidates if all(t in scores[c] for t in tables)]
    if not usable or not tables:
        return None

    def key(c: str) -> tuple[float, float]:
        s = [scores[c][t]["score"] for t in tables]
        return max(s), math.exp(sum(math.log(x) for x in s) / len(s))

    return min(usable, key=key)


def run(args: argparse.Namespace) -> dict[str, Any]:
    reports = [json.loads(Path(p).read_text()) for p in args.results]
    scores = collect(reports, args.reference)
    excluded = {s.strip() for s in args.exclude.split(",") if s.strip()}
    candidates = [c for c in scores if not c.startswith("optuna-") and c not in {"random", "evolution"} | excluded]
    tables = sorted({t for c in scores.values() for t in c})
    chosen = choose(scores, tables, candidates)
    folds = {}
    for held in tables:
        pick = choose(scores, [t for t in tables if t != held], candidates)
        folds[held] = {"chosen": pick, "same_as_all_tables": pick == chosen,
                       "held_out_score": scores[pick][held]["score"] if pick and held in scores[pick] else None}
    listing = {c: {"worst_score": max(v["score"] for v in scores[c].values()),
                   "geomean_score": math.exp(sum(math.log(v["score"]) for v in scores[c].values()) / len(scores[c])),
                   "tables": scores[c]} for c in scores}
    return {"reference": args.reference, "eps": EPS, "tables": tables, "chosen": chosen,
            "leave_one_table_out": folds, "goals": goals(reports, chosen, candidates), "configurations": listing}


__all__ = ["EPS", "choose", "collect", "goals", "merged_summaries", "run"]
