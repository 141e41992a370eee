"""Tables printed from the other benchmarks' reports: the CNN comparison (``bench cnn-search``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from nasviz.bench.tables import DocTable, register
from nasviz.bench.tables.markdown import md_table


# -------------------------------------------------------------- the CNN comparison

def cnn_summary(results: Sequence[Any], seconds: float = 900.0) -> str:
    """``bench cnn-search``'s own table and claims, from its JSON-lines file of runs."""
    from nasviz.bench.cnn_search import METHODS, claims, summarise, table

    (runs,) = results
    summary = summarise(runs, list(METHODS))
    return table(summary, claims(summary), seconds)


def cnn_runs(results: Sequence[Any]) -> str:
    """Every run of the CNN comparison, by seed, in the protocol's order of methods."""
    from nasviz.bench.cnn_search import METHODS

    (runs,) = results
    order = list(METHODS)
    rows = [[r["seed"], METHODS[r["method"]][2], f"{r['best_test']:.2f}", f"{r['best_valid']:.2f}", r["n_trained"],
             f"{r['seconds']:.0f}"] for r in sorted(runs, key=lambda r: (r["seed"], order.index(r["method"])))]
    return md_table(["seed", "method", "test accuracy of the best network (%)", "its validation accuracy (%)",
                     "networks trained", "seconds"], rows)


def _source(name: str) -> str:
    return str(Path("docs/results") / name)


register(DocTable("cnn-mnist1d", (_source("cnn-mnist1d.jsonl"),), cnn_summary,
                  "paper 003's claims on MNIST-1D: six methods, five seeds, 900 s a run"))
register(DocTable("cnn-mnist1d-runs", (_source("cnn-mnist1d.jsonl"),), cnn_runs, "every run of the CNN comparison"))

__all__ = ["cnn_runs", "cnn_summary"]
