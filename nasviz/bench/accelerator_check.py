"""The one-GPU check of issue 51, under 8 minutes, one JSON: ``bench trainer`` and 90-s ``bench cnn-search`` runs.

Steps, each a subprocess of this Python with its own time limit (a step that fails, hangs or is
left out is reported with its reason; the others still run), within ``--total-seconds`` (470):

1. ``bench cnn-search --seconds 90`` (seed 0), random on cpu then cuda, Auto-Keras on cpu then
   cuda: on cpu with every core (``--workers auto``: one single-threaded process per core), on
   cuda with ``--workers auto`` (processes planned from free memory and cores) and
   ``--cuda-networks-per-worker`` networks trained at once per worker (default: the planned one).
2. ``bench trainer`` on cpu and cuda with the time left (small: ``--networks 3 --epochs 3
   --repeats 1``; its parts in order of importance, the rest listed as skipped): the trainer
   against the plain loop, networks per process, the whole machine on both devices (networks per
   minute at equal epochs), NB201 cells and the once-per-worker set-up, arithmetic against
   overhead, bf16 / batch scaling / no CUDA graphs as measured variants, ``torch.compile`` last.

The JSON has every step's own output under ``steps`` and, under ``figures`` and ``goals``, what
the issue asks for: networks per minute per method and device and the cuda / cpu ratios, the
trainer's overhead against the plain loop, the arithmetic fraction, compile time against gain,
NB201 per-cell seconds and set-up counts. Without CUDA it still runs the CPU steps and says so.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

DESCRIPTION = "issue 51's accelerator check: bench trainer and 90-s cnn-search (random, Auto-Keras) on cpu and cuda"

#: (step name, method, device) of the search runs, in the order they run.
SEARCHES = (("search_random_cpu", "random", "cpu"), ("search_random_cuda", "random", "cuda"),
            ("search_ak_cpu", "ak", "cpu"), ("search_ak_cuda", "ak", "cuda"))
#: Seconds a 90-s search run takes beyond its budget (worker start, the networks in training at the
#: deadline finish); a run starts only if this much more than its budget is left.
SEARCH_MARGIN = 15.0
#: Seconds kept for ``bench trainer``, which runs last with whatever time is left.
MIN_TRAINER_SECONDS = 45.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=Path("accelerator-check"), help="folder for the JSON files")
    parser.add_argument("--seconds", type=float, default=90.0, help="budget of each search run (default: 90)")
    parser.add_argument("--total-seconds", type=float, default=470.0, help="the whole check's limit (default: 470)")
    parser.add_argument("--cuda-networks-per-worker", default="auto",
                        help="networks each cuda worker trains at once in the searches, or auto (default: auto)")


def _step(args: list[str], timeout: float, partial: Path | None = None) -> dict[str, Any]:
    """Run ``python -m nasviz bench ARGS`` with a hard limit; its JSON, or why there is none (then
    the ``partial`` file the step keeps up to date, if it left one)."""
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "nasviz", "bench", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=max(1.0, timeout))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the step and the worker processes it started
        stdout, stderr = proc.communicate()
        out = {"command": cmd[2:], "error": f"stopped after its limit of {timeout:.0f} s",
               "seconds": time.perf_counter() - start, "stderr_tail": (stderr or "")[-3000:]}
        if partial is not None and partial.is_file():
            out["json"] = json.loads(partial.read_text(encoding="utf-8"))  # the parts finished in time
        return out
    out: dict[str, Any] = {"command": cmd[2:], "returncode": proc.returncode, "seconds": time.perf_counter() - start}
    try:
        out["json"] = json.loads(stdout)
    except ValueError:
        out["error"] = f"no JSON on stdout (exit status {proc.returncode})"
    if proc.returncode != 0 or "error" in out:
        out["stderr_tail"] = (stderr or "")[-3000:]
    return out


def _preflight() -> dict[str, Any]:
    import torch

    info: dict[str, Any] = {"python": sys.version.split()[0], "torch": torch.__version__, "cuda_build": torch.version.cuda,
                            "cuda_available": torch.cuda.is_available(), "cpu_cores": os.cpu_count()}
    if info["cuda_available"]:
        free, total = torch.cuda.mem_get_info()
        info.update(gpu=torch.cuda.get_device_name(0), gpu_free_gib=free / 2**30, gpu_total_gib=total / 2**30)
    try:
        from nasviz.objectives.datasets import load_dataset

        info["mnist1d_train_signals"] = len(load_dataset("mnist1d", seed=0).y_train)
    except Exception as err:  # noqa: BLE001 - the searches cannot run without it: say how to fix
        info["mnist1d_error"] = (f"{type(err).__name__}: {err}. Make the MNIST-1D cache where the mnist1d package is "
                                 "installed (scripts/accelerator_check.sh --prepare) and carry .accel/")
    return info


def _search_figures(record: dict[str, Any]) -> dict[str, Any] | None:
    runs = (record.get("json") or {}).get("runs") or []
    if not runs:
        return None
    r = runs[0]
    keys = ("n_trained", "n_failed", "seconds", "networks_per_minute", "epochs_trained", "epochs_per_minute",
            "best_test", "best_valid", "workers", "networks_per_worker", "plan_reason", "warm_started")
    return {k: r.get(k) for k in keys}


def _figures(steps: dict[str, Any]) -> dict[str, Any]:
    trainer = (steps.get("trainer") or {}).get("json") or {}
    cnn = trainer.get("cnn", {})
    figures: dict[str, Any] = {"trainer": {
        d: {"trainer_over_plain": c.get("trainer_over_plain"), "same_valid_curves": c.get("same_valid_curves"),
            "trainer_networks_per_minute": (c.get("trainer") or {}).get("networks_per_minute"),
            "plain_networks_per_minute": (c.get("plain") or {}).get("networks_per_minute"),
            "arithmetic_fraction": ((c.get("arithmetic") or {}).get("trainer") or {}).get("arithmetic_fraction"),
            "plain_arithmetic_fraction": ((c.get("arithmetic") or {}).get("plain") or {}).get("arithmetic_fraction"),
            "flop_utilisation": ((c.get("arithmetic") or {}).get("flop_utilisation") or {}).get("utilisation"),
            "whole_machine_networks_per_minute": (c.get("whole_machine") or {}).get("networks_per_minute"),
            "variants": {k: v.get("networks_per_minute", v) if isinstance(v, dict) and "mode" not in v else v
                         for k, v in (c.get("variants") or {}).items()},
            "together": (c.get("together") or {}).get("recommended_networks_per_process")}
        for d, c in cnn.items() if isinstance(c, dict)}}
    figures["nb201"] = trainer.get("nb201")
    searches: dict[str, Any] = {}
    for name, method, device in SEARCHES:
        searches.setdefault(method, {})[device] = _search_figures(steps.get(name) or {})
    for method, by_device in searches.items():
        cpu, gpu = by_device.get("cpu") or {}, by_device.get("cuda") or {}
        if cpu.get("networks_per_minute") and gpu.get("networks_per_minute"):
            by_device["cuda_over_cpu_networks"] = gpu["networks_per_minute"] / cpu["networks_per_minute"]
            if cpu.get("epochs_per_minute") and gpu.get("epochs_per_minute"):
                by_device["cuda_over_cpu_epochs"] = gpu["epochs_per_minute"] / cpu["epochs_per_minute"]
    figures["cnn_search"] = searches
    return figures


def _goals(figures: dict[str, Any], trainer_goals: dict[str, Any]) -> dict[str, Any]:
    goals = dict(trainer_goals)
    for method in ("random", "ak"):
        ratio = figures["cnn_search"].get(method, {}).get("cuda_over_cpu_networks")
        goals[f"cnn_search_{method}_cuda_10x_cpu"] = {"ratio": ratio, "met": None if ratio is None else ratio >= 10.0}
    return goals


def run(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    left = lambda: args.total_seconds - (time.perf_counter() - started)  # noqa: E731
    out: dict[str, Any] = {"preflight": _preflight(), "protocol": {
        "search_seconds": args.seconds, "total_seconds_limit": args.total_seconds,
        "cuda_networks_per_worker": args.cuda_networks_per_worker}}
    cuda = bool(out["preflight"]["cuda_available"])
    steps: dict[str, Any] = {}
    for name, method, device in SEARCHES:
        if device == "cuda" and not cuda:
            steps[name] = {"error": "skipped: torch sees no CUDA device here"}
            continue
        if left() < args.seconds + SEARCH_MARGIN + MIN_TRAINER_SECONDS:
            steps[name] = {"error": f"skipped: {left():.0f} s left of the {args.total_seconds:.0f}-s limit"}
            continue
        results = args.out / f"{name}.jsonl"
        results.unlink(missing_ok=True)  # a fresh run, never resumed from an earlier check
        search = ["cnn-search", "--seconds", str(args.seconds), "--seeds", "0", "--methods", method,
                  "--device", device, "--workers", "auto", "--results", str(results)]
        if device == "cuda":
            search += ["--networks-per-worker", str(args.cuda_networks_per_worker)]
        steps[name] = _step(search, left() - MIN_TRAINER_SECONDS)
    remaining = left() - 3.0
    trainer_args = ["trainer", "--devices", "cpu,cuda" if cuda else "cpu", "--networks", "3", "--epochs", "3",
                    "--repeats", "1", "--profile-networks", "1", "--together", "1,4", "--sweep-networks", "8",
                    "--scale-networks", "32", "--cells", "4", "--skip-parallel",
                    "--budget-seconds", str(max(5.0, remaining - 30.0)), "--out", str(args.out / "trainer.json")]
    trainer_json = args.out / "trainer.json"
    trainer_json.unlink(missing_ok=True)
    steps["trainer"] = _step(trainer_args, remaining, trainer_json) if remaining > 10 else {"error": "skipped: no time left"}
    out["steps"] = steps
    out["figures"] = _figures(steps)
    out["goals"] = _goals(out["figures"], ((steps["trainer"].get("json") or {}).get("goals") or {}))
    out["total_seconds"] = time.perf_counter() - started
    (args.out / "accelerator-check.json").write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")
    return out
