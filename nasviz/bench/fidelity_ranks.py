"""How well a table's lower budgets rank its cells: ``python -m nasviz bench fidelity-ranks``.

A multi-fidelity search saves cost only as far as a cheap budget ranks the cells as the full budget
does, *where it matters*: successive halving evaluates ``n`` cells at a rung and keeps the best
``floor(n / eta)`` of them (:mod:`nasviz.fidelity.hyperband`), so what it can keep is decided by how
the rung orders the few cells at the top of the full budget, and what it saves by the rung's cost.
For each table with fidelities (issue 50's protocol ``fidelity``, :mod:`nasviz.bench.protocol`, or
``--table/--metric/--fidelity``) and each rung below the full budget, over the cells that have a
value at every rung:

``spearman``, ``kendall``
    Spearman's rho and Kendall's tau-b between the rung's and the full budget's values of all
    cells (:mod:`scipy.stats`): how the rung orders the table as a whole. Most cells are far from
    the optimum, so this can be high while the top is shuffled.
``spearman_top``
    Spearman's rho within the full budget's top 5 % and top 1 % of cells (``--top-fractions``):
    whether the rung still tells the good cells apart. Near 0 means that, among the cells a search
    is choosing between at the end, the rung's order is about as good as a random one.
``survival``
    The share of the full budget's top 1 % (``--survive-top``) that survive keeping the best cells
    by the rung's value: ``one_stage`` keeps what one successive-halving stage keeps of all the
    cells (``floor(n / eta)``), ``two_stages`` what two stages keep (``floor(floor(n / eta) /
    eta)``, about ``n / eta^2``), with the protocol's ``eta`` (the strategies' ``default_eta``: the
    ladder's budget ratio rounded down, at least 2). Cells tied at the cut survive with the share
    of the places left (what a random order of evaluation, which breaks the top-k rule's ties,
    gives on average). ``ceiling`` is the most the share can be: the places kept over the top
    cells, at most 1.
``optimum_rank``
    The full budget's best cell's rank by the rung's value (1: the best; ties with it count as
    below it; the best of several cells tied for the optimum).
``cost``
    A rung evaluation's cost in full evaluations under the table's cost model
    (:class:`~nasviz.fidelity.CostModel`; it is the same fraction for every cell), and
    ``promoted_cost``: what a cell evaluated at the rung and then at the full budget costs in
    all (1 under ``resume``, where training continues; ``1 + cost`` under ``restart``, where the
    rung's run is lost). The whole ladder can save at most ``1 / cost`` of the lowest rung.

Each table's entry also gives the ladder, its continuation, ``eta``, the number of cells, the
full budget's resolution (``decimals``: the most decimals the table writes, :mod:`nasviz.rounding`),
how many distinct full-budget values the cells have, and ``top_span``: for each top fraction (and
``--survive-top``'s), the optimum minus the worst of those cells at the full budget, in the metric's
units. A mean regret below a fraction's span is decided among that fraction's cells: there, what
the rung can offer is its ``spearman_top``. Prints::

    {"top_fractions": [0.05, 0.01], "survive_top": 0.01, "tables": [{"table": "nb101_hash_20k.csv",
     "metric": "valid_accuracy_108", "ladder": [4, 12, 36, 108], "continuation": "restart", "eta": 3,
     "cells": 20001, "rungs": [{"fidelity": 4.0, "spearman": ..., "spearman_top": {"0.05": ...},
     "survival": {"top_cells": 201, "one_stage": {...}, "two_stages": {...}}, "cost": ...}, ...]}]}
"""

from __future__ import annotations

import argparse
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np

DESCRIPTION = ("how well each lower budget of a table with fidelities ranks its cells: Spearman / Kendall with the "
               "full budget, within its top cells, the top cells successive halving keeps, each rung's cost")

#: The full budget's top fractions the rank correlation is also measured within.
TOP_FRACTIONS = (0.05, 0.01)
#: The full budget's top fraction whose survival is counted.
SURVIVE_TOP = 0.01


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from nasviz.cli_common import add_space_argument

    parser.add_argument("--tables", help="table/metric pairs with their ladders: a protocol (default: fidelity, each "
                        "table with its ladder) or TABLE:METRIC[@SPACE],... (with --fidelity)")
    parser.add_argument("--table", type=Path, help="one table instead of --tables (with --metric and --fidelity)")
    parser.add_argument("--metric", help="the full budget's metric of --table (default: the table's first metric)")
    parser.add_argument("--fidelity", help="the ladder: auto, or BUDGET=COLUMN[@TABLE],...[;resume|;restart] "
                        "(default with --table: auto)")
    add_space_argument(parser, help="search space of --table and of pairs given without @SPACE (default: nb201)")
    parser.add_argument("--top-fractions", default=",".join(f"{f:g}" for f in TOP_FRACTIONS),
                        help="Spearman within these top fractions of cells by the full budget (default: 0.05,0.01)")
    parser.add_argument("--survive-top", type=float, default=SURVIVE_TOP,
                        help="count the survival of this top fraction of cells by the full budget (default: 0.01)")


def top_mask(values: np.ndarray, fraction: float) -> np.ndarray:
    """The cells at least as good as the ``ceil(fraction * n)``-th best of ``values`` (higher is
    better; every cell tied at the cut is in)."""
    m = max(1, math.ceil(fraction * len(values) - 1e-9))
    cut = np.sort(values)[::-1][min(m, len(values)) - 1]
    return values >= cut


def spearman_within(rung: np.ndarray, full: np.ndarray, mask: np.ndarray) -> float | None:
    """Spearman's rho of the rung and the full budget over the cells of ``mask`` (None: fewer than
    three cells, or either side constant there)."""
    from scipy.stats import spearmanr

    a, b = rung[mask], full[mask]
    if len(a) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return float(spearmanr(a, b).statistic)


def kept_share(rung: np.ndarray, targets: np.ndarray, keep: int) -> float:
    """The expected share of the cells of ``targets`` among the ``keep`` best by ``rung``: a
    cell above the ``keep``-th best value is kept, one tied with it with the share of the places
    left to the tied cells (a random order among them)."""
    cut = np.sort(rung)[::-1][keep - 1]
    above, tied = rung > cut, rung == cut
    chance = np.where(above, 1.0, np.where(tied, (keep - above.sum()) / tied.sum(), 0.0))
    return float(chance[targets].mean())


def stage_keeps(n: int, eta: float) -> tuple[int, int]:
    """What one and two successive-halving stages keep of ``n`` cells (the strategies' plan,
    :func:`~nasviz.fidelity.hyperband.successive_halving_bracket`)."""
    from nasviz.fidelity.hyperband import successive_halving_bracket

    stages = successive_halving_bracket(3, eta, n_configs=n).stages
    return stages[0].keep, stages[1].keep


def optimum_rank(rung: np.ndarray, full: np.ndarray) -> int:
    """The rank by ``rung`` (1: the best) of the best cell by ``full``: one more than the cells
    strictly above it; of several cells tied for the optimum, the best rank."""
    best = np.flatnonzero(full == full.max())
    return int(1 + min((rung > rung[i]).sum() for i in best))


def _none(value: float) -> float | None:
    return None if not np.isfinite(value) else float(value)


def rung_figures(rung: np.ndarray, full: np.ndarray, eta: float, fractions: tuple[float, ...],
                 survive_top: float) -> dict[str, Any]:
    """One lower rung's ranking figures against the full budget (module docstring), over cells
    with a value at both (``rung`` and ``full`` of equal length, higher is better)."""
    from scipy.stats import ConstantInputWarning, kendalltau, spearmanr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantInputWarning)
        rho, tau = spearmanr(rung, full).statistic, kendalltau(rung, full).statistic
    targets = top_mask(full, survive_top)
    survival: dict[str, Any] = {"top_cells": int(targets.sum())}
    for name, keep in zip(("one_stage", "two_stages"), stage_keeps(len(full), eta)):
        survival[name] = {"kept": keep, "share": kept_share(rung, targets, keep),
                          "ceiling": min(1.0, keep / int(targets.sum()))}
    return {"spearman": _none(rho), "kendall": _none(tau),
            "spearman_top": {f"{f:g}": spearman_within(rung, full, top_mask(full, f)) for f in fractions},
            "survival": survival, "optimum_rank": optimum_rank(rung, full)}


def table_figures(objective: Any, fractions: tuple[float, ...] = TOP_FRACTIONS,
                  survive_top: float = SURVIVE_TOP) -> dict[str, Any]:
    """Every lower rung's figures on one table: a
    :class:`~nasviz.objectives.fidelity_table.FidelityTableObjective`'s values, ladder and cost model."""
    from nasviz.strategies.multi_fidelity.brackets import default_eta

    values = np.asarray(objective.values, dtype=float)
    values = values[:, np.isfinite(values).all(axis=0)]  # the cells every rung has
    full, ladder, model = values[-1], objective.ladder, objective.cost_model
    eta = default_eta(ladder)
    unit = objective.full_cost_unit()
    rungs = []
    for k, budget in enumerate(ladder.values[:-1]):
        cost = model.cost(unit, budget, ladder.top) / unit
        promoted = cost + model.cost(unit, ladder.top, ladder.top, previous=budget) / unit
        rungs.append({"fidelity": budget, "column": objective.rungs[k].column,
                      "table": Path(objective.rungs[k].table or objective.table.source).name,
                      **rung_figures(values[k], full, eta, fractions, survive_top),
                      "cost": cost, "promoted_cost": promoted})
    decimals = objective.table.decimals.get(objective.metric)
    spans = {f"{f:g}": float(full.max() - full[top_mask(full, f)].min()) for f in sorted({*fractions, survive_top})}
    return {"ladder": list(ladder.values), "continuation": model.continuation, "eta": eta,
            "cells": int(values.shape[1]), "decimals": decimals, "distinct_full_values": int(len(np.unique(full))),
            "top_span": spans,
            "cost_unit": objective.cost_unit, "full_cost_unit": unit, "rungs": rungs}


def _fractions(args: argparse.Namespace) -> tuple[tuple[float, ...], float]:
    from nasviz.errors import InputError

    try:
        fractions = tuple(float(f) for f in str(args.top_fractions).split(",") if f.strip())
    except ValueError:
        raise InputError(f"--top-fractions must be comma-separated numbers, got {args.top_fractions!r}") from None
    if not all(0 < f <= 1 for f in (*fractions, args.survive_top)):
        raise InputError("--top-fractions and --survive-top must lie in (0, 1]")
    return fractions, float(args.survive_top)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from nasviz.bench.protocol import TablePair
    from nasviz.bench.search import resolve_pairs, table_pairs
    from nasviz.objectives.fidelity_table import AUTO, FidelityTableObjective

    fractions, survive_top = _fractions(args)
    if not args.tables and args.table is None:
        args.tables = "fidelity"
    pairs = [TablePair(p.table, p.metric, p.space, p.fidelity or AUTO) for p in table_pairs(args)]
    out: dict[str, Any] = {"top_fractions": list(fractions), "survive_top": survive_top, "tables": []}
    for pair, _, table in resolve_pairs(pairs):
        objective = FidelityTableObjective(table, pair.metric, pair.fidelity)
        out["tables"].append({"table": Path(pair.table).name, "metric": pair.metric, "space": pair.space,
                              "fidelity": objective.spec.text(), **table_figures(objective, fractions, survive_top)})
    return out
