"""Regret benchmark: strategies x seeds on a benchmark table, in parallel processes.

``python -m nasviz bench search --table CSV --metric COL --strategies S1,S2 --budget N --seeds K``
prints, per strategy, the mean and median simple regret (table optimum minus the best value found)
after 25 / 50 / 100 / ... evaluations and the mean seconds per step::

    {"strategies": {"bo-tw2g-ucb": {"regret_mean": {"25": ..., "50": ..., "100": ...},
                                    "regret_median": {...}, "step_seconds_mean": ..., ...}}}

Each strategy runs with the batch size it was designed for (``bo-tw2g-kdpp5`` asks 5 per step).
``--strategy SPEC`` (repeatable) adds a strategy with options, ``name:key=value,...``
(e.g. ``bo:kernel=wl,acquisition=ei,pool=mixed``); the report names it by its spec.
Seeds are ``first_seed .. first_seed + K - 1``; run ``s`` of every strategy uses seed ``s``, so
strategies with the same number of random initial points start from the same random designs.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

DESCRIPTION = "regret of search strategies on a benchmark table over seeds (mean/median after 25/50/100/... evaluations)"

_TABLE_CACHE: dict[tuple[str, str], Any] = {}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from nasviz.strategies.factory import strategy_names

    parser.add_argument("--table", type=Path, help="benchmark CSV (default: the shared NB201 table, else the embedded one)")
    parser.add_argument("--metric", help="metric column to maximise (default: the table's first metric)")
    parser.add_argument("--space", default="nb201", help="search space of the table (default: nb201)")
    parser.add_argument(
        "--strategies", default="random,evolution,bo-tw2g-ucb",
        help="comma-separated strategy names (default: random,evolution,bo-tw2g-ucb); known: " + ", ".join(strategy_names()),
    )
    parser.add_argument(
        "--strategy", action="append", default=[], metavar="SPEC",
        help="a strategy with options, name:key=value,... (e.g. bo:kernel=wl,pool=mixed); repeatable, added to --strategies",
    )
    parser.add_argument("--budget", type=int, default=100, help="evaluations per run (default: 100)")
    parser.add_argument("--seeds", type=int, default=5, help="runs per strategy (default: 5)")
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first run (default: 0)")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1), help="processes (default: 2)")
    parser.add_argument("--checkpoints", default="25,50,100", help="report regret after these evaluation counts (default: 25,50,100; the budget is always added)")
    parser.add_argument("--n-init", type=int, help="random initial points of BO strategies (default: the strategy's, 10)")
    parser.add_argument("--runs", action="store_true", help="also list every run's regret at each checkpoint")
    parser.add_argument(
        "--time-step-at", type=int, metavar="N",
        help="instead of full runs, time one BO step (fit + pool + posterior + batch) after N random "
             "observations: median over --seeds repeats, with the breakdown",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (the only output format; accepted for symmetry)")


def _table(path: str, space: str):
    key = (path, space)
    if key not in _TABLE_CACHE:
        from nasviz.objectives import load_table

        _TABLE_CACHE[key] = load_table(path, space=space)
    return _TABLE_CACHE[key]


def _init_worker() -> None:
    # Two processes on two cores: one BLAS thread each avoids oversubscription.
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # pragma: no cover - optional
        pass


def parse_strategy_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"bo:kernel=wl,pool=mixed"`` -> ``("bo", {"kernel": "wl", "pool": "mixed"})`` (a bare name: no options)."""
    from nasviz.bench.surrogate import parse_kernel_spec

    try:
        return parse_kernel_spec(spec)
    except ValueError as exc:
        raise ValueError(str(exc).replace("--kernel", "--strategy")) from None


def run_one(job: dict[str, Any]) -> dict[str, Any]:
    """One (strategy, seed) run; returns plain data (picklable)."""
    from nasviz.objectives import TableObjective
    from nasviz.runner import run_search
    from nasviz.spaces import get_space
    from nasviz.strategies.factory import make_strategy

    table = _table(job["table"], job["space"])
    space = get_space(job["space"])
    objective = TableObjective(table, job["metric"])
    name, options = parse_strategy_spec(job["strategy"])
    if job.get("n_init") is not None and name not in ("random", "evolution"):
        options.setdefault("n_init", job["n_init"])
    strategy = make_strategy(name, space=space, seed=job["seed"], domain=objective.domain(), **options)
    batch_size = int(getattr(strategy, "batch_size", 1))
    steps: list[dict[str, float]] = []

    def on_step(snap) -> None:
        phase = snap.strategy.get("phase") if isinstance(snap.strategy, dict) else None
        steps.append({"n": snap.n_evaluations, "seconds": snap.step_seconds, "bo": phase == "bo"})

    start = time.perf_counter()
    result = run_search(strategy, objective, job["budget"], format_arch=space.format, batch_size=batch_size, on_step=on_step)
    return {
        "strategy": job["strategy"],
        "seed": job["seed"],
        "trajectory": result.trajectory,
        "optimum": result.optimum,
        "steps": steps,
        "seconds": time.perf_counter() - start,
    }


def time_step(job: dict[str, Any]) -> dict[str, Any]:
    """Seconds of one ``ask`` after ``n_obs`` random observations of the table, with its breakdown."""
    from nasviz.candidates import random_pool
    from nasviz.objectives import TableObjective
    from nasviz.spaces import get_space
    from nasviz.strategies.factory import make_strategy

    table = _table(job["table"], job["space"])
    space = get_space(job["space"])
    objective = TableObjective(table, job["metric"])
    name, options = parse_strategy_spec(job["strategy"])
    strategy = make_strategy(name, space=space, seed=job["seed"], domain=objective.domain(), **options)
    rng = np.random.default_rng(10_000 + job["seed"])
    archs = random_pool(space, rng, job["n_obs"], domain=objective.domain())
    strategy.tell(objective.evaluate(archs))
    start, cpu = time.perf_counter(), time.process_time()
    strategy.ask(int(getattr(strategy, "batch_size", 1)))
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    state = strategy.state()
    return {"strategy": job["strategy"], "seconds": seconds, "cpu_seconds": cpu, "timings": dict(state.timings),
            "pool": len(state.pool) if state.pool is not None else 0}


def _time_steps(args: argparse.Namespace, names: list[str], table_path: Path, metric: str) -> dict[str, Any]:
    jobs = [{"strategy": name, "seed": seed, "table": str(table_path), "space": args.space, "metric": metric,
             "n_obs": args.time_step_at} for name in names for seed in range(args.first_seed, args.first_seed + args.seeds)]
    _init_worker()
    results = [time_step(job) for job in jobs]  # one process: timings must not compete with each other
    out: dict[str, Any] = {"metric": metric, "n_observations": args.time_step_at, "repeats": args.seeds, "strategies": {}}
    for name in names:
        rs = [r for r in results if r["strategy"] == name]
        parts = sorted({k for r in rs for k in r["timings"]})
        out["strategies"][name] = {
            "step_seconds_median": float(np.median([r["seconds"] for r in rs])),
            "step_seconds_max": float(np.max([r["seconds"] for r in rs])),
            # CPU time of the step's process: what the wall time would be on an idle machine
            # (one BLAS thread); the wall time includes waiting for a busy CPU.
            "step_cpu_seconds_median": float(np.median([r["cpu_seconds"] for r in rs])),
            "pool_size": rs[0]["pool"],
            "breakdown_median": {k: float(np.median([r["timings"].get(k, 0.0) for r in rs])) for k in parts},
        }
    return out


def _regret_at(run: dict[str, Any], t: int) -> float:
    traj = run["trajectory"]
    if not traj:
        return math.nan
    best = traj[min(t, len(traj)) - 1]
    return float(run["optimum"] - best) if best == best else math.nan


def summarise(runs: list[dict[str, Any]], checkpoints: list[int]) -> dict[str, Any]:
    """Mean / median regret at each checkpoint and step timings for one strategy's runs."""
    out: dict[str, Any] = {"regret_mean": {}, "regret_median": {}, "regret_std": {}}
    for t in checkpoints:
        r = np.array([_regret_at(run, t) for run in runs])
        r = r[np.isfinite(r)]
        out["regret_mean"][str(t)] = float(r.mean()) if r.size else None
        out["regret_median"][str(t)] = float(np.median(r)) if r.size else None
        out["regret_std"][str(t)] = float(r.std()) if r.size else None
    all_steps = [s["seconds"] for run in runs for s in run["steps"]]
    bo_steps = [s["seconds"] for run in runs for s in run["steps"] if s["bo"]]
    last_bo = [next((s["seconds"] for s in reversed(run["steps"]) if s["bo"]), math.nan) for run in runs]
    last_bo = [x for x in last_bo if x == x]
    out["step_seconds_mean"] = float(np.mean(all_steps)) if all_steps else None
    out["bo_step_seconds_mean"] = float(np.mean(bo_steps)) if bo_steps else None
    # The step that proposed the last batch: the GP then holds ~budget - batch observations.
    out["last_bo_step_seconds_median"] = float(np.median(last_bo)) if last_bo else None
    out["run_seconds_mean"] = float(np.mean([run["seconds"] for run in runs]))
    out["runs"] = len(runs)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    from nasviz.objectives import shared_nb201_table_path
    from nasviz.strategies.factory import strategy_names

    if args.budget < 1:
        raise ValueError(f"--budget must be at least 1, got {args.budget}")
    if args.seeds < 1:
        raise ValueError(f"--seeds must be at least 1, got {args.seeds}")
    names = [s.strip() for s in args.strategies.split(",") if s.strip()] + [s.strip() for s in args.strategy]
    names = list(dict.fromkeys(names))
    unknown = [s for s in names if parse_strategy_spec(s)[0] not in strategy_names()]
    if not names or unknown:
        raise ValueError(f"unknown strategy name(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(strategy_names())}")
    try:
        checkpoints = sorted({int(c) for c in args.checkpoints.split(",") if c.strip()} | {args.budget})
    except ValueError:
        raise ValueError(f"--checkpoints must be comma-separated integers, got {args.checkpoints!r}") from None
    checkpoints = [c for c in checkpoints if 1 <= c <= args.budget]
    if args.table is not None:
        table_path = Path(args.table)
    else:
        shared = shared_nb201_table_path()
        if shared is None:
            from nasviz.cli import default_table_path

            shared = default_table_path()
        table_path = Path(shared)
    table = _table(str(table_path), args.space)
    metric = table.check_metric(args.metric or table.metrics[0])
    if args.time_step_at is not None:
        if args.time_step_at < 2:
            raise ValueError(f"--time-step-at must be at least 2, got {args.time_step_at}")
        return _time_steps(args, names, table_path, metric)
    jobs = [
        {"strategy": name, "seed": seed, "table": str(table_path), "space": args.space, "metric": metric,
         "budget": args.budget, "n_init": args.n_init}
        for seed in range(args.first_seed, args.first_seed + args.seeds)
        for name in names
    ]
    start = time.perf_counter()
    if args.workers <= 1:
        _init_worker()
        results = [run_one(job) for job in jobs]
    else:
        with ProcessPoolExecutor(max_workers=args.workers, initializer=_init_worker) as pool:
            results = list(pool.map(run_one, jobs))
    report: dict[str, Any] = {
        "table": table.source,
        "metric": metric,
        "optimum": table.optimum(metric),
        "budget": args.budget,
        "seeds": args.seeds,
        "first_seed": args.first_seed,
        "checkpoints": checkpoints,
        "workers": args.workers,
        "seconds": time.perf_counter() - start,
        "strategies": {},
    }
    for name in names:
        runs = [r for r in results if r["strategy"] == name]
        summary = summarise(runs, checkpoints)
        if args.runs:
            summary["final_regrets"] = [_regret_at(r, args.budget) for r in runs]
            summary["regrets_per_run"] = {str(t): [_regret_at(r, t) for r in runs] for t in checkpoints}
            summary["seeds_run"] = [r["seed"] for r in runs]
        report["strategies"][name] = summary
    return report
