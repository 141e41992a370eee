"""Strategies on the layer space under one wall-clock budget (papers 001 and 003, Sec. 5).

Each (strategy, seed) run trains MLPs on a bundled dataset with the project trainer
(:class:`~nasviz.objectives.training.TrainingObjective`, its default settings, CPU, one torch
thread) and stops asking for new networks once ``--seconds`` have passed (the evaluation under
way finishes). Strategy overhead (GP fits, EA, tree search) counts against the budget, as in the
papers' time-based comparisons. Every strategy starts from the layer space's 10 initial networks
(paper 001 Sec. 5; ``--option evolution.init=random`` starts evolution from random networks).
Runs go to ``--workers`` processes. The summary gives, per strategy, the mean and standard
deviation over seeds of the best validation score found, the mean number of evaluations and the
test score of each run's best network.

``--option STRATEGY.KEY=VALUE`` (repeatable) passes a setting to one strategy, e.g.
``--option nasbot.ea_init=paper+best --option autokeras.beta=1.0``; a variant runs under the
strategy's own name, so compare variants in separate invocations. ``bench layer-retrain --from
RESULT`` trains each run's best network again on fresh seeds (what it is worth without the luck
of the maximum).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time

import numpy as np

from nasviz.errors import InputError

DESCRIPTION = "nasbot / autokeras / random / evolution on the layer space under the same wall-clock budget"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", default="digits", help="bundled dataset (default: digits)")
    parser.add_argument("--seconds", type=float, default=180.0, help="wall-clock budget per run (default: 180)")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default: 0,1,2)")
    parser.add_argument("--strategies", default="nasbot,autokeras,random,evolution",
                        help="comma-separated strategy names (default: nasbot,autokeras,random,evolution)")
    parser.add_argument("--workers", type=int, default=2, help="parallel runs (default: 2)")
    parser.add_argument("--epochs", type=int, default=None, help="training epochs (default: the trainer's)")
    parser.add_argument("--option", action="append", default=[], metavar="STRATEGY.KEY=VALUE",
                        help="a strategy setting, e.g. nasbot.ea_init=paper+best (repeatable)")


def parse_options(items: list[str], names: list[str]) -> dict[str, dict[str, str]]:
    """``["nasbot.ea_init=paper+best"]`` -> ``{"nasbot": {"ea_init": "paper+best"}}``.

    Values stay strings (the strategy factory casts them); a malformed item or a strategy that
    is not being run is a ``ValueError`` that names the item.
    """
    out: dict[str, dict[str, str]] = {}
    for item in items:
        target, sep, value = item.partition("=")
        strategy, dot, key = target.partition(".")
        if not sep or not dot or not strategy or not key:
            raise InputError(f"--option {item!r} is not of the form STRATEGY.KEY=VALUE")
        if strategy not in names:
            raise InputError(f"--option {item!r}: strategy {strategy!r} is not among --strategies ({', '.join(names)})")
        out.setdefault(strategy, {})[key] = value
    return out


def _one(job: tuple[str, int, str, float, int | None, dict[str, str]]) -> dict:
    strategy_name, seed, dataset, seconds, epochs, options = job
    import torch

    torch.set_num_threads(1)
    from nasviz.objectives.training import TrainingObjective
    from nasviz.runner import run_search
    from nasviz.spaces import mlp as L
    from nasviz.strategies.factory import make_strategy

    training = {"epochs": epochs} if epochs else None
    objective = TrainingObjective(L.SPACE, dataset, seed=seed, device="cpu", training=training)
    strategy = make_strategy(strategy_name, space=L.SPACE, seed=seed, **options)
    if hasattr(strategy, "attach"):
        strategy.attach(objective)  # Auto-Keras warm starts
    start = time.perf_counter()
    result = run_search(strategy, objective, 100_000, format_arch=L.format,
                        should_stop=lambda: time.perf_counter() - start > seconds)
    evs = [e for e in result.evaluations if e.ok]
    best = max(evs, key=lambda e: e.value) if evs else None
    return {
        "strategy": strategy_name,
        "options": options,
        "seed": seed,
        "best_valid": None if best is None else best.value,
        "best_test": None if best is None else best.info.get("test_score"),
        "best_arch": result.best_arch,
        "n_evaluations": len(result.evaluations),
        "n_failed": len(result.evaluations) - len(evs),
        "seconds": result.seconds,
        "train_seconds": float(sum(e.cost for e in result.evaluations)),
        "trajectory": [v if np.isfinite(v) else None for v in result.trajectory],
        "errors": sorted({e.error for e in result.evaluations if not e.ok and e.error})[:5],
    }


def run(args: argparse.Namespace) -> dict:
    seeds = [int(s) for s in str(args.seeds).split(",") if s.strip()]
    names = [s.strip() for s in str(args.strategies).split(",") if s.strip()]
    from nasviz.strategies.factory import strategy_names

    unknown = [n for n in names if n not in strategy_names()]
    if unknown:
        raise InputError(f"unknown strategies {unknown}; known: {', '.join(strategy_names())}")
    options = parse_options(list(getattr(args, "option", None) or []), names)
    from nasviz.spaces import mlp as L
    from nasviz.strategies.factory import make_strategy

    for n, opts in options.items():
        make_strategy(n, space=L.SPACE, seed=0, **opts)  # a bad setting fails here, before any training
    jobs = [(n, s, args.dataset, float(args.seconds), args.epochs, options.get(n, {})) for s in seeds for n in names]
    start = time.perf_counter()
    ctx = mp.get_context("spawn")
    with ctx.Pool(max(1, int(args.workers))) as pool:
        runs = pool.map(_one, jobs, chunksize=1)
    summary = {}
    for n in names:
        rs = [r for r in runs if r["strategy"] == n and r["best_valid"] is not None]
        vals = np.array([r["best_valid"] for r in rs])
        summary[n] = {
            "mean_best_valid": float(vals.mean()) if len(vals) else None,
            "std_best_valid": float(vals.std()) if len(vals) else None,
            "mean_best_test": float(np.mean([r["best_test"] for r in rs])) if rs else None,
            "mean_evaluations": float(np.mean([r["n_evaluations"] for r in rs])) if rs else None,
            "per_seed": {r["seed"]: r["best_valid"] for r in rs},
        }
    return {
        "dataset": args.dataset,
        "seconds_per_run": args.seconds,
        "seeds": seeds,
        "workers": args.workers,
        "options": options,
        "summary": summary,
        "runs": runs,
        "total_seconds": time.perf_counter() - start,
    }
