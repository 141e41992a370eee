"""Peers: Optuna's TPE with its HyperbandPruner or SuccessiveHalvingPruner, in a real Optuna study.

This is what an Optuna user writes for a multi-fidelity search: each trial suggests the cell's
categorical parameters, trains it budget by budget, reports the value at each budget
(``trial.report(value, step=budget)``) and stops when ``trial.should_prune()`` says so. Here the
study is driven through ask/tell so that the runner evaluates the budgets with the same objective
and the same cost model as every nasviz strategy: a trial asks for the ladder's lowest budget,
then, after each report the pruner lets pass, for the next one; a pruned trial is told
``PRUNED`` (TPE then uses its last reported value, Optuna's own treatment), a trial that reaches
the full budget is told its value.

Pruners (Optuna 5): ``HyperbandPruner(min_resource, max_resource, reduction_factor)`` (Li et al.
2018 over Optuna's asynchronous successive halving, ASHA: Li et al. 2020) and
``SuccessiveHalvingPruner(min_resource, reduction_factor, min_early_stopping_rate=0)`` (ASHA), with
``min_resource`` the ladder's lowest budget, ``max_resource`` its top and ``reduction_factor`` the
same ``eta`` every strategy of a benchmark uses (:func:`~.brackets.default_eta`, an integer).
Optuna's rungs lie at ``min_resource * eta^k``; the reports are at the ladder's budgets, so on
NAS-Bench-101 (4, 12, 36, 108, eta 3) they are the same, on NAS-Bench-201 (12, 200, eta 16) the
one check is at 12 epochs.

As in :mod:`nasviz.strategies.optuna_peer`, repeats are trials (TPE may propose a cell again; it is
evaluated again and paid for), and on a table holding part of the space a proposal outside it is
told ``FAIL`` and replaced by its nearest unproposed row, which is enqueued and asked as a trial of
its own (``study.enqueue_trial``), so it is reported and pruned like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from nasviz.arch import Architecture
from nasviz.errors import ConfigError
from nasviz.fidelity.decisions import PROMOTE, STOP, RungDecision
from nasviz.fidelity.ladder import FidelityRequest
from nasviz.objectives.base import Evaluation
from nasviz.state import StepState
from nasviz.strategies.multi_fidelity.base import FidelityAware
from nasviz.strategies.multi_fidelity.brackets import default_eta
from nasviz.strategies.optuna_peer import MAX_INVALID, DomainRows, parameter_distributions, require_optuna

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace

PRUNERS = {"hyperband": "HyperbandPruner", "sh": "SuccessiveHalvingPruner"}


@dataclass
class _Trial:
    """A running Optuna trial: its cell and the ladder rung it was last asked for."""

    trial: Any
    arch: Architecture
    rung: int
    waiting: bool = True


class OptunaPruned(FidelityAware):
    """TPE + an Optuna pruner over the objective's ladder (module docstring).

    Parameters
    ----------
    pruner : ``"hyperband"`` or ``"sh"``
    eta : float, optional
        The reduction factor (rounded down to an integer); default the ladder's.
    """

    def __init__(self, space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None, *,
                 pruner: str = "hyperband", eta: float | None = None) -> None:
        if pruner not in PRUNERS:
            raise ConfigError(f"pruner must be one of {', '.join(PRUNERS)}, got {pruner!r}")
        self.optuna = require_optuna()
        self.space, self.seed, self.pruner_kind, self.eta_option = space, int(seed), pruner, eta
        self.name = f"optuna-tpe-{pruner}"
        self.distributions = parameter_distributions(space)
        self._rows = DomainRows(space, domain, seed)
        self.study = None
        self.trials: list[_Trial] = []
        self._last: list[FidelityRequest] = []
        self._decisions: list[RungDecision] = []

    def attached(self, objective) -> None:
        eta = int(default_eta(self.ladder, self.eta_option))
        bottom, top = int(round(self.ladder.bottom)), int(round(self.ladder.top))
        if self.pruner_kind == "hyperband":
            pruner = self.optuna.pruners.HyperbandPruner(min_resource=bottom, max_resource=top, reduction_factor=eta)
        else:
            pruner = self.optuna.pruners.SuccessiveHalvingPruner(min_resource=bottom, reduction_factor=eta,
                                                                 min_early_stopping_rate=0)
        self.eta = eta
        self.pruner = pruner
        self.study = self.optuna.create_study(direction="maximize", pruner=pruner,
                                              sampler=self.optuna.samplers.TPESampler(seed=self.seed))

    # ------------------------------------------------------------------ protocol
    def ask(self, n: int) -> list[FidelityRequest]:
        if n < 1:
            raise ValueError(f"ask needs n >= 1, got {n}")
        if self.study is None:
            self.ladder  # raises: not attached
        out = []
        for running in self.trials:  # trials the pruner let go on, continued first
            if len(out) < n and not running.waiting:
                running.waiting = True
                out.append(FidelityRequest(running.arch, self.ladder.values[running.rung],
                                           self.ladder.values[running.rung - 1]))
        while len(out) < n:
            trial = self._new_trial()
            if trial is None:
                break
            self.trials.append(trial)
            out.append(FidelityRequest(trial.arch, self.ladder.bottom))
        self._last = out
        return out

    def _new_trial(self) -> _Trial | None:
        """A new Optuna trial whose cell the table holds (module docstring: projection)."""
        for _ in range(MAX_INVALID):
            trial = self.study.ask(self.distributions)
            arch = self.space.from_parameters(trial.params)
            if arch is not None and self._rows.covers(arch):
                self._rows.mark(arch)
                return _Trial(trial, arch, 0)
            self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)
            if self._rows.archs is not None:
                row = self._rows.nearest(trial.params)
                if row is None:
                    return None
                self._rows.mark(row)
                self.study.enqueue_trial(self.space.to_parameters(row))
                return _Trial(self.study.ask(self.distributions), row, 0)
        raise ConfigError(f"{self.name}: {MAX_INVALID} proposals in a row described no architecture of the "
                          f"{self.space.name!r} space")

    def tell(self, evaluations: Sequence[Evaluation]) -> None:
        self._decisions = []
        for ev in evaluations:
            running = next((t for t in self.trials if t.arch == ev.arch and t.waiting), None)
            if running is None:
                continue
            self._told(running, ev)
        self.trials = [t for t in self.trials if t.rung >= 0]

    def _told(self, running: _Trial, ev: Evaluation) -> None:
        """Report the value at its budget; finish, prune or let the trial go on."""
        states = self.optuna.trial.TrialState
        running.waiting = False
        if not ev.ok or ev.value is None:
            self.study.tell(running.trial, state=states.FAIL)
            running.rung = -1
            return
        budget = self.ladder.values[running.rung]
        running.trial.report(float(ev.value), step=int(round(budget)))
        if running.rung == len(self.ladder) - 1:
            self.study.tell(running.trial, float(ev.value))
            running.rung = -1
            return
        pruned = running.trial.should_prune()
        self._decisions.append(self._decision(running, float(ev.value), budget, pruned))
        if pruned:
            self.study.tell(running.trial, state=states.PRUNED)
            running.rung = -1
        else:
            running.rung += 1

    def _decision(self, running: _Trial, value: float, budget: float, pruned: bool) -> RungDecision:
        """The pruner's decision, with the trial's rank among the trials that reported at ``budget``."""
        step = int(round(budget))
        others = [t.intermediate_values[step] for t in self.study.get_trials(deepcopy=False)
                  if step in t.intermediate_values]
        rank = 1 + sum(v > value for v in others)
        return RungDecision(arch=self.space.format(running.arch), fidelity=budget, action=STOP if pruned else PROMOTE,
                            rule="pruner", rank=rank, of=len(others), value=value, eta=float(self.eta),
                            to=None if pruned else self.ladder.above(budget), name=type(self.pruner).__name__)

    def state(self) -> StepState:
        fmt = self.space.format
        requests = [{"arch": fmt(r.arch), "fidelity": r.fidelity, "previous": r.previous} for r in self._last]
        return StepState(strategy=self.name, phase="optuna", proposals=tuple(fmt(r.arch) for r in self._last),
                         notes={"trials": len(self.study.trials) if self.study else 0, "requests": requests,
                                "projected": self._rows.projected, "eta": getattr(self, "eta", None)},
                         decisions=tuple(self._decisions))


def optuna_tpe_hyperband(space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None, *,
                         eta: float | None = None) -> OptunaPruned:
    """TPE + ``HyperbandPruner`` (registry entry ``optuna-tpe-hyperband``)."""
    return OptunaPruned(space, seed, domain, pruner="hyperband", eta=eta)


def optuna_tpe_sh(space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None, *,
                  eta: float | None = None) -> OptunaPruned:
    """TPE + ``SuccessiveHalvingPruner`` (registry entry ``optuna-tpe-sh``)."""
    return OptunaPruned(space, seed, domain, pruner="sh", eta=eta)


__all__ = ["OptunaPruned", "PRUNERS", "optuna_tpe_hyperband", "optuna_tpe_sh"]
