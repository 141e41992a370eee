"""The GP surrogate's rank correlation per kernel (``bench surrogate``, NAS-BOWL's Table 1
protocol): Spearman's rho (mean ± standard error over the splits) on two metrics, and the coverage
of the 95% predictive interval."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from nasviz.bench.tables import DocTable, register
from nasviz.bench.tables.markdown import bold, md_table

#: How the README names a kernel given on the command line.
LABELS = {"tw": "tw (2-gram, anchored)", "wl": "wl (out-neighbours, h ≤ 2)",
          "tw:anchored=False": "tw (2-gram, App. F grams: `tw:anchored=False`)"}


def _rho(entry: dict[str, Any], best: bool) -> str:
    return bold(f"{entry['spearman_mean']:.3f} ± {entry['spearman_se']:.3f}", best)


def surrogate_kernels(results: Sequence[Any]) -> str:
    """One row per kernel, in the command's order; one column of rho per report (the best in bold)
    and the coverages of all reports."""
    reports = list(results)
    metrics = [r["metric"] for r in reports]
    best = [max(r["kernels"].values(), key=lambda e: e["spearman_mean"]) for r in reports]
    rows = []
    for name in reports[0]["kernels"]:
        entries = [r["kernels"][name] for r in reports]
        rows.append([LABELS.get(name, name), *(_rho(e, e is b) for e, b in zip(entries, best)),
                     " / ".join(f"{e['coverage_95']:.2f}" for e in entries)])
    return md_table(["kernel", *metrics, f"coverage ({' / '.join(m.replace('cifar', 'c') for m in metrics)})"], rows)


register(DocTable("surrogate-nb201", tuple(str(Path("docs/results") / f"surrogate-nb201-{m}.json")
                                           for m in ("cifar10", "cifar100")), surrogate_kernels,
                  "the GP's Spearman rank correlation per kernel on NB201's test accuracies (50 train, 400 test, 20 splits)"))

__all__ = ["surrogate_kernels"]
