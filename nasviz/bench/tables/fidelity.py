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

#: The multi-fidelity strategy the selection seeds chose (the table above); the goal is judged on it.
CHOSEN = "mf-gp"


def _number(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "–"
    return "∞ (a run without a full evaluation)" if value == float("inf") else f"{value:.{digits}f}"


def fidelity_goal(results: Sequence[Any]) -> str:
    """Issue 50's goal per table and multi-fidelity strategy (the chosen one in bold): the default's
    mean regret after 100 evaluations and their mean cost, the strategy's mean regret at a third of
    that cost, at the cost of 30 full evaluations against the peer's, and whether each check holds."""
    (report,) = results
    rows = []
    for entry in report["tables"]:
        for name, goal in (entry.get("fidelity_goal") or {}).items():
            rows.append([_table_label(entry), f"**`{name}`**" if name == CHOSEN else f"`{name}`",
                         _number(goal["default_regret"]), _number(goal["default_cost"], 1),
                         _number(goal["candidate_regret_at_third"]), "yes" if goal["one_third_met"] else "no",
                         _number(goal["candidate_regret_at_30"]), _number(goal["peer_regret_at_30"]),
                         _number(goal["ratio_to_peer"], 2), "yes" if goal["equal_cost_met"] else "no"])
    return md_table(["table", "strategy", "default: regret @100", "its cost", "regret @ a third of it", "1/3 met",
                     "regret @ cost 30", "peer @ cost 30", "ratio", "0.7× met"], rows)


def fidelity_costs(results: Sequence[Any]) -> str:
    """Every strategy of the goal's runs: mean ± s.e. regret at the cost of 10, 20, 30 and 40 full
    evaluations, the cost spent and the evaluations made (means over seeds)."""
    (report,) = results
    rows = []
    for entry in report["tables"]:
        for name, summary in entry["strategies"].items():
            cost = summary.get("cost") or {}
            cells = []
            for c in ("10", "20", "30", "40"):
                at = cost.get("regret_at_cost", {}).get(c) or {}
                mean = at.get("mean")
                cells.append("–" if mean is None else _number(mean) if mean == float("inf")
                             else f"{mean:.3f} ± {at.get('se', 0.0):.3f}")
            rows.append([_table_label(entry), f"`{name}`", *cells, _number(cost.get("cost_spent_mean"), 1),
                         _number(cost.get("evaluations_mean"), 0)])
    return md_table(["table", "strategy", "regret @ cost 10", "@ 20", "@ 30", "@ 40", "cost spent",
                     "evaluations"], rows)


register(DocTable("fidelity-goal", (str(Path("docs/results") / "fidelity-goal.json"),), fidelity_goal,
                  "issue 50's goal on seeds 0-19: a third of the default's cost, 0.7x the peer at equal cost"))
register(DocTable("fidelity-costs", (str(Path("docs/results") / "fidelity-goal.json"),), fidelity_costs,
                  "every strategy of the multi-fidelity goal runs: regret against cumulative cost"))

def fidelity_step(results: Sequence[Any]) -> str:
    """One step's wall and CPU seconds (median over seeds, and the slowest) once the search holds
    ``n_observations`` evaluations, per strategy: issue 50's step-overhead goal."""
    (report,) = results
    rows = [[f"`{name}`", f"{s['step_seconds_median']:.3f}", f"{s['step_seconds_max']:.3f}",
             f"{s['step_cpu_seconds_median']:.3f}"] for name, s in report["strategies"].items()]
    return md_table([f"strategy (step at {report['n_observations']} observations, {report['repeats']} seeds)",
                     "wall s (median)", "wall s (max)", "CPU s (median)"], rows)


register(DocTable("fidelity-step", (str(Path("docs/results") / "fidelity-step.json"),), fidelity_step,
                  "issue 50's step overhead: one mf-gp step against one Optuna GPSampler step at 100 observations"))

def _share(stage: Mapping[str, Any]) -> str:
    """A survival share with the cells kept, and its ceiling where fewer places than top cells are kept."""
    text = f"{stage['share']:.2f} ({stage['kept']:,} kept"
    return text + (f"; at most {stage['ceiling']:.2f})" if stage["ceiling"] < 1 else ")")


def fidelity_ranks(results: Sequence[Any]) -> str:
    """Each lower rung of each table with fidelities against its full budget (``bench fidelity-ranks``):
    the full-budget span of its top cells, the rung's cost and a promoted cell's, rank correlations over all cells and within the top 5 % / 1 %,
    the top 1 % kept by one and two successive-halving stages, the best cell's rank at the rung."""
    (report,) = results
    top = [f"{f:g}" for f in report["top_fractions"]]
    rows = []
    for entry in report["tables"]:
        spans = ", ".join(f"top {100 * float(f):g} % within {v:.2f}" for f, v in entry["top_span"].items())
        label = (f"{Path(entry['table']).stem}: {entry['metric']} ({entry['cells']:,} cells, {entry['continuation']}, "
                 f"eta {entry['eta']:g}; {spans})")
        for rung in entry["rungs"]:
            within = [rung["spearman_top"].get(f) for f in top]
            rows.append([label, f"{rung['fidelity']:g} of {entry['ladder'][-1]:g}", f"{rung['cost']:.3f}",
                         f"{rung['promoted_cost']:.3f}", f"{rung['spearman']:.3f}", f"{rung['kendall']:.3f}",
                         *("–" if v is None else f"{v:.3f}" for v in within), _share(rung["survival"]["one_stage"]),
                         _share(rung["survival"]["two_stages"]), f"{rung['optimum_rank']:,}"])
    survive = f"{100 * report['survive_top']:g} %"
    return md_table(["table", "epochs", "cost", "promoted", "Spearman", "Kendall",
                     *(f"Spearman in top {100 * float(f):g} %" for f in top),
                     f"top {survive} kept, 1 stage", "2 stages", "best cell's rank"], rows)


register(DocTable("fidelity-ranks", (str(Path("docs/results") / "fidelity-ranks.json"),), fidelity_ranks,
                  "issue 50: how each lower budget ranks the cells, what successive halving keeps, what it costs"))

__all__ = ["CHOSEN", "fidelity_ranks", "fidelity_step", "fidelity_costs", "fidelity_goal", "fidelity_selection", "regret_at_cost", "selection_scores"]
