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

Strategies are registered names, optionally with options (``bo:pool=exhaustive:schedule=srinivas``),
and include Optuna's samplers as peers (``optuna-tpe``, ``optuna-gp``, ``optuna-random``: the
optional extra ``nasviz[peers]``; the benchmark says so when Optuna is missing). Each strategy runs
with the batch size it was designed for (``bo-tw2g-kdpp5`` asks 5 per step). Seeds are
``first_seed .. first_seed + K - 1``; run ``s`` of every strategy on every table uses seed ``s``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable

import numpy as np

from nasviz.bench.protocol import TablePair, parse_pairs, parse_spec, spec_batch_size
from nasviz.bench.search_report import batch_goal_check, goal_check, regret_at, summarise

DESCRIPTION = ("regret of search strategies (Optuna's samplers as peers) on benchmark tables over seeds: regret by "
               "evaluation, final mean/s.e./90th percentile, optimum found, distinct cells, seconds per step")

#: The peers the goal of issue 21 compares the default strategy with.
GOAL_PEERS = ("optuna-tpe", "optuna-gp")
#: The sequential peer a batch strategy (B > 1) must match per evaluation (issue 21's batch goal).
BATCH_PEER = "optuna-tpe"

_TABLE_CACHE: dict[tuple[str, str], Any] = {}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from nasviz.bench.protocol import PROTOCOLS
    from nasviz.strategies.factory import strategy_names

    parser.add_argument("--table", type=Path, help="benchmark CSV (default: the shared NB201 table, else the embedded one)")
    parser.add_argument("--metric", help="metric column to maximise (default: the table's first metric)")
    parser.add_argument("--tables", help="several table/metric pairs instead of --table/--metric: a protocol ("
                        + ", ".join(PROTOCOLS) + ") or TABLE:METRIC[@SPACE],... (tables by path or shared file name)")
    parser.add_argument("--space", default="nb201", help="search space of the table (default: nb201)")
    parser.add_argument(
        "--strategies", default="random,evolution,bo-tw2g-ucb",
        help="comma-separated strategy names, each optionally with options as name:key=value:key=value "
             "(default: random,evolution,bo-tw2g-ucb); known: " + ", ".join(strategy_names()),
    )
    parser.add_argument("--budget", type=int, default=100, help="evaluations per run (default: 100)")
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
             "random observations: median over --seeds repeats, after one untimed step at N - 1",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (the only output format; accepted for symmetry)")
    parser.add_argument("--no-progress", action="store_true",
                        help="do not print a line to stderr as each run ends (runs done, elapsed, estimate left)")


def _table(path: str, space: str):
    key = (path, space)
    if key not in _TABLE_CACHE:
        from nasviz.objectives import load_table

        _TABLE_CACHE[key] = load_table(path, space=space)
    return _TABLE_CACHE[key]


def _init_worker() -> None:
    # Two processes on two cores: one BLAS thread (and one torch thread, Optuna's GPSampler) each
    # avoids oversubscription.
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # pragma: no cover - optional
        pass
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def _one_torch_thread(spec: str) -> None:
    """Optuna's GPSampler runs on torch, which starts a thread per core: one, as BLAS."""
    if parse_spec(spec)[0] == "optuna-gp":
        import torch

        torch.set_num_threads(1)


def _make(job: dict[str, Any], objective) -> Any:
    """The strategy of ``job`` (its spec's options, ``--n-init`` for model-based ones)."""
    from nasviz.components import STRATEGIES
    from nasviz.spaces import get_space
    from nasviz.strategies.factory import make_strategy

    name, options = parse_spec(job["strategy"])
    if job.get("n_init") is not None and STRATEGIES.get(name).option("n_init") is not None:
        options.setdefault("n_init", job["n_init"])
    _one_torch_thread(job["strategy"])
    return make_strategy(name, space=get_space(job["space"]), seed=job["seed"], domain=objective.domain(), **options)


def run_one(job: dict[str, Any]) -> dict[str, Any]:
    """One (table, strategy, seed) run; returns plain data (picklable)."""
    from nasviz.objectives import TableObjective
    from nasviz.runner import run_search

    table = _table(job["table"], job["space"])
    objective = TableObjective(table, job["metric"])
    strategy = _make(job, objective)
    batch_size = int(getattr(strategy, "batch_size", 1))
    steps: list[dict[str, float]] = []

    def on_step(snap) -> None:
        phase = snap.strategy.get("phase") if isinstance(snap.strategy, dict) else None
        steps.append({"n": snap.n_evaluations, "seconds": snap.step_seconds, "bo": phase in ("bo", "optuna")})

    start = time.perf_counter()
    result = run_search(strategy, objective, job["budget"], format_arch=table.space.format, batch_size=batch_size,
                        on_step=on_step)
    return {
        "pair": job["pair"],
        "strategy": job["strategy"],
        "seed": job["seed"],
        "trajectory": result.trajectory,
        "optimum": result.optimum,
        "distinct": len({ev.arch for ev in result.evaluations}),
        "steps": steps,
        "seconds": time.perf_counter() - start,
    }


def time_step(job: dict[str, Any]) -> dict[str, Any]:
    """Seconds of one ``ask`` with ``n_obs`` random observations of the table, with its breakdown.

    The strategy is told ``n_obs - 1`` observations and asked once (untimed: one-off work such as
    preparing the exhaustive pool's candidate set happens there), then told one more and timed.
    """
    from nasviz.candidates import random_pool
    from nasviz.objectives import TableObjective

    table = _table(job["table"], job["space"])
    objective = TableObjective(table, job["metric"])
    strategy = _make(job, objective)
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


def _time_steps(args: argparse.Namespace, names: list[str], pair: TablePair, path: Path, metric: str) -> dict[str, Any]:
    jobs = [{"strategy": name, "seed": seed, "table": str(path), "space": pair.space, "metric": metric,
             "n_obs": args.time_step_at, "n_init": args.n_init, "pair": pair.label}
            for name in names for seed in range(args.first_seed, args.first_seed + args.seeds)]
    _init_worker()
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
    from nasviz.components import STRATEGIES, problems
    from nasviz.strategies.factory import strategy_names

    unknown = [s for s in names if parse_spec(s)[0] not in strategy_names()]
    if not names or unknown:
        raise ValueError(f"unknown strategy name(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(strategy_names())}")
    for spec in names:
        name, options = parse_spec(spec)
        entry = STRATEGIES.get(name)
        parsed = entry.parse_options(options, owner=f"strategy {name!r}")
        for pair in pairs:
            found = problems(pair.space, name, parsed, spec_batch_size(spec))
            if found:
                raise ValueError(f"{spec} on {pair.label}: " + "; ".join(found))


def strategy_settings(spec: str) -> dict[str, Any]:
    """What ``spec`` runs with in this code: its registry preset updated by the spec's own options.

    Recorded in the report so that reports from code where a preset name meant something else
    (a preset gains an option) are not pooled by ``bench goal``; constructor defaults outside the
    preset are not covered."""
    from nasviz.components import STRATEGIES

    name, options = parse_spec(spec)
    entry = STRATEGIES.get(name)
    return {**entry.preset, **entry.parse_options(options, owner=f"strategy {name!r}")}


def _pairs(args: argparse.Namespace) -> list[TablePair]:
    from nasviz.objectives import shared_nb201_table_path

    if args.tables:
        if args.table is not None or args.metric:
            raise ValueError("give either --tables or --table/--metric, not both")
        return parse_pairs(args.tables, args.space)
    if args.table is not None:
        path = Path(args.table)
    else:
        shared = shared_nb201_table_path()
        if shared is None:
            from nasviz.cli import default_table_path

            shared = default_table_path()
        path = Path(shared)
    return [TablePair(str(path), args.metric or "", args.space)]


def _run_jobs(jobs: list[dict[str, Any]], workers: int,
              on_done: Callable[[int, dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """``run_one`` of every job, in the jobs' order; ``on_done(count, job)`` as each run ends."""
    results: list[dict[str, Any] | None] = [None] * len(jobs)
    if workers <= 1:
        _init_worker()
        for i, job in enumerate(jobs):
            results[i] = run_one(job)
            if on_done:
                on_done(i + 1, job)
        return results  # type: ignore[return-value]
    with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker) as pool:
        futures = {pool.submit(run_one, job): i for i, job in enumerate(jobs)}
        for count, future in enumerate(as_completed(futures), start=1):
            results[futures[future]] = future.result()
            if on_done:
                on_done(count, jobs[futures[future]])
    return results  # type: ignore[return-value]


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


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.budget < 1:
        raise ValueError(f"--budget must be at least 1, got {args.budget}")
    if args.seeds < 1:
        raise ValueError(f"--seeds must be at least 1, got {args.seeds}")
    names = [s.strip() for s in args.strategies.split(",") if s.strip()]
    try:
        checkpoints = sorted({int(c) for c in args.checkpoints.split(",") if c.strip()} | {args.budget})
    except ValueError:
        raise ValueError(f"--checkpoints must be comma-separated integers, got {args.checkpoints!r}") from None
    checkpoints = [c for c in checkpoints if 1 <= c <= args.budget]
    pairs = _pairs(args)
    _check_names(names, pairs)
    resolved = []
    for pair in pairs:
        path = pair.path()
        table = _table(str(path), pair.space)
        resolved.append((TablePair(pair.table, table.check_metric(pair.metric or table.metrics[0]), pair.space), path, table))
    if args.time_step_at is not None:
        if args.time_step_at < 3:
            raise ValueError(f"--time-step-at must be at least 3, got {args.time_step_at}")
        pair, path, _ = resolved[0]
        return _time_steps(args, names, pair, path, pair.metric)
    jobs = [{"pair": pair.label, "strategy": name, "seed": seed, "table": str(path), "space": pair.space,
             "metric": pair.metric, "budget": args.budget, "n_init": args.n_init}
            for pair, path, _ in resolved for seed in range(args.first_seed, args.first_seed + args.seeds) for name in names]
    start = time.perf_counter()
    results = _run_jobs(jobs, args.workers, None if args.no_progress else _progress_line(len(jobs), start))
    candidate = _goal_candidate(args, names)
    tables = []
    for pair, path, table in resolved:
        entry: dict[str, Any] = {"table": table.source, "metric": pair.metric, "space": pair.space,
                                 "optimum": table.optimum(pair.metric), "strategies": {}}
        for name in names:
            runs = [r for r in results if r["strategy"] == name and r["pair"] == pair.label]
            summary = summarise(runs, checkpoints, args.budget)
            if args.runs:
                summary["final_regrets"] = [regret_at(r, args.budget) for r in runs]
                summary["regrets_per_run"] = {str(t): [regret_at(r, t) for r in runs] for t in checkpoints}
                summary["seeds_run"] = [r["seed"] for r in runs]
            entry["strategies"][name] = summary
        if candidate is not None:
            entry["goal"] = goal_check(entry["strategies"], candidate, GOAL_PEERS)
        batch_goals = {n: batch_goal_check(entry["strategies"], n, BATCH_PEER) for n in names if spec_batch_size(n) > 1}
        if any(batch_goals.values()):
            entry["batch_goal"] = {n: g for n, g in batch_goals.items() if g is not None}
        tables.append(entry)
    report: dict[str, Any] = {"budget": args.budget, "seeds": args.seeds, "first_seed": args.first_seed,
                              "checkpoints": checkpoints, "workers": args.workers,
                              "seconds": time.perf_counter() - start, "strategies_run": names,
                              "strategy_settings": {name: strategy_settings(name) for name in names}}
    if len(tables) == 1 and not args.tables:
        report.update(tables[0])  # one table: its entry at the top level, as before
    else:
        report["tables"] = tables
    return report
