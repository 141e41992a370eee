"""Surrogate quality: the protocol of paper 002 §5.1 (NAS-BOWL Table 1) for any kernel and table.

Each trial draws ``train`` architectures and ``test`` other architectures uniformly without
replacement from the table, fits a GP with ML-II on the training set, predicts the posterior
mean of the test set and scores it by Spearman's rank correlation with the true values; the
result is the mean and standard error over trials. It also reports the calibration of the
predictive distribution: the fraction of test values inside the central 95% predictive interval
(observation noise included, since table values are noisy measurements), and the time of one
ML-II fit at ``--fit-timing`` observations from scratch (a fresh kernel and GP, so component
computation is included).

``python -m nasviz bench surrogate --table CSV --metric cifar10 --kernel wl --json``

``--kernel`` takes a kernel name and options: ``tw`` (2-gram by default), ``tw:ngram=1``,
``wl:base=oa,h_max=3``. The target transform defaults to ``auto``: ``log_error`` (paper 002
App. D) when every value lies in [0, 100] (accuracy in percent), else ``standardize``.
"""

from __future__ import annotations

import argparse
import ast
import time
from pathlib import Path

import numpy as np

from nasviz.gp import TRANSFORMS, GaussianProcess
from nasviz.kernels import make_kernel
from nasviz.objectives import load_table, shared_nb201_table_path
from nasviz.surrogate import choose_transform, trial  # one definition, shared with the Kernels page

DESCRIPTION = "surrogate rank correlation (paper 002 §5.1): Spearman of GP mean vs truth, calibration, fit time"


def parse_kernel_spec(spec: str) -> tuple[str, dict]:
    """``"wl:base=oa,h_max=3"`` -> ``("wl", {"base": "oa", "h_max": 3})``; values are Python literals or strings."""
    name, _, rest = spec.partition(":")
    name = name.strip()
    if not name:
        raise ValueError(f"--kernel {spec!r}: missing kernel name")
    options: dict = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--kernel {spec!r}: option {item!r} is not of the form key=value")
        try:
            options[key.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            options[key.strip()] = value.strip()
    return name, options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--table", type=Path, help="benchmark CSV (default: the shared NAS-Bench-201 table)")
    parser.add_argument("--space", default="nb201", help="search space of the table's architecture strings")
    parser.add_argument("--metric", help="column to predict (default: the table's first metric)")
    parser.add_argument("--kernel", default="wl", help="kernel name with options, e.g. tw, wl:base=oa (default: wl)")
    parser.add_argument("--train", type=int, default=50, help="training architectures per trial (default: 50)")
    parser.add_argument("--test", type=int, default=400, help="test architectures per trial (default: 400)")
    parser.add_argument("--trials", type=int, default=20, help="random splits (default: 20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--transform", default="auto", choices=("auto", *TRANSFORMS), help="target transform (default: auto)")
    parser.add_argument("--n-restarts", type=int, default=3, help="L-BFGS-B starts per fit (default: 3)")
    parser.add_argument("--no-learn", action="store_true", help="keep the kernel's default hyperparameters (no ML-II)")
    parser.add_argument("--fit-timing", type=int, default=200, help="time one ML-II fit at this many observations (0: skip)")
    parser.add_argument("--json", action="store_true", help="print JSON (always on; accepted for symmetry)")


def fit_timing(table, values, ok, kernel_name, options, transform, args, repeats: int = 5) -> dict:
    """Seconds of one ML-II fit at ``--fit-timing`` observations, from a fresh kernel and GP (so
    the kernel's per-architecture work and component matrices are included).

    Repeated ``repeats`` times on different random training sets: the median wall-clock time,
    and the median process CPU time, which is what the fit costs when the machine is not shared
    (BLAS runs single-threaded for matrices this size, so CPU time ~ wall time on an idle core).
    """
    n = min(args.fit_timing, len(ok))
    walls, cpus, evals = [], [], []
    for r in range(repeats):
        rng = np.random.default_rng([args.seed, r])
        idx = ok[rng.choice(len(ok), n, replace=False)]
        archs = [table.archs[i] for i in idx]
        t0, c0 = time.perf_counter(), time.process_time()
        gp = GaussianProcess(make_kernel(kernel_name, **options), transform=transform,
                             n_restarts=args.n_restarts, seed=args.seed, learn=not args.no_learn)
        fit = gp.fit(archs, values[idx])
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        evals.append(fit.n_evaluations)
    return {"n_obs": n, "seconds": float(np.median(walls)), "seconds_min": float(np.min(walls)),
            "cpu_seconds": float(np.median(cpus)), "likelihood_evaluations": int(np.median(evals)),
            "n_restarts": args.n_restarts, "repeats": repeats}


def run(args: argparse.Namespace) -> dict:
    start = time.perf_counter()
    path = args.table or shared_nb201_table_path()
    if path is None:
        raise ValueError("no --table given and the shared NAS-Bench-201 table is absent")
    table = load_table(path, space=args.space)
    metric = table.check_metric(args.metric) if args.metric else table.metrics[0]
    values = np.asarray(table.values[metric], dtype=float)
    ok = np.flatnonzero(np.isfinite(values))
    for name in ("train", "test", "trials"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.train + args.test > len(ok):
        raise ValueError(f"--train {args.train} + --test {args.test} exceeds the {len(ok)} rows with a {metric} value")
    kernel_name, options = parse_kernel_spec(args.kernel)
    make_kernel(kernel_name, **options)  # validate the spec before the trials
    transform = choose_transform(values[ok], args.transform)

    spearman, coverage, fit_seconds, thetas = [], [], [], []
    for child in np.random.SeedSequence(args.seed).spawn(args.trials):
        rng = np.random.default_rng(child)
        idx = ok[rng.choice(len(ok), args.train + args.test, replace=False)]
        train, test = idx[: args.train], idx[args.train :]
        t = trial(table, values, train, test, kernel_name, options, transform, n_restarts=args.n_restarts,
                  seed=int(rng.integers(2**31)), learn=not args.no_learn)
        spearman.append(t["spearman"])
        coverage.append(t["coverage_95"])
        fit_seconds.append(t["fit"].seconds)
        thetas.append({**t["fit"].theta, "amplitude": t["fit"].amplitude, "noise": t["fit"].noise})

    result = {
        "kernel": args.kernel,
        "kernel_options": options,
        "table": str(table.source) if hasattr(table, "source") else str(path),
        "metric": metric,
        "transform": transform,
        "learn": not args.no_learn,
        "train": args.train,
        "test": args.test,
        "trials": args.trials,
        "seed": args.seed,
        "spearman_mean": float(np.mean(spearman)),
        "spearman_se": float(np.std(spearman, ddof=1) / np.sqrt(len(spearman))) if len(spearman) > 1 else 0.0,
        "coverage_95": float(np.mean(coverage)),
        "fit_seconds_mean": float(np.mean(fit_seconds)),
        "hyperparameters_median": {k: float(np.median([t[k] for t in thetas])) for k in thetas[0]},
        "spearman_per_trial": [round(s, 4) for s in spearman],
    }
    if args.fit_timing:
        result["fit_timing"] = fit_timing(table, values, ok, kernel_name, options, transform, args)
    result["seconds"] = time.perf_counter() - start
    return result
