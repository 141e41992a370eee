"""Benchmarks that print JSON: ``python -m nasviz bench NAME ...``.

Each benchmark is a module in this package with ``DESCRIPTION``, ``add_arguments(parser)`` and
``run(args) -> dict``; list it in :data:`BENCHMARKS` (and give it its smallest real invocation in
``tests/bench/test_provenance.py``). The command line prints ``run``'s dict as JSON with a
``provenance`` object first (:mod:`nasviz.bench.provenance`: commit and dirty flag, time, machine,
library versions); a benchmark that appends records to a file of its own stamps each record with
:func:`~nasviz.bench.provenance.collect`. Speed is measured here, never in tests.
"""

from __future__ import annotations

#: name -> module path
BENCHMARKS: dict[str, str] = {
    "kernels": "nasviz.bench.kernels",
    "surrogate": "nasviz.bench.surrogate",
    "search": "nasviz.bench.search",
    "trainer": "nasviz.bench.trainer",
    "dashboard": "nasviz.bench.dashboard",
    "explorer": "nasviz.bench.explorer",
    "store": "nasviz.bench.store",
    "warmstart": "nasviz.bench.warmstart",
    "layer-search": "nasviz.bench.layer_search",
    "layer-retrain": "nasviz.bench.layer_retrain",
    "cnn-search": "nasviz.bench.cnn_search",
    "table-pilot": "nasviz.bench.table_pilot",
    "table-reliability": "nasviz.bench.table_reliability",
    "tuning": "nasviz.bench.tuning",
    "goal": "nasviz.bench.goal",
    "nb101": "nasviz.bench.nb101",
    "browser": "nasviz.bench.browser",
    "gp-bounds": "nasviz.bench.gp_bounds",
    "top-cells": "nasviz.bench.top_cells",
    "accelerator-check": "nasviz.bench.accelerator_check",
    "classroom": "nasviz.bench.classroom",
    "fidelity-ranks": "nasviz.bench.fidelity_ranks",
}
