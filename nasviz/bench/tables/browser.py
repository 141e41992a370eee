"""What a visitor waits for in a real browser (``bench browser``, issue 22's targets, issue 46's
default table): each figure's target, its cold and warm medians and every repeat."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from nasviz.bench.tables import DocTable, register
from nasviz.bench.tables.markdown import md_table

#: (label, phase key, figure key, target key): the rows, in a visitor's order
ROWS = (
    ("first usable page", "first_page", "first_page_cold"),
    ("first evaluation after Start", "first_evaluation", "first_evaluation"),
    ("tab switch during a live run", "tab_switch", "tab_switch"),
    ("Stop acknowledged (toast)", "stop_ack", "stop_ack"),
    ("status 'stopped' shown", "stop_status", None),
)


def _cell(summary: dict[str, Any] | None) -> str:
    if not summary:
        return ""
    runs = ", ".join(f"{r:.2f}" for r in summary["runs"])
    return f"{summary['median']:.2f} ({runs})"


def browser_latency(results: Sequence[Any]) -> str:
    """One row per figure: target, cold median (repeats), warm median (repeats), met."""
    (report,) = results
    targets = report["targets"]
    rows = []
    for label, key, target in ROWS:
        goal = targets.get(target) if target else None
        rows.append([label, f"{goal['target']:g}" if goal else "-", _cell(report["cold"].get(key)),
                     _cell(report["warm"].get(key)), ("yes" if goal["met"] else "**no**") if goal else "-"])
    compare, goal = report["compare"], targets["compare"]
    rows.append([f"Compare with a {report['compare_evaluations']:,}-evaluation run, new tab", f"{goal['target']:g}",
                 _cell(compare["cold"]), _cell(compare["warm"]), "yes" if goal["met"] else "**no**"])
    rows.append([f"Compare with a {report['compare_evaluations']:,}-evaluation run, from the sidebar", "-", "",
                 _cell(compare["in_app"]), "-"])
    if "floor" in report:  # results made before the floor was measured have no such row
        rows.append(["a page of one small Plotly figure, new tab (the floor)", "-", _cell(report["floor"]["cold"]),
                     _cell(report["floor"]["warm"]), "-"])
    return md_table(["what", "target (s)", "cold: median (runs)", "warm: median (runs)", "met"], rows)


register(DocTable("browser-latency", (str(Path("docs/results") / "browser.json"),), browser_latency,
                  "what a visitor waits for in a real browser, on the default NAS-Bench-201 table"))

__all__ = ["browser_latency"]
