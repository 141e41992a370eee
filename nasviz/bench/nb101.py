"""NAS-Bench-101 space: enumeration time and memory, checks against the shared tables, training time.

``python -m nasviz bench nb101 --json`` (or ``python -m nasviz.bench.nb101 --json``)
prints::

    {"enumeration": {"cold": {"seconds": ..., "peak_rss_mb": ..., "count": 423624, ...},
                     "cached": {"seconds": ..., "peak_rss_mb": ...}},
     "shared_data": {"hash_matches": "500/500", "prune_matches": "500/500", ...},
     "training": {"seconds_per_cell": [...], "valid_accuracy": [...], ...}}

* ``enumeration.cold``: :func:`nasviz.spaces.nb101.load_enumeration` in a fresh Python process
  with an empty cache folder (a temporary one: the user's cache is not touched), so the time is
  the build plus writing the cache; ``peak_rss_mb`` is that process's peak resident memory
  (imports included) and ``cpu_seconds`` its CPU time (less sensitive than wall time to a busy
  machine). ``cached``: the same call in another fresh process that finds the file.
* ``shared_data``: the module hash and pruning on all rows of ``nb101_500.csv``, how many of its
  cells and of the ``nb101_hash_20k.csv`` hashes the enumeration has, and the rows
  :func:`~nasviz.spaces.nb101.import_hash_table` joins (written to a temporary file). Absent
  tables are reported as ``null``.
* ``training``: wall seconds to train ``--train-cells`` uniformly sampled cells on digits (C = 8,
  N = 1, ``--epochs`` epochs, batch 64, one torch thread), and their validation accuracy.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from nasviz.spaces import nb101
from nasviz.spaces.nb101 import cache as nb101_cache

DESCRIPTION = "NAS-Bench-101 space: enumeration time (cold, cached) and memory, shared-table checks, training time."

_CHILD = """
import json, resource, time
start = time.perf_counter()
from nasviz.spaces import nb101
enum = nb101.load_enumeration()
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({
    "seconds": round(time.perf_counter() - start, 3),
    "load_seconds": enum.info["load_seconds"],
    "source": enum.info["source"],
    "count": len(enum),
    "isomorphism_classes": enum.info["isomorphism_classes"],
    "per_vertex_count": enum.info["per_vertex_count"],
    "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
    "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
}))
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--skip-cold", action="store_true", help="do not time a cold build (about 25 s)")
    parser.add_argument("--train-cells", type=int, default=3, help="cells to train on digits (0: none)")
    parser.add_argument("--epochs", type=int, default=4, help="training epochs per cell")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print JSON only")


def _child_load(cache: Path) -> dict[str, Any]:
    """Run :data:`_CHILD` in a fresh interpreter that uses this checkout and ``cache``."""
    root = str(Path(nb101.__file__).resolve().parents[3])  # the checkout: nasviz/spaces/nb101/__init__.py
    env = {**os.environ, nb101.CACHE_ENV: str(cache), "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def enumeration_timing(skip_cold: bool = False) -> dict[str, Any]:
    """Cold (empty cache) and cached enumeration loads, each in a fresh process."""
    with tempfile.TemporaryDirectory(prefix="nasviz-nb101-") as tmp:
        cache = Path(tmp)
        result: dict[str, Any] = {}
        if not skip_cold:
            result["cold"] = _child_load(cache)
        else:  # the cached timing still needs a file: write this process's enumeration there
            nb101_cache._save(nb101.load_enumeration(), nb101_cache._cache_file(cache))
        result["cached"] = _child_load(cache)
        result["cache_file_mb"] = round(nb101_cache._cache_file(cache).stat().st_size / 2**20, 1)
    return result


def shared_data_checks() -> dict[str, Any]:
    """Hash, pruning and lookups on the shared tables (``None`` for a table that is absent)."""
    out: dict[str, Any] = {"nb101_500": None, "nb101_hash_20k": None}
    enum = nb101.load_enumeration()
    path = nb101.shared_data_path("nb101_500.csv")
    if path is not None:
        with open(path, newline="") as handle:
            rows = list(csv.DictReader(handle))
        cells = [nb101.parse(r["matrix"], r["ops"]) for r in rows]
        hashed = sum(c.hash == r["nb101_hash"] for c, r in zip(cells, rows))
        pruned = sum(
            nb101.format(nb101.prune(*nb101.parse_raw(r["raw_matrix"], r["raw_ops"]))) == f"{r['matrix']};{r['ops']}"
            for r in rows
        )
        out["nb101_500"] = {
            "hash_matches": f"{hashed}/{len(rows)}",
            "prune_matches": f"{pruned}/{len(rows)}",
            "distinct_cells": len({c.hash for c in cells}),
            "in_enumeration": f"{sum(r['nb101_hash'] in enum for r in rows)}/{len(rows)}",
        }
    path = nb101.shared_data_path("nb101_hash_20k.csv")
    if path is not None:
        with open(path, newline="") as handle:
            hashes = [r["hash"] for r in csv.DictReader(handle)]
        with tempfile.TemporaryDirectory(prefix="nasviz-nb101-") as tmp:
            start = time.perf_counter()
            result = nb101.import_hash_table(path, Path(tmp) / "nb101_20k.csv")
            seconds = time.perf_counter() - start
        out["nb101_hash_20k"] = {
            "found": f"{sum(h in enum for h in hashes)}/{len(hashes)}",
            "import_rows_joined": f"{result.rows_joined}/{result.rows_read}",
            "import_seconds": round(seconds, 2),
        }
    return out


def training_timing(n_cells: int, epochs: int, seed: int) -> dict[str, Any]:
    """Train ``n_cells`` uniformly sampled cells on digits; wall seconds and validation accuracy."""
    import torch

    from nasviz.spaces.nb101.network import build_nb101_network, count_parameters
    from nasviz.objectives.datasets import load_dataset
    from nasviz.objectives.trainer import train_model

    data = load_dataset("digits", seed=seed)
    cells = nb101.sample(np.random.default_rng(seed), n_cells)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    seconds, accuracy, params = [], [], []
    try:
        for k, cell in enumerate(cells):
            torch.manual_seed(seed + k)
            net = build_nb101_network(cell, channels=8, n_cells=1, n_classes=data.n_classes)
            start = time.perf_counter()
            result = train_model(net, data, epochs=epochs, patience=epochs, batch_size=64, seed=seed, device="cpu")
            seconds.append(round(time.perf_counter() - start, 2))
            accuracy.append(None if result.valid_score is None else round(result.valid_score, 2))
            params.append(count_parameters(net))
    finally:
        torch.set_num_threads(threads)
    return {
        "cells": [nb101.format(c) for c in cells],
        "seconds_per_cell": seconds,
        "valid_accuracy": accuracy,
        "parameters": params,
        "settings": {"channels": 8, "n_cells": 1, "epochs": epochs, "batch_size": 64, "torch_threads": 1},
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"enumeration": enumeration_timing(args.skip_cold), "shared_data": shared_data_checks()}
    if args.train_cells > 0:
        out["training"] = training_timing(args.train_cells, args.epochs, args.seed)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=DESCRIPTION)
    add_arguments(parser)
    args = parser.parse_args(argv)
    print(json.dumps(run(args), indent=None if args.json else 2))


if __name__ == "__main__":
    main()
