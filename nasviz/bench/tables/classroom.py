"""The classroom load test (issue 47): page latency of visitors who only browse, alone and while
other visitors run paced searches and heavy Kernels requests (``bench classroom``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from nasviz.bench.tables import DocTable, register
from nasviz.bench.tables.markdown import md_table


def classroom(results: Sequence[Any]) -> str:
    """One row per page: p50 / p95 seconds alone and in the class, the p95 ratio, pages lost."""
    (report,) = results
    rows = []
    for page, alone in report["alone"].items():
        together = report["class"][page]
        rows.append([page, f"{alone['p50']:.2f}", f"{alone['p95']:.2f}", f"{together['p50']:.2f}",
                     f"{together['p95']:.2f}", f"{report['ratio_p95'][page]:.1f}x",
                     f"{together['lost']} of {together['n'] + together['lost']}"])
    return md_table(["page", "alone p50 (s)", "alone p95 (s)", "class p50 (s)", "class p95 (s)",
                     "p95 class / alone (goal <= 2x)", "pages lost in the class"], rows)


def classroom_with_crowd(results: Sequence[Any]) -> str:
    """One row per page: p95 seconds alone, in the crowd (the browsing visitors at once, no heavy
    ones) and in the class, with the class's p95 against each, and pages lost."""
    (report,) = results
    rows = []
    for page, alone in report["alone"].items():
        crowd, together = report["crowd"][page], report["class"][page]
        lost = sum(report[phase][page]["lost"] for phase in ("alone", "crowd", "class"))
        rows.append([page, f"{alone['p50']:.2f}", f"{alone['p95']:.2f}", f"{crowd['p95']:.2f}",
                     f"{together['p50']:.2f}", f"{together['p95']:.2f}", f"{report['ratio_p95'][page]:.1f}x",
                     f"{report['ratio_p95_to_crowd'][page]:.1f}x", str(lost)])
    return md_table(["page", "alone p50 (s)", "alone p95 (s)", "crowd p95 (s)", "class p50 (s)", "class p95 (s)",
                     "class / alone p95 (goal <= 2x)", "class / crowd p95", "pages lost"], rows)


register(DocTable("classroom", (str(Path("docs/results") / "classroom.json"),), classroom,
                  "browsing visitors' page latency alone and in a class of 20 with searches and heavy requests"))
register(DocTable("classroom-protocol", (str(Path("docs/results") / "classroom-protocol.json"),),
                  classroom_with_crowd,
                  "the same over Streamlit's protocol (no browser), with the browsing visitors alone as a crowd"))

__all__ = ["classroom", "classroom_with_crowd"]
