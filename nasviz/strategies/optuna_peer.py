"""Optuna's samplers as peer strategies: ``optuna-tpe``, ``optuna-gp``, ``optuna-random``.

The question a user asks first is whether nasviz beats what they already use. These strategies
run Optuna's own samplers (TPE, GPSampler, RandomSampler) through the same ask/tell protocol as
every nasviz strategy, so ``bench search`` compares them on the same tables and seeds. A cell is
given to Optuna the way an Optuna user would write it, as the space's ``categorical-parameters``
(:meth:`~nasviz.spaces.base.SearchSpace.parameter_choices`, ``to_parameters``,
``from_parameters``): NAS-Bench-201's six edges with five operations each; NAS-Bench-101's 21
edge bits and five vertex operations, the encoding of NAS-Bench-101's own Sec. 5 baselines.

Two deliberate differences from nasviz's strategies:

* **Repeats are trials.** Optuna samplers may propose a cell they have already evaluated; it is
  evaluated again and counts against the budget, as it would for an Optuna user (and as in the
  comparison of issue 21). The protocol's "never the same architecture twice" does not hold for
  these peers; ``bench search`` reports the distinct cells each run evaluated.
* **A cell outside the domain is projected onto it.** With a table whose rows do not cover the
  space (``domain`` is a strict subset of it), a proposal that is not a row (or no cell at all:
  an NB101 spec NAS-Bench-101 rejects) has no value: Optuna is told that trial ``FAIL``ed, and the
  peer proposes instead the row nearest to it in Hamming distance over the parameters that it has
  not proposed before (ties broken by the seed); the row's result reaches Optuna as a finished
  trial with the row's own parameters. Optuna's samplers cannot be
  restricted to an arbitrary set of cells, and GPSampler ignores failed trials, so without the
  projection it would propose the same missing cell forever. When the domain is the whole space
  (the full NB201 tables of issue 21) nothing is projected; ``state().notes`` counts projections.
  Without a domain, a proposal that is no cell fails in Optuna and Optuna is asked again (at most
  :data:`MAX_INVALID` times per proposal), as NAS-Bench-101's baselines treat invalid specs.

Determinism: each sampler is seeded with the run's seed (``TPESampler(seed=...)``, ...), and a
study in memory holds nothing else, so a peer run is a function of its seed. Optuna is an
optional dependency (``pip install "nasviz[peers]"``); :func:`require_optuna` says so clearly.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.errors import ConfigError
from nasviz.kernels.slots import SlotKernel
from nasviz.objectives.base import Evaluation
from nasviz.spaces.base import PARAMETERS
from nasviz.state import StepState

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace

#: What to install for the peers and the Optuna sampler.
INSTALL_HINT = 'pip install "nasviz[peers]"'

#: Invalid proposals (no cell) in a row before a peer without a domain gives up.
MAX_INVALID = 1000

#: Peer sampler name -> the Optuna class that implements it.
SAMPLERS: dict[str, str] = {"tpe": "TPESampler", "gp": "GPSampler", "random": "RandomSampler"}


def optuna_available() -> bool:
    """True if Optuna can be imported (without importing it)."""
    from nasviz.components import package_available

    return package_available("optuna")


def require_optuna() -> Any:
    """The ``optuna`` module, or a :class:`~nasviz.errors.ConfigError` saying how to install it."""
    if not optuna_available():
        raise ConfigError(f"Optuna is not installed; the Optuna peers and nasviz.optuna_sampler need it: {INSTALL_HINT}")
    optuna = importlib.import_module("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def parameter_distributions(space: "SearchSpace") -> dict[str, Any]:
    """One ``CategoricalDistribution`` per parameter of the space's ``categorical-parameters``."""
    optuna = require_optuna()
    if not space.provides(PARAMETERS):
        raise ConfigError(f"the {space.name!r} space has no categorical parameters to give Optuna")
    return {name: optuna.distributions.CategoricalDistribution(choices)
            for name, choices in space.parameter_choices().items()}


def make_sampler(kind: str, seed: int) -> Any:
    """Optuna's sampler ``kind`` (``tpe``, ``gp`` or ``random``) with its defaults and ``seed``."""
    optuna = require_optuna()
    if kind not in SAMPLERS:
        raise ConfigError(f"unknown Optuna sampler {kind!r}; known: {', '.join(SAMPLERS)}")
    return getattr(optuna.samplers, SAMPLERS[kind])(seed=int(seed))


class OptunaPeer:
    """An Optuna sampler behind the ask/tell protocol (module docstring).

    Parameters
    ----------
    space : SearchSpace
        A space with categorical parameters.
    seed : int
        The sampler's seed.
    domain : sequence of Architecture, optional
        The cells that can be evaluated (a table's rows); proposals outside it are projected
        onto it (module docstring). ``None``: every cell of the space.
    sampler : {"tpe", "gp", "random"}
    """

    def __init__(self, space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None, *,
                 sampler: str = "tpe") -> None:
        optuna = require_optuna()
        self.space = space
        self.sampler_kind = sampler
        self.name = f"optuna-{sampler}"
        self.distributions = parameter_distributions(space)
        self.study = optuna.create_study(direction="maximize", sampler=make_sampler(sampler, seed))
        self._trial_state = optuna.trial.TrialState
        self._create_trial = optuna.trial.create_trial
        self._pending: dict[Architecture, list[Any]] = {}
        self._last: list[Architecture] = []
        self._rows = _Rows(space, domain, seed)

    def ask(self, n: int) -> list[Architecture]:
        if n < 1:
            raise ValueError(f"ask needs n >= 1, got {n}")
        proposals = []
        for _ in range(n):
            arch = self._propose()
            if arch is None:
                break  # every row has been proposed
            self._rows.mark(arch)
            proposals.append(arch)
        self._last = proposals
        return proposals

    def _propose(self) -> Architecture | None:
        """One proposal: Optuna's, or the row nearest to it (module docstring)."""
        for _ in range(MAX_INVALID):
            trial = self.study.ask(self.distributions)
            arch = self.space.from_parameters(trial.params)
            if arch is not None and self._rows.covers(arch):
                self._pending.setdefault(arch, []).append(trial)
                return arch
            # no cell, or not a row: the trial fails; its nearest unproposed row is evaluated instead
            self.study.tell(trial, state=self._trial_state.FAIL)
            if self._rows.archs is not None:
                return self._rows.nearest(trial.params)
        raise ConfigError(f"{self.name}: {MAX_INVALID} proposals in a row described no architecture of the "
                          f"{self.space.name!r} space")

    def tell(self, evaluations: Sequence[Evaluation]) -> None:
        """Tell Optuna each result; an architecture it did not propose becomes a finished trial."""
        for ev in evaluations:
            self._rows.mark(ev.arch)
            ok = ev.ok and ev.value is not None
            waiting = self._pending.get(ev.arch)
            if waiting:
                trial = waiting.pop(0)
                if ok:
                    self.study.tell(trial, float(ev.value))
                else:
                    self.study.tell(trial, state=self._trial_state.FAIL)
                continue
            params = self.space.to_parameters(ev.arch)
            self.study.add_trial(self._create_trial(
                params=params, distributions=self.distributions, value=float(ev.value) if ok else None,
                state=self._trial_state.COMPLETE if ok else self._trial_state.FAIL))

    def state(self) -> StepState:
        return StepState(strategy=self.name, phase="optuna", proposals=tuple(self.space.format(a) for a in self._last),
                         notes={"trials": len(self.study.trials), "projected": self._rows.projected})


class _Rows:
    """The domain as parameter codes, for projecting a proposal outside it onto its nearest row.

    ``domain=None`` or a domain as large as the space covers every cell (nothing is projected).
    """

    def __init__(self, space: "SearchSpace", domain: Sequence[Architecture] | None, seed: int) -> None:
        size = getattr(space, "size", None)
        self.projected = 0
        self.archs: list[Architecture] | None = None
        if domain is None or (size is not None and len(domain) >= int(size)):
            return
        self.space = space
        self.archs = list(domain)
        self.keys = {space.format(a): i for i, a in enumerate(self.archs)}
        # the slot kernel's encoding, so the projection measures the distance the GP kernels do
        self.slots = SlotKernel(space)
        self.codes = self.slots.codes(self.archs)  # (D, P) choice index of each parameter
        self.used = np.zeros(len(self.archs), dtype=bool)
        self.rng = np.random.default_rng(seed)

    def covers(self, arch: Architecture) -> bool:
        return self.archs is None or self.space.format(arch) in self.keys

    def mark(self, arch: Architecture) -> None:
        if self.archs is not None and self.space.format(arch) in self.keys:
            self.used[self.keys[self.space.format(arch)]] = True

    def nearest(self, params: dict[str, Any]) -> Architecture | None:
        """The unproposed row at the least Hamming distance from the parameters ``params`` (ties at random)."""
        assert self.archs is not None
        free = np.flatnonzero(~self.used)
        if not len(free):
            return None
        dist = (self.codes[free] != self.slots.parameter_codes(params)[None, :]).sum(axis=1)  # (F,)
        best = free[dist == dist.min()]
        self.projected += 1
        return self.archs[int(best[self.rng.integers(len(best))])]


#: The domain as parameter codes, for projecting a proposal outside it onto its nearest row (also
#: used by the multi-fidelity peers, :mod:`nasviz.strategies.multi_fidelity.optuna_pruned`).
DomainRows = _Rows


def optuna_tpe(space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None) -> OptunaPeer:
    """Optuna's ``TPESampler(seed=seed)`` with its defaults (registry entry ``optuna-tpe``)."""
    return OptunaPeer(space, seed, domain, sampler="tpe")


def optuna_gp(space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None) -> OptunaPeer:
    """Optuna's ``GPSampler(seed=seed)`` with its defaults (registry entry ``optuna-gp``)."""
    return OptunaPeer(space, seed, domain, sampler="gp")


def optuna_random(space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None) -> OptunaPeer:
    """Optuna's ``RandomSampler(seed=seed)`` (registry entry ``optuna-random``)."""
    return OptunaPeer(space, seed, domain, sampler="random")


__all__ = ["DomainRows", "INSTALL_HINT", "OptunaPeer", "SAMPLERS", "make_sampler", "optuna_available", "optuna_gp", "optuna_random",
           "optuna_tpe", "parameter_distributions", "require_optuna"]
