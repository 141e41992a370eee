"""One model-based step of :class:`~nasviz.strategies.bo.BayesianOptimisation`: how it scores
candidates and what it reports.

The strategy keeps the search's bookkeeping (what was seen, observed, pending, the stall count)
and decides what a step does; this module holds the two pieces of a step that need none of it:

- :class:`StepScorer`: the step's acquisition over candidate architectures, each cell predicted
  once per step (the pool generator and the local search ask about the same cells), and
  :func:`operation_gradients`, what the WL gradient pool mutates by;
- :class:`ChosenBatch` and :func:`model_step_state`: the batch a step chose and the typed
  :class:`~nasviz.state.StepState` built from it (pool with posterior and acquisition, the batch
  and why, WL feature gradients when the kernel is WL, the generator's notes).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.batch import BatchSelection
from nasviz.candidates import Pool
from nasviz.state import BatchChoice, PoolState, StepState

if TYPE_CHECKING:
    from nasviz.gp import GaussianProcess
    from nasviz.strategies.bo import BayesianOptimisation

#: WL features kept in a step's state (the largest gradients by magnitude).
MAX_FEATURES = 40


class StepScorer:
    """One step's acquisition ``acq_fn(mean, std, best, kappa)`` under the fitted ``gp``.

    Calling it scores a sequence of candidates and remembers each cell's value: the generator
    scores its pool, and the local search scores that pool again to pick its starts and then
    climbs through cells the generator may have scored; each cell is predicted once per step.
    :meth:`of_set` scores a generator's whole candidate set at once (not remembered).
    """

    def __init__(self, gp: "GaussianProcess", acq_fn: Callable[..., np.ndarray], best: float, kappa: float) -> None:
        self.gp, self.acq_fn, self.best, self.kappa = gp, acq_fn, best, kappa
        self.scored: dict[Architecture, float] = {}

    def __call__(self, cands: Sequence[Architecture]) -> np.ndarray:
        missing = [c for c in dict.fromkeys(cands) if c not in self.scored]
        if missing:
            mean, std = self.gp.predict(missing, full_cov=False)
            self.scored.update(zip(missing, map(float, self.acq_fn(mean, std, self.best, self.kappa))))
        return np.array([self.scored[c] for c in cands], dtype=float)

    def of_set(self, cands: Sequence[Architecture]) -> np.ndarray:
        mean, std = self.gp.predict_set(self.gp.candidate_set(cands))
        return self.acq_fn(mean, std, self.best, self.kappa)


def operation_gradients(gp: "GaussianProcess",
                        observed: Sequence[tuple[Architecture, float]]) -> dict[str, float] | None:
    """Mean derivative of the posterior mean w.r.t. each operation's h=0 WL feature over the
    ``observed`` architectures (WL only; ``None`` makes the gradient pool fall back to uniform
    mutation and record it)."""
    from nasviz.interpret import step_operation_gradients

    return step_operation_gradients(gp, [a for a, _ in observed])


@dataclasses.dataclass(frozen=True)
class ChosenBatch:
    """What a model-based step chose: ``proposals`` from ``pool``, whose posterior ``mean`` and
    ``std`` and acquisition ``values`` are each ``(M,)`` over ``pool.archs``; ``acquisition`` is
    the step's acquisition (UCB while a stalled search raises its weight, else the strategy's)
    with UCB weight ``kappa``, and ``selection`` the batch selector's answer."""

    proposals: list[Architecture]
    pool: Pool
    mean: np.ndarray
    std: np.ndarray
    values: np.ndarray
    acquisition: str
    selection: BatchSelection
    kappa: float


def model_step_state(bo: "BayesianOptimisation", chosen: ChosenBatch, gp_state: Any, times: dict[str, float],
                     n_observations: int, bo_step: int) -> StepState:
    """The typed state of ``bo``'s model-based step number ``bo_step`` (1-based); the pool
    generator's ``notes`` join the step's."""
    from nasviz.interpret import step_feature_gradients

    fmt, pool = bo.space.format, chosen.pool
    notes: dict[str, Any] = {"bo_step": bo_step, "n_observations": n_observations, **pool.notes}
    if bo.parts.model.failures == "worst":
        notes["failures_in_gp"] = len(bo.failed)
    return StepState(
        strategy=bo.name, phase="bo", proposals=tuple(fmt(a) for a in chosen.proposals), gp=gp_state,
        pool=PoolState(candidates=tuple(fmt(a) for a in pool.archs), mean=tuple(map(float, chosen.mean)),
                       std=tuple(map(float, chosen.std)), acquisition=tuple(map(float, chosen.values)),
                       acquisition_name=chosen.acquisition, origin=tuple(pool.origin), info=dict(pool.info)),
        batch=BatchChoice.of(chosen.selection, kappa=chosen.kappa),
        features=step_feature_gradients(bo.gp, [a for a, _ in bo.observed], MAX_FEATURES), timings=times,
        notes=notes)
