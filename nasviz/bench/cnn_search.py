"""Auto-Keras's and NASBOT's claims on their own ground: CNNs on MNIST-1D (issue 20's comparison).

The protocol, fixed before any run (defaults of this benchmark):

* data: MNIST-1D (:mod:`nasviz.objectives.mnist1d`; 3,200 / 800 / 1,000 signals of length 40,
  split seed 0), the CNN space (:mod:`nasviz.spaces.cnn`), the space's training settings;
* budget: ``--seconds`` 900 of wall clock per (method, seed) run, on ``--workers`` 2 CPU worker
  processes with one torch thread each; every method proposes 2 networks a step and, like
  Auto-Keras (paper 003 Sec. 4.3), proposes the next step while the current one trains
  (``overlap``), so the workers never wait for the search. No new step starts after the
  deadline; the networks in training then finish and count;
* seeds 0-4 (the strategy's seed and the training seed; the data split is the same for all);
* methods (all start from the space's 10 initial networks, paper 001 Sec. 5):

  ============  ===================================================================
  ``ak``        Auto-Keras: edit-distance GP, UCB, tree search over morphisms, warm
                starts from trained ancestors (``autokeras``)
  ``bo``        the same without network morphism: every network trained from
                scratch (``autokeras`` with ``warm_start=False``; paper 003's "BO")
  ``bfs``       breadth-first search over morphisms, warm-started (``bfs-morph``)
  ``nasbot``    NASBOT: OTMANN GP, EI, EA over the nine modifiers (``nasbot``)
  ``evolution`` regularised evolution (``evolution``)
  ``random``    random search (``random``)
  ``ak-es``     ``ak`` with Hyperband-style early stopping of every training (issue 50)
  ``random-es`` ``random`` with the same early stopping
  ============  ===================================================================

  ``ak-es-finished`` (issue 50's second protocol, seeds 5-9) is ``ak-es`` whose strategy models
  only the trainings that were not stopped: a stopped one is never proposed again but is neither
  GP data nor an ancestor (``autokeras`` with ``stopped="skip"``).

  Early stopping (``-es``) is asynchronous successive halving (:mod:`nasviz.fidelity.stopping`,
  ``asha``: rungs at 1, 3 and 9 of the 12 epochs, a training goes on past a rung only while it is
  among the best third of the trainings of its run that reached it), on top of the trainer's own
  patience rule. A stopped network keeps the value it reached but is not a result: the best
  network is the one with the best validation accuracy among the networks that were not stopped;

* reported per method: mean +- standard error over seeds of the **test** accuracy of the network
  with the best validation accuracy (measured when the search trained it), of that validation
  accuracy, and the number of networks trained (failures included);
* paper 003's claims, read off the means: AK >= BO, AK >= BFS, AK > random, NASBOT > random (each
  with the difference and its standard error, so a difference within noise is visible);
* issue 50's goal for the ``-es`` rows: AK with early stopping trains at least twice as many
  networks as AK in the same time, with no loss in the best network's test accuracy (its mean at
  least AK's; the difference and its standard error reported); random search likewise, reported.

Each finished run is appended to ``--results`` (JSON lines) at once; running the same command
again skips the (method, seed) runs already there, so an interrupted comparison resumes. Each
record carries the ``provenance`` of its own run (:mod:`nasviz.bench.provenance`): a comparison
that resumes over days may span several commits, and the records say which.
``--device cuda`` trains on the GPU (the workers share it). ``--workers auto`` plans the workers
for the device (:func:`~nasviz.objectives.accelerator.plan_concurrency`: one per core on a CPU;
on a GPU from its free memory and the cores), ``--networks-per-worker k`` trains ``k`` networks
at once in each worker (a step then proposes ``workers x k`` networks), and ``--speed name=value``
sets the trainer's :class:`~nasviz.objectives.speed.SpeedOptions`. Each run records its plan,
networks and epochs per minute.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from nasviz.bench.provenance import KEY, collect
from nasviz.errors import InputError

DESCRIPTION = "AK / BO without morphism / BFS / NASBOT / evolution / random on CNNs under one wall-clock budget"

#: method -> (registered strategy, options, label)
METHODS: dict[str, tuple[str, dict[str, Any], str]] = {
    "ak": ("autokeras", {}, "AK (BO + morphism)"),
    "bo": ("autokeras", {"warm_start": False}, "BO without morphism"),
    "bfs": ("bfs-morph", {}, "BFS over morphisms"),
    "nasbot": ("nasbot", {}, "NASBOT"),
    "evolution": ("evolution", {}, "evolution"),
    "random": ("random", {}, "random"),
    "ak-es": ("autokeras", {}, "AK + early stopping (ASHA)"),
    "random-es": ("random", {}, "random + early stopping (ASHA)"),
    "ak-es-finished": ("autokeras", {"stopped": "skip"}, "AK + early stopping (ASHA), finished trainings modelled"),
}
#: method -> the early-stopping rule its trainings run under (:func:`nasviz.fidelity.stopping.parse_rule`).
EARLY_STOPPING: dict[str, str] = {"ak-es": "asha:eta=3:min_epochs=1", "random-es": "asha:eta=3:min_epochs=1",
                                  "ak-es-finished": "asha:eta=3:min_epochs=1"}
#: Issue 50's goal: (with early stopping, without, the factor of networks trained). The first two
#: pairs are judged on seeds 0-4 (``docs/results/cnn-mnist1d-es.jsonl``); the third, whose method
#: was added after they were seen, on seeds 5-9, where ``ak`` runs again beside it
#: (``docs/results/cnn-mnist1d-es-finished.jsonl``).
EARLY_STOPPING_GOALS: tuple[tuple[str, str, float], ...] = (("ak-es", "ak", 2.0), ("random-es", "random", 2.0),
                                                            ("ak-es-finished", "ak", 2.0))
#: (left, relation, right) of paper 003's claims.
CLAIMS: tuple[tuple[str, str, str], ...] = (("ak", ">=", "bo"), ("ak", ">=", "bfs"), ("ak", ">", "random"),
                                            ("nasbot", ">", "random"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", default="mnist1d", help="dataset (default: mnist1d)")
    parser.add_argument("--data-folder", default=None, help="folder of mnist / fashion_mnist / cifar10")
    parser.add_argument("--seconds", type=float, default=900.0, help="wall clock per run (default: 900)")
    parser.add_argument("--seeds", default="0,1,2,3,4", help="comma-separated seeds (default: 0,1,2,3,4)")
    parser.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated, of {', '.join(METHODS)}")
    parser.add_argument("--workers", default="2", help="worker processes per run, or auto (default: 2)")
    parser.add_argument("--networks-per-worker", default="1",
                        help="networks each worker trains at once, or auto (default: 1)")
    parser.add_argument("--speed", action="append", default=[], metavar="NAME=VALUE",
                        help="a trainer speed option, e.g. bf16=true (repeatable; see nasviz.objectives.speed)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--results", type=Path, default=None,
                        help="JSON-lines file: each run is appended when it ends; runs already there are skipped")


def plan(args: argparse.Namespace) -> dict[str, Any]:
    """Workers, networks per worker and speed options of every run, from ``--workers``,
    ``--networks-per-worker`` (numbers or ``auto``), ``--speed`` and ``--device``."""
    from dataclasses import replace

    from nasviz.objectives.accelerator import plan_concurrency, resolve_device
    from nasviz.objectives.speed import SpeedOptions

    device = resolve_device(args.device)
    workers = None if str(args.workers) == "auto" else int(args.workers)
    together = None if str(getattr(args, "networks_per_worker", "1")) == "auto" else int(args.networks_per_worker)
    reason = "as asked"
    if workers is None or together is None:
        chosen = plan_concurrency(device, _network_bytes(args.dataset, args.data_folder) if device.type == "cuda" else 0,
                                  processes=workers, networks_per_process=together)
        workers, together, reason = chosen.processes, chosen.networks_per_process, chosen.reason
    if workers < 1 or together < 1:
        raise InputError(f"--workers and --networks-per-worker must be at least 1, got {workers} and {together}")
    speed = replace(SpeedOptions.parse(getattr(args, "speed", None)), networks_together=together)
    return {"workers": workers, "networks_per_worker": together, "batch_size": workers * together,
            "speed": speed, "reason": reason}


def _network_bytes(dataset: str, folder: str | None) -> int:
    """Training memory (bytes) of the largest network of the CNN space's initial pool on ``dataset``."""
    from nasviz.objectives.datasets import load_dataset
    from nasviz.objectives.trainer import estimate_size
    from nasviz.spaces import get_space

    space, data = get_space("cnn"), load_dataset(dataset, seed=0, folder=folder)
    batch = space.training_defaults()["batch_size"]
    return 4 * max(estimate_size(space.build_network(a, data.input_shape, data.n_outputs), data.input_shape, batch)
                   for a in space.initial_pool())


def _one(method: str, seed: int, args: argparse.Namespace) -> dict[str, Any]:
    """One (method, seed) run: the search under the wall-clock budget, on worker processes."""
    from nasviz.executors import ExecutorObjective, LocalExecutor
    from nasviz.objectives.training import TrainingSpec
    from nasviz.runner import run_search
    from nasviz.spaces import get_space
    from nasviz.strategies.factory import make_strategy

    space = get_space("cnn")
    name, options, _ = METHODS[method]
    chosen = plan(args)
    spec = TrainingSpec(space="cnn", dataset=args.dataset, dataset_seed=0, metric="valid_accuracy", seed=seed,
                        device=args.device, data_folder=args.data_folder, speed=chosen["speed"])
    batch = chosen["batch_size"]
    with LocalExecutor(spec, n_workers=chosen["workers"]) as executor:
        trainer = spec.build()
        if method in EARLY_STOPPING:
            from nasviz.fidelity.stopping import parse_rule

            trainer.setup_fidelity(parse_rule(EARLY_STOPPING[method]))
        objective = ExecutorObjective(trainer, executor)
        strategy = make_strategy(name, space=space, seed=seed, batch_size=batch, **options)
        if hasattr(strategy, "attach"):
            strategy.attach(objective)
        start = time.perf_counter()
        result = run_search(strategy, objective, 10**6, format_arch=space.format, batch_size=batch,
                            overlap=True, should_stop=lambda: time.perf_counter() - start > args.seconds)
        networks = getattr(strategy, "networks", None)
        store_summary = networks.summary() if networks is not None else None
        if networks is not None:
            networks.close()
    ok = [e for e in result.evaluations if e.ok]
    finished = [e for e in ok if e.full]  # an early-stopped network is not a result
    best = max(finished, key=lambda e: e.value) if finished else None
    epochs = sum(int((e.info or {}).get("epochs_run", 0)) for e in result.evaluations)
    minutes = max(result.seconds, 1e-9) / 60.0
    return {
        "method": method, "strategy": name, "options": options, "seed": seed, "seconds": result.seconds,
        "n_trained": len(result.evaluations), "n_failed": len(result.evaluations) - len(ok),
        "n_stopped": len(ok) - len(finished), "early_stopping": EARLY_STOPPING.get(method),
        "best_arch": None if best is None else space.format(best.arch),
        "best_valid": None if best is None else best.value,
        "best_test": None if best is None else best.info.get("test_score"),
        "warm_started": sum(1 for e in result.evaluations if (e.info or {}).get("warm_start")),
        "network_store": store_summary,
        "trajectory": [v if math.isfinite(v) else None for v in result.trajectory],
        "device": args.device, "workers": chosen["workers"], "networks_per_worker": chosen["networks_per_worker"],
        "plan_reason": chosen["reason"], "speed": chosen["speed"].to_dict(), "epochs_trained": epochs,
        "networks_per_minute": len(result.evaluations) / minutes, "epochs_per_minute": epochs / minutes,
    }


def _mean_se(values: list[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    a = np.asarray(values, dtype=float)
    return float(a.mean()), float(a.std(ddof=1) / math.sqrt(len(a))) if len(a) > 1 else 0.0


def summarise(runs: list[dict[str, Any]], methods: list[str]) -> dict[str, Any]:
    """Per method: mean +- s.e. of the best network's test and validation accuracy, networks trained."""
    out: dict[str, Any] = {}
    for m in methods:
        rs = [r for r in runs if r["method"] == m and r["best_test"] is not None]
        test, test_se = _mean_se([r["best_test"] for r in rs])
        valid, valid_se = _mean_se([r["best_valid"] for r in rs])
        trained, trained_se = _mean_se([r["n_trained"] for r in runs if r["method"] == m])
        rates = {key: _mean_se([r[key] for r in runs if r["method"] == m and key in r])[0]
                 for key in ("networks_per_minute", "epochs_per_minute")}
        out[m] = {"label": METHODS[m][2], "runs": len(rs), "test": test, "test_se": test_se, "valid": valid,
                  "valid_se": valid_se, "trained": trained, "trained_se": trained_se, **rates,
                  "per_seed_test": {r["seed"]: r["best_test"] for r in rs}}
    return out


def claims(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Paper 003's claims on the test accuracies' means, with the difference and its s.e."""
    out = []
    for left, relation, right in CLAIMS:
        a, b = summary.get(left), summary.get(right)
        if not a or not b or a["test"] is None or b["test"] is None:
            continue
        diff = a["test"] - b["test"]
        se = math.sqrt((a["test_se"] or 0.0) ** 2 + (b["test_se"] or 0.0) ** 2)
        holds = diff >= 0 if relation == ">=" else diff > 0
        out.append({"claim": f"{left} {relation} {right}", "difference": diff, "se": se, "holds": holds,
                    "beyond_one_se": abs(diff) > se})
    return out


def early_stopping_goals(summary: dict[str, Any], pairs: Sequence[tuple[str, str, float]] = EARLY_STOPPING_GOALS,
                         ) -> list[dict[str, Any]]:
    """Issue 50's goal per pair (by default :data:`EARLY_STOPPING_GOALS`) that ``summary`` holds:
    networks trained, their ratio, and the best network's test accuracy with early stopping minus
    without (and its s.e.)."""
    out = []
    for with_es, without, factor in pairs:
        a, b = summary.get(with_es), summary.get(without)
        if not a or not b or a["test"] is None or b["test"] is None:
            continue
        ratio = a["trained"] / b["trained"] if b["trained"] else math.inf
        diff = a["test"] - b["test"]
        se = math.sqrt((a["test_se"] or 0.0) ** 2 + (b["test_se"] or 0.0) ** 2)
        out.append({"goal": f"{with_es} vs {without}", "trained_ratio": ratio, "at_least": factor,
                    "trained_met": ratio >= factor, "test_difference": diff, "test_se": se,
                    "no_loss": diff >= 0, "within_one_se": abs(diff) <= se, "met": ratio >= factor and diff >= 0})
    return out


def table(summary: dict[str, Any], claim_rows: list[dict[str, Any]], seconds: float) -> str:
    """The comparison as a Markdown table, then the claims."""
    lines = [f"| method | test accuracy of the best network (%) | its validation accuracy (%) | networks trained "
             f"in {seconds:g} s | runs |", "|---|---|---|---|---|"]
    for s in summary.values():
        if s["test"] is None:
            continue
        lines.append(f"| {s['label']} | {s['test']:.2f} ± {s['test_se']:.2f} | {s['valid']:.2f} ± {s['valid_se']:.2f} "
                     f"| {s['trained']:.1f} ± {s['trained_se']:.1f} | {s['runs']} |")
    lines.append("")
    for c in claim_rows:
        verdict = "holds" if c["holds"] else "does not hold"
        noise = "" if c["beyond_one_se"] else " (within one s.e.)"
        lines.append(f"- {c['claim']}: {verdict}, difference {c['difference']:+.2f} ± {c['se']:.2f}{noise}")
    return "\n".join(lines)


def _done(path: Path | None) -> list[dict[str, Any]]:
    if path is None or not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run(args: argparse.Namespace) -> dict[str, Any]:
    seeds = [int(s) for s in str(args.seeds).split(",") if s.strip()]
    methods = [m.strip() for m in str(args.methods).split(",") if m.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise InputError(f"unknown methods {unknown}; known: {', '.join(METHODS)}")
    import torch

    torch.set_num_threads(1)
    runs = [r for r in _done(args.results) if r["method"] in methods and r["seed"] in seeds]
    done = {(r["method"], r["seed"]) for r in runs}
    started = time.perf_counter()
    for seed in seeds:
        for method in methods:
            if (method, seed) in done:
                continue
            run_provenance = collect(getattr(args, "argv", None))
            record = {**_one(method, seed, args), KEY: run_provenance.finish().to_dict()}
            runs.append(record)
            print(f"{method} seed {seed}: best test {record['best_test']}, {record['n_trained']} trained",
                  file=sys.stderr, flush=True)
            if args.results is not None:
                with open(args.results, "a") as handle:
                    handle.write(json.dumps(record) + "\n")
    summary = summarise(runs, methods)
    claim_rows = claims(summary)
    text = table(summary, claim_rows, args.seconds)
    es_goals = early_stopping_goals(summary)
    for g in es_goals:
        text += (f"\n- {g['goal']}: {g['trained_ratio']:.2f}x the networks (goal: at least {g['at_least']:g}x), "
                 f"best network's test accuracy {g['test_difference']:+.2f} ± {g['test_se']:.2f}: "
                 + ("met" if g["met"] else "not met"))
    print(text, file=sys.stderr)
    return {"dataset": args.dataset, "seconds_per_run": args.seconds, "workers": args.workers, "device": args.device,
            "seeds": seeds, "summary": summary, "claims": claim_rows, "early_stopping_goals": es_goals,
            "table": text, "runs": runs,
            "total_seconds": time.perf_counter() - started}
