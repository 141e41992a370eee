"""Train each run's best network of a ``bench layer-search`` result again, on fresh seeds.

A run's best validation score is the maximum over hundreds of noisy trainings, so part of it is
luck (the winner's curse), and a strategy that evaluates more networks draws more of it. This
benchmark reads the JSON that ``bench layer-search --json`` printed (``--from``), trains every
run's ``best_arch`` from scratch under each of ``--seeds`` (each seed is another data split and
initialisation, with the trainer's default settings as in the search) and reports, per strategy,
the mean score found in the search next to the mean retrained score. It also lists the
activations of each best network: Auto-Keras's morphisms keep the initial networks' activations
and insert only ``relu`` / ``leaky-relu`` / ``elu`` layers, so ``smooth_share`` (the share of best
networks with a ``softplus``, ``logistic`` or ``tanh`` layer) shows which networks only the other
strategies can reach.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
from pathlib import Path

import numpy as np

from nasviz.errors import InputError

DESCRIPTION = "retrain the best network of every run of a layer-search result on fresh seeds (winner's curse check)"

#: Activations no function-preserving morphism of :mod:`nasviz.spaces.mlp.morphisms` can insert.
SMOOTH_LABELS: frozenset[str] = frozenset({"softplus", "logistic", "tanh"})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--from", dest="source", required=True, help="JSON printed by `bench layer-search --json`")
    parser.add_argument("--seeds", default="10,11", help="comma-separated training seeds (default: 10,11)")
    parser.add_argument("--workers", type=int, default=2, help="parallel trainings (default: 2)")


def load_runs(path: str | Path) -> tuple[str, list[dict]]:
    """``(dataset, runs)`` of a layer-search result; ``ValueError`` naming what is missing."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise InputError(f"cannot read a layer-search result from {path}: {err}") from err
    if not isinstance(data, dict) or "dataset" not in data or not isinstance(data.get("runs"), list):
        raise InputError(f"{path} is not a `bench layer-search --json` result (needs 'dataset' and 'runs')")
    for i, run in enumerate(data["runs"]):
        for key in ("strategy", "seed", "best_arch"):
            if key not in run:
                raise InputError(f"{path}: runs[{i}] has no {key!r}")
    return str(data["dataset"]), [r for r in data["runs"] if r["best_arch"]]


def activations(arch_text: str) -> list[str]:
    """Sorted activation labels of a layer network string (decision layers' ``linear`` excluded)."""
    from nasviz.spaces import mlp as L

    arch = L.parse(arch_text)
    return sorted({arch.labels[u] for u in L.processing_layers(arch)})


def _train(job: tuple[str, str, int]) -> float | None:
    arch_text, dataset, seed = job
    import torch

    torch.set_num_threads(1)
    from nasviz.objectives.training import TrainingObjective
    from nasviz.spaces import mlp as L

    ev = TrainingObjective(L.SPACE, dataset, seed=seed, device="cpu").evaluate([L.parse(arch_text)])[0]
    return float(ev.value) if ev.ok else None


def run(args: argparse.Namespace) -> dict:
    dataset, runs = load_runs(args.source)
    seeds = [int(s) for s in str(args.seeds).split(",") if s.strip()]
    if not seeds:
        raise InputError("--seeds needs at least one seed")
    jobs = [(r["best_arch"], dataset, s) for r in runs for s in seeds]
    ctx = mp.get_context("spawn")
    with ctx.Pool(max(1, int(args.workers))) as pool:
        scores = pool.map(_train, jobs, chunksize=1)
    out_runs = []
    for i, r in enumerate(runs):
        mine = scores[i * len(seeds) : (i + 1) * len(seeds)]
        ok = [v for v in mine if v is not None]
        labels = activations(r["best_arch"])
        out_runs.append({
            "strategy": r["strategy"], "seed": r["seed"], "best_valid": r.get("best_valid"), "best_arch": r["best_arch"],
            "activations": labels, "smooth": bool(SMOOTH_LABELS & set(labels)),
            "retrained": dict(zip(seeds, mine)), "retrained_mean": float(np.mean(ok)) if ok else None,
        })
    summary = {}
    for name in dict.fromkeys(r["strategy"] for r in out_runs):
        mine = [r for r in out_runs if r["strategy"] == name]
        retrained = [r["retrained_mean"] for r in mine if r["retrained_mean"] is not None]
        found = [r["best_valid"] for r in mine if r["best_valid"] is not None]
        summary[name] = {
            "mean_found": float(np.mean(found)) if found else None,
            "mean_retrained": float(np.mean(retrained)) if retrained else None,
            "smooth_share": float(np.mean([r["smooth"] for r in mine])),
            "runs": len(mine),
        }
    return {"dataset": dataset, "source": str(args.source), "seeds": seeds, "summary": summary, "runs": out_runs}
