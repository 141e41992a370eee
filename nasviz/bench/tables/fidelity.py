"""Tables of issue 50's multi-fidelity figures (``bench search --tables fidelity``), printed from the
raw reports the protocol in ``docs/benchmarks.md`` names."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from nasviz.bench.tables import DocTable, register
from nasviz.bench.tables.markdown import md_table

#: The peer every candidate's selection score is divided by, and the cost (in full evaluations) the
#: score is read at: the protocol of docs/benchmarks.md ("Which multi-fidelity strategy is the best").
SELECTION_PEER = "optuna-tpe-hyperband"
SELECTION_COST = "30"
#: Added to both regrets so that a table where both found the optimum does not decide by 0 / 0.
SELECTION_OFFSET = 0.01


def _table_label(entry: Mapping[str, Any]) -> str:
    return f"{Path(entry['table']).stem}: {entry['metric']}"


def regret_at_cost(summary: Mapping[str, Any], cost: str) -> float | None:
    """Mean regret of one strategy once it has spent ``cost`` full evaluations (None: no run got there)."""
    at = (summary.get("cost") or {}).get("regret_at_cost", {}).get(cost) or {}
    return at.get("mean")


def selection_scores(report: Mapping[str, Any]) -> dict[str, float | None]:
    """Each candidate's selection score: the mean over the report's tables of
    ``(regret@30 + 0.01) / (peer's regret@30 + 0.01)``; lower is better (None: a table without it)."""
    scores: dict[str, list[float | None]] = {}
    for entry in report["tables"]:
        peer = regret_at_cost(entry["strategies"][SELECTION_PEER], SELECTION_COST)
        for name, summary in entry["strategies"].items():
            mine = regret_at_cost(summary, SELECTION_COST)
            ratio = None if mine is None or peer is None else (mine + SELECTION_OFFSET) / (peer + SELECTION_OFFSET)
            scores.setdefault(name, []).append(ratio)
    return {name: (None if any(r is None for r in rs) else sum(rs) / len(rs)) for name, rs in scores.items()}


def fidelity_selection(results: Sequence[Any]) -> str:
    """Selection seeds: mean regret at 10 / 20 / 30 / 40 full evaluations' cost per table and
    candidate, and each candidate's selection score (the chosen one in bold)."""
    (report,) = results
    scores = selection_scores(report)
    best = min((s, n) for n, s in scores.items() if s is not None)[1]
    costs = ("10", "20", "30", "40")
    rows = []
    for entry in report["tables"]:
        for name, summary in entry["strategies"].items():
            cells = [regret_at_cost(summary, c) for c in costs]
            rows.append([_table_label(entry), f"**`{name}`**" if name == best else f"`{name}`",
                         *("–" if v is None else f"{v:.3f}" for v in cells)])
    rows += [["selection score", f"**`{n}`**" if n == best else f"`{n}`", "", "", "–" if s is None else f"{s:.2f}", ""]
             for n, s in scores.items()]
    return md_table(["table", "strategy", "regret @ cost 10", "@ 20", "@ 30", "@ 40"], rows)


register(DocTable("fidelity-selection", (str(Path("docs/results") / "fidelity-selection.json"),), fidelity_selection,
                  "multi-fidelity strategies on the selection seeds 2000-2009: regret against cost, selection score"))

__all__ = ["fidelity_selection", "regret_at_cost", "selection_scores"]
