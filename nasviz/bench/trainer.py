"""Training speed and spread: seconds per NB201 cell on digits, accuracy spread, parallel speed-up.

Uses the settings of the committed table (:data:`nasviz.tabulate.DEFAULT_SETTINGS`). Reports the
median wall and CPU seconds to train one random cell in this process with one torch thread, the
spread of test/validation accuracy over those cells, and the wall time of evaluating
``--parallel-cells`` cells on a :class:`~nasviz.executors.LocalExecutor` with 2 workers versus 1
(workers are started and warmed up before the clock starts, so the ratio measures evaluation, not
process start-up). Timings depend on what else the machine is running.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from nasviz.errors import InputError

DESCRIPTION = "NB201-on-digits training: median seconds per cell, accuracy spread, 2-worker speed-up"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cells", type=int, default=20, help="random cells timed one by one (default: 20)")
    parser.add_argument("--parallel-cells", type=int, default=8, help="cells for the speed-up test (default: 8)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random cells (default: 0)")
    parser.add_argument("--skip-parallel", action="store_true", help="only the single-cell timings")


def _spec():
    from nasviz.objectives.training import TrainingSpec
    from nasviz.tabulate import DEFAULT_SETTINGS as S

    return TrainingSpec(space="nb201", dataset=S["dataset"], dataset_seed=S["dataset_seed"], seed=0,
                        device="cpu", model_options=tuple(sorted(S["model_options"].items())),
                        training=tuple(sorted(S["training"].items())))


def _spread(values: list[float]) -> dict[str, float]:
    v = np.asarray(values, dtype=float)
    q = np.percentile(v, [0, 25, 50, 75, 100])
    return {"min": float(q[0]), "q25": float(q[1]), "median": float(q[2]), "q75": float(q[3]), "max": float(q[4]),
            "std": float(v.std())}


def _timed_batch(executor, archs) -> float:
    start = time.perf_counter()
    results = executor.evaluate(archs)
    elapsed = time.perf_counter() - start
    bad = [r.error for r in results if not r.ok]
    if bad:
        raise RuntimeError(f"evaluation failed during the benchmark: {bad[0]}")
    return elapsed


def run(args: argparse.Namespace) -> dict:
    import torch

    from nasviz.executors import LocalExecutor
    from nasviz.spaces import nb201

    if args.cells < 1 or args.parallel_cells < 1:
        raise InputError("--cells and --parallel-cells must be at least 1")
    spec = _spec()
    objective = spec.build()
    rng = np.random.default_rng(args.seed)
    archs = nb201.sample(rng, args.cells)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    wall, cpu, test, valid = [], [], [], []
    try:
        objective.evaluate_one(archs[0])  # warm-up: first-call allocations are not a cell's cost
        for arch in archs:
            w0, c0 = time.perf_counter(), time.process_time()
            ev = objective.evaluate_one(arch)
            wall.append(time.perf_counter() - w0)
            cpu.append(time.process_time() - c0)
            if ev.ok:
                test.append(ev.info["test_score"])
                valid.append(ev.value)
    finally:
        torch.set_num_threads(threads)
    out: dict = {
        "settings": {"model_options": dict(spec.model_options), "training": dict(spec.training), "dataset": spec.dataset},
        "cells": args.cells,
        "median_seconds_per_cell": float(np.median(wall)),
        "median_cpu_seconds_per_cell": float(np.median(cpu)),
        "target_seconds_per_cell": 3.0,
        "test_accuracy": _spread(test) if test else None,
        "valid_accuracy": _spread(valid) if valid else None,
        "failed": args.cells - len(test),
    }
    if not args.skip_parallel:
        batch = nb201.sample(np.random.default_rng(args.seed + 1), args.parallel_cells)
        times = {}
        for n in (1, 2):
            with LocalExecutor(spec, n_workers=n) as ex:
                ex.evaluate(batch[:n])  # start and warm every worker
                times[n] = _timed_batch(ex, batch)
        out.update({
            "parallel_cells": args.parallel_cells, "seconds_1_worker": times[1], "seconds_2_workers": times[2],
            "ratio_2_vs_1": times[2] / times[1], "target_ratio": 0.65,
        })
    return out
