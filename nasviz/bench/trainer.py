"""Training speed: networks per minute, arithmetic against overhead, the trainer against a plain PyTorch loop.

The protocol, fixed before any run (defaults of this benchmark; every figure is wall-clock on the
machine it runs on, cpu and, when present, cuda, in one run):

* **Workload**: ``--networks`` random CNNs of the CNN space (seed ``--seed``) on MNIST-1D (3,200
  training signals), the space's training settings (SGD, lr 0.05, batch 64), ``--epochs`` epochs
  each with early stopping off, so every loop does the same work ("at equal epochs").
* **Trainer against the plain loop** (:mod:`.trainer_loops`): per network, the plain PyTorch loop
  and :func:`~nasviz.objectives.trainer.train_model` (default speed options for the device), run
  back to back, their order swapped each of ``--repeats`` repeats, the median per network; one
  untimed warm-up of each first. One torch thread in this process on the CPU (what a worker
  uses). Reported: networks and epochs per minute, ``trainer_over_plain`` (time ratio; the CPU
  goal is at most 1.10), and whether both computed the same validation curves.
* **Arithmetic against overhead** (:mod:`.trainer_profile`) of both loops, one epoch of each of
  the first ``--profile-networks`` networks, and the FLOP utilisation of the trainer's timed run.
* **Variants**: each speed option measured on the same networks, never assumed (cpu: every core's
  threads for one process, bf16; cuda: the per-step host read and no CUDA graphs (the old
  trainer), no graphs, bf16, batch x4 with the linear scaling rule; both: ``torch.compile`` modes,
  compile time against the gain, on the first network).
* **Several networks per process** (cuda): ``--together`` networks interleaved in one process on
  ``--sweep-networks`` networks; the best count is the recommendation.
* **The whole machine**: ``--scale-networks`` networks on every core (one single-threaded process
  each) and on the GPU (processes from free memory and cores, the recommended networks per
  process): networks per minute at equal epochs, and their ratio (the accelerator goal is 10x).
* **NB201 cells on digits** (:mod:`.trainer_cells`): seconds per cell, the once-per-worker set-up.

``--budget-seconds`` bounds the run: optional parts start only while time is left and are listed
under ``skipped`` otherwise; a part that fails is recorded with its error, and the rest goes on.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from nasviz.errors import InputError

DESCRIPTION = ("Trainer speed: networks per minute and arithmetic vs overhead against a plain PyTorch loop "
               "(CNNs on MNIST-1D, NB201 cells on digits), on cpu and cuda")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--devices", default="auto", help="comma-separated: cpu, cuda (default: cpu, and cuda when present)")
    add("--networks", type=int, default=6, help="random CNNs timed one by one (default: 6)")
    add("--epochs", type=int, default=4, help="epochs per network, early stopping off (default: 4)")
    add("--repeats", type=int, default=2, help="timed repeats per network and loop (default: 2)")
    add("--seed", type=int, default=0, help="seed of the random networks and cells (default: 0)")
    add("--profile-networks", type=int, default=2, help="networks profiled for arithmetic vs overhead (default: 2)")
    add("--compile-networks", type=int, default=1, help="time torch.compile on the first network; 0 skips (default: 1)")
    add("--variants", default="all", help="speed variants to time: all, none, or comma-separated names (default: all)")
    add("--together", default="1,2,4,8", help="networks per process to try on cuda (default: 1,2,4,8)")
    add("--sweep-networks", type=int, default=16, help="networks in the networks-per-process sweep (default: 16)")
    add("--scale-networks", type=int, default=64, help="networks for the whole-machine figures; 0 skips (default: 64)")
    add("--cpu-workers", type=int, default=0, help="processes for the whole-CPU figure (default: 0 = every core)")
    add("--cuda-processes", type=int, default=0, help="processes for the whole-GPU figure (default: 0 = planned)")
    add("--cells", type=int, default=8, help="NB201 cells timed per device; 0 skips (default: 8)")
    add("--parallel-cells", type=int, default=8, help="cells for the 2-worker speed-up on cpu (default: 8)")
    add("--skip-parallel", action="store_true", help="leave out the 2-worker NB201 speed-up")
    add("--budget-seconds", type=float, default=None, help="start no optional part after this many seconds")
    add("--out", type=Path, default=None, help="also write the JSON to this file")


class Budget:
    """Optional parts run while time is left; a failing part is recorded, not fatal."""

    def __init__(self, seconds: float | None) -> None:
        self.deadline = None if seconds is None else time.perf_counter() + float(seconds)
        self.skipped: list[str] = []

    def allow(self, name: str, needs: float = 0.0) -> bool:
        """Whether part ``name`` may start (at least ``needs`` seconds left); skipped ones are listed."""
        if self.deadline is not None and time.perf_counter() + needs > self.deadline:
            self.skipped.append(name)
            return False
        return True

    @staticmethod
    def guard(part: Callable[[], Any]) -> Any:
        try:
            return part()
        except Exception as err:  # noqa: BLE001 - a missing feature (a compiler, a GPU) is a finding, not a crash
            return {"error": f"{type(err).__name__}: {err}"[:2000]}


def _devices(spec: str) -> list[torch.device]:
    if spec == "auto":
        return [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available() else [])
    names = [s.strip() for s in spec.split(",") if s.strip()]
    bad = [n for n in names if n not in ("cpu", "cuda")]
    if bad or not names:
        raise InputError(f"--devices takes cpu and/or cuda, got {spec!r}")
    if "cuda" in names and not torch.cuda.is_available():
        raise InputError("--devices names cuda, but torch sees no CUDA device here "
                         f"(torch {torch.__version__}, CUDA build {torch.version.cuda})")
    return [torch.device(n) for n in names]


def _workload(args: argparse.Namespace, n: int, seed_offset: int = 0):
    from nasviz.bench.trainer_loops import Workload
    from nasviz.objectives.datasets import load_dataset
    from nasviz.spaces import get_space

    space = get_space("cnn")
    defaults = space.training_defaults()
    archs = tuple(space.sample(np.random.default_rng(args.seed + seed_offset), n))
    return Workload(space, archs, load_dataset("mnist1d", seed=0), int(args.epochs), float(defaults["lr"]),
                    int(defaults["batch_size"]))


def _rate(seconds: list[float], epochs: int) -> dict[str, Any]:
    total = float(sum(seconds))
    return {"seconds_per_network": [round(s, 4) for s in seconds], "total_seconds": total,
            "networks_per_minute": 60.0 * len(seconds) / total, "epochs_per_minute": 60.0 * len(seconds) * epochs / total}


def _compare(work, device: torch.device, repeats: int) -> tuple[dict[str, Any], list[float], list[float]]:
    """The plain loop against the trainer on every network (module docstring)."""
    from nasviz.bench.trainer_loops import alternate, time_plain, time_trainer

    n = len(work.archs)
    results: dict[str, list] = {"plain": [None] * n, "trainer": [None] * n}

    def loop(name: str, timer) -> Callable[[int], float]:
        def run(i: int) -> float:
            seconds, result = timer(work, i, device)
            results[name][i] = result
            return seconds
        return run

    plain, trainer = loop("plain", time_plain), loop("trainer", time_trainer)
    plain(0), trainer(0)  # warm-up
    p, t = alternate(n, max(1, repeats), plain, trainer)
    diffs = [abs(a - b) for x, y in zip(results["plain"], results["trainer"]) for a, b in zip(x["valid_curve"], y["valid_curve"])]
    return {
        "plain": _rate(p, work.epochs), "trainer": _rate(t, work.epochs), "trainer_over_plain": sum(t) / sum(p),
        "same_valid_curves": all(x["valid_curve"] == y["valid_curve"] for x, y in zip(results["plain"], results["trainer"])),
        "max_valid_accuracy_difference": max(diffs) if diffs else None,
        "mean_test_accuracy": {k: float(np.mean([r["test"] for r in v])) for k, v in results.items()},
        "notes": sorted({note for r in results["trainer"] for note in r.get("notes", [])}),
    }, p, t


def _arithmetic(work, device: torch.device, k: int, trainer_s: list[float]) -> dict[str, Any]:
    """Arithmetic against overhead (:func:`~nasviz.bench.trainer_profile.arithmetic_share`) of one
    epoch of the first ``k`` networks, for each loop, and the FLOP utilisation of the trainer's
    timed run."""
    from dataclasses import replace

    from nasviz.bench.trainer_loops import time_plain, time_trainer
    from nasviz.bench.trainer_profile import arithmetic_share, flop_utilisation, peak_flops, training_flops

    one = replace(work, epochs=1)
    out: dict[str, Any] = {"networks": k, "epochs": 1}
    for name, timer in (("trainer", time_trainer), ("plain", time_plain)):
        def go(timer=timer) -> None:
            for i in range(k):
                timer(one, i, device)

        go()  # warm-up: the first epoch of a process pays allocations the others do not
        wall = time.perf_counter()
        go()
        out[name] = arithmetic_share(go, device, time.perf_counter() - wall)
    data, b = work.dataset, work.batch_size
    x, y = data.x_train[:b].to(device), data.y_train[:b].to(device)
    steps = work.epochs * math.ceil(len(data.y_train) / b)
    evals = work.epochs * len(data.y_valid) + len(data.y_test)
    flops = sum(training_flops(work.build(i).to(device), x, y, steps, evals) for i in range(len(work.archs)))
    out["flop_utilisation"] = flop_utilisation(flops, sum(trainer_s), peak_flops(device))
    return out


def _variant(work, device: torch.device, speed, threads: int | None = None) -> dict[str, Any]:
    """The trainer with ``speed`` (and ``threads``) on every network, once each."""
    from nasviz.bench.trainer_loops import time_trainer

    before = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        time_trainer(work, 0, device, speed)  # warm-up (graph capture, autotuning, compilation caches)
        timed = [time_trainer(work, i, device, speed) for i in range(len(work.archs))]
    finally:
        torch.set_num_threads(before)
    out = _rate([s for s, _ in timed], work.epochs)
    out["mean_test_accuracy"] = float(np.mean([r["test"] for _, r in timed]))
    out["mean_final_valid_accuracy"] = float(np.mean([r["valid_curve"][-1] for _, r in timed]))
    out["notes"] = sorted({n for _, r in timed for n in r.get("notes", [])})
    if speed is not None:
        out["speed"] = speed.to_dict()
    return out


def _compile(work, device: torch.device, mode: str, eager_seconds: float) -> dict[str, Any]:
    """Compile time against the gain for network 0 (every new architecture compiles anew)."""
    from nasviz.bench.trainer_loops import time_trainer
    from nasviz.objectives.speed import SpeedOptions

    torch._dynamo.reset()
    speed = SpeedOptions(compile=mode)
    first, _ = time_trainer(work, 0, device, speed)
    again, _ = time_trainer(work, 0, device, speed)
    gain = eager_seconds - again
    return {"mode": mode, "first_training_seconds": first, "same_architecture_again_seconds": again,
            "eager_seconds": eager_seconds, "compile_seconds": first - again, "gain_per_training_seconds": gain,
            "pays_for_a_new_architecture": first < eager_seconds,
            "trainings_of_one_architecture_to_break_even": (first - again) / gain if gain > 0 else None}


def _variants(work, device: torch.device, budget: Budget, wanted: str) -> dict[str, Any]:
    from nasviz.objectives.speed import SpeedOptions

    if device.type == "cpu":
        plans: dict[str, tuple[Any, int | None]] = {"threads_all_cores": (None, os.cpu_count() or 1),
                                                     "bf16": (SpeedOptions(bf16=True), None)}
    else:
        plans = {"host_read_every_step_no_graphs": (SpeedOptions(metrics="step", cuda_graphs=False), None),
                 "no_graphs": (SpeedOptions(cuda_graphs=False), None), "bf16": (SpeedOptions(bf16=True), None),
                 "batch_x4_linear_scaling": (SpeedOptions(batch_scale=4), None)}
    out: dict[str, Any] = {}
    for name, (speed, threads) in plans.items():
        if wanted != "all" and name not in wanted.split(","):
            continue
        if budget.allow(f"cnn/{device.type}/{name}"):
            out[name] = budget.guard(lambda s=speed, t=threads: _variant(work, device, s, t))
    return out


def _compiled(work, device: torch.device, budget: Budget, args, eager_seconds: float) -> dict[str, Any]:
    modes = ["default"] if device.type == "cpu" else ["default", "reduce-overhead"]
    out = {}
    for mode in modes if args.compile_networks > 0 else []:
        if budget.allow(f"cnn/{device.type}/compile-{mode}", needs=60.0):
            out[f"compile_{mode}"] = budget.guard(lambda m=mode: _compile(work, device, m, eager_seconds))
    return out


def _together(args, device: torch.device, budget: Budget) -> dict[str, Any]:
    """Networks per process on cuda: the same networks in groups of k, for each k."""
    from nasviz.bench.trainer_loops import time_together
    from nasviz.objectives.speed import SpeedOptions

    work = _workload(args, args.sweep_networks, seed_offset=1)
    sweep: dict[str, Any] = {}
    for k in sorted({int(s) for s in str(args.together).split(",") if s.strip()}):
        if k < 1 or not budget.allow(f"cnn/cuda/together-{k}"):
            continue
        speed = SpeedOptions(networks_together=k)

        def measure(k=k, speed=speed) -> dict[str, Any]:
            time_together(work, list(range(min(k, len(work.archs)))), device, speed)  # warm-up
            groups = [list(range(i, min(i + k, len(work.archs)))) for i in range(0, len(work.archs), k)]
            return _rate([time_together(work, g, device, speed)[0] / len(g) for g in groups for _ in g], work.epochs)

        sweep[str(k)] = budget.guard(measure)
    rates = {k: v["networks_per_minute"] for k, v in sweep.items() if "networks_per_minute" in v}
    best = max(rates, key=rates.get) if rates else None
    return {"networks": len(work.archs), "sweep": sweep, "recommended_networks_per_process": int(best) if best else None}


def _whole_machine(args, device: torch.device, together: int | None) -> dict[str, Any]:
    """``--scale-networks`` networks on every CPU core, or on the GPU with planned processes."""
    from dataclasses import replace

    from nasviz.bench.trainer_loops import time_processes
    from nasviz.objectives.accelerator import plan_concurrency
    from nasviz.objectives.speed import SpeedOptions
    from nasviz.objectives.trainer import estimate_size
    from nasviz.objectives.training import TrainingSpec

    work = _workload(args, args.scale_networks, seed_offset=2)
    spec = TrainingSpec(space="cnn", dataset="mnist1d", dataset_seed=0, seed=0, device=device.type,
                        training=tuple(sorted(work.training().items())))
    if device.type == "cpu":
        workers = args.cpu_workers or os.cpu_count() or 1
        return {"plan": f"{workers} single-threaded processes", **time_processes(spec, work.archs, workers)}
    largest = max(estimate_size(work.build(i), work.dataset.input_shape, work.batch_size) for i in range(len(work.archs)))
    plan = plan_concurrency(device, 4 * largest, processes=args.cuda_processes or None, networks_per_process=together)
    spec = replace(spec, speed=SpeedOptions(networks_together=plan.networks_per_process))
    return {"plan": plan.__dict__, **time_processes(spec, work.archs, plan.processes)}


def _phases(devices: list[torch.device], args, budget: Budget, out: dict[str, Any], save: Callable[[], None]) -> None:
    """Every part, most important first, so a ``--budget-seconds`` run keeps what the goals need:
    the trainer against the plain loop, networks per process, the whole machine, NB201's cells and
    set-up; then arithmetic, the variants, and ``torch.compile`` last (the slowest to measure)."""
    from nasviz.bench.trainer_cells import cells_on

    cnn: dict[str, Any] = out.setdefault("cnn", {})
    work = _workload(args, args.networks)
    eager: dict[str, list[float]] = {}
    for d in devices:
        def compare(d=d) -> dict[str, Any]:
            result, plain_s, trainer_s = _compare(work, d, args.repeats)
            eager[d.type] = [plain_s, trainer_s]
            return {**result, "networks": [work.space.format(a) for a in work.archs]}
        cnn[d.type] = budget.guard(compare)
        save()
    together = None
    if any(d.type == "cuda" for d in devices) and budget.allow("cnn/cuda/together"):
        cnn["cuda"]["together"] = budget.guard(lambda: _together(args, torch.device("cuda"), budget))
        together = (cnn["cuda"]["together"] or {}).get("recommended_networks_per_process")
    for d in devices:
        if args.scale_networks > 0 and budget.allow(f"cnn/{d.type}/whole-machine"):
            cnn[d.type]["whole_machine"] = budget.guard(lambda d=d: _whole_machine(args, d, together))
            save()
    if args.cells > 0:
        out["nb201"] = {}
        for d in devices:
            out["nb201"][d.type] = budget.guard(lambda d=d: cells_on(d, args, budget))
            save()
    for d in (d for d in devices if d.type in eager):
        plain_s, trainer_s = eager[d.type]
        if args.profile_networks > 0 and budget.allow(f"cnn/{d.type}/arithmetic"):
            k = min(args.profile_networks, len(work.archs))
            cnn[d.type]["arithmetic"] = budget.guard(lambda d=d: _arithmetic(work, d, k, trainer_s))
        cnn[d.type]["variants"] = _variants(work, d, budget, args.variants)
        save()
    for d in (d for d in devices if d.type in eager):
        cnn[d.type]["variants"].update(_compiled(work, d, budget, args, eager[d.type][1][0]))
        save()


def _goals(out: dict[str, Any]) -> dict[str, Any]:
    """The issue's goals, read off the figures (``None`` where a figure is missing)."""
    cnn, cells = out.get("cnn", {}), out.get("nb201", {})
    goals: dict[str, Any] = {}
    ratio = cnn.get("cpu", {}).get("trainer_over_plain")
    goals["cpu_trainer_within_10_percent_of_plain_loop"] = {"ratio": ratio, "met": None if ratio is None else ratio <= 1.10}
    cpu_all = cnn.get("cpu", {}).get("whole_machine", {}).get("networks_per_minute")
    gpu_all = cnn.get("cuda", {}).get("whole_machine", {}).get("networks_per_minute")
    x = gpu_all / cpu_all if cpu_all and gpu_all else None
    goals["cuda_random_cnns_10x_all_cpu_cores"] = {"cuda_networks_per_minute": gpu_all,
                                                   "cpu_all_cores_networks_per_minute": cpu_all, "ratio": x,
                                                   "met": None if x is None else x >= 10.0}
    worker = cells.get("cuda", {}).get("worker", {})
    goals["nb201_cuda_start_up_once_per_worker"] = {"setups": worker.get("worker_setups"), "met": worker.get("setup_paid_once")}
    c, g = (cells.get(d, {}).get("median_seconds_per_cell") for d in ("cpu", "cuda"))
    goals["nb201_cuda_cell_faster_than_cpu"] = {"cpu_seconds": c, "cuda_seconds": g, "met": None if not (c and g) else g < c}
    return goals


def run(args: argparse.Namespace) -> dict[str, Any]:
    for name in ("networks", "epochs", "repeats"):
        if getattr(args, name) < 1:
            raise InputError(f"--{name} must be at least 1")
    devices = _devices(args.devices)
    budget = Budget(args.budget_seconds)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    started = time.perf_counter()
    from nasviz.bench.provenance import KEY, collect, portable

    started_provenance = collect(getattr(args, "argv", None))
    out: dict[str, Any] = {"machine": _machine(), "protocol": {
        k: (portable(str(v)) if isinstance(v, Path) else v) for k, v in vars(args).items() if k not in ("func", "argv")}}

    def save(final: bool = False) -> None:
        """Write what is measured so far to ``--out`` (a run stopped from outside keeps its parts)."""
        out["goals"] = _goals(out)
        out["skipped"] = budget.skipped
        out["total_seconds"] = time.perf_counter() - started
        out["complete"] = final
        out[KEY] = started_provenance.finish().to_dict()  # the command line stamps stdout; this is for --out
        print(f"bench trainer: {out['total_seconds']:.0f} s, {'done' if final else 'part saved'}", file=sys.stderr, flush=True)
        if args.out is not None:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            tmp = args.out.with_suffix(args.out.suffix + ".tmp")
            tmp.write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")
            tmp.replace(args.out)

    try:
        _phases(devices, args, budget, out, save)
    finally:
        torch.set_num_threads(threads)
    save(final=True)
    return out


def _machine() -> dict[str, Any]:
    cuda = torch.cuda.is_available()
    return {"cpu_cores": os.cpu_count(), "torch": torch.__version__, "cuda_build": torch.version.cuda,
            "gpu": torch.cuda.get_device_name(0) if cuda else None,
            "gpu_memory_gib": torch.cuda.get_device_properties(0).total_memory / 2**30 if cuda else None}
