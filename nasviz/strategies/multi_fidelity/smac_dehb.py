"""Peers: SMAC3's multi-fidelity facade and DEHB, through their ask/tell interfaces.

Both search a ConfigSpace of the space's categorical parameters (one ``CategoricalHyperparameter``
per parameter, as :mod:`nasviz.strategies.optuna_peer` gives them to Optuna) and schedule budgets
between the ladder's lowest and full budget with the benchmark's ``eta``
(:func:`~.brackets.default_eta`):

* ``smac-mf``: SMAC3 2.x ``MultiFidelityFacade`` (a random forest over configurations and budgets,
  EI, Hyperband's intensifier; Lindauer et al. 2022), ``deterministic=True``;
* ``dehb``: DEHB (Awad, Mallik & Hutter 2021: differential evolution inside Hyperband brackets).

Both minimise, so they are told ``-value``. A budget they ask for is mapped to the highest rung
of the ladder at or below it; on the protocol's ladders their geometric budgets are the ladder's
own (NAS-Bench-101: 4, 12, 36, 108 with eta 3; NAS-Bench-201: 200 / 16 = 12.5 reads the 12-epoch
table). A configuration asked again at a higher budget continues from the budget it reached.
On a table that holds part of the space (NAS-Bench-101's 20k cells), a configuration outside it is
evaluated at its nearest unproposed row (Hamming distance over the parameters) and the result is
told for the configuration asked: neither library takes a trial it did not ask for into its
bracket bookkeeping, so unlike the Optuna peers the row cannot be told as a trial of its own.

Both are optional packages (``pip install "nasviz[mf-peers]"``). DEHB 0.1.2, the newest release,
declares ``numpy<2.0``, which nasviz's numpy 2 excludes; 0.1.1 declares no upper bound and is the
one installed (and tested) here.
"""

from __future__ import annotations

import importlib
import tempfile
from typing import TYPE_CHECKING, Any, Sequence

from nasviz.arch import Architecture
from nasviz.components import package_available
from nasviz.errors import ConfigError
from nasviz.fidelity.ladder import FidelityRequest
from nasviz.objectives.base import Evaluation
from nasviz.spaces.base import PARAMETERS
from nasviz.state import StepState
from nasviz.strategies.multi_fidelity.base import FidelityAware
from nasviz.strategies.multi_fidelity.brackets import default_eta
from nasviz.strategies.optuna_peer import DomainRows

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace

INSTALL_HINT = 'pip install "nasviz[mf-peers]"'


def require(package: str) -> Any:
    """The optional ``package`` (``smac``, ``dehb``), or a ConfigError saying how to install it."""
    if not package_available(package):
        raise ConfigError(f"the {package} peer needs the optional package {package}: {INSTALL_HINT}")
    return importlib.import_module(package)


def config_space(space: "SearchSpace", seed: int) -> Any:
    """One ``CategoricalHyperparameter`` per categorical parameter of ``space``."""
    if not space.provides(PARAMETERS):
        raise ConfigError(f"the {space.name!r} space has no categorical parameters for a ConfigSpace")
    cs_module = require("ConfigSpace")
    cs = cs_module.ConfigurationSpace(seed=int(seed))
    cs.add([cs_module.CategoricalHyperparameter(name, list(choices))
            for name, choices in space.parameter_choices().items()])
    return cs


class ConfigSpacePeer(FidelityAware):
    """What SMAC and DEHB share: configurations to cells, budgets to rungs, results back."""

    def __init__(self, space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None, *,
                 eta: float | None = None, name: str) -> None:
        self.space, self.seed, self.eta_option, self.name = space, int(seed), eta, name
        self.cs = config_space(space, seed)
        self._rows = DomainRows(space, domain, seed)
        self._cells: dict[tuple, Architecture] = {}  # configuration -> the cell evaluated for it
        self.reached: dict[Architecture, float] = {}
        self.pending: list[tuple[Architecture, Any]] = []  # (cell, the library's handle)
        self._workdir = tempfile.TemporaryDirectory(prefix=f"nasviz-{name}-")
        self._last: list[FidelityRequest] = []

    def attached(self, objective) -> None:
        self.eta = int(default_eta(self.ladder, self.eta_option))
        self.start()

    def start(self) -> None:
        """Build the optimiser (after the ladder is known)."""

    def next_job(self) -> tuple[dict[str, Any], float, Any]:
        """``(configuration as a dict, budget asked for, handle for tell)``."""
        raise NotImplementedError

    def report(self, handle: Any, value: float | None, cost: float) -> None:
        """Tell the optimiser ``-value`` (``None``: a failed evaluation)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ protocol
    def ask(self, n: int) -> list[FidelityRequest]:
        if n < 1:
            raise ValueError(f"ask needs n >= 1, got {n}")
        self.ladder  # raises when not attached
        out = []
        for _ in range(n):
            params, budget, handle = self.next_job()
            arch = self._cell(params)
            if arch is None:
                break
            rung = self._rung(budget)
            previous = self.reached.get(arch)
            out.append(FidelityRequest(arch, rung, previous if previous is not None and previous < rung else None))
            self.pending.append((arch, handle))
        self._last = out
        return out

    def tell(self, evaluations: Sequence[Evaluation]) -> None:
        for ev in evaluations:
            i = next((k for k, (arch, _) in enumerate(self.pending) if arch == ev.arch), None)
            if i is None:
                continue
            _, handle = self.pending.pop(i)
            ok = ev.ok and ev.value is not None
            if ok and ev.fidelity is not None:
                self.reached[ev.arch] = max(self.reached.get(ev.arch, 0.0), ev.fidelity.fidelity)
            self.report(handle, float(ev.value) if ok else None, float(ev.cost or 0.0))

    def state(self) -> StepState:
        fmt = self.space.format
        requests = [{"arch": fmt(r.arch), "fidelity": r.fidelity, "previous": r.previous} for r in self._last]
        return StepState(strategy=self.name, phase=self.name, proposals=tuple(fmt(r.arch) for r in self._last),
                         notes={"requests": requests, "projected": self._rows.projected, "eta": getattr(self, "eta", None)})

    # ------------------------------------------------------------------ mapping
    def _rung(self, budget: float) -> float:
        """The highest ladder budget at or below ``budget`` (at least the lowest)."""
        below = [v for v in self.ladder.values if v <= float(budget) * (1 + 1e-9)]
        return below[-1] if below else self.ladder.bottom

    def _cell(self, params: dict[str, Any]) -> Architecture | None:
        """The cell of a configuration, or its nearest unproposed row (module docstring)."""
        key = tuple(sorted(params.items()))
        if key in self._cells:
            return self._cells[key]
        arch = self.space.from_parameters(dict(params))
        if arch is None or not self._rows.covers(arch):
            arch = self._rows.nearest(dict(params)) if self._rows.archs is not None else None
            if arch is None:
                return None
        self._rows.mark(arch)
        self._cells[key] = arch
        return arch


class SMACPeer(ConfigSpacePeer):
    """SMAC3's ``MultiFidelityFacade`` with Hyperband's intensifier (registry entry ``smac-mf``)."""

    def start(self) -> None:
        smac = require("smac")
        scenario = smac.Scenario(self.cs, deterministic=True, n_trials=10**8, min_budget=self.ladder.bottom,
                                 max_budget=self.ladder.top, seed=self.seed, output_directory=self._workdir.name)
        intensifier = smac.MultiFidelityFacade.get_intensifier(scenario, eta=self.eta)
        self.smac = smac.MultiFidelityFacade(scenario, target_function=_never_called, intensifier=intensifier,
                                             overwrite=True, logging_level=40)
        self._value = importlib.import_module("smac.runhistory").TrialValue
        self._status = importlib.import_module("smac.runhistory.enumerations").StatusType

    def next_job(self) -> tuple[dict[str, Any], float, Any]:
        info = self.smac.ask()
        return dict(info.config), float(info.budget if info.budget is not None else self.ladder.top), info

    def report(self, handle: Any, value: float | None, cost: float) -> None:
        if value is None:
            self.smac.tell(handle, self._value(cost=float("inf"), status=self._status.CRASHED))
        else:
            self.smac.tell(handle, self._value(cost=-value, time=cost))


class DEHBPeer(ConfigSpacePeer):
    """DEHB (registry entry ``dehb``)."""

    def start(self) -> None:
        require("dehb")
        try:
            from loguru import logger

            logger.disable("dehb")  # DEHB logs every bracket to stderr
        except ImportError:  # pragma: no cover - DEHB depends on loguru
            pass
        from dehb import DEHB

        self.dehb = DEHB(cs=self.cs, dimensions=len(self.cs), min_fidelity=self.ladder.bottom,
                         max_fidelity=self.ladder.top, eta=self.eta, n_workers=1, seed=self.seed,
                         output_path=self._workdir.name)

    def next_job(self) -> tuple[dict[str, Any], float, Any]:
        job = self.dehb.ask()
        return dict(job["config"]), float(job["fidelity"]), job

    def report(self, handle: Any, value: float | None, cost: float) -> None:
        self.dehb.tell(handle, {"fitness": float("inf") if value is None else -value, "cost": cost})


def _never_called(config: Any, seed: int = 0, budget: float = 0.0) -> float:
    raise RuntimeError("the SMAC peer is driven by ask/tell; its target function is never called")


def smac_mf(space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None, *,
            eta: float | None = None) -> SMACPeer:
    """Registry entry ``smac-mf``."""
    return SMACPeer(space, seed, domain, eta=eta, name="smac-mf")


def dehb(space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None, *,
         eta: float | None = None) -> DEHBPeer:
    """Registry entry ``dehb``."""
    return DEHBPeer(space, seed, domain, eta=eta, name="dehb")


__all__ = ["ConfigSpacePeer", "DEHBPeer", "INSTALL_HINT", "SMACPeer", "config_space", "dehb", "require", "smac_mf"]
