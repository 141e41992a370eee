"""Tables of issue 46's figures: the default strategy against random search on the embedded
default table (``bench search`` with no table: NAS-Bench-201 CIFAR-10, 200 epochs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from nasviz.bench.tables import DocTable, register
from nasviz.bench.tables.markdown import md_table


def default_vs_random(results: Sequence[Any]) -> str:
    """Regret after 25 / 50 / 100 evaluations (mean ± s.e. at the budget) and runs that found the optimum."""
    (report,) = results
    rows = []
    for name, summary in report["strategies"].items():
        means = summary["regret_mean"]
        final = summary["final"]
        rows.append([f"`{name}`", f"{means['25']:.3f}", f"{means['50']:.3f}",
                     f"{final['mean']:.3f} ± {final['se']:.3f}", f"{final['median']:.3f}",
                     f"{final['found_optimum']} of {final['runs']}"])
    return md_table(["strategy", "regret @25", "regret @50", "regret @100 (mean ± s.e.)", "median @100",
                     "found the optimum"], rows)


register(DocTable("default-vs-random", (str(Path("docs/results") / "default-vs-random-nb201-cifar10.json"),),
                  default_vs_random, "the default strategy against random search on the embedded default table"))

__all__ = ["default_vs_random"]
