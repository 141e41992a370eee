"""The runs of the regret benchmark (:mod:`nasviz.bench.search`): one (table, strategy, seed) each,
in parallel processes, surviving a run that raises.

A run returns plain data (picklable): its best-so-far ``trajectory``, the table's ``optimum``, the
``distinct`` cells it evaluated, per-step timings, and its best architecture with every metric of
that table row (``best``: the test accuracy of the best-by-validation cell, say). A run that
raises is recorded as a *crash* (:func:`crash_record`: the error in one line and its traceback)
and the benchmark goes on with the others: one seed that hits a bug does not lose the rest.
"""

from __future__ import annotations

import os
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Callable

import numpy as np

from nasviz.bench.protocol import parse_spec

_TABLE_CACHE: dict[tuple[str, str], Any] = {}


def table(path: str, space: str):
    """The table at ``path`` read in ``space``, parsed once per process."""
    key = (path, space)
    if key not in _TABLE_CACHE:
        from nasviz.objectives import load_table

        _TABLE_CACHE[key] = load_table(path, space=space)
    return _TABLE_CACHE[key]


def init_worker() -> None:
    """Set up a benchmark process: plugins (a spawned process starts without them), and one BLAS
    thread (and one torch thread, Optuna's GPSampler): two processes on two cores must not
    oversubscribe them."""
    from nasviz.components import load_plugins

    load_plugins()
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


def make_strategy_of(job: dict[str, Any], objective) -> Any:
    """The strategy of ``job`` (its spec's options, ``--n-init`` for model-based ones)."""
    from nasviz.components import STRATEGIES
    from nasviz.spaces import get_space
    from nasviz.strategies.factory import make_strategy

    name, options = parse_spec(job["strategy"])
    if job.get("n_init") is not None and STRATEGIES.get(name).option("n_init") is not None:
        options.setdefault("n_init", job["n_init"])
    _one_torch_thread(job["strategy"])
    return make_strategy(name, space=get_space(job["space"]), seed=job["seed"], domain=objective.domain(), **options)


def best_row(tab, arch) -> dict[str, float]:
    """Every metric of ``tab``'s row of ``arch`` (the table's own values, in its units)."""
    i = tab.index_of(arch)
    return {metric: float(values[i]) for metric, values in tab.values.items()}


#: Step phases that fit a model or ask a peer (their seconds are reported as model steps).
MODEL_PHASES = ("bo", "optuna", "mf-gp", "bohb")


def objective_of(tab, job: dict[str, Any]) -> Any:
    """The job's objective: the table at its metric, or at the budgets of its fidelity ladder."""
    if job.get("fidelity"):
        from nasviz.objectives.fidelity_table import FidelityTableObjective

        return FidelityTableObjective(tab, job["metric"], job["fidelity"])
    from nasviz.objectives import TableObjective

    return TableObjective(tab, job["metric"])


def run_one(job: dict[str, Any]) -> dict[str, Any]:
    """One (table, strategy, seed) run; returns plain data (picklable). Raises what the run raises.

    With a fidelity ladder (``job["fidelity"]``) the run also records every evaluation's cumulative
    ``costs`` in full evaluations and its budget (``budgets``), and stops at ``job["cost_budget"]``
    full evaluations when given (:mod:`nasviz.bench.fidelity_report` reads them)."""
    from nasviz.runner import run_search

    tab = table(job["table"], job["space"])
    objective = objective_of(tab, job)
    strategy = make_strategy_of(job, objective)
    if hasattr(strategy, "attach"):
        strategy.attach(objective)
    batch_size = int(getattr(strategy, "batch_size", 1))
    steps: list[dict[str, float]] = []

    def on_step(snap) -> None:
        phase = snap.strategy.get("phase") if isinstance(snap.strategy, dict) else None
        steps.append({"n": snap.n_evaluations, "seconds": snap.step_seconds, "bo": phase in MODEL_PHASES})

    unit = objective.full_cost_unit() if job.get("fidelity") else None
    cost_budget = None if job.get("cost_budget") is None else float(job["cost_budget"]) * unit
    start = time.perf_counter()
    result = run_search(strategy, objective, job["budget"], format_arch=tab.space.format, batch_size=batch_size,
                        on_step=on_step, cost_budget=cost_budget)
    best = next((ev.arch for ev in result.evaluations if ev.ok and result.best_arch == tab.space.format(ev.arch)), None)
    extra: dict[str, Any] = {}
    if unit is not None:
        extra = {"costs": [float(c) for c in np.cumsum([ev.cost for ev in result.evaluations]) / unit],
                 "budgets": [ev.fidelity.fidelity if ev.fidelity is not None else None for ev in result.evaluations],
                 "full_evaluations": sum(1 for ev in result.evaluations if ev.ok and ev.full),
                 "cost_unit": objective.cost_unit, "full_cost_unit": unit}
    return {**extra,
        "pair": job["pair"],
        "strategy": job["strategy"],
        "seed": job["seed"],
        "trajectory": result.trajectory,
        "optimum": result.optimum,
        "distinct": len({ev.arch for ev in result.evaluations}),
        "steps": steps,
        "seconds": time.perf_counter() - start,
        "best": None if best is None else {"arch": result.best_arch, "value": objective.shown(result.best_value),
                                           "row": best_row(tab, best)},
    }


def crash_record(job: dict[str, Any], err: BaseException, trace: str | None = None) -> dict[str, Any]:
    """What the report keeps of a run that raised: which run, the error in one line, the traceback."""
    return {"pair": job["pair"], "strategy": job["strategy"], "seed": job["seed"], "crashed": True,
            "error": f"{type(err).__name__}: {' '.join(str(err).split())}",
            "traceback": trace if trace is not None else "".join(traceback.format_exception(err))}


def run_guarded(job: dict[str, Any]) -> dict[str, Any]:
    """:func:`run_one`, or the :func:`crash_record` of the exception it raised."""
    try:
        return run_one(job)
    except Exception as err:  # noqa: BLE001 - any failure of one run is that run's, recorded
        return crash_record(job, err)


def run_jobs(jobs: list[dict[str, Any]], workers: int,
             on_done: Callable[[int, dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """:func:`run_guarded` of every job, in the jobs' order; ``on_done(count, job)`` as each run
    ends. A worker process that dies (killed, out of memory) crashes the runs it held, not the benchmark."""
    results: list[dict[str, Any] | None] = [None] * len(jobs)
    if workers <= 1:
        init_worker()
        for i, job in enumerate(jobs):
            results[i] = run_guarded(job)
            if on_done:
                on_done(i + 1, job)
        return results  # type: ignore[return-value]
    with ProcessPoolExecutor(max_workers=workers, initializer=init_worker) as pool:
        futures = {pool.submit(run_guarded, job): i for i, job in enumerate(jobs)}
        for count, future in enumerate(as_completed(futures), start=1):
            i = futures[future]
            try:
                results[i] = future.result()
            except Exception as err:  # noqa: BLE001 - the process running it died
                results[i] = crash_record(jobs[i], err, trace=f"the worker process running it failed: {err!r}")
            if on_done:
                on_done(count, jobs[i])
    return results  # type: ignore[return-value]


def crashed(run: dict[str, Any]) -> bool:
    return bool(run.get("crashed"))


__all__ = ["best_row", "crash_record", "crashed", "init_worker", "make_strategy_of", "run_guarded", "run_jobs",
           "run_one", "table"]
