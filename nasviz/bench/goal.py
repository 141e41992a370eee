"""Issue 21's goal per seed set and over all seed sets pooled, from ``bench search --runs`` reports.

``python -m nasviz bench goal --results R1.json R2.json ... [--candidate NAME] [--peers A,B]``

One 20-seed run decides the goal with little power: for one setting, the number of tables that
meet it moves by two to four between seed sets (docs/benchmarks.md). This benchmark reads the
per-run final regrets that ``bench search --runs`` stores (``final_regrets`` with ``seeds_run``)
from any number of reports of the same budget and gives:

* ``seed_sets``: for each seed set (a report's ``first_seed`` and ``seeds``; reports on the same
  seeds are merged, so a candidate run alone can be set against peers run earlier), the goal on
  every table, recomputed from the runs with :func:`~nasviz.bench.search_report.goal_check`;
* ``pooled``: on every table, each strategy's final statistics over the seeds that the candidate
  and every peer ran (one run per seed), and the goal on those: the same test with more runs;
* ``trapped``: the candidate's runs that end above ``--trapped`` regret, with table and seed;
* ``draws`` (with ``--draws K``): how often the goal is met on every table in one run of
  ``--draw-size`` seeds (the issue's measure), over K seed sets drawn without replacement from the
  pooled seeds, the same seeds on every table. The draws share seeds, so this is the spread of
  the one-run measure given these runs, not a confidence interval.

Pooling needs every name to mean the same strategy in every report. Strategies are deterministic
given their seed, so a seed that appears in two reports must have the same final regret in both;
and reports record what each name runs with (``strategy_settings``: its preset and options), which
must agree too. Either mismatch means the reports come from different code, and is an error naming
both files. Reports written before ``strategy_settings`` existed are listed in ``unchecked``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from nasviz.bench.search import GOAL_PEERS
from nasviz.bench.search_report import final_statistics, goal_check, report_tables, table_label
from nasviz.errors import InputError

DESCRIPTION = "issue 21's goal per seed set and pooled over seed sets, from bench search --runs reports"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", type=Path, nargs="+", required=True,
                        help="bench search reports written with --runs (JSON), any seeds, one budget")
    parser.add_argument("--candidate", default=None, help="the strategy to check (default: the dashboard's default)")
    parser.add_argument("--peers", default=",".join(GOAL_PEERS), help="comma-separated peers; the better one on each "
                        "table is the bar (default: %(default)s)")
    parser.add_argument("--trapped", type=float, default=3.0,
                        help="list the candidate's runs whose final regret exceeds this (default: %(default)s)")
    parser.add_argument("--draws", type=int, default=0, help="also draw this many seed sets of --draw-size from the "
                        "pooled seeds and report how often the goal is met on every table (default: off)")
    parser.add_argument("--draw-size", type=int, default=20, help="seeds in one drawn set (default: %(default)s, "
                        "issue 21's one run)")


#: ``{table label: {strategy: {seed: final regret}}}``
Runs = dict[str, dict[str, dict[int, float]]]


def read_runs(paths: list[Path]) -> tuple[int, dict[str, Runs], list[str]]:
    """The budget, ``{seed set label: runs}`` of every report (a seed set is labelled
    ``"first-last"``, e.g. ``"60-79"``) and the reports without ``strategy_settings``. Raises
    ``ValueError`` naming the file for a report without per-run regrets, of another budget, or
    whose regret for a seed or settings for a name contradict another report's."""
    budget: int | None = None
    sets: dict[str, Runs] = {}
    origin: dict[tuple[str, str, int], tuple[Path, float]] = {}
    settings_of: dict[str, tuple[Path, dict[str, Any]]] = {}
    unchecked: list[str] = []
    for path in paths:
        try:
            report = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(f"{path}: not a readable bench search report ({exc})") from None
        for key in ("budget", "first_seed", "seeds"):
            if key not in report:
                raise InputError(f"{path}: field {key!r} missing (is this a bench search report?)")
        if budget is None:
            budget = int(report["budget"])
        elif int(report["budget"]) != budget:
            raise InputError(f"{path}: budget {report['budget']} differs from the first report's {budget}; "
                             "final regrets after different budgets cannot be pooled")
        if "strategy_settings" not in report:
            unchecked.append(str(path))
        for name, settings in report.get("strategy_settings", {}).items():
            seen_settings = settings_of.setdefault(name, (Path(path), settings))
            if seen_settings[1] != settings:
                raise InputError(f"{path}: strategy {name} runs with {settings} but with {seen_settings[1]} in "
                                 f"{seen_settings[0]}; the reports come from different code")
        first, n = int(report["first_seed"]), int(report["seeds"])
        runs = sets.setdefault(f"{first}-{first + n - 1}", {})
        for entry in report_tables(report):
            label = table_label(entry)
            for name, summary in entry["strategies"].items():
                if "final_regrets" not in summary or "seeds_run" not in summary:
                    raise InputError(f"{path}: table {label}, strategy {name}: no per-run regrets "
                                     "(field 'final_regrets'); run bench search with --runs")
                for seed, regret in zip(summary["seeds_run"], summary["final_regrets"]):
                    seen = origin.setdefault((label, name, int(seed)), (Path(path), float(regret)))
                    if not _same(seen[1], float(regret)):
                        raise InputError(f"{path}: table {label}, strategy {name}, seed {seed}: final regret {regret} "
                                         f"but {seen[1]} in {seen[0]}; the reports come from different code")
                    runs.setdefault(label, {}).setdefault(name, {})[int(seed)] = float(regret)
    if budget is None:
        raise InputError("no report given")
    return budget, sets, unchecked


def _same(a: float, b: float) -> bool:
    """Equal final regrets (a run without evaluations has NaN in every report)."""
    return a == b or (a != a and b != b)


def _goals(runs: Runs, candidate: str, peers: tuple[str, ...]) -> dict[str, Any]:
    """Per table: the strategies' final statistics over the seeds the candidate and every peer
    present ran, and the goal on them; tables without the candidate or any peer are left out."""
    tables: dict[str, Any] = {}
    for label, by_strategy in sorted(runs.items()):
        present = [p for p in peers if p in by_strategy]
        if candidate not in by_strategy or not present:
            continue
        seeds = sorted(set(by_strategy[candidate]).intersection(*(by_strategy[p] for p in present)))
        finals = {name: final_statistics([by_strategy[name][s] for s in seeds]) for name in (candidate, *present)}
        goal = goal_check({name: {"final": f} for name, f in finals.items()}, candidate, present)
        tables[label] = {"seeds": len(seeds), "final": finals, "goal": goal}
    met = sum(1 for t in tables.values() if t["goal"] and t["goal"]["met"])
    return {"tables": tables, "met_on": met, "of": len(tables)}


def draws(runs: Runs, candidate: str, peers: tuple[str, ...], size: int, count: int, seed: int = 0) -> dict[str, Any]:
    """How often one run of ``size`` seeds meets the goal: ``count`` seed sets drawn without
    replacement from the seeds that every table's candidate and peers ran (one set for all tables,
    as one ``bench search`` run), each judged by :func:`_goals`.

    Returns ``{"size", "draws", "from_seeds", "all_tables": fraction met on every table,
    "tables_met": {k: fraction met on exactly k tables}, "per_table": {label: fraction}}``."""
    tables = {label: by for label, by in runs.items() if candidate in by and any(p in by for p in peers)}
    if not tables:
        raise InputError(f"no table has runs of {candidate} and a peer to draw from")
    names = [(label, name) for label, by in tables.items() for name in (candidate, *peers) if name in by]
    common = sorted(set.intersection(*(set(tables[label][name]) for label, name in names)))
    if size < 1 or size > len(common):
        raise InputError(f"--draw-size {size}: the reports share {len(common)} seeds on every table")
    rng = np.random.default_rng(seed)
    met_counts = np.zeros(len(tables) + 1, dtype=int)
    per_table = dict.fromkeys(sorted(tables), 0)
    for _ in range(count):
        chosen = rng.choice(common, size=size, replace=False).tolist()
        drawn = {label: {name: {s: by[name][s] for s in chosen} for name in by if name in (candidate, *peers)}
                 for label, by in tables.items()}
        judged = _goals(drawn, candidate, peers)
        met_counts[judged["met_on"]] += 1
        for label, table in judged["tables"].items():
            per_table[label] += bool(table["goal"] and table["goal"]["met"])
    return {"size": size, "draws": count, "from_seeds": len(common),
            "all_tables": float(met_counts[len(tables)] / count),
            "tables_met": {str(k): float(v / count) for k, v in enumerate(met_counts) if v},
            "per_table": {label: float(v / count) for label, v in per_table.items()}}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from nasviz.components import DEFAULT_STRATEGY

    candidate = args.candidate or DEFAULT_STRATEGY
    peers = tuple(p.strip() for p in args.peers.split(",") if p.strip())
    if not peers:
        raise InputError("--peers names no strategy")
    if args.draws < 0:
        raise InputError(f"--draws must be 0 (off) or more, got {args.draws}")
    budget, sets, unchecked = read_runs(list(args.results))
    pooled: Runs = {}
    for runs in sets.values():
        for label, by_strategy in runs.items():
            for name, by_seed in by_strategy.items():
                pooled.setdefault(label, {}).setdefault(name, {}).update(by_seed)
    trapped = [{"table": label, "seed": seed, "regret": regret}
               for label, by_strategy in sorted(pooled.items())
               for seed, regret in sorted(by_strategy.get(candidate, {}).items()) if regret > args.trapped]
    out = {
        "candidate": candidate, "peers": list(peers), "budget": budget,
        "seed_sets": {name: _goals(runs, candidate, peers) for name, runs in sets.items()},
        "pooled": _goals(pooled, candidate, peers),
        "trapped": trapped,
        "unchecked": unchecked,
    }
    if args.draws:
        out["draws"] = draws(pooled, candidate, peers, args.draw_size, args.draws)
    return out
