"""How reproducible a tabulated benchmark's ranking is: ``python -m nasviz bench table-reliability``.

``python -m nasviz bench table-reliability --partial data/nb201_digits.csv.partial.csv``

Reads the per-seed trainings that ``python -m nasviz tabulate`` keeps in ``<out>.partial.csv``
(also while the tabulation still runs: only classes with every seed done count), leaves out
the classes without an input -> output path (chance accuracy whatever the seed) and reports,
for the validation and the test accuracy, :func:`~nasviz.bench.table_pilot.reliability`: the
mean single-seed Spearman, the Spearman between the means of two disjoint halves of the seeds
(``data/README.md`` asks >= 0.8 of it) and the Spearman-Brown projections.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from nasviz.bench.table_pilot import reliability
from nasviz.spaces import get_space
from nasviz.tabulate import DEFAULT_SETTINGS, plan, read_partial

DESCRIPTION = "seed-to-seed and half-vs-half Spearman of a tabulation's per-seed values"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--partial", type=Path, required=True, help="the tabulation's <out>.partial.csv")
    parser.add_argument("--space", default="nb201")
    parser.add_argument("--seeds", type=int, default=DEFAULT_SETTINGS["seeds"], help="seeds per class")


def per_seed_values(partial: Path, space_name: str, n_seeds: int) -> dict[str, np.ndarray]:
    """``{"valid_accuracy": (n_classes, n_seeds), "test_accuracy": ...}`` over the classes whose
    every seed finished ``ok`` and that have an input -> output path."""
    done = read_partial(partial)
    p = plan(space_name)
    space = get_space(space_name)
    rows: dict[str, list[list[float]]] = {"valid_accuracy": [], "test_accuracy": []}
    for members in p.members:
        if p.keys[members[0]] == "0":
            continue
        rep = space.format(p.cells[members[0]])
        runs = [done.get((rep, k)) for k in range(n_seeds)]
        if any(r is None or r["status"] != "ok" for r in runs):
            continue
        for metric in rows:
            rows[metric].append([float(r[metric]) for r in runs])
    return {metric: np.array(values, dtype=float).reshape(-1, n_seeds) for metric, values in rows.items()}


def run(args: argparse.Namespace) -> dict:
    if not args.partial.is_file():
        raise FileNotFoundError(f"{args.partial}: no such tabulation progress file")
    values = per_seed_values(args.partial, args.space, int(args.seeds))
    if len(values["valid_accuracy"]) < 3:
        raise ValueError(f"{args.partial}: fewer than 3 classes have all {args.seeds} seeds done")
    return {"partial": str(args.partial), **{metric: reliability(v) for metric, v in values.items()}}
