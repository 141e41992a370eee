"""How reproducible a tabulated benchmark's ranking is: ``python -m nasviz bench table-reliability``.

``python -m nasviz bench table-reliability --table data/nb201_digits.csv`` (a finished table's
``<metric>_seeds`` columns) or ``--partial data/nb201_digits.csv.partial.csv``

Reads the per-seed values of a finished table (one row per class of equivalent cells) or the
per-seed trainings that ``python -m nasviz tabulate`` keeps in ``<out>.partial.csv`` (also while
the tabulation still runs: only classes with every seed done count), leaves out
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
from nasviz.errors import InputError
from nasviz.spaces import get_space
from nasviz.tabulate import DEFAULT_SETTINGS, plan, read_partial

DESCRIPTION = "seed-to-seed and half-vs-half Spearman of a tabulation's per-seed values"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--table", type=Path, help="a finished table with <metric>_seeds columns")
    source.add_argument("--partial", type=Path, help="the tabulation's <out>.partial.csv")
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


def table_seed_values(table: Path, space_name: str, n_seeds: int) -> dict[str, np.ndarray]:
    """Like :func:`per_seed_values`, from a finished table's ``<metric>_seeds`` columns (``;``-separated),
    one row per class (its members carry the same values) and only classes with ``n_seeds`` values.
    Read with the project's CSV reader (:mod:`nasviz.csvfile`), so a problem names its line."""
    from nasviz import csvfile

    label = str(table)
    lines = csvfile.physical_lines(csvfile.decode(csvfile.read_bytes(table, label=label), label))
    records = csvfile.records(lines, label)
    _, header = next(records, (1, []))
    metrics = ("valid_accuracy", "test_accuracy")
    missing = [f"{m}_seeds" for m in metrics if f"{m}_seeds" not in header] + (["arch"] if "arch" not in header else [])
    if missing:
        raise InputError(f"{table}, line 1: no {', '.join(missing)} column (not a per-seed table?)")
    arch_col, seed_cols = header.index("arch"), [header.index(f"{m}_seeds") for m in metrics]
    space = get_space(space_name)
    rows: dict[str, list[list[float]]] = {m: [] for m in metrics}
    seen: set[str] = set()
    for line, fields in records:
        if not fields:
            continue
        key = space.canonical_key(space.parse(fields[arch_col]))
        if key == "0" or key in seen:  # no input -> output path, or a class already read
            continue
        seen.add(key)
        try:
            values = [[float(v) for v in fields[c].split(";")] for c in seed_cols]
        except (ValueError, IndexError):
            raise InputError(f"{table}, line {line}: the per-seed columns are not ;-separated numbers") from None
        if all(len(v) == n_seeds for v in values):
            for m, v in zip(metrics, values):
                rows[m].append(v)
    return {metric: np.array(values, dtype=float).reshape(-1, n_seeds) for metric, values in rows.items()}


def run(args: argparse.Namespace) -> dict:
    path = args.table or args.partial
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    read = table_seed_values if args.table else per_seed_values
    values = read(path, args.space, int(args.seeds))
    if len(values["valid_accuracy"]) < 3:
        raise InputError(f"{path}: fewer than 3 classes have all {args.seeds} seeds")
    return {"table" if args.table else "partial": str(path), **{metric: reliability(v) for metric, v in values.items()}}
