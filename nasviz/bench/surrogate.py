"""Surrogate quality: the protocol of paper 002 §5.1 (NAS-BOWL Table 1) for any kernel and table.

Each trial draws ``train`` architectures and ``test`` other architectures from the table, fits a
GP with ML-II on the training set, predicts the posterior mean of the test set and scores it by
Spearman's rank correlation with the true values; the result is the mean and standard error over
trials. It also reports the calibration of the predictive distribution: the fraction of test
values inside the central 95% predictive interval (observation noise included, since table
values are noisy measurements), and the time of one ML-II fit at ``--fit-timing`` observations
from scratch (a fresh kernel and GP, so component computation is included).

``python -m nasviz bench surrogate --table CSV --space nb201 --metric cifar10 --kernel wl --json``

``--kernel`` takes a kernel name and options: ``tw`` (2-gram by default), ``tw:ngram=1``,
``wl:base=oa,h_max=3``; it may be repeated, and ``--kernel all`` runs every kernel the registry
has for the space (:func:`nasviz.components.kernels_for`). Kernels are built for the space
(``make_kernel(..., space=...)``: TW's operation tree, OTMANN's label table). With one kernel the
output is that kernel's figures; with several, ``{"kernels": {spec: figures}}``. The target
transform defaults to ``auto``: ``log_error`` (paper 002 App. D) when every value lies in [0, 100]
(accuracy in percent), else ``standardize``.

Sampling (``--sampling``): ``cells`` (default) draws distinct architectures uniformly without
replacement. ``rows`` draws the table's *rows* without replacement, an architecture appearing as
often as the table repeats it (:attr:`~nasviz.objectives.table.Table.repeats`): on a table that
is itself a random sample of a benchmark's sampling distribution (``nb101_500.csv``: NAS-Bench-101
raw specs, pruned) this is that distribution, duplicates included, as NAS-BOWL's sampler draws
them. ``--once-up-to-nodes K`` keeps one row of every architecture with at most ``K`` nodes
(NAS-BOWL's sampler skips repeats of the 2-node NAS-Bench-101 cell: ``K = 2``). With repeats a
test architecture can also be a training one, which makes its prediction easy: the figures
report ``distinct_per_trial_mean`` and ``test_also_in_train`` so that such numbers are not
mistaken for ones on distinct cells.
"""

from __future__ import annotations

import argparse
import ast
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from nasviz.errors import InputError
from nasviz.gp import TRANSFORMS, GaussianProcess
from nasviz.kernels import make_kernel
from nasviz.objectives import load_table, shared_nb201_table_path
from nasviz.spaces import get_space
from nasviz.surrogate import choose_transform, trial  # one definition, shared with the Kernels page

#: The ways a trial draws its architectures (module docstring).
SAMPLINGS = ("cells", "rows")

DESCRIPTION = "surrogate rank correlation (paper 002 §5.1): Spearman of GP mean vs truth, calibration, fit time"


def parse_kernel_spec(spec: str) -> tuple[str, dict]:
    """``"wl:base=oa,h_max=3"`` -> ``("wl", {"base": "oa", "h_max": 3})``; values are Python literals or strings."""
    name, _, rest = spec.partition(":")
    name = name.strip()
    if not name:
        raise InputError(f"--kernel {spec!r}: missing kernel name")
    options: dict = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--kernel {spec!r}: option {item!r} is not of the form key=value")
        try:
            options[key.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            options[key.strip()] = value.strip()
    return name, options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--table", type=Path, help="benchmark CSV (default: the shared NAS-Bench-201 table)")
    parser.add_argument("--space", default="nb201", help="search space of the table's architecture strings")
    parser.add_argument("--metric", help="column to predict (default: the table's first metric)")
    parser.add_argument("--kernel", action="append",
                        help="kernel name with options, e.g. tw, wl:base=oa; repeatable; 'all': every kernel that "
                             "fits the space (default: wl)")
    parser.add_argument("--train", type=int, default=50, help="training architectures per trial (default: 50)")
    parser.add_argument("--test", type=int, default=400, help="test architectures per trial (default: 400)")
    parser.add_argument("--trials", type=int, default=20, help="random splits (default: 20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sampling", choices=SAMPLINGS, default="cells",
                        help="draw distinct architectures (cells) or the table's rows with their repeats (rows)")
    parser.add_argument("--once-up-to-nodes", type=int, default=0, metavar="K",
                        help="with --sampling rows: one row of every architecture of at most K nodes (default: 0)")
    parser.add_argument("--transform", default="auto", choices=("auto", *TRANSFORMS), help="target transform (default: auto)")
    parser.add_argument("--n-restarts", type=int, default=3, help="L-BFGS-B starts per fit (default: 3)")
    parser.add_argument("--no-learn", action="store_true", help="keep the kernel's default hyperparameters (no ML-II)")
    parser.add_argument("--fit-timing", type=int, default=200, help="time one ML-II fit at this many observations (0: skip)")
    parser.add_argument("--json", action="store_true", help="print JSON (always on; accepted for symmetry)")


@dataclass(frozen=True)
class Protocol:
    """The settings of paper 002 §5.1's protocol (the ``bench surrogate`` options)."""

    train: int = 50
    test: int = 400
    trials: int = 20
    seed: int = 0
    transform: str = "auto"
    n_restarts: int = 3
    learn: bool = True
    sampling: str = "cells"
    once_up_to_nodes: int = 0
    fit_timing: int = 0

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "Protocol":
        return cls(args.train, args.test, args.trials, args.seed, args.transform, args.n_restarts, not args.no_learn,
                   args.sampling, args.once_up_to_nodes, args.fit_timing)


def sample_pool(table, values: np.ndarray, protocol: Protocol) -> np.ndarray:
    """Row indices the trials draw from (without replacement): each architecture with a finite
    value once (``cells``), or as often as the table repeats it (``rows``; at most once for
    architectures of at most ``once_up_to_nodes`` nodes)."""
    ok = np.flatnonzero(np.isfinite(values))
    if protocol.sampling == "cells":
        return ok
    if protocol.sampling != "rows":
        raise InputError(f"--sampling must be one of {', '.join(SAMPLINGS)}, got {protocol.sampling!r}")
    copies = np.asarray(table.repeats)[ok].copy()
    small = np.array([table.archs[i].n_nodes <= protocol.once_up_to_nodes for i in ok], dtype=bool)
    copies[small] = 1
    return np.repeat(ok, copies)


def checked_pool(table, values: np.ndarray, metric: str, protocol: Protocol) -> np.ndarray:
    """:func:`sample_pool`, after checking that the protocol's sizes fit it (``ValueError`` if not)."""
    pool = sample_pool(table, values, protocol)
    for name in ("train", "test", "trials"):
        if getattr(protocol, name) < 1:
            raise InputError(f"--{name} must be >= 1, got {getattr(protocol, name)}")
    if protocol.train + protocol.test > len(pool):
        raise InputError(f"--train {protocol.train} + --test {protocol.test} exceeds the {len(pool)} "
                         f"{'architectures' if protocol.sampling == 'cells' else 'rows'} with a {metric} value")
    return pool


def splits(pool: np.ndarray, protocol: Protocol) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
    """``(train rows, test rows, GP seed)`` of each trial (seeded by ``protocol.seed``)."""
    for child in np.random.SeedSequence(protocol.seed).spawn(protocol.trials):
        rng = np.random.default_rng(child)
        idx = pool[rng.choice(len(pool), protocol.train + protocol.test, replace=False)]
        yield idx[: protocol.train], idx[protocol.train :], int(rng.integers(2**31))


def fit_timing(table, values, ok, kernel_name, options, transform, protocol: Protocol, space=None,
               repeats: int = 5) -> dict:
    """Seconds of one ML-II fit at ``--fit-timing`` observations, from a fresh kernel and GP (so
    the kernel's per-architecture work and component matrices are included).

    Repeated ``repeats`` times on different random training sets: the median wall-clock time,
    and the median process CPU time, which is what the fit costs when the machine is not shared
    (BLAS runs single-threaded for matrices this size, so CPU time ~ wall time on an idle core).
    """
    n = min(protocol.fit_timing, len(ok))
    walls, cpus, evals = [], [], []
    for r in range(repeats):
        rng = np.random.default_rng([protocol.seed, r])
        idx = ok[rng.choice(len(ok), n, replace=False)]
        archs = [table.archs[i] for i in idx]
        t0, c0 = time.perf_counter(), time.process_time()
        gp = GaussianProcess(make_kernel(kernel_name, space=space, **options), transform=transform,
                             n_restarts=protocol.n_restarts, seed=protocol.seed, learn=protocol.learn)
        fit = gp.fit(archs, values[idx])
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        evals.append(fit.n_evaluations)
    return {"n_obs": n, "seconds": float(np.median(walls)), "seconds_min": float(np.min(walls)),
            "cpu_seconds": float(np.median(cpus)), "likelihood_evaluations": int(np.median(evals)),
            "n_restarts": protocol.n_restarts, "repeats": repeats}


def evaluate(table, metric: str, spec: str, protocol: Protocol, space=None,
             trial_splits: list[tuple[np.ndarray, np.ndarray, int]] | None = None) -> dict:
    """The protocol's figures for kernel ``spec`` on ``table``'s ``metric`` (see the module docstring).

    ``trial_splits`` (from :func:`splits`) lets several kernels share one set of trials; by
    default they are drawn here (the same ones for the same protocol).
    """
    start = time.perf_counter()
    space = table.space if space is None else space
    values = np.asarray(table.values[metric], dtype=float)
    pool = checked_pool(table, values, metric, protocol)
    kernel_name, options = parse_kernel_spec(spec)
    make_kernel(kernel_name, space=space, **options)  # validate the spec (and its fit to the space) first
    transform = choose_transform(values[pool], protocol.transform)
    spearman, coverage, fit_seconds, thetas = [], [], [], []
    if trial_splits is None:
        trial_splits = list(splits(pool, protocol))
    distinct, test_seen = [], []
    for train, test, seed in trial_splits:
        distinct.append(len(np.unique(np.concatenate([train, test]))))
        test_seen.append(float(np.mean(np.isin(test, train))))
        t = trial(table, values, train, test, kernel_name, options, transform, n_restarts=protocol.n_restarts,
                  seed=seed, learn=protocol.learn)
        spearman.append(t["spearman"])
        coverage.append(t["coverage_95"])
        fit_seconds.append(t["fit"].seconds)
        thetas.append({**t["fit"].theta, "amplitude": t["fit"].amplitude, "noise": t["fit"].noise})
    result = {
        "kernel": spec, "kernel_options": options, "table": str(table.source), "metric": metric,
        "transform": transform, "learn": protocol.learn, "train": protocol.train, "test": protocol.test,
        "trials": protocol.trials, "seed": protocol.seed, "sampling": protocol.sampling,
        "spearman_mean": float(np.mean(spearman)),
        "spearman_se": float(np.std(spearman, ddof=1) / np.sqrt(len(spearman))) if len(spearman) > 1 else 0.0,
        "coverage_95": float(np.mean(coverage)),
        "fit_seconds_mean": float(np.mean(fit_seconds)),
        "hyperparameters_median": {k: float(np.median([t[k] for t in thetas])) for k in thetas[0]},
        "spearman_per_trial": [round(s, 4) for s in spearman],
        # repeats (rows sampling): distinct architectures per trial, and the share of
        # test architectures that are also training architectures (their prediction is easy)
        "distinct_per_trial_mean": float(np.mean(distinct)),
        "test_also_in_train": float(np.mean(test_seen)),
    }
    if protocol.fit_timing:
        result["fit_timing"] = fit_timing(table, values, np.unique(pool), kernel_name, options, transform, protocol,
                                          space)
    result["seconds"] = time.perf_counter() - start
    return result


def kernel_specs(requested: list[str] | None, space_name: str) -> list[str]:
    """The kernel specs to run: the requested ones, ``all`` expanded to every kernel that fits the space."""
    from nasviz.components import kernels_for

    specs: list[str] = []
    for spec in requested or ["wl"]:
        specs.extend(kernels_for(space_name) if spec.strip() == "all" else [spec])
    return list(dict.fromkeys(specs))


def run(args: argparse.Namespace) -> dict:
    start = time.perf_counter()
    path = args.table or shared_nb201_table_path()
    if path is None:
        raise InputError("no --table given and the shared NAS-Bench-201 table is absent")
    table = load_table(path, space=args.space)
    metric = table.check_metric(args.metric) if args.metric else table.metrics[0]
    space = get_space(args.space)
    protocol = Protocol.from_args(args)
    specs = kernel_specs(args.kernel, args.space)
    if len(specs) == 1:
        return evaluate(table, metric, specs[0], protocol, space)
    values = np.asarray(table.values[metric], dtype=float)
    shared = list(splits(checked_pool(table, values, metric, protocol), protocol))  # drawn once for all kernels
    results = {spec: evaluate(table, metric, spec, protocol, space, shared) for spec in specs}
    return {"table": str(table.source), "space": args.space, "metric": metric, "protocol": vars(protocol),
            "kernels": results, "seconds": time.perf_counter() - start}
