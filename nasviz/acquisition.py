"""Acquisition functions on a finite candidate pool (maximisation: higher ``y`` is better).

* :func:`ucb`: GP-UCB ``mean + kappa * std`` (Srinivas et al.; paper 002 App. E.5, item 4).
* :func:`kappa_schedule`: ``beta_n = beta_0 sqrt(1/2 log(2 (n + 1)))`` (paper 002 App. E.5).
* :func:`srinivas_beta`, :func:`exploration_weight`: GP-UCB's ``beta_t`` for a finite decision
  set (GP-UCB, Srinivas et al. 2010, Theorem 1) and the schedules BO chooses from.
* :func:`expected_improvement`: closed-form EI over an incumbent ``best``.
* :func:`thompson_draws`: joint samples from the posterior over the pool
  (:func:`nasviz.gp.posterior.sample_posterior`).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.special import ndtr  # the standard normal CDF; scipy.stats would add a second to worker start-up

from nasviz.gp.posterior import sample_posterior


def _as_vectors(mean, std) -> tuple[np.ndarray, np.ndarray]:
    mean = np.asarray(mean, dtype=float).reshape(-1)
    std = np.asarray(std, dtype=float).reshape(-1)
    if mean.shape != std.shape:
        raise ValueError(f"mean has shape {mean.shape} but std has shape {std.shape}")
    bad = np.flatnonzero(~np.isfinite(mean))
    if bad.size:
        raise ValueError(f"mean[{bad[0]}] = {mean[bad[0]]} is not finite")
    bad = np.flatnonzero(~np.isfinite(std) | (std < 0))
    if bad.size:
        raise ValueError(f"std[{bad[0]}] = {std[bad[0]]} must be finite and >= 0")
    return mean, std


def kappa_schedule(beta0: float, n: int) -> float:
    """``beta_n = beta0 * sqrt(0.5 * log(2 (n + 1)))``, paper 002 App. E.5 (``n`` = BO iteration)."""
    if beta0 < 0:
        raise ValueError(f"beta0 must be >= 0, got {beta0}")
    if n < 0:
        raise ValueError(f"n (the BO iteration) must be >= 0, got {n}")
    return float(beta0 * np.sqrt(0.5 * np.log(2.0 * (n + 1))))


def srinivas_beta(t: int, n_candidates: int, delta: float = 0.1) -> float:
    """``beta_t = 2 log(|D| t^2 pi^2 / (6 delta))``: GP-UCB's exploration weight for a finite
    decision set ``D`` (GP-UCB, Srinivas et al. 2010, Theorem 1), with which the regret bound holds with
    probability ``1 - delta``; ``t >= 1`` is the evaluation being chosen. UCB is
    ``mean + sqrt(beta_t) std``."""
    if t < 1:
        raise ValueError(f"t must be >= 1, got {t}")
    if n_candidates < 1:
        raise ValueError(f"n_candidates must be >= 1, got {n_candidates}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    return float(2.0 * np.log(n_candidates * t**2 * np.pi**2 / (6.0 * delta)))


#: Exploration schedules of UCB's weight (``BayesianOptimisation``'s ``schedule`` option).
SCHEDULES: tuple[str, ...] = ("bowl", "srinivas")


def exploration_weight(schedule: str, *, step: int, t: int, n_candidates: int, beta0: float,
                       beta_scale: float, delta: float) -> float:
    """UCB's ``kappa`` under ``schedule``.

    * ``"bowl"``: :func:`kappa_schedule` ``(beta0, step)``, ``step`` the 0-based BO step (paper
      002 App. E.5);
    * ``"srinivas"``: ``sqrt(beta_scale * beta_t)`` with :func:`srinivas_beta` ``(t, n_candidates,
      delta)``. ``beta_scale = 1`` is the theorem's weight, which is known to over-explore in
      practice (Srinivas et al. §6 scale it by 1/5 in their experiments); ``beta_scale`` keeps
      the theorem's growth in ``t`` and ``|D|`` and sets the level.
    """
    if schedule == "bowl":
        return kappa_schedule(beta0, step)
    if schedule == "srinivas":
        if beta_scale < 0:
            raise ValueError(f"beta_scale must be >= 0, got {beta_scale}")
        return float(np.sqrt(beta_scale * srinivas_beta(t, n_candidates, delta)))
    raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")


def ucb(mean, std, kappa: float) -> np.ndarray:
    """GP-UCB ``mean + kappa * std``; ``mean``, ``std`` shape ``(m,)`` -> ``(m,)``."""
    if kappa < 0:
        raise ValueError(f"kappa must be >= 0, got {kappa}")
    mean, std = _as_vectors(mean, std)
    return mean + kappa * std


def expected_improvement(mean, std, best: float, xi: float = 0.0) -> np.ndarray:
    """Expected improvement ``E[max(f - best - xi, 0)]`` for ``f ~ N(mean, std^2)``.

    Closed form ``(mean - best - xi) Phi(g) + std phi(g)``, ``g = (mean - best - xi) / std``;
    where ``std = 0`` it is ``max(mean - best - xi, 0)``. Shapes ``(m,) -> (m,)``. ``best`` is
    the incumbent the caller chooses (best observed ``y``, or best posterior mean): it is not
    silently replaced.
    """
    mean, std = _as_vectors(mean, std)
    if not np.isfinite(best):
        raise ValueError(f"best must be finite, got {best}")
    diff = mean - float(best) - float(xi)
    out = np.maximum(diff, 0.0)
    pos = std > 0
    g = diff[pos] / std[pos]
    out[pos] = diff[pos] * ndtr(g) + std[pos] * np.exp(-0.5 * g * g) / np.sqrt(2.0 * np.pi)  # Phi(g), phi(g)
    return out


#: Joint posterior draws over the pool, ``(n_draws, m)``: the project's one sampler
#: (:func:`nasviz.gp.posterior.sample_posterior`, which documents its PSD policy), kept under the
#: name this module has always exported.
thompson_draws = sample_posterior


__all__ = ["SCHEDULES", "expected_improvement", "exploration_weight", "kappa_schedule", "srinivas_beta",
           "thompson_draws", "ucb"]


# ------------------------------------------------------------------------ the uniform interface
#: ``acquisition(mean, std, best, kappa) -> (M,)``: what a registered acquisition computes
#: (``best`` = best observed value, ``kappa`` = the step's UCB weight; each uses what it needs).
AcquisitionFn = Callable[[np.ndarray, np.ndarray, float, float], np.ndarray]


def ucb_acquisition() -> AcquisitionFn:
    """:func:`ucb` behind the uniform interface (registry entry ``ucb``)."""
    return lambda mean, std, best, kappa: ucb(mean, std, kappa)


def ei_acquisition() -> AcquisitionFn:
    """:func:`expected_improvement` behind the uniform interface (registry entry ``ei``)."""
    return lambda mean, std, best, kappa: expected_improvement(mean, std, best)
