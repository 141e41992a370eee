"""Regret benchmark: strategies x seeds on benchmark tables, in parallel processes.

``python -m nasviz bench search --table CSV --metric COL --strategies S1,S2 --budget N --seeds K``
prints, per strategy, the regret after 25 / 50 / 100 / ... evaluations (mean, median, s.e.), the
final regret's mean, standard error and 90th percentile, how many runs found the table's optimum,
the mean regret after every evaluation, the distinct cells evaluated and the seconds per step::

    {"strategies": {"bo-tw2g-ucb": {"regret_mean": {"25": ..., "100": ...}, "final": {"mean": ...,
     "se": ..., "p90": ..., "found_optimum": 17, "runs": 20}, "regret_by_evaluation": [...], ...}}}

``--tables`` runs several table/metric pairs in one go (a named protocol such as ``shared``, the
six shared NAS-Bench-201 metrics, or ``TABLE:METRIC[@SPACE],...``; :mod:`nasviz.bench.protocol`)
and reports ``{"tables": [{"table", "metric", "optimum", "strategies": {...}, "goal": {...}}]}``; with
``optuna-tpe`` in the run, every batch strategy gets a ``batch_goal`` entry (``search_report.batch_goal_check``).

With fidelities (``--tables fidelity``, or ``--fidelity SPEC`` for one table: issue 50) every run
looks the table up at the budgets its strategy asks for, multi-fidelity strategies and their peers
(``hyperband``, ``bohb``, ``mf-gp``, ``optuna-tpe-hyperband``, ``smac-mf``, ``dehb``, ...) among
them, and each strategy's entry gains ``cost``: its regret against cumulative cost, in full
evaluations (:mod:`nasviz.bench.fidelity_report`). ``--cost-budget N`` stops every multi-fidelity
run after N full evaluations' worth, while single-fidelity strategies (the default) run ``--budget``
evaluations, so one command measures both sides of issue 50's goal; each table's
``fidelity_goal`` then checks it for every multi-fidelity strategy of the run against the default
and ``optuna-tpe-hyperband`` (:func:`~nasviz.bench.fidelity_report.fidelity_goal`).

A run that raises does not stop the benchmark: it is counted in its strategy's ``crashes`` and
listed, with its traceback, in the report's ``crashes`` (``crashed_runs`` counts them); the
statistics are over the runs that finished. Each strategy's ``best_per_run`` gives every finished
run's best architecture (``arch``, ``value``) and every metric of its table row (``row``: e.g. the
test accuracy of the cell that was best by validation accuracy).

Strategies are registered names, optionally with options (``bo:pool=exhaustive:schedule=srinivas``),
and include Optuna's samplers as peers (``optuna-tpe``, ``optuna-gp``, ``optuna-random``: the
optional extra ``nasviz[peers]``; the benchmark says so when Optuna is missing). Each strategy runs
with the batch size it was designed for (``bo-tw2g-kdpp5`` asks 5 per step). Seeds are
``first_seed .. first_seed + K - 1``; run ``s`` of every strategy on every table uses seed ``s``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from nasviz import defaults
from nasviz.bench import search_runs
from nasviz.bench.fidelity_report import cost_summary
from nasviz.bench.protocol import TablePair, parse_pairs, parse_spec, spec_batch_size
from nasviz.bench.search_report import batch_goal_check, goal_check, regret_at, summarise
from nasviz.errors import InputError

if TYPE_CHECKING:  # the objectives package is imported where a table is loaded
    from nasviz.objectives import Table

DESCRIPTION = ("regret of search strategies (Optuna's samplers as peers) on benchmark tables over seeds: regret by "
               "evaluation, final mean/s.e./90th percentile, optimum found, distinct cells, seconds per step")

#: The peers the goal of issue 21 compares the default strategy with.
GOAL_PEERS = ("optuna-tpe", "optuna-gp")
#: The sequential peer a batch strategy (B > 1) must match per evaluation (issue 21's batch goal).
BATCH_PEER = "optuna-tpe"

def add_arguments(parser: argparse.ArgumentParser) -> None:
    from nasviz.bench.protocol import PROTOCOLS
    from nasviz.cli_common import add_space_argument
    from nasviz.strategies.factory import strategy_names

    parser.add_argument("--table", type=Path, help="benchmark CSV (default: the embedded NAS-Bench-201 CIFAR table, as "
                        "for run and the page)")
    parser.add_argument("--metric", help="metric column to maximise (default: the table's first metric)")
    parser.add_argument("--tables", help="several table/metric pairs instead of --table/--metric: a protocol ("
                        + ", ".join(PROTOCOLS) + ") or TABLE:METRIC[@SPACE],... (tables by path or shared file name)")
    add_space_argument(parser, help="search space of the table: a registered name, or a space spec file (.toml / "
                                    ".json) or a table whose columns declare the space (.csv) (default: nb201)")
    parser.add_argument(
        "--strategies", default=",".join(defaults.BENCH_STRATEGIES),
        help="comma-separated strategy names, each optionally with options as name:key=value:key=value "
             f"(default: {','.join(defaults.BENCH_STRATEGIES)}); known: " + ", ".join(strategy_names()),
    )
    parser.add_argument("--budget", type=int, default=100, help="evaluations per run (default: 100)")
    parser.add_argument("--fidelity", help="the fidelity ladder of --table (auto, or BUDGET=COLUMN[@TABLE],...); "
                        "--tables fidelity gives each shared table with fidelities its own")
    parser.add_argument("--cost-budget", type=float, help="with fidelities: stop each run after this many full "
                        "evaluations' cost (default: only --budget)")
    parser.add_argument("--cost-checkpoints", default="10,20,30",
                        help="with fidelities: report regret at these costs in full evaluations (default: 10,20,30; "
                             "the cost budget is added)")
    parser.add_argument("--seeds", type=int, default=5, help="runs per strategy (default: 5)")
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first run (default: 0)")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1), help="processes (default: 2)")
    parser.add_argument("--checkpoints", default="25,50,100", help="report regret after these evaluation counts (default: 25,50,100; the budget is always added)")
    parser.add_argument("--n-init", type=int, help="random initial points of BO strategies (default: the strategy's, 10)")
    parser.add_argument("--goal", help="a strategy to check issue 21's goal for against the better of optuna-tpe "
                        "and optuna-gp on every table (default: the first bo-* strategy, if peers run)")
    parser.add_argument("--runs", action="store_true", help="also list every run's regret at each checkpoint")
    parser.add_argument(
        "--time-step-at", type=int, metavar="N",
        help="instead of full runs, time one step (fit + pool + posterior + batch; a peer's ask) with N "
             "random observations: median over --seeds repeats, after one untimed step at N - 1; one table at a time",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (the only output format; accepted for symmetry)")
    parser.add_argument("--no-progress", action="store_true",
                        help="do not print a line to stderr as each run ends (runs done, elapsed, estimate left)")


def time_step(job: dict[str, Any]) -> dict[str, Any]:
    """Seconds of one ``ask`` with ``n_obs`` random observations of the table, with its breakdown.

    The strategy is told ``n_obs - 1`` observations and asked once (untimed: one-off work such as
    preparing the exhaustive pool's candidate set happens there), then told one more and timed.
    """
    from nasviz.candidates import random_pool
    from nasviz.components import is_multi_fidelity

    if is_multi_fidelity(parse_spec(job["strategy"])[0]):
        return _time_fidelity_step(job)
    table = search_runs.table(job["table"], job["space"])
    objective = search_runs.objective_of(table, job)
    strategy = search_runs.make_strategy_of(job, objective)
    batch = spec_batch_size(job["strategy"])  # as run_one: a spec's batch_size option counts
    rng = np.random.default_rng(10_000 + job["seed"])
    archs = random_pool(table.space, rng, job["n_obs"], domain=objective.domain())
    strategy.tell(objective.evaluate(archs[:-1]))
    first = time.perf_counter()
    strategy.ask(batch)  # proposals never evaluated: the timed step sees the same pending set
    first = time.perf_counter() - first
    strategy.tell(objective.evaluate(archs[-1:]))
    start, cpu = time.perf_counter(), time.process_time()
    strategy.ask(batch)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    state = strategy.state()
    return {"strategy": job["strategy"], "batch_size": batch, "seconds": seconds, "cpu_seconds": cpu, "first_seconds": first,
            "timings": dict(state.timings), "pool": len(state.pool) if state.pool is not None else 0}


def _time_fidelity_step(job: dict[str, Any]) -> dict[str, Any]:
    """A multi-fidelity strategy's step once its own search has made ``n_obs`` evaluations (its
    observations are at the budgets it chose, so they cannot be drawn at random)."""
    from nasviz.runner import run_search

    table = search_runs.table(job["table"], job["space"])
    objective = search_runs.objective_of(table, job)
    strategy = search_runs.make_strategy_of(job, objective)
    strategy.attach(objective)
    run_search(strategy, objective, job["n_obs"], format_arch=table.space.format)
    start, cpu = time.perf_counter(), time.process_time()
    strategy.ask(1)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    state = strategy.state()
    return {"strategy": job["strategy"], "batch_size": 1, "seconds": seconds, "cpu_seconds": cpu,
            "first_seconds": math.nan, "timings": dict(state.timings),
            "pool": len(state.pool) if state.pool is not None else 0}


def _time_steps(args: argparse.Namespace, names: list[str], pair: TablePair, path: Path, metric: str) -> dict[str, Any]:
    jobs = [{"strategy": name, "seed": seed, "table": str(path), "space": pair.space, "metric": metric,
             "n_obs": args.time_step_at, "n_init": args.n_init, "pair": pair.label, "fidelity": pair.fidelity}
            for name in names for seed in range(args.first_seed, args.first_seed + args.seeds)]
    search_runs.init_worker()
    results = [time_step(job) for job in jobs]  # one process: timings must not compete with each other
    out: dict[str, Any] = {"table": str(path), "metric": metric, "n_observations": args.time_step_at,
                           "repeats": args.seeds, "strategies": {}}
    for name in names:
        rs = [r for r in results if r["strategy"] == name]
        parts = sorted({k for r in rs for k in r["timings"]})
        out["strategies"][name] = {
            "batch_size": rs[0]["batch_size"],
            "step_seconds_median": float(np.median([r["seconds"] for r in rs])),
            "step_seconds_max": float(np.max([r["seconds"] for r in rs])),
            # CPU time of the step's process: what the wall time would be on an idle machine
            # (one BLAS thread); the wall time includes waiting for a busy CPU.
            "step_cpu_seconds_median": float(np.median([r["cpu_seconds"] for r in rs])),
            "first_step_seconds_median": float(np.median([r["first_seconds"] for r in rs])),
            "pool_size": rs[0]["pool"],
            "breakdown_median": {k: float(np.median([r["timings"].get(k, 0.0) for r in rs])) for k in parts},
        }
    return out


def _check_names(names: list[str], pairs: list[TablePair]) -> None:
    """Unknown names, bad options or a missing optional package: one clear error before any run."""
    from nasviz.components import STRATEGIES, is_multi_fidelity, problems
    from nasviz.strategies.factory import strategy_names

    unknown = [s for s in names if parse_spec(s)[0] not in strategy_names()]
    if not names or unknown:
        raise InputError(f"unknown strategy name(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(strategy_names())}")
    for spec in names:
        name, options = parse_spec(spec)
        entry = STRATEGIES.get(name)
        parsed = entry.parse_options(options, owner=f"strategy {name!r}")
        for pair in pairs:
            found = problems(pair.space, name, parsed, spec_batch_size(spec))
            if is_multi_fidelity(name) and not pair.fidelity:
                found.append(f"{name} asks for budgets: give the table a fidelity ladder (--fidelity, or --tables "
                             "fidelity)")
            if found:
                raise InputError(f"{spec} on {pair.label}: " + "; ".join(found))


def strategy_settings(spec: str) -> dict[str, Any]:
    """What ``spec`` runs with in this code: its registry preset updated by the spec's own options.

    Recorded in the report so that reports from code where a preset name meant something else
    (a preset gains an option) are not pooled by ``bench goal``; constructor defaults outside the
    preset are not covered."""
    from nasviz.components import STRATEGIES

    name, options = parse_spec(spec)
    entry = STRATEGIES.get(name)
    return {**entry.preset, **entry.parse_options(options, owner=f"strategy {name!r}")}


def table_pairs(args: argparse.Namespace) -> list[TablePair]:
    """The pairs of ``--tables`` or ``--table/--metric`` (with ``--fidelity``'s ladder); also
    ``bench fidelity-ranks``'s."""
    if args.tables:
        if args.table is not None or args.metric:
            raise InputError("give either --tables or --table/--metric, not both")
        pairs = parse_pairs(args.tables, args.space)
        if args.fidelity:
            pairs = [TablePair(p.table, p.metric, p.space, args.fidelity) for p in pairs]
        return pairs
    if args.table is not None:
        path = Path(args.table)
    else:
        from nasviz.cli import default_table_path

        path = default_table_path()  # the page's and run's default (nasviz.defaults)
    return [TablePair(str(path), args.metric or "", args.space, args.fidelity)]


def _progress_line(total: int, start: float) -> Callable[[int, dict[str, Any]], None]:
    """A stderr line per finished run: a 90-minute benchmark should not look hung."""

    def report(count: int, job: dict[str, Any]) -> None:
        elapsed = time.perf_counter() - start
        left = elapsed / count * (total - count)
        print(f"bench search: {count}/{total} runs done, {elapsed / 60:.1f} min elapsed, about {left / 60:.0f} min "
              f"left (last: {job['pair']} · {job['strategy']} · seed {job['seed']})", file=sys.stderr, flush=True)

    return report


def _goal_candidate(args: argparse.Namespace, names: list[str]) -> str | None:
    if args.goal:
        return args.goal
    if not any(parse_spec(n)[0] in GOAL_PEERS for n in names):
        return None
    return next((n for n in names if parse_spec(n)[0].startswith("bo")), None)


def _budgets(args: argparse.Namespace, spec: str) -> dict[str, Any]:
    """A multi-fidelity strategy runs to the cost budget when one is given; the others run ``--budget``."""
    from nasviz.components import is_multi_fidelity

    if args.cost_budget is not None and is_multi_fidelity(parse_spec(spec)[0]):
        return {"budget": 10**7, "cost_budget": args.cost_budget}
    return {"budget": args.budget, "cost_budget": None}


def _fidelity_goals(results: list[dict[str, Any]], pair: TablePair, names: list[str]) -> dict[str, Any]:
    """Issue 50's goal for every multi-fidelity strategy of the run on one table (needs the default
    strategy and ``optuna-tpe-hyperband`` in the run; empty otherwise)."""
    from nasviz.bench.fidelity_report import PEER, fidelity_goal
    from nasviz.components import DEFAULT_STRATEGY, is_multi_fidelity

    def runs(name: str) -> list[dict[str, Any]]:
        return [r for r in results if r["strategy"] == name and r["pair"] == pair.label and not search_runs.crashed(r)]

    if DEFAULT_STRATEGY not in names or PEER not in names or not runs(DEFAULT_STRATEGY) or not runs(PEER):
        return {}
    return {name: fidelity_goal(runs(DEFAULT_STRATEGY), runs(name), runs(PEER)) for name in names
            if is_multi_fidelity(parse_spec(name)[0]) and runs(name)}


def _cost_checkpoints(args: argparse.Namespace) -> list[float]:
    try:
        points = {float(c) for c in str(args.cost_checkpoints).split(",") if c.strip()}
    except ValueError:
        raise InputError(f"--cost-checkpoints must be comma-separated numbers, got {args.cost_checkpoints!r}") from None
    if args.cost_budget is not None:
        points.add(float(args.cost_budget))
    return sorted(p for p in points if p > 0)


def _checked_arguments(args: argparse.Namespace) -> tuple[list[str], list[int]]:
    """The strategies asked for and the checkpoints (evaluations) the report reads regret at;
    a bad number is refused before anything is loaded."""
    if args.budget < 1:
        raise InputError(f"--budget must be at least 1, got {args.budget}")
    if args.seeds < 1:
        raise InputError(f"--seeds must be at least 1, got {args.seeds}")
    if args.cost_budget is not None and not args.cost_budget > 0:
        raise InputError(f"--cost-budget must be a positive number of full evaluations, got {args.cost_budget}")
    names = [s.strip() for s in args.strategies.split(",") if s.strip()]
    try:
        checkpoints = sorted({int(c) for c in args.checkpoints.split(",") if c.strip()} | {args.budget})
    except ValueError:
        raise InputError(f"--checkpoints must be comma-separated integers, got {args.checkpoints!r}") from None
    return names, [c for c in checkpoints if 1 <= c <= args.budget]


def resolve_pairs(pairs: list[TablePair]) -> list[tuple[TablePair, Path, Table]]:
    """Each table pair with its metric named (the table's first when none is), its path and its table."""
    resolved = []
    for pair in pairs:
        path = pair.path()
        table = search_runs.table(str(path), pair.space)
        resolved.append((TablePair(pair.table, table.check_metric(pair.metric or table.metrics[0]), pair.space,
                                   pair.fidelity), path, table))
    return resolved


def _strategy_summary(args: argparse.Namespace, mine: list[dict[str, Any]], checkpoints: list[int],
                      fidelity: bool) -> dict[str, Any]:
    """One strategy's runs on one table summarised; crashed runs are only counted."""
    runs = [r for r in mine if not search_runs.crashed(r)]
    summary = summarise(runs, checkpoints, args.budget)
    summary["crashes"] = len(mine) - len(runs)
    summary["best_per_run"] = [{"seed": r["seed"], **(r["best"] or {"arch": None})} for r in runs]
    if args.runs:
        summary["final_regrets"] = [regret_at(r, args.budget) for r in runs]
        summary["regrets_per_run"] = {str(t): [regret_at(r, t) for r in runs] for t in checkpoints}
        summary["seeds_run"] = [r["seed"] for r in runs]
    if fidelity:
        summary["cost"] = cost_summary(runs, _cost_checkpoints(args))
    return summary


def _table_entry(args: argparse.Namespace, pair: TablePair, table: Table, names: list[str],
                 results: list[dict[str, Any]], checkpoints: list[int], candidate: str | None) -> dict[str, Any]:
    """The report of one table: each strategy's summary, then the goals checked on them."""
    entry: dict[str, Any] = {"table": table.source, "metric": pair.metric, "space": pair.space,
                             "direction": table.direction(pair.metric), "optimum": table.optimum(pair.metric),
                             "strategies": {}}
    for name in names:
        mine = [r for r in results if r["strategy"] == name and r["pair"] == pair.label]
        entry["strategies"][name] = _strategy_summary(args, mine, checkpoints, bool(pair.fidelity))
    if pair.fidelity:
        entry["fidelity"] = pair.fidelity
        entry["fidelity_goal"] = _fidelity_goals(results, pair, names)
    if candidate is not None:
        entry["goal"] = goal_check(entry["strategies"], candidate, GOAL_PEERS)
    batch_goals = {n: batch_goal_check(entry["strategies"], n, BATCH_PEER) for n in names if spec_batch_size(n) > 1}
    if any(batch_goals.values()):
        entry["batch_goal"] = {n: g for n, g in batch_goals.items() if g is not None}
    return entry


def _crashes(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs that crashed, each with its traceback; the first is named on stderr."""
    crashes = [{k: r[k] for k in ("pair", "strategy", "seed", "error", "traceback")}
               for r in results if search_runs.crashed(r)]
    if crashes:
        print(f"bench search: {len(crashes)} of {len(results)} runs crashed (each is in the report's 'crashes' with "
              f"its traceback); first: {crashes[0]['pair']} · {crashes[0]['strategy']} · seed {crashes[0]['seed']}: "
              f"{crashes[0]['error']}", file=sys.stderr, flush=True)
    return crashes


def run(args: argparse.Namespace) -> dict[str, Any]:
    names, checkpoints = _checked_arguments(args)
    pairs = table_pairs(args)
    _check_names(names, pairs)
    resolved = resolve_pairs(pairs)
    if args.time_step_at is not None:
        if args.time_step_at < 3:
            raise InputError(f"--time-step-at must be at least 3, got {args.time_step_at}")
        if len(resolved) > 1:  # the report times one table; timing only the first would drop the rest silently
            raise InputError(f"--time-step-at times one table, and --tables gave {len(resolved)} "
                             f"({', '.join(pair.label for pair, _, _ in resolved)}): give one table at a time")
        pair, path, _ = resolved[0]
        return _time_steps(args, names, pair, path, pair.metric)
    jobs = [{"pair": pair.label, "strategy": name, "seed": seed, "table": str(path), "space": pair.space,
             "metric": pair.metric, "n_init": args.n_init, "fidelity": pair.fidelity, **_budgets(args, name)}
            for pair, path, _ in resolved for seed in range(args.first_seed, args.first_seed + args.seeds) for name in names]
    start = time.perf_counter()
    results = search_runs.run_jobs(jobs, args.workers, None if args.no_progress else _progress_line(len(jobs), start))
    candidate = _goal_candidate(args, names)
    tables = [_table_entry(args, pair, table, names, results, checkpoints, candidate) for pair, _, table in resolved]
    crashes = _crashes(results)
    report: dict[str, Any] = {"budget": args.budget, "seeds": args.seeds, "first_seed": args.first_seed,
                              "checkpoints": checkpoints, "workers": args.workers,
                              "seconds": time.perf_counter() - start, "strategies_run": names,
                              "strategy_settings": {name: strategy_settings(name) for name in names},
                              "crashed_runs": len(crashes), "crashes": crashes}
    if len(tables) == 1 and not args.tables:
        report.update(tables[0])  # one table: its entry at the top level, as before
    else:
        report["tables"] = tables
    return report
