"""Batch selectors: choose B of the M architectures in a candidate pool.

Every selector takes the GP posterior on the pool -- mean ``(M,)`` and the covariance of the
latent function conditioned on the observations ``(M, M)`` (Eqs. (8), (9) of the
tree-Wasserstein paper, 000) -- and returns a :class:`BatchSelection`: the chosen indices plus
the numbers a dashboard needs to explain the choice.

=================  ===========================================================================
``kdpp-quality``   k-DPP on ``L = diag(q) Sigma diag(q)`` (paper 000 Eq. (12), Prop. 2)
``kdpp``           k-DPP on ``Sigma`` alone: pure exploration (Kathuria et al., 2016)
``bucb``           GP-BUCB / Kriging believer: greedy UCB, hallucinating the posterior mean
``thompson``       argmax of B joint posterior draws (Hernandez-Lobato et al., 2017)
``topk``           the B largest acquisition values
``random``         B pool members uniformly at random (a baseline: the pool alone, no selector)
=================  ===========================================================================

Randomness always comes from a ``numpy.random.Generator`` argument; no global state is touched
(the reference k-DPP code reseeded the global generator on every call).

Modules: ``kdpp`` (exact k-DPP sampling), ``selectors`` (the six selectors); this package adds the
uniform interface the BO loop and the registry use (:class:`SelectRequest` -> selection).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from nasviz.batch.kdpp import elementary_symmetric_polynomials, kdpp_probabilities, kdpp_with_fallback, sample_kdpp
from nasviz.batch.selectors import (BATCH_METHODS, BatchSelection, condition_on_point, quality_scores, select_bucb,
                                    select_kdpp, select_kdpp_quality, select_random, select_thompson, select_topk)

__all__ = ["BATCH_METHODS", "BatchSelection", "SelectRequest", "condition_on_point", "elementary_symmetric_polynomials",
           "kdpp_probabilities", "kdpp_with_fallback", "quality_scores", "sample_kdpp", "select_bucb", "select_kdpp",
           "select_kdpp_quality", "select_random", "select_thompson", "select_topk"]


@dataclass(frozen=True)
class SelectRequest:
    """What a batch selector gets: the pool's posterior and acquisition, and the batch size.

    ``mean`` ``(M,)``; ``cov`` ``(M, M)`` (``None`` unless the selector's registry entry declares
    ``covariance``); ``acquisition`` ``(M,)``; ``quality_values`` ``(M,)`` what a k-DPP quality
    rewards; ``kappa`` the UCB weight of the previous step (BUCB), ``noise_variance`` the GP's
    observation noise in the metric's units, ``temperature`` / ``anchor`` the quality k-DPP's.
    """

    mean: np.ndarray
    cov: np.ndarray | None
    acquisition: np.ndarray
    k: int
    rng: np.random.Generator
    kappa: float = 0.0
    noise_variance: float = 0.0
    quality_values: np.ndarray | None = None
    temperature: float = 0.5
    anchor: int | None = None


def topk_selector() -> Any:
    """:func:`select_topk` behind the uniform interface (registry entry ``topk``)."""
    return lambda r: select_topk(r.acquisition, r.k)


def random_selector() -> Any:
    """:func:`select_random` behind the uniform interface (registry entry ``random``)."""
    return lambda r: select_random(len(r.acquisition), r.k, r.rng, acquisition=r.acquisition)


def kdpp_quality_selector() -> Any:
    """:func:`select_kdpp_quality` behind the uniform interface (registry entry ``kdpp-quality``)."""
    return lambda r: select_kdpp_quality(r.cov, r.acquisition if r.quality_values is None else r.quality_values, r.k,
                                         r.rng, temperature=r.temperature, acquisition=r.acquisition, anchor=r.anchor)


def kdpp_selector() -> Any:
    """:func:`select_kdpp` behind the uniform interface (registry entry ``kdpp``)."""
    return lambda r: select_kdpp(r.cov, r.k, r.rng, acquisition=r.acquisition)


def bucb_selector() -> Any:
    """:func:`select_bucb` behind the uniform interface (registry entry ``bucb``)."""
    return lambda r: select_bucb(r.mean, r.cov, r.k, kappa=r.kappa, noise_variance=r.noise_variance)


def thompson_selector() -> Any:
    """:func:`select_thompson` behind the uniform interface (registry entry ``thompson``)."""
    return lambda r: select_thompson(r.mean, r.cov, r.k, r.rng, acquisition=r.acquisition)
