"""``bench trainer``'s NB201 part: cells on digits with the committed table's settings, per device.

Reports the median seconds per cell in this process (and the accuracy spread), then the same cells
in one worker process: the first cell's seconds include the worker's start and its once-per-worker
set-up (on CUDA the context; the dataset copied to the device), the others do not, and the set-up
counts the worker reports show that it ran once ("CUDA start-up paid once per worker"). On a CPU,
optionally, ``--parallel-cells`` cells on 2 workers against 1 (the earlier speed-up figure).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np
import torch


def cell_spec(device: str):
    """The committed table's settings (:data:`nasviz.tabulate.DEFAULT_SETTINGS`) on ``device``."""
    from nasviz.objectives.training import TrainingSpec
    from nasviz.tabulate import DEFAULT_SETTINGS as S

    # the table trains seeds 0 .. seeds - 1; the benchmark times the first
    return TrainingSpec(space="nb201", dataset=S["dataset"], dataset_seed=S["dataset_seed"], seed=0,
                        device=device, model_options=tuple(sorted(S["model_options"].items())),
                        training=tuple(sorted(S["training"].items())))


def spread(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    v = np.asarray(values, dtype=float)
    q = np.percentile(v, [0, 25, 50, 75, 100])
    return {"min": float(q[0]), "q25": float(q[1]), "median": float(q[2]), "q75": float(q[3]), "max": float(q[4]),
            "std": float(v.std())}


def in_process(spec, archs) -> dict[str, Any]:
    """Median wall and CPU seconds per cell in this process after one untimed cell; accuracies."""
    objective = spec.build()
    objective.evaluate_one(archs[0])  # warm-up: first-call allocations (and CUDA's start) are not a cell's cost
    wall, cpu, test, valid = [], [], [], []
    for arch in archs:
        w0, c0 = time.perf_counter(), time.process_time()
        ev = objective.evaluate_one(arch)
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
        if ev.ok:
            test.append(ev.info["test_score"])
            valid.append(ev.value)
    return {"cells": len(archs), "median_seconds_per_cell": float(np.median(wall)),
            "median_cpu_seconds_per_cell": float(np.median(cpu)), "test_accuracy": spread(test),
            "valid_accuracy": spread(valid), "failed": len(archs) - len(test)}


def in_worker(spec, archs) -> dict[str, Any]:
    """The cells one by one in a fresh worker process: first cell (with the worker's set-up) against the rest."""
    from nasviz.executors import LocalExecutor

    seconds, evaluations = [], []
    start = time.perf_counter()
    with LocalExecutor(spec, n_workers=1) as executor:
        for arch in archs:
            t0 = time.perf_counter()
            evaluations.append(executor.submit(arch).result())
            seconds.append(time.perf_counter() - t0)
    setups = (evaluations[-1].info or {}).get("worker", {}).get("setups", {})
    return {"first_cell_seconds": seconds[0], "median_seconds_per_later_cell": float(np.median(seconds[1:] or seconds)),
            "worker_seconds_with_start": time.perf_counter() - start, "worker_setups": setups,
            "setup_paid_once": bool(setups) and all(v == 1 for v in setups.values()),
            "failed": sum(1 for e in evaluations if not e.ok)}


def parallel_ratio(spec, archs) -> dict[str, Any]:
    """Wall seconds of ``archs`` on 2 workers against 1 (workers warmed first)."""
    from nasviz.executors import LocalExecutor

    times = {}
    for n in (1, 2):
        with LocalExecutor(spec, n_workers=n) as ex:
            ex.evaluate(archs[:n])  # start and warm every worker
            start = time.perf_counter()
            results = ex.evaluate(archs)
            times[n] = time.perf_counter() - start
        bad = [r.error for r in results if not r.ok]
        if bad:
            raise RuntimeError(f"evaluation failed during the benchmark: {bad[0]}")
    return {"parallel_cells": len(archs), "seconds_1_worker": times[1], "seconds_2_workers": times[2],
            "ratio_2_vs_1": times[2] / times[1], "target_ratio": 0.65}


def cells_on(device: torch.device, args, budget) -> dict[str, Any]:
    """Everything about NB201 cells on one device (module docstring)."""
    from nasviz.objectives.speed import SpeedOptions
    from nasviz.spaces import nb201

    spec = cell_spec(str(device))
    archs = nb201.sample(np.random.default_rng(args.seed), args.cells)
    out: dict[str, Any] = {"settings": {"model_options": dict(spec.model_options), "training": dict(spec.training),
                                        "dataset": spec.dataset}}
    out.update(in_process(spec, archs))
    out["target_seconds_per_cell"] = 3.0
    if budget.allow(f"nb201/{device.type}/worker"):
        out["worker"] = budget.guard(lambda: in_worker(spec, archs))
    variants = {"channels_last": SpeedOptions(channels_last=True), "bf16": SpeedOptions(bf16=True)}
    for name, speed in variants.items():
        if device.type == "cuda" and budget.allow(f"nb201/cuda/{name}"):
            out.setdefault("variants", {})[name] = budget.guard(lambda s=speed: in_process(replace(spec, speed=s), archs))
    if device.type == "cpu" and not args.skip_parallel and budget.allow("nb201/cpu/parallel"):
        batch = nb201.sample(np.random.default_rng(args.seed + 1), args.parallel_cells)
        out["parallel"] = budget.guard(lambda: parallel_ratio(spec, batch))
    return out
