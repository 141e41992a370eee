"""Priors on the GP's hyperparameters: maximum a posteriori (MAP) fitting instead of ML-II.

ML-II (:mod:`nasviz.gp.likelihood`) lets the fit run to its bounds: on the NB201 and NB101
tables the default kernel's Hamming rate sits on its lower bound (the factor switched off) in
most fits of most runs, the noise on its lower bound (exact interpolation) in up to 86 % of a
run's fits, and the amplitude ends at 2-80 on standardised targets (docs/benchmarks.md, "Priors
on the GP's hyperparameters"). Optuna's GPSampler (Optuna 5,
``optuna/_gp/prior.py``) maximises the log marginal likelihood plus a log prior instead::

    log p = sum_j -(0.1 / l_j + 0.1 l_j)     each inverse squared lengthscale l_j (mode 1)
          + (2 - 1) log a - a                 the kernel scale a: Gamma(shape 2, rate 1)
          + (1.1 - 1) log s - 30 s            the noise variance s: Gamma(shape 1.1, rate 30)

up to constants. nasviz's GP is ``C = a K_theta + s I`` on standardised targets (paper 000
Eq. (27)), so ``a`` and ``s`` are the same quantities. A kernel's *rates* (tree-Wasserstein's
``lambda_i`` in ``exp(-sum_i lambda_i W_i)``, the Hamming factor's ``l``) multiply distances of
order one, the role Optuna's inverse squared lengthscales play in its kernel, so they get the same
term; a kernel marks them with :attr:`~nasviz.kernels.base.Hyperparameter.rate`, and other
hyperparameters get no prior. As in Optuna, the density is on the natural values and is maximised
over the packed log values without the Jacobian.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.optimize import brentq


@dataclass(frozen=True)
class HyperPrior:
    """Independent priors on a kernel's rates, the amplitude ``a`` and the noise variance ``s``.

    Attributes
    ----------
    name : str
        How the step's notes and explanation call it.
    rate_weight : float
        ``w`` in ``log p(l) = -(w / l + w l)`` for each rate ``l`` (mode 1).
    amplitude : (shape, rate)
        Gamma prior on ``a``.
    noise : (shape, rate)
        Gamma prior on ``s``.
    """

    name: str = "custom"
    rate_weight: float = 0.1
    amplitude: tuple[float, float] = (2.0, 1.0)
    noise: tuple[float, float] = (1.1, 30.0)

    def packed(self, p: np.ndarray, rate_mask: Sequence[bool]) -> tuple[float, np.ndarray]:
        """``(log p, d log p / d p)`` at the packed vector ``p`` of shape ``(n_continuous + 2,)``
        (kernel values, then ``log a``, ``log s``); ``rate_mask`` (n_continuous,) marks the kernel
        coordinates that are log rates. Unmarked coordinates add nothing."""
        p = np.asarray(p, dtype=float)
        grad = np.zeros_like(p)
        w = self.rate_weight
        rates = np.flatnonzero(np.asarray(rate_mask, dtype=bool))  # packed indices of the log rates
        lam = np.exp(p[rates])
        value = float(-np.sum(w / lam + w * lam))
        grad[rates] = w / lam - w * lam  # d/dlog l of -(w/l + w l)
        for k, (shape, rate) in ((-2, self.amplitude), (-1, self.noise)):  # Gamma(shape, rate) on a, s
            x = float(np.exp(p[k]))
            value += (shape - 1.0) * p[k] - rate * x
            grad[k] = (shape - 1.0) - rate * x
        return float(value), grad

    def rate_box(self, drop: float = 2.0) -> tuple[float, float]:
        """The rates ``l`` whose log density is within ``drop`` of its maximum (at ``l = 1``).

        ``w / l + w l = 2 w + drop`` is ``l^2 - 2 c l + 1 = 0`` with ``c = 1 + drop / (2 w)``,
        so the box is ``c -+ sqrt(c^2 - 1)``: ``[0.0455, 21.95]`` for Optuna's ``w = 0.1`` and
        ``drop = 2``. The box is symmetric in ``log l`` about 1.
        """
        c = 1.0 + drop / (2.0 * self.rate_weight)
        root = math.sqrt(c * c - 1.0)
        return c - root, c + root

    def amplitude_box(self, drop: float = 2.0) -> tuple[float, float]:
        """The amplitudes ``a`` whose Gamma log density is within ``drop`` of its maximum at the
        mode ``(shape - 1) / rate`` (needs ``shape > 1``): ``[0.052, 4.51]`` for Gamma(2, 1)."""
        shape, rate = self.amplitude
        if shape <= 1:
            raise ValueError(f"the amplitude's Gamma shape must exceed 1 to have a mode, got {shape}")
        mode = (shape - 1.0) / rate

        def below_peak(a: float) -> float:  # log density at the mode minus at a, minus drop
            return (shape - 1.0) * math.log(mode / a) - rate * (mode - a) - drop

        low = brentq(below_peak, mode * 1e-12, mode)
        high = brentq(below_peak, mode, mode + (drop + shape) / rate * 100.0)
        return float(low), float(high)


@dataclass(frozen=True)
class HyperBox:
    """Bounds of the GP's hyperparameter search box that replace the wide defaults.

    ``rates`` bounds every kernel rate (:attr:`~nasviz.kernels.base.Hyperparameter.rate`),
    ``amplitude`` the signal variance ``a``; ``None`` keeps the kernel's or the GP's own.
    """

    rates: tuple[float, float] | None = None
    amplitude: tuple[float, float] | None = None


#: Optuna GPSampler's priors (module docstring).
OPTUNA_PRIOR = HyperPrior(name="optuna")
#: ``GaussianProcess(prior=...)`` / the BO option ``hyper_prior``: name -> prior (``None``: ML-II).
PRIORS: dict[str, HyperPrior | None] = {"none": None, "optuna": OPTUNA_PRIOR}


#: The BO option ``hyper_bounds``: ML-II (no prior) inside a narrower box. ``"optuna-rates"`` and
#: ``"optuna"`` take the box where Optuna's prior density is within ``e^-2`` of its maximum
#: (:meth:`HyperPrior.rate_box`, :meth:`HyperPrior.amplitude_box`): a rate below 0.0455 multiplies
#: distances of order one by almost nothing, so ML-II could switch that part of the kernel off
#: (docs/benchmarks.md, "Bounds on the GP's hyperparameters"). The noise keeps its own bounds: the
#: prior's box would cap it at 0.08 of the targets' variance, which a noisy table exceeds.
HYPER_BOXES: dict[str, HyperBox | None] = {
    "wide": None,
    "optuna-rates": HyperBox(rates=OPTUNA_PRIOR.rate_box()),
    "optuna": HyperBox(rates=OPTUNA_PRIOR.rate_box(), amplitude=OPTUNA_PRIOR.amplitude_box()),
}


def box_named(name: str) -> HyperBox | None:
    """The box called ``name`` (:data:`HYPER_BOXES`); ``ValueError`` lists the names."""
    try:
        return HYPER_BOXES[name]
    except KeyError:
        raise ValueError(f"unknown hyperparameter box {name!r}; known: {', '.join(HYPER_BOXES)}") from None


def prior_named(name: str) -> HyperPrior | None:
    """The prior called ``name`` (:data:`PRIORS`); ``ValueError`` lists the names."""
    try:
        return PRIORS[name]
    except KeyError:
        raise ValueError(f"unknown hyperparameter prior {name!r}; known: {', '.join(PRIORS)}") from None


__all__ = ["HYPER_BOXES", "HyperBox", "HyperPrior", "OPTUNA_PRIOR", "PRIORS", "box_named", "prior_named"]
