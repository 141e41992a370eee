"""BOHB with the project's GP: Hyperband whose new architectures come from a model.

BOHB (Falkner et al. 2018, Alg. 2) keeps Hyperband's brackets (Li et al. 2018, Alg. 1) and replaces
their uniform samples by model-based ones: a fraction ``rho`` of each bracket's configurations is
still drawn at random (Sec. 4.1: "rho = 1/3" keeps the convergence guarantee of Hyperband); the
others come from a model fitted to the observations at the **largest budget that has enough of
them** (``|D_b| >= N_min + 2`` in the paper, with ``N_min = d + 1``; here ``n_min`` observations,
10 by default, the BO presets' initial design), because those are the most informative about the
full budget while still being many.

The paper's model is TPE (a ratio of kernel densities, Eq. (2)-(3)); BOHB-GP uses the project's
Gaussian process with any of its kernels (the default's TW 2-gram x Hamming product, TW, WL, ...)
and expected improvement, through :class:`~nasviz.strategies.bo.BayesianOptimisation` with the
default preset's settings: an evolutionary pool scored by EI (nearest table members on sparse
tables, a local search of the acquisition from ten starts, the noise floor). A bracket needs many
configurations at once (27 at NAS-Bench-101's lowest budget); BOHB draws each from the model
independently, so the batch is chosen by Thompson sampling, the argmax of one joint posterior draw
per configuration (:func:`~nasviz.batch.select_thompson`): the GP analogue of BOHB's independent
draws from its density, diverse where the model is unsure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from nasviz.arch import Architecture
from nasviz.candidates import random_pool
from nasviz.errors import ConfigError
from nasviz.fidelity.ladder import FidelityRequest
from nasviz.objectives.base import Evaluation
from nasviz.spaces.base import PARAMETERS
from nasviz.state import StepState
from nasviz.strategies.multi_fidelity.brackets import BracketSearch

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace


class GPProposer:
    """New architectures for a bracket: ``rho`` of them at random, the rest by the GP fitted at the
    largest budget with at least ``n_min`` observations (module docstring)."""

    def __init__(self, search: "BOHB", kernel: str, rho: float, n_min: int) -> None:
        self.search, self.kernel, self.rho, self.n_min = search, kernel, float(rho), int(n_min)
        self.observations: dict[float, list[tuple[Architecture, float]]] = {}
        self.last_state: StepState | None = None

    def add(self, arch: Architecture, fidelity: float, value: float | None) -> None:
        if value is not None:
            self.observations.setdefault(float(fidelity), []).append((arch, value))

    def model_budget(self) -> float | None:
        """The largest budget with at least ``n_min`` observations (``None``: none has yet)."""
        enough = [b for b, obs in self.observations.items() if len(obs) >= max(self.n_min, 2)]
        return max(enough) if enough else None

    def propose(self, n: int, exclude: set[Architecture], bracket: int) -> tuple[list[Architecture], dict]:
        search = self.search
        self.last_state = None
        budget = self.model_budget()
        n_random = int(search.rng.binomial(n, self.rho)) if budget is not None else n
        model: list[Architecture] = []
        if n - n_random > 0:
            bo = self._optimiser(n - n_random, bracket)
            bo.tell([Evaluation(a, v, 0.0) for a, v in self.observations[budget]])
            bo.exclude(list(exclude))
            model = bo.ask(n - n_random)
            self.last_state = bo.state()
        rest = random_pool(search.space, search.rng, n - len(model), exclude=exclude | set(model), domain=search.domain)
        notes = {"proposer": "gp", "model_budget": budget, "from_model": len(model), "at_random": len(rest)}
        return model + rest, notes

    def _optimiser(self, batch: int, bracket: int):
        from nasviz.strategies.bo import AcquisitionPart, BatchPart, BayesianOptimisation, ModelPart, PoolPart, RunSettings

        space = self.search.space
        nearest = "nearest" if space.provides(PARAMETERS) else "edit"
        return BayesianOptimisation(
            space, seed=self.search.seed * 1_000_003 + bracket, domain=self.search.domain,
            model=ModelPart(kernel=self.kernel, min_noise=1e-3),
            acquisition=AcquisitionPart(acquisition="ei"),
            pool=PoolPart(pool="evolution", pool_size=max(100, 4 * batch), table_neighbours=nearest, local_search=10),
            batch=BatchPart(batch="thompson", batch_size=batch),
            run=RunSettings(n_init=1, name=f"{self.search.name}-model"))


class BOHB(BracketSearch):
    """Hyperband brackets with GP proposals (module docstring; registry entry ``bohb``).

    Parameters
    ----------
    kernel : str
        The GP's kernel (a registered name; default the default strategy's ``tw2g-hamming``).
    rho : float
        Fraction of each bracket's architectures drawn at random (1/3, Falkner et al. Sec. 4.1).
    n_min : int
        Observations a budget needs before its model proposes.
    eta : float, optional
        As :class:`~.brackets.BracketSearch`.
    name : str
        How runs and tables call it.
    """

    def __init__(self, space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None, *,
                 kernel: str = "tw2g-hamming", rho: float = 1 / 3, n_min: int = 10, eta: float | None = None,
                 name: str = "bohb") -> None:
        if not 0 <= rho <= 1:
            raise ConfigError(f"rho must be between 0 and 1, got {rho}")
        if int(n_min) < 2:
            raise ConfigError(f"n_min must be at least 2, got {n_min}")
        super().__init__(space, seed, domain, mode="hyperband", eta=eta, name=name,
                         proposer=lambda s: GPProposer(s, kernel, rho, n_min))
        self.kernel_name = kernel

    def observed(self, evaluation: Evaluation, request: FidelityRequest, value: float | None) -> None:
        self.proposer.add(evaluation.arch, request.fidelity, value)

    def state(self) -> StepState:
        base = super().state()
        model = getattr(self.proposer, "last_state", None)
        if model is None or not self._notes.get("from_model"):
            return base
        return StepState(strategy=base.strategy, phase="bohb", proposals=base.proposals, gp=model.gp, pool=model.pool,
                         batch=model.batch, features=model.features, timings=dict(model.timings),
                         notes={**base.notes, "model": dict(model.notes)}, decisions=base.decisions)


__all__ = ["BOHB", "GPProposer"]
