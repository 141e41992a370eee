"""Tables of the NB201 figures: the default strategy against random search on the embedded default
table (``bench search`` with no table: NAS-Bench-201 CIFAR-10, 200 epochs, issue 46), and ``bo-wl-ei``
measured again on the shared table after its gradient scaling changed (issue 48)."""

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

def bo_wl_ei_rms(results: Sequence[Any]) -> str:
    """``bo-wl-ei`` on the shared NB201 table after the RMS gradient scaling: one row per metric,
    regret after 25 / 50 / 100 evaluations, mean ± s.e. and median at the budget, runs that found the optimum."""
    rows = []
    for report in results:
        for name, summary in report["strategies"].items():
            means, final = summary["regret_mean"], summary["final"]
            rows.append([f"`{name}`", report["metric"], f"{means['25']:.3f}", f"{means['50']:.3f}",
                         f"{final['mean']:.3f} ± {final['se']:.3f}", f"{final['median']:.3f}",
                         f"{final['found_optimum']} of {final['runs']}"])
    return md_table(["strategy", "metric", "regret @25", "regret @50", "regret @100 (mean ± s.e.)", "median @100",
                     "found the optimum"], rows)


register(DocTable("bo-wl-ei-rms", tuple(str(Path("docs/results") / f"bo-wl-ei-rms-nb201-{m}.json")
                                        for m in ("cifar10", "cifar100")),
                  bo_wl_ei_rms, "bo-wl-ei on the shared NB201 table after the RMS gradient scaling"))

__all__ = ["bo_wl_ei_rms", "default_vs_random"]
