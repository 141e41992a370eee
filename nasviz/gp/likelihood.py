"""Log marginal likelihood, its gradient, and type-II maximum likelihood (ML-II) fitting.

For standardised targets ``z`` (n,) and ``C = a K_theta + s I`` (paper 000 Eq. (27); Rasmussen &
Williams Eq. 2.30, evaluated as in their Algorithm 2.1)::

    L = -1/2 z^T C^{-1} z - sum_i log L_ii - n/2 log(2 pi),     L L^T = C

and its gradient (paper 000 Eq. (28); R&W Eq. 5.9), with ``alpha = C^{-1} z``::

    dL/dp = 1/2 tr((alpha alpha^T - C^{-1}) dC/dp)

where ``dC/dtheta_i = a dK/dtheta_i`` comes from the kernel's ``combine_with_gradients``
(Eqs. 29-31 of paper 000 for tree-Wasserstein), ``dC/da = K`` and ``dC/ds = I``.

Parameters are optimised in a packed vector: the continuous kernel hyperparameters (in log
space where the kernel declares ``log_scale``), then ``log a`` and ``log s``; by multi-start
L-BFGS-B within bounds (:func:`fit_hyperparameters`). Discrete hyperparameters (WL's depth
``h``) are chosen by optimising the continuous ones for each discrete value and keeping the
largest likelihood (paper 002 Sec. 3.1). With no continuous kernel hyperparameter left, ``K`` is
fixed and the likelihood comes from one eigendecomposition ``K = U Lambda U^T``
(``C = U (a Lambda + s) U^T``), which makes each evaluation O(n). With a prior on the
hyperparameters (:mod:`nasviz.gp.prior`) the same machinery maximises ``L + log p`` (MAP).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np
from scipy.optimize import minimize

from nasviz.linalg import factor_solve, factor_solve_inverse
from nasviz.gp.prior import HyperPrior

if TYPE_CHECKING:
    from nasviz.kernels.base import Components, Hyperparameter, Kernel

LOG_2PI = float(np.log(2.0 * np.pi))
#: Returned in place of ``-L`` at points where ``C`` is not positive definite: the optimiser
#: steps back instead of being handed a repaired (jittered) covariance.
REJECTED = 1e25


def gaussian_log_likelihood(z: np.ndarray, alpha: np.ndarray, chol_diag: np.ndarray) -> float:
    """``-1/2 z^T alpha - sum log diag(L) - n/2 log 2 pi`` (R&W Algorithm 2.1, line 5);
    ``z``, ``alpha = C^{-1} z`` and ``chol_diag = diag(L)`` all shape ``(n,)``."""
    return float(-0.5 * z @ alpha - np.sum(np.log(chol_diag)) - 0.5 * len(z) * LOG_2PI)


class MarginalLikelihood:
    """Negative log marginal likelihood and its gradient in packed (log) parameters.

    Parameters
    ----------
    kernel : Kernel
    comps : Components
        The kernel's components over the training set, each ``(n, n)``.
    z : ndarray (n,)
        Standardised targets.
    theta : ndarray (n_theta,)
        Kernel hyperparameters; the discrete ones stay fixed at these values.
    continuous : list of int
        Indices of the continuous hyperparameters (the ones packed).
    hps : sequence of Hyperparameter
    allow_eig : bool
        Use the O(n) eigenbasis evaluation when no continuous hyperparameter is packed.
    prior : HyperPrior, optional
        Adds its log density (:mod:`nasviz.gp.prior`): the value is then ``-(L + log p)``, whose
        minimum is the MAP estimate.
    """

    def __init__(self, kernel: Kernel, comps: Components, z: np.ndarray, theta: np.ndarray,
                 continuous: list[int], hps: Sequence[Hyperparameter], allow_eig: bool = True,
                 prior: HyperPrior | None = None) -> None:
        self.kernel, self.comps, self.z = kernel, comps, z
        self.theta = np.asarray(theta, dtype=float).copy()
        self.continuous, self.hps = continuous, hps
        self.prior = prior
        self._rate_mask = [bool(hps[i].rate and hps[i].log_scale) for i in continuous]
        self.n = len(z)
        self._eig: tuple[np.ndarray, np.ndarray] | None = None
        if allow_eig and not continuous:
            # K is fixed: C = U (a lam + s) U^T. K is PSD for such kernels (WL) up to round-off;
            # negative round-off eigenvalues are set to 0 so a lam + s stays the spectrum of C.
            # This is the exact spectral form of the same likelihood, not a repair: a singular C
            # is rejected below, as the Cholesky path rejects it.
            K = np.asarray(kernel.combine(comps, self.theta), dtype=float)
            lam, U = np.linalg.eigh(0.5 * (K + K.T))
            self._eig = (np.maximum(lam, 0.0), U.T @ z)

    def pack(self, theta: np.ndarray, a: float, s: float) -> np.ndarray:
        """Packed vector ``(n_continuous + 2,)`` from natural ``theta``, ``a``, ``s``."""
        vals = [np.log(theta[i]) if self.hps[i].log_scale else theta[i] for i in self.continuous]
        return np.array(vals + [np.log(a), np.log(max(s, 1e-300))], dtype=float)

    def unpack(self, p: np.ndarray) -> tuple[np.ndarray, float, float]:
        """Natural ``(theta (n_theta,), a, s)`` from a packed vector."""
        theta = self.theta.copy()
        for k, i in enumerate(self.continuous):
            theta[i] = np.exp(p[k]) if self.hps[i].log_scale else p[k]
        return theta, float(np.exp(p[-2])), float(np.exp(p[-1]))

    def bounds(self, amp_bounds: tuple[float, float], noise_bounds: tuple[float, float],
               rate_bounds: tuple[float, float] | None = None) -> np.ndarray:
        """Box bounds of the packed vector, shape ``(n_continuous + 2, 2)``; ``rate_bounds``
        replaces the kernel's own bounds of every rate (:attr:`Hyperparameter.rate`)."""
        rows = []
        for i in self.continuous:
            lo, hi = searched_bounds(self.hps[i], rate_bounds)
            rows.append((np.log(lo), np.log(hi)) if self.hps[i].log_scale else (lo, hi))
        rows.append((np.log(amp_bounds[0]), np.log(amp_bounds[1])))
        rows.append((np.log(noise_bounds[0]), np.log(noise_bounds[1])))
        return np.array(rows, dtype=float)

    def log_prior(self, p: np.ndarray) -> tuple[float, np.ndarray]:
        """``(log p, d log p / dp)`` of the prior at packed ``p`` (zeros without a prior)."""
        if self.prior is None:
            return 0.0, np.zeros(len(p))
        return self.prior.packed(p, self._rate_mask)

    def _with_prior(self, p: np.ndarray, value: float, grad: np.ndarray) -> tuple[float, np.ndarray]:
        """``(-L, -dL/dp)`` minus the log prior and its gradient; a rejected point stays rejected."""
        if self.prior is None or value >= REJECTED:
            return value, grad
        lp, dlp = self.log_prior(p)
        return value - lp, grad - dlp

    def _covariance(self, K: np.ndarray, a: float, s: float) -> np.ndarray:
        C = a * np.asarray(K, dtype=float)
        C[np.diag_indices(self.n)] += s
        return C

    def value(self, p: np.ndarray) -> float:
        """``-L`` (``-(L + log p)`` with a prior) only (one Cholesky, no inverse): for screening
        random starts."""
        if self._eig is not None:
            return self.value_and_grad(p)[0]
        theta, a, s = self.unpack(p)
        solved = factor_solve(self._covariance(self.kernel.combine(self.comps, theta), a, s), self.z)
        if solved is None:
            return REJECTED
        c, alpha = solved
        lml = gaussian_log_likelihood(self.z, alpha, np.diag(c))
        return float(-lml - self.log_prior(p)[0]) if np.isfinite(lml) else REJECTED

    def value_and_grad(self, p: np.ndarray) -> tuple[float, np.ndarray]:
        """``(-L, -dL/dp)``, the gradient shape ``(n_continuous + 2,)`` (Eq. (28))."""
        if self._eig is not None:
            return self._eig_value_and_grad(p)
        theta, a, s = self.unpack(p)
        z = self.z
        K, dKs = self.kernel.combine_with_gradients(self.comps, theta)
        solved = factor_solve_inverse(self._covariance(K, a, s), z)
        if solved is None:
            return REJECTED, np.zeros_like(p)
        L, alpha, Cinv = solved
        lml = gaussian_log_likelihood(z, alpha, np.diag(L))
        # Eq. (28): dL/dp = 1/2 tr((alpha alpha^T - C^{-1}) dC/dp)
        #                 = 1/2 (alpha^T dC alpha - <C^{-1}, dC>)   (dC symmetric)
        grad = np.empty(len(p))
        for k, i in enumerate(self.continuous):
            dK = np.asarray(dKs[i], dtype=float)
            g = 0.5 * a * (alpha @ (dK @ alpha) - np.vdot(Cinv, dK))
            grad[k] = g * theta[i] if self.hps[i].log_scale else g  # chain rule for log theta
        K = np.asarray(K, dtype=float)
        grad[-2] = 0.5 * a * (alpha @ (K @ alpha) - np.vdot(Cinv, K))  # d/dlog a: a dC/da = a K
        grad[-1] = 0.5 * s * (alpha @ alpha - np.trace(Cinv))  # d/dlog s: s dC/ds = s I
        if not np.isfinite(lml):
            return REJECTED, np.zeros_like(p)
        return self._with_prior(p, -lml, -grad)

    def _eig_value_and_grad(self, p: np.ndarray) -> tuple[float, np.ndarray]:
        """The same in the eigenbasis of the fixed ``K``: ``C^{-1}`` and ``log|C|`` are diagonal."""
        assert self._eig is not None
        _, a, s = self.unpack(p)
        lam, zt = self._eig
        d = a * lam + s
        if d.min() <= 1e-12 * max(float(d.max()), 1e-300):  # singular C: not a valid point
            return REJECTED, np.zeros_like(p)
        lml = -0.5 * np.sum(zt**2 / d) - 0.5 * np.sum(np.log(d)) - 0.5 * self.n * LOG_2PI
        w = zt**2 / d**2 - 1.0 / d  # diag of (alpha alpha^T - C^{-1}) in the eigenbasis
        grad = np.array([0.5 * np.sum(w * a * lam), 0.5 * np.sum(w * s)])
        return self._with_prior(p, float(-lml), -grad)


def log_marginal_likelihood_at(kernel: Kernel, comps: Components, z: np.ndarray, theta: np.ndarray,
                               a: float, s: float, with_gradient: bool = False):
    """Eq. (27) at given natural hyperparameters; with ``with_gradient`` also the gradient in
    natural units: ``dL/dtheta_i`` for the continuous ``theta_i`` (kernel order), then
    ``dL/da``, ``dL/ds``, as one array ``(n_continuous + 2,)``."""
    hps = kernel.hyperparameters
    continuous = [i for i, h in enumerate(hps) if h.discrete is None]
    obj = MarginalLikelihood(kernel, comps, z, theta, continuous, hps, allow_eig=False)
    f, g = obj.value_and_grad(obj.pack(theta, a, s))
    if not with_gradient:
        return -f
    # Chain rule back from packed (log) parameters to natural units.
    nat = np.empty_like(g)
    for k, i in enumerate(continuous):
        nat[k] = -g[k] / theta[i] if hps[i].log_scale else -g[k]
    nat[-2] = -g[-2] / a
    nat[-1] = -g[-1] / s
    return -f, nat


# ---------------------------------------------------------------------------------- ML-II
@dataclass(frozen=True)
class MLOptions:
    """Settings of :func:`fit_hyperparameters` (see :class:`~nasviz.gp.model.GaussianProcess`)."""

    learn: bool
    n_restarts: int
    amplitude0: float
    noise0: float
    amplitude_bounds: tuple[float, float]
    noise_bounds: tuple[float, float]
    max_iter: int
    ftol: float
    #: Random starting points screened per random restart; the best by likelihood are kept.
    screen: int = 4
    #: MAP instead of ML-II: the prior added to Eq. (27) (:mod:`nasviz.gp.prior`); ``None``: ML-II.
    prior: HyperPrior | None = None
    #: Bounds of every kernel rate instead of the kernel's own (:data:`nasviz.gp.prior.HYPER_BOXES`).
    rate_bounds: tuple[float, float] | None = None


def searched_bounds(hp: Hyperparameter, rate_bounds: tuple[float, float] | None) -> tuple[float, float]:
    """The natural ``(low, high)`` a fit searches for ``hp``: ``rate_bounds`` for a rate when
    given (:data:`nasviz.gp.prior.HYPER_BOXES`), else the kernel's own bounds."""
    return rate_bounds if rate_bounds is not None and hp.rate else hp.bounds


@dataclass
class HyperparameterFit:
    """The best hyperparameters found: natural ``theta``, ``amplitude``, ``noise``, their
    ``log_marginal_likelihood``; ``candidates`` maps each discrete setting tried (e.g. ``"h=1"``)
    to its best likelihood; ``initial_log_marginal_likelihood`` is at the defaults. With a prior
    (:attr:`MLOptions.prior`) ``log_marginal_likelihood`` and ``candidates`` are the MAP objective
    ``L + log p``, the quantity compared; the initial value is ``L`` alone."""

    theta: np.ndarray
    amplitude: float
    noise: float
    log_marginal_likelihood: float
    candidates: dict[str, float] = field(default_factory=dict)
    n_evaluations: int = 0
    initial_log_marginal_likelihood: float = float("nan")


def fit_hyperparameters(kernel: Kernel, comps: Components, z: np.ndarray, options: MLOptions,
                        rng: np.random.Generator, warm_starts: dict[tuple, np.ndarray]) -> HyperparameterFit:
    """ML-II: maximise Eq. (27) over ``(theta, a, s)`` for each discrete setting; keep the best.

    ``comps`` the training components (each ``(n, n)``), ``z`` (n,). ``warm_starts`` maps a
    discrete setting to the packed optimum of the previous fit; it is read as the first start
    and updated in place. Without ``options.learn`` the defaults are evaluated, not optimised.
    """
    hps = kernel.hyperparameters
    discrete = [i for i, h in enumerate(hps) if h.discrete is not None]
    continuous = [i for i, h in enumerate(hps) if h.discrete is None]
    theta0 = kernel.default_theta()
    default_combo = tuple(theta0[i] for i in discrete)
    combos = list(itertools.product(*(hps[i].discrete for i in discrete))) if discrete else [()]
    if not options.learn:
        combos = [default_combo]
    best: HyperparameterFit | None = None
    candidates: dict[str, float] = {}
    n_evals = 0
    initial_lml = float("nan")
    for combo in combos:
        theta = theta0.copy()
        for i, v in zip(discrete, combo):
            theta[i] = v
        objective = MarginalLikelihood(kernel, comps, z, theta, continuous, hps, prior=options.prior)
        s0 = max(options.noise0, options.noise_bounds[0]) if options.learn else options.noise0
        p_default = objective.pack(theta, options.amplitude0, s0)
        if not np.isfinite(initial_lml) and combo == default_combo:
            initial_lml = -objective.value_and_grad(p_default)[0] - objective.log_prior(p_default)[0]
        if options.learn:
            p_best, evals = _optimise(objective, p_default, options, rng, warm_starts.get(combo))
            n_evals += evals
            warm_starts[combo] = p_best
        else:
            p_best = p_default
        lml = -objective.value_and_grad(p_best)[0]
        n_evals += 1
        label = ",".join(f"{hps[i].name}={v:g}" for i, v in zip(discrete, combo)) or "all"
        candidates[label] = float(lml)
        if best is None or lml > best.log_marginal_likelihood:
            theta_best, a_best, s_best = objective.unpack(p_best)
            best = HyperparameterFit(theta_best, a_best, s_best, lml)
    assert best is not None
    best.candidates, best.n_evaluations, best.initial_log_marginal_likelihood = candidates, n_evals, float(initial_lml)
    return best


def _optimise(objective: MarginalLikelihood, p_default: np.ndarray, options: MLOptions,
              rng: np.random.Generator, previous: np.ndarray | None) -> tuple[np.ndarray, int]:
    """Multi-start L-BFGS-B from :func:`_starts`; returns the best packed point and the number
    of likelihood evaluations spent."""
    bounds = objective.bounds(options.amplitude_bounds, options.noise_bounds, options.rate_bounds)
    starts, n_evals = _starts(objective, p_default, bounds, options, rng, previous)
    best: tuple[float, np.ndarray] | None = None
    for p0 in starts[: max(options.n_restarts, 1)]:
        res = minimize(
            objective.value_and_grad, p0, jac=True, method="L-BFGS-B", bounds=bounds,
            options={"maxiter": options.max_iter, "ftol": options.ftol},
        )
        n_evals += int(res.nfev)
        if np.isfinite(res.fun) and (best is None or res.fun < best[0]):
            best = (float(res.fun), res.x.copy())
    if best is None:
        best = (objective.value_and_grad(starts[0])[0], starts[0])
    return best[1], n_evals


def _starts(objective: MarginalLikelihood, p_default: np.ndarray, bounds: np.ndarray, options: MLOptions,
            rng: np.random.Generator, previous: np.ndarray | None) -> tuple[list[np.ndarray], int]:
    """Starting points: the previous fit's optimum (if any), the defaults, then screened random
    points. Returns the starts and the number of likelihood values spent screening."""
    starts = [np.clip(p_default, bounds[:, 0], bounds[:, 1])]
    if previous is not None and len(previous) == len(p_default):
        starts.insert(0, np.clip(previous, bounds[:, 0], bounds[:, 1]))
    n_random = options.n_restarts - len(starts)
    if n_random <= 0:
        return starts, 0
    # Screened random starts: draw `screen` x as many points uniformly in the (log) box, keep
    # the ones with the best likelihood. Uniform points often land where the kernel is
    # degenerate (e.g. every lambda ~ 1e3, K ~ I) and cost a long, useless L-BFGS-B run; a value
    # costs a third of a gradient.
    draws = rng.uniform(bounds[:, 0], bounds[:, 1], size=(options.screen * n_random, len(bounds)))
    scores = np.array([objective.value(q) for q in draws])
    starts.extend(draws[np.argsort(scores)[:n_random]])
    return starts, len(draws)


__all__ = ["LOG_2PI", "HyperparameterFit", "MLOptions", "MarginalLikelihood", "fit_hyperparameters",
           "gaussian_log_likelihood", "log_marginal_likelihood_at", "searched_bounds"]
