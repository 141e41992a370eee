"""Successive halving and Hyperband over a fidelity ladder: which trials run at which budget.

**Successive halving** (Jamieson & Talwalkar 2016, Alg. 1, after Karnin et al. 2013's sequential
halving): evaluate ``n`` configurations at a small budget, keep the best ``1/eta`` of them, evaluate
those at ``eta`` times the budget, and so on up to the full budget.

**Hyperband** (Li et al. 2018, Alg. 1) hedges over how aggressive to be: with ``R`` the full
budget in units of the smallest and ``s_max = floor(log_eta R)``, bracket ``s = s_max, ..., 0``
starts ``n = ceil((s_max + 1) / (s + 1) * eta^s)`` configurations at budget ``r = R eta^-s`` and
runs successive halving: stage ``i = 0..s`` evaluates ``n_i = floor(n eta^-i)`` configurations at
``r_i = r eta^i`` and keeps the ``floor(n_i / eta)`` best.

Here the budgets are a :class:`~nasviz.fidelity.Ladder`'s rungs rather than ``r eta^i``: the tables
hold the budgets they hold (NAS-Bench-101: 4, 12, 36, 108 epochs, exactly ``108 * 3^-k``; the
NAS-Bench-201 tables: 12 and 200), so ``s_max = len(ladder) - 1`` and stage ``i`` of bracket
``s`` runs at rung ``s_max - s + i``. On a geometric ladder with ratio ``eta`` this is Alg. 1
exactly; on another ladder the counts are Alg. 1's and the budgets the ladder's (set ``eta`` to the
ladder's ratio, :meth:`~nasviz.fidelity.Ladder.ratio`, to keep Alg. 1's balance of cost per stage).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from nasviz.fidelity.decisions import PROMOTE, STOP, RungDecision


@dataclass(frozen=True)
class Stage:
    """One stage of a bracket: ``n`` configurations evaluated at ladder rung ``rung``, of which
    the best ``keep`` go on to the next stage (0 at the last stage)."""

    rung: int
    n: int
    keep: int


@dataclass(frozen=True)
class BracketPlan:
    """Bracket ``s`` of Hyperband: its stages, lowest budget first."""

    s: int
    stages: tuple[Stage, ...]

    @property
    def n_configs(self) -> int:
        return self.stages[0].n


def bracket_plan(n_rungs: int, eta: float, s: int) -> BracketPlan:
    """Bracket ``s`` (``0 <= s < n_rungs``) of Li et al. 2018 Alg. 1 on a ladder of ``n_rungs``
    budgets (module docstring): ``n = ceil((s_max + 1) / (s + 1) * eta^s)`` configurations,
    ``n_i = floor(n eta^-i)`` at stage ``i``, the best ``floor(n_i / eta)`` (at least one) kept."""
    if n_rungs < 1:
        raise ValueError(f"a ladder has at least one rung, got {n_rungs}")
    if not eta > 1:
        raise ValueError(f"eta must be larger than 1, got {eta}")
    s_max = n_rungs - 1
    if not 0 <= s <= s_max:
        raise ValueError(f"bracket s must be in 0..{s_max}, got {s}")
    n = math.ceil((s_max + 1) / (s + 1) * eta ** s - 1e-9)
    stages = []
    for i in range(s + 1):
        n_i = max(1, math.floor(n * eta ** -i + 1e-9))
        keep = 0 if i == s else max(1, math.floor(n_i / eta + 1e-9))
        stages.append(Stage(rung=s_max - s + i, n=n_i, keep=keep))
    return BracketPlan(s, tuple(stages))


def hyperband_brackets(n_rungs: int, eta: float) -> list[BracketPlan]:
    """One Hyperband iteration: brackets ``s = s_max, ..., 0`` (Li et al. 2018, Alg. 1)."""
    return [bracket_plan(n_rungs, eta, s) for s in range(n_rungs - 1, -1, -1)]


def successive_halving_bracket(n_rungs: int, eta: float, n_configs: int | None = None) -> BracketPlan:
    """Successive halving from the lowest rung (Jamieson & Talwalkar 2016, Alg. 1 with a reduction
    factor ``eta``): Hyperband's most aggressive bracket, ``s = s_max``, or ``n_configs``
    configurations at the lowest rung when given (each stage keeps ``floor(n_i / eta)``)."""
    plan = bracket_plan(n_rungs, eta, n_rungs - 1)
    if n_configs is None:
        return plan
    if n_configs < 1:
        raise ValueError(f"n_configs must be at least 1, got {n_configs}")
    stages, n = [], int(n_configs)
    for i, stage in enumerate(plan.stages):
        last = i == len(plan.stages) - 1
        keep = 0 if last else max(1, math.floor(n / eta + 1e-9))
        stages.append(Stage(stage.rung, n, keep))
        n = keep
    return BracketPlan(plan.s, tuple(stages))


def top_k_decisions(results: Sequence[tuple[str, float | None]], keep: int, fidelity: float, to: float | None, *,
                    eta: float, name: str, bracket: int | None = None) -> list[RungDecision]:
    """The top-k rule at one stage: the ``keep`` best of ``results`` (``(arch, value)`` pairs in
    the order they were evaluated; a failed evaluation has value ``None``) are promoted to budget
    ``to``, the rest stopped. Ties go to the earlier evaluation. One decision per result, in rank
    order; the threshold is the ``keep``-th best value."""
    order = sorted(range(len(results)), key=lambda i: (results[i][1] is None, -(results[i][1] or 0.0), i))
    ranked = [results[i] for i in order]
    finite = [v for _, v in ranked if v is not None]
    threshold = finite[min(keep, len(finite)) - 1] if finite and keep > 0 else None
    out = []
    for rank, (arch, value) in enumerate(ranked, start=1):
        promoted = rank <= keep and value is not None
        out.append(RungDecision(arch=arch, fidelity=fidelity, action=PROMOTE if promoted else STOP, rule="top-k",
                                rank=rank, of=len(results), value=float("nan") if value is None else float(value),
                                threshold=threshold, keep=keep, eta=eta, to=to if promoted else None, name=name,
                                bracket=bracket))
    return out


__all__ = ["BracketPlan", "Stage", "bracket_plan", "hyperband_brackets", "successive_halving_bracket",
           "top_k_decisions"]
