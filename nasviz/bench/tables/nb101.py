"""NAS-Bench-101's checks (``bench nb101``): the enumeration of its cells, the module hash and
pruning against the shared tables, and the time of one small training."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from nasviz.bench.tables import DocTable, register
from nasviz.bench.tables.markdown import md_table


def nb101_checks(results: Sequence[Any]) -> str:
    """One row per check of ``bench nb101 --skip-cold``'s report."""
    (report,) = results
    cached = report["enumeration"]["cached"]
    counts = ", ".join(f"{n:,}" for n in cached["per_vertex_count"].values())
    shared = report["shared_data"]
    rows500, rows20k = shared["nb101_500"], shared["nb101_hash_20k"]
    training = report["training"]
    settings = training["settings"]
    return md_table(["check", "result"], [
        ["unique cells enumerated", f"{cached['count']:,} (per vertex count {min(cached['per_vertex_count'])}.."
                                    f"{max(cached['per_vertex_count'])}: {counts})"],
        ["enumeration loaded from its cache", f"{cached['seconds']:.2f} s, {cached['peak_rss_mb']:.0f} MB peak RSS, "
                                              f"{report['enumeration']['cache_file_mb']} MB cache file"],
        ["module hash on `nb101_500.csv`", f"{rows500['hash_matches']} rows equal the `nb101_hash` column"],
        ["pruning of the raw specs of `nb101_500.csv`", f"{rows500['prune_matches']} equal the pruned `matrix` / `ops`"],
        ["distinct cells in `nb101_500.csv`", f"{rows500['distinct_cells']} ({rows500['in_enumeration']} rows in the "
                                              "enumeration)"],
        ["`nb101_hash_20k.csv` hashes found / rows joined by `table import-nb101`",
         f"{rows20k['found']} / {rows20k['import_rows_joined']} in {rows20k['import_seconds']:.2f} s"],
        [f"one cell (C = {settings['channels']}, N = {settings['n_cells']}), {settings['epochs']} epochs on digits",
         f"{training['seconds_per_cell'][0]:.1f} s, {training['valid_accuracy'][0]:.1f} % validation accuracy"],
    ])


register(DocTable("nb101-checks", (str(Path("docs/results") / "nb101-checks.json"),), nb101_checks,
                  "NAS-Bench-101: the enumeration, hashes and pruning checked, one small training timed"))

__all__ = ["nb101_checks"]
