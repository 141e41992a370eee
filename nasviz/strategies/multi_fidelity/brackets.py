"""Successive halving and Hyperband as ask/tell strategies, over any proposer of new architectures.

:class:`BracketSearch` runs the brackets of :mod:`nasviz.fidelity.hyperband` one after another:
``mode="hyperband"`` cycles through Hyperband's brackets ``s = s_max, ..., 0`` (Li et al. 2018,
Alg. 1), ``mode="successive-halving"`` repeats the most aggressive one (Jamieson & Talwalkar 2016,
Alg. 1; Karnin et al. 2013), each bracket with new architectures from its :class:`Proposer`
(uniform random sampling without replacement here, as in both papers; the project's GP in
:mod:`.bohb`). A stage ends when all its evaluations are told; the top-k rule
(:func:`~nasviz.fidelity.hyperband.top_k_decisions`) then promotes the best ``floor(n_i / eta)`` to
the next budget, continuing from the budget they reached, and the step's state lists every
decision (rank, cut, rule) for the page.

Asking while a stage waits for results (a batch, or the overlap of live training) hands out the
next bracket's first stage, so brackets may overlap as in Li et al.'s parallel Hyperband; a
sequential search (one evaluation per step) runs them strictly in turn.

``eta`` defaults to the ladder's consecutive-budget ratio rounded down (at least 2): NAS-Bench-101's
4 -> 12 -> 36 -> 108 gives 3, Li et al.'s default, and NAS-Bench-201's 12 -> 200 gives 16. Optuna's
pruners, SMAC3 and DEHB take an integer factor; every strategy and peer of a benchmark uses this
one (:func:`default_eta`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Protocol, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.candidates import random_pool
from nasviz.errors import ConfigError
from nasviz.fidelity.decisions import RungDecision
from nasviz.fidelity.hyperband import (BracketPlan, hyperband_brackets, successive_halving_bracket, top_k_decisions)
from nasviz.fidelity.ladder import FidelityRequest, Ladder
from nasviz.objectives.base import Evaluation
from nasviz.state import StepState
from nasviz.strategies.multi_fidelity.base import FidelityAware

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace

MODES = ("hyperband", "successive-halving")


def default_eta(ladder: Ladder, eta: float | None = None) -> float:
    """``eta`` if given, else the ladder's budget ratio rounded down, at least 2 (module docstring)."""
    if eta is not None:
        if not eta > 1:
            raise ConfigError(f"eta must be larger than 1, got {eta}")
        return float(eta)
    return float(max(2, math.floor(ladder.ratio() + 1e-9)))


class Proposer(Protocol):
    """Where a bracket's new architectures come from."""

    def propose(self, n: int, exclude: set[Architecture], bracket: int) -> tuple[list[Architecture], dict]:
        """Up to ``n`` architectures not in ``exclude``; and plain notes for the step's state."""


class RandomProposer:
    """Uniform samples without replacement from the domain (or the space), as in Li et al."""

    def __init__(self, space: "SearchSpace", rng: np.random.Generator, domain: Sequence[Architecture] | None) -> None:
        self.space, self.rng, self.domain = space, rng, domain

    def propose(self, n: int, exclude: set[Architecture], bracket: int) -> tuple[list[Architecture], dict]:
        return random_pool(self.space, self.rng, n, exclude=exclude, domain=self.domain), {"proposer": "random"}


@dataclass
class _Bracket:
    """One running bracket: its plan, the stage under way, what is queued, pending and told."""

    number: int
    plan: BracketPlan
    stage: int = 0
    queue: list[FidelityRequest] = field(default_factory=list)
    pending: dict[Architecture, FidelityRequest] = field(default_factory=dict)
    told: list[tuple[Architecture, float | None]] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.stage >= len(self.plan.stages)


class BracketSearch(FidelityAware):
    """Successive halving / Hyperband (module docstring).

    Parameters
    ----------
    space, seed, domain : as every strategy.
    mode : ``"hyperband"`` or ``"successive-halving"``.
    eta : float, optional
        The reduction factor; default :func:`default_eta` of the objective's ladder.
    n_configs : int, optional
        Successive halving only: architectures per bracket at the lowest budget (default
        ``eta^s_max``, Hyperband's most aggressive bracket).
    proposer : callable, optional
        ``proposer(strategy) -> Proposer``, called in ``attach`` (default: random).
    max_brackets : int, optional
        Open at most this many brackets (the multi-fidelity GP's initial design is one); default
        no limit.
    name : str, optional
    """

    def __init__(self, space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None, *,
                 mode: str = "hyperband", eta: float | None = None, n_configs: int | None = None,
                 proposer: Callable[["BracketSearch"], Proposer] | None = None, max_brackets: int | None = None,
                 name: str | None = None) -> None:
        if mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if n_configs is not None and int(n_configs) < 1:
            raise ConfigError(f"n_configs must be at least 1, got {n_configs}")
        self.space, self.seed, self.mode = space, int(seed), mode
        self.domain = list(domain) if domain is not None else None
        self.eta_option, self.n_configs = eta, None if n_configs is None else int(n_configs)
        self.name = name or mode
        self.rng = np.random.default_rng(seed)
        self._make_proposer = proposer or (lambda s: RandomProposer(s.space, s.rng, s.domain))
        self.proposer: Proposer | None = None
        self.eta = 3.0
        self.plans: list[BracketPlan] = []
        self.brackets: list[_Bracket] = []
        self.seen: set[Architecture] = set()
        self.reached: dict[Architecture, float] = {}
        self._opened = 0
        self.max_brackets = max_brackets
        self._exhausted = False
        self._last: list[FidelityRequest] = []
        self._decisions: list[RungDecision] = []
        self._notes: dict = {}

    def attached(self, objective) -> None:
        self.eta = default_eta(self.ladder, self.eta_option)
        n = len(self.ladder)
        self.plans = (hyperband_brackets(n, self.eta) if self.mode == "hyperband"
                      else [successive_halving_bracket(n, self.eta, self.n_configs)])
        self.proposer = self._make_proposer(self)

    # ------------------------------------------------------------------ protocol
    def ask(self, n: int) -> list[FidelityRequest]:
        if n < 1:
            raise ValueError(f"ask needs n >= 1, got {n}")
        out: list[FidelityRequest] = []
        self._notes = {}
        while len(out) < n:
            bracket = next((b for b in self.brackets if b.queue), None)
            if bracket is None:
                bracket = self._open()
                if bracket is None:
                    break
            request = bracket.queue.pop(0)
            bracket.pending[request.arch] = request
            out.append(request)
        self._last = out
        return out

    def tell(self, evaluations: Sequence[Evaluation]) -> None:
        self._decisions = []
        for ev in evaluations:
            bracket = next((b for b in self.brackets if ev.arch in b.pending), None)
            if bracket is None:
                self.seen.add(ev.arch)  # not ours (a replay mismatch): never propose it again
                continue
            request = bracket.pending.pop(ev.arch)
            value = float(ev.value) if ev.ok and ev.value is not None and np.isfinite(ev.value) else None
            bracket.told.append((ev.arch, value))
            self.reached[ev.arch] = request.fidelity
            self.observed(ev, request, value)
            if not bracket.queue and not bracket.pending:
                self._advance(bracket)
        self.brackets = [b for b in self.brackets if not b.done]

    def observed(self, evaluation: Evaluation, request: FidelityRequest, value: float | None) -> None:
        """Called with every result told (the BOHB proposer keeps them per budget)."""

    @property
    def finished(self) -> bool:
        """No bracket is running and no new one may open (``max_brackets`` reached, or no new
        architecture is left)."""
        limit = self._exhausted or (self.max_brackets is not None and self._opened >= self.max_brackets)
        return limit and not self.brackets

    def state(self) -> StepState:
        fmt = self.space.format
        notes = {"eta": self.eta, "ladder": list(self.ladder.values) if self._ladder else [],
                 "brackets_opened": self._opened, **self._notes}
        requests = [{"arch": fmt(r.arch), "fidelity": r.fidelity, "previous": r.previous} for r in self._last]
        return StepState(strategy=self.name, phase="brackets", proposals=tuple(fmt(r.arch) for r in self._last),
                         notes={**notes, "requests": requests}, decisions=tuple(self._decisions))

    # ------------------------------------------------------------------ brackets
    def _open(self) -> _Bracket | None:
        """A new bracket with fresh architectures from the proposer (``None`` once none are left)."""
        if self._exhausted or (self.max_brackets is not None and self._opened >= self.max_brackets):
            return None
        plan = self.plans[self._opened % len(self.plans)]
        archs, notes = self.proposer.propose(plan.n_configs, set(self.seen), self._opened)
        self._notes = {**self._notes, **notes}
        if not archs:
            self._exhausted = True
            return None
        self.seen.update(archs)
        budget = self.ladder.values[plan.stages[0].rung]
        bracket = _Bracket(self._opened, plan, queue=[FidelityRequest(a, budget) for a in archs])
        self._opened += 1
        self.brackets.append(bracket)
        return bracket

    def _advance(self, bracket: _Bracket) -> None:
        """The stage is complete: promote its best to the next budget (or end the bracket)."""
        stage = bracket.plan.stages[bracket.stage]
        budget = self.ladder.values[stage.rung]
        last = bracket.stage == len(bracket.plan.stages) - 1
        told, bracket.told = bracket.told, []
        bracket.stage += 1
        if last:
            return
        nxt = self.ladder.values[bracket.plan.stages[bracket.stage].rung]
        fmt = self.space.format
        decisions = top_k_decisions([(fmt(a), v) for a, v in told], stage.keep, budget, nxt, eta=self.eta,
                                    name=self.name, bracket=bracket.plan.s if self.mode == "hyperband" else None)
        self._decisions.extend(decisions)
        by_string = {fmt(a): a for a, _ in told}
        bracket.queue = [FidelityRequest(by_string[d.arch], nxt, budget) for d in decisions if d.promoted]
        if not bracket.queue:
            bracket.stage = len(bracket.plan.stages)


def hyperband(space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None, *,
              eta: float | None = None) -> BracketSearch:
    """Hyperband with random proposals (Li et al. 2018, Alg. 1; registry entry ``hyperband``)."""
    return BracketSearch(space, seed, domain, mode="hyperband", eta=eta)


def successive_halving(space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None, *,
                       eta: float | None = None, n_configs: int | None = None) -> BracketSearch:
    """Successive halving with random proposals, repeated (Jamieson & Talwalkar 2016, Alg. 1;
    registry entry ``successive-halving``)."""
    return BracketSearch(space, seed, domain, mode="successive-halving", eta=eta, n_configs=n_configs)


__all__ = ["BracketSearch", "MODES", "Proposer", "RandomProposer", "default_eta", "hyperband", "successive_halving"]
