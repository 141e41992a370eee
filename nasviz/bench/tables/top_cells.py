"""How each table's best cells lie (``bench top-cells``): the regrets of the few best, how many
categorical parameters apart they are, and how many have a better one among their nearest rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from nasviz.bench.tables import DocTable, register
from nasviz.bench.tables.markdown import md_table

#: Short names of the shared tables' files, as the docs call them.
TABLE_NAMES = {"nb201_test_accuracy.csv": "nb201", "nb201_12epoch.csv": "12-epoch", "nb101_hash_20k.csv": "NB101 20k",
               "nb101_20k.csv": "NB101 20k", "nb101_500.csv": "nb101_500", "darts_725.csv": "DARTS"}


def _regret(value: float) -> str:
    return "0" if value == 0 else f"{value:.2f}"


def top_cells(results: Sequence[Any]) -> str:
    """One row per table: rows, parameters, the best cells' regrets, their median Hamming distance
    and how many of cells two to ``top`` have a better one among their k nearest rows."""
    (report,) = results
    ks = [str(k) for k in report["k"]]
    rows = []
    for t in report["tables"]:
        linked = " / ".join(str(t["better_within_k"][k]) for k in ks)
        rows.append([f"{TABLE_NAMES.get(t['table'], t['table'])} {t['metric']}", f"{t['rows']:,}", t["parameters"],
                     ", ".join(_regret(c["regret"]) for c in t["cells"]), f"{t['median_distance']:g}",
                     f"{linked} of {len(t['cells']) - 1}"])
    return md_table(["table:metric", "rows", "parameters", f"regrets of the {report['top']} best", "median distance",
                     f"linked (k = {' / '.join(ks)})"], rows)


register(DocTable("top-cells", (str(Path("docs/results") / "top-cells.json"),), top_cells,
                  "how the best cells of the nine shared tables lie, and whether mutation links them"))

__all__ = ["top_cells"]
