"""One BO step's time at 100 observations (``bench search --time-step-at 100``): the default, the
default with the stall condition met (it scores only the best cell's unevaluated neighbours) and
Optuna's GPSampler, median of the seeds, one table per report."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from nasviz.bench.tables import DocTable, register
from nasviz.bench.tables.markdown import md_table

#: The docs' names of the tables' files.
TABLE_NAMES = {"nb201_test_accuracy.csv": "NB201", "nb101_hash_20k.csv": "NB101 20k", "nb101_20k.csv": "NB101 20k"}

#: Column headings of the strategies, in the reports' order.
STRATEGIES = {"bo-tw2g-hamming-ei": "default",
              "bo-tw2g-hamming-ei:stall_patience=20:stall_action=neighbours":
                  "`stall_patience=20:stall_action=neighbours` (stalled step)",
              "optuna-gp": "Optuna GPSampler"}


def stalled_step(results: Sequence[Any]) -> str:
    """One row per report: the median step seconds of each strategy (the stalled step's pool size)."""
    rows = []
    for report in results:
        name = TABLE_NAMES.get(Path(report["table"]).name, Path(report["table"]).name)
        cells = []
        for key in STRATEGIES:
            entry = report["strategies"][key]
            pool = f" ({entry['pool_size']} cells)" if "stall" in key else ""
            cells.append(f"{entry['step_seconds_median']:.3f} s{pool}")
        rows.append([f"{name} {report['metric']}", *cells])
    return md_table(["table", *STRATEGIES.values()], rows)


register(DocTable("stalled-step", tuple(str(Path("docs/results") / f"step-stalled-{t}.json")
                                        for t in ("nb201-cifar10", "nb101-20k")), stalled_step,
                  "a BO step at 100 observations: the default, its stalled step and GPSampler"))

__all__ = ["stalled_step"]
