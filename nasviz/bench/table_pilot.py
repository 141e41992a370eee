"""Pilot of a training setting for a tabulated benchmark: is its ranking signal or noise?

``python -m nasviz bench table-pilot --cells 240 --seeds 8 --epochs 3 --channels 4 --workers 2``

Trains ``--cells`` random classes of equivalent NB201 cells (cells drawn uniformly, one per
class, as :mod:`nasviz.tabulate` would train them), ``--seeds`` times each with the given
setting, and reports, over the classes that have an input -> output path (the others sit at
chance whatever the seed):

* ``median``: median over classes of the seed-mean validation accuracy;
* ``seed_spearman``: mean Spearman correlation between two single seeds (the reliability of one
  training run), and ``half_spearman``: between the means of two disjoint halves of the seeds
  (the quantity ``data/README.md`` asks to be >= 0.8 for the table);
* ``projected``: the Spearman-Brown projection ``k r / (1 + (k - 1) r)`` of the single-seed
  reliability to the means of 2, 4, 8 and 16 seeds;
* ``gp``: the surrogate protocol of paper 002 §5.1 on the pilot's classes (GP on ``--gp-train``
  classes, Spearman of its mean on the others) for WL and TW, on the seed-mean values;
* ``seconds_per_training``: median process CPU seconds of one training.

The trainings are kept in ``--out`` (``pilot-<setting>.csv.partial.csv``), so an interrupted pilot
resumes and a finished one is only re-analysed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from nasviz.spaces import nb201
from nasviz.tabulate import DEFAULT_SETTINGS, plan, read_partial, tabulate

DESCRIPTION = "pilot of a tabulation setting: seed-to-seed Spearman, half-vs-half, GP Spearman, seconds"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cells", type=int, default=240, help="classes to train (default: 240)")
    parser.add_argument("--seeds", type=int, default=8, help="training seeds per class (default: 8)")
    parser.add_argument("--epochs", type=int, default=DEFAULT_SETTINGS["training"]["epochs"])
    parser.add_argument("--channels", type=int, default=DEFAULT_SETTINGS["model_options"]["channels"])
    parser.add_argument("--batch-size", type=int, default=DEFAULT_SETTINGS["training"]["batch_size"])
    parser.add_argument("--lr", type=float, default=DEFAULT_SETTINGS["training"]["lr"])
    parser.add_argument("--estimate-epochs", type=int, default=DEFAULT_SETTINGS["training"]["estimate_epochs"],
                        help="the value is the mean validation accuracy of the last N epochs")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sample-seed", type=int, default=0, help="which classes are drawn (default: 0)")
    parser.add_argument("--gp-train", type=int, default=50)
    parser.add_argument("--gp-trials", type=int, default=10)
    parser.add_argument("--out", type=Path, default=Path("runs/pilot"), help="folder for the trainings")
    parser.add_argument("--no-progress", action="store_true")


def settings_of(args: argparse.Namespace) -> dict:
    """The tabulation settings the arguments describe (no early stopping: patience = epochs)."""
    return {
        "dataset": "digits", "dataset_seed": 0, "seeds": args.seeds,
        "model_options": {"channels": args.channels, "n_cells": 1},
        "training": {"epochs": args.epochs, "patience": args.epochs, "estimate_epochs": args.estimate_epochs,
                     "lr": args.lr, "batch_size": args.batch_size, "optimizer": "sgd", "weight_decay": 5e-4},
    }


def draw_classes(n: int, seed: int) -> list[int]:
    """``n`` distinct classes, reached by drawing cells uniformly (so a class is as likely as its size)."""
    p = plan("nb201")
    cls_of = np.empty(len(p.cells), dtype=int)
    for c, members in enumerate(p.members):
        cls_of[members] = c
    rng = np.random.default_rng(seed)
    chosen: dict[int, None] = {}
    for i in rng.permutation(len(p.cells)):
        chosen.setdefault(int(cls_of[i]))
        if len(chosen) == n:
            break
    return list(chosen)


def spearman_brown(r: float, k: float) -> float:
    """Reliability of the mean of ``k`` measurements whose single reliability is ``r``."""
    return k * r / (1 + (k - 1) * r)


def reliability(values: np.ndarray) -> dict:
    """How reproducible a ranking by ``values`` (shape ``(n_classes, n_seeds)``) is.

    ``seed_spearman``: mean Spearman between two single seeds; ``half_spearman``: between the
    means of the first and the second half of the seeds; ``projected``: Spearman-Brown of the
    single-seed value to the mean of 2, 4, 8, 16 seeds; ``median``: median over classes of the seed mean.
    """
    n_seeds = values.shape[1]
    pairs = [spearmanr(values[:, i], values[:, j])[0] for i, j in itertools.combinations(range(n_seeds), 2)]
    r1 = float(np.mean(pairs)) if pairs else float("nan")
    half = n_seeds // 2
    half_rho = float(spearmanr(values[:, :half].mean(1), values[:, half:2 * half].mean(1))[0]) if half else float("nan")
    return {
        "classes": int(values.shape[0]), "seeds": n_seeds,
        "median": float(np.median(values.mean(axis=1))),
        "seed_spearman": r1,
        "half_spearman": half_rho,
        "projected": {str(k): spearman_brown(r1, k) for k in (2, 4, 8, 16)},
    }


def analyse(values: np.ndarray, archs: list, gp_train: int, gp_trials: int, seed: int = 0) -> dict:
    """Statistics of ``values`` (shape ``(n_classes, n_seeds)``, non-degenerate classes only)."""
    from nasviz.bench.surrogate import choose_transform
    from nasviz.gp import GaussianProcess
    from nasviz.kernels import make_kernel

    means = values.mean(axis=1)
    gp: dict[str, dict] = {}
    transform = choose_transform(means, "auto")
    for kernel, options in (("wl", {}), ("tw", {"ngram": 2})):
        rhos = []
        for trial in range(gp_trials):
            rng = np.random.default_rng([seed, trial])
            order = rng.permutation(len(means))
            train, test = order[:gp_train], order[gp_train:]
            model = GaussianProcess(make_kernel(kernel, **options), transform=transform, n_restarts=3, seed=trial)
            model.fit([archs[i] for i in train], means[train])
            mean, _ = model.predict([archs[i] for i in test], full_cov=False)
            rhos.append(float(spearmanr(mean, means[test])[0]))
        gp[kernel] = {"spearman_mean": float(np.mean(rhos)), "spearman_se": float(np.std(rhos, ddof=1) / np.sqrt(len(rhos)))}
    return {**reliability(values), "gp": gp}


def run(args: argparse.Namespace) -> dict:
    start = time.perf_counter()
    settings = settings_of(args)
    tag = f"e{args.epochs}-c{args.channels}-b{args.batch_size}-lr{args.lr:g}-w{args.estimate_epochs}-s{args.sample_seed}"
    out = args.out / f"pilot-{tag}.csv"
    classes = draw_classes(args.cells, args.sample_seed)
    summary = tabulate(out, "nb201", settings, workers=args.workers, classes=classes, progress=not args.no_progress)
    p = plan("nb201")
    done = read_partial(out.with_name(out.name + ".partial.csv"))
    rows, archs, seconds = [], [], []
    for c in classes:
        rep = p.cells[p.members[c][0]]
        if p.keys[p.members[c][0]] == "0":
            continue  # no input -> output path: chance accuracy whatever the seed
        text = nb201.format(rep)
        runs = [done[(text, k)] for k in range(args.seeds)]
        if any(r["status"] != "ok" for r in runs):
            continue
        rows.append([float(r["valid_accuracy"]) for r in runs])
        seconds.extend(float(r["train_seconds"]) for r in runs)
        archs.append(rep)
    result = {"setting": settings, "tag": tag, "trainings": summary["tasks"], "trained_now": summary["trained"],
              **analyse(np.array(rows), archs, args.gp_train, args.gp_trials),
              "seconds_per_training": float(np.median(seconds)), "seconds": time.perf_counter() - start}
    (args.out / f"pilot-{tag}.json").write_text(json.dumps(result, indent=1))
    return result
