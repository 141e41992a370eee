"""Search on the embedded NB201-on-digits table (``bench search --table data/nb201_digits.csv``):
mean regret after 25 / 50 / 100 evaluations and the runs that found the optimum, one row per metric."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from nasviz.bench.tables import DocTable, register
from nasviz.bench.tables.markdown import md_table

#: The metrics, in the README's order (one report each).
METRICS = ("valid_accuracy", "test_accuracy")


def _cell(entry: dict[str, Any]) -> str:
    means = " / ".join(f"{entry['regret_mean'][c]:.2f}" for c in ("25", "50", "100"))
    return f"{means} ({entry['final']['found_optimum']})"


def digits_search(results: Sequence[Any]) -> str:
    """Rows: the reports' metrics; columns: the strategies of the first report, in its order."""
    strategies = list(results[0]["strategies"])
    rows = [[f"`{report['metric']}`", *(_cell(report["strategies"][s]) for s in strategies)] for report in results]
    return md_table(["metric", *strategies], rows)


register(DocTable("digits-search", tuple(str(Path("docs/results") / f"search-nb201-digits-{m.replace('_', '-')}.json")
                                         for m in METRICS), digits_search,
                  "five strategies on the embedded NB201-on-digits table, 12 seeds, both metrics"))

__all__ = ["digits_search"]
