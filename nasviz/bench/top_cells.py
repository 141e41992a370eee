"""How a table's best cells lie: ``python -m nasviz bench top-cells --tables all``.

For each table/metric pair (:mod:`nasviz.bench.protocol`): the ``--top`` best cells with their
regret (the optimum minus their value), how many categorical parameters each pair of them
differs in (the Hamming distance of the default kernel's Hamming factor and of the nearest-rows
mutation, :class:`nasviz.candidates.TableNeighbourhood`), and, for each ``--k``, how many of the
top cells below the best have a better top cell among their ``k`` nearest table members.

Why it matters for issue 21's goal: a mean regret is made of the cells the runs end on. Where
the best few cells lie within a fraction of a point of each other and many parameters apart, no
mutation leads from one to the next, and the mean regret at that resolution says which of them
a run happened to reach; on the NAS-Bench-101 20k table those gaps are also below the table's
resolution (one to six validation images, ``README-extra.md``).

Prints::

    {"top": 6, "k": [24, 96], "tables": [{"table": "nb101_hash_20k.csv", "metric": ..., "rows": 20001,
      "parameters": 26, "cells": [{"arch": ..., "regret": 0.0}, ...], "distances": [[0, 9, ...], ...],
      "better_within_k": {"24": 0, "96": 0}, "median_distance": 11.0}, ...]}
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

DESCRIPTION = "the best cells of each table: their regrets, how far apart they lie, whether mutation links them"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tables", default="all",
                        help="a protocol (shared, nb201-200, nb201-12, nb101, all) or TABLE:METRIC[@SPACE],...")
    parser.add_argument("--space", default="nb201", help="space of pairs given without @SPACE")
    parser.add_argument("--top", type=int, default=6, help="best cells per table (default 6)")
    parser.add_argument("--k", default="24,96", help="nearest table members to look among, comma-separated")


def top_cells(table: Any, metric: str, top: int, ks: list[int]) -> dict[str, Any]:
    """The ``top`` best cells of ``table`` under ``metric`` and how they lie (module docstring).

    ``distances`` is ``(top, top)``: parameters in which two of the cells differ.
    ``better_within_k[k]`` counts the cells 2..top that have a better one of the top cells among
    their ``k`` nearest table members (ties in value count as not better).
    """
    from nasviz.candidates import TableNeighbourhood
    from nasviz.kernels.slots import SlotKernel

    values = np.asarray(table.values[table.check_metric(metric)], dtype=float)
    order = np.argsort(-values, kind="stable")[: max(1, int(top))]
    archs = [table.archs[i] for i in order]
    codes = SlotKernel(table.space).codes(archs)  # (top, P) choice indices
    distances = (codes[:, None, :] != codes[None, :, :]).sum(axis=2)  # (top, top)
    # one neighbourhood at the largest k: a smaller k's nearest members are a prefix of its list
    # (nearest first, ties by table order), so the table is encoded once
    nearest = TableNeighbourhood(table.space, table.archs, k=max(ks))
    better_within = {}
    for k in ks:
        linked = 0
        for i in order[1:]:
            near = set(nearest.nearest(table.archs[i])[:k])
            linked += any(values[j] > values[i] and table.archs[j] in near for j in order)
        better_within[str(k)] = linked
    off_diagonal = distances[np.triu_indices(len(archs), 1)]
    return {"metric": metric, "rows": len(values), "parameters": int(codes.shape[1]),
            "cells": [{"arch": table.strings[i], "regret": round(float(values.max() - values[i]), 6)} for i in order],
            "distances": distances.astype(int).tolist(),
            "median_distance": float(np.median(off_diagonal)) if off_diagonal.size else None,
            "better_within_k": better_within}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from nasviz.bench.protocol import parse_pairs
    from nasviz.errors import ConfigError
    from nasviz.objectives import load_table

    try:
        ks = sorted({int(k) for k in str(args.k).split(",") if k.strip()})
    except ValueError:
        raise ConfigError(f"--k must be comma-separated integers, got {args.k!r}") from None
    if not ks or min(ks) < 1 or int(args.top) < 1:
        raise ConfigError(f"--k needs integers of at least 1 and --top at least 1, got {args.k!r} and {args.top}")
    out: dict[str, Any] = {"top": int(args.top), "k": ks, "tables": []}
    for pair in parse_pairs(args.tables, args.space):
        table = load_table(pair.path(), space=pair.space)
        out["tables"].append({"table": pair.label.rsplit(":", 1)[0], "space": pair.space,
                              **top_cells(table, pair.metric, int(args.top), ks)})
    return out
