"""The GP model: :class:`GaussianProcess` (fit / predict), :class:`FitResult`.

Model (paper 000 Sec. 3, Eqs. (8), (9)): transformed targets ``z`` (:mod:`nasviz.gp.transforms`)
follow a zero-mean GP with covariance ``C = a K_theta + s I``, where ``K_theta`` is the kernel's
:meth:`~nasviz.kernels.base.Kernel.combine` of precomputed components, ``a`` the amplitude
(signal variance) and ``s`` the observation-noise variance. ``(theta, a, s)`` maximise the log
marginal likelihood (:mod:`nasviz.gp.likelihood`); the posterior is in :mod:`nasviz.gp.posterior`.

Kernel components for the training set are computed once per fit and reused by every
likelihood evaluation; :class:`~nasviz.gp.components_cache.ComponentsCache` also keeps them
across fits so a growing training set only costs the new rows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.gp.components_cache import ComponentsCache
from nasviz.gp.cross import CandidateSet, set_moments
from nasviz.gp.likelihood import (MLOptions, fit_hyperparameters, gaussian_log_likelihood, log_marginal_likelihood_at,
                                  searched_bounds)
from nasviz.linalg import blas_limit
from nasviz.gp.prior import HyperPrior, prior_named
from nasviz.gp.posterior import TrainingPosterior, central_interval, latent_moments
from nasviz.gp.transforms import TargetTransform
from nasviz.kernels.base import Kernel


@dataclass
class FitResult:
    """What one :meth:`GaussianProcess.fit` learned (plain data, for hyperparameter traces).

    ``amplitude`` and ``noise`` are in the units of the transformed, standardised targets ``z``;
    :attr:`GaussianProcess.noise_variance_y` gives the noise in the original units.
    ``candidates`` lists, for each value of the discrete hyperparameters tried, the best log
    marginal likelihood reached (e.g. ``{"h=0": -60.1, "h=1": -52.3, "h=2": -55.0}``).
    ``jitter`` is the diagonal shift added to ``C`` to factorise it (0 normally).
    """

    theta: dict[str, float]
    amplitude: float
    noise: float
    log_marginal_likelihood: float
    jitter: float
    seconds: float
    n_obs: int
    transform: str = "standardize"
    candidates: dict[str, float] = field(default_factory=dict)
    n_evaluations: int = 0
    initial_log_marginal_likelihood: float = float("nan")

    def as_dict(self) -> dict:
        return {
            "theta": dict(self.theta),
            "amplitude": self.amplitude,
            "noise": self.noise,
            "log_marginal_likelihood": self.log_marginal_likelihood,
            "jitter": self.jitter,
            "seconds": self.seconds,
            "n_obs": self.n_obs,
            "transform": self.transform,
            "candidates": dict(self.candidates),
            "n_evaluations": self.n_evaluations,
            "initial_log_marginal_likelihood": self.initial_log_marginal_likelihood,
        }


#: The default bounds of the noise variance (standardised ``z`` units): the low end is a numerical
#: floor (the fit may interpolate the data), the high end says "all noise, no signal".
DEFAULT_NOISE_BOUNDS = (1e-6, 2.0)


class GaussianProcess:
    """GP regression on a :class:`~nasviz.kernels.base.Kernel` with ML-II (or MAP) hyperparameters.

    Parameters
    ----------
    kernel : Kernel
        Any nasviz kernel; its components are cached per architecture.
    transform : {"standardize", "log_error", "none"}
        Target transform (:mod:`nasviz.gp.transforms`).
    n_restarts : int
        L-BFGS-B starts per discrete setting: the previous fit (if any), the defaults, then
        random points in the (log) bounds (the best of ``4 x`` as many draws, by likelihood).
    seed : int
        Seed of the random restarts.
    learn : bool
        Learn hyperparameters by ML-II; if False, use the kernel defaults, ``amplitude`` and
        ``noise``.
    amplitude, noise : float
        Starting (or, with ``learn=False``, fixed) signal and noise variance in ``z`` units.
    amplitude_bounds, noise_bounds : (float, float)
        Bounds of the learned variances in ``z`` units. A noise lower bound above
        :data:`DEFAULT_NOISE_BOUNDS`'s is a floor chosen on purpose (:meth:`floors`).
    max_value : float
        Upper bound of an accuracy-like target for ``transform="log_error"`` (100 for percent).
    max_iter, ftol : int, float
        L-BFGS-B options per start.
    prior : HyperPrior or str, optional
        A prior on the hyperparameters (or its name in :data:`nasviz.gp.prior.PRIORS`, e.g.
        ``"optuna"``): the fit is then MAP instead of ML-II. ``None``: ML-II.
    rate_bounds : (float, float), optional
        Bounds of every kernel rate (:attr:`~nasviz.kernels.base.Hyperparameter.rate`) instead of
        the kernel's own (:data:`nasviz.gp.prior.HYPER_BOXES`); ``None`` keeps the kernel's.
    """

    #: Random starting points drawn per random restart; the best by likelihood are kept.
    SCREEN = 4

    def __init__(
        self,
        kernel: Kernel,
        transform: str = "standardize",
        n_restarts: int = 3,
        seed: int = 0,
        learn: bool = True,
        *,
        amplitude: float = 1.0,
        noise: float = 0.1,
        amplitude_bounds: tuple[float, float] = (1e-2, 1e2),
        noise_bounds: tuple[float, float] = DEFAULT_NOISE_BOUNDS,
        max_value: float = 100.0,
        max_iter: int = 100,
        ftol: float = 1e-5,
        prior: HyperPrior | str | None = None,
        rate_bounds: tuple[float, float] | None = None,
    ) -> None:
        if not isinstance(kernel, Kernel):
            raise ValueError(f"kernel must be a nasviz Kernel, got {type(kernel).__name__}")
        self._target = TargetTransform(transform, float(max_value))  # validates the name
        if int(n_restarts) < 1:
            raise ValueError(f"n_restarts must be >= 1, got {n_restarts}")
        named_bounds = [("amplitude_bounds", amplitude_bounds), ("noise_bounds", noise_bounds)]
        if rate_bounds is not None:
            named_bounds.append(("rate_bounds", rate_bounds))
        for name, (lo, hi) in named_bounds:
            if not (0 < lo <= hi):
                raise ValueError(f"{name} must satisfy 0 < low <= high, got {(lo, hi)}")
        if amplitude <= 0 or noise < 0:
            raise ValueError(f"amplitude must be > 0 and noise >= 0, got {amplitude}, {noise}")
        self.kernel = kernel
        self.transform = transform
        self.n_restarts = int(n_restarts)
        self.seed = int(seed)
        self.learn = bool(learn)
        self.amplitude0 = float(amplitude)
        self.noise0 = float(noise)
        self.amplitude_bounds = (float(amplitude_bounds[0]), float(amplitude_bounds[1]))
        self.noise_bounds = (float(noise_bounds[0]), float(noise_bounds[1]))
        self.rate_bounds = None if rate_bounds is None else (float(rate_bounds[0]), float(rate_bounds[1]))
        self.max_value = float(max_value)
        self.max_iter = int(max_iter)
        self.ftol = float(ftol)
        self.prior: HyperPrior | None = prior_named(prior) if isinstance(prior, str) else prior
        self.components_cache = ComponentsCache(kernel)
        self._rng = np.random.default_rng(seed)
        self._posterior: TrainingPosterior | None = None
        self._u_mean, self._u_std = 0.0, 1.0
        self._last_params: dict[tuple, np.ndarray] = {}
        self._candidate_sets: dict[int, CandidateSet] = {}
        self.fit_result: FitResult | None = None

    # ------------------------------------------------------------------ fitting
    def fit(self, archs: Sequence[Architecture], y: np.ndarray) -> FitResult:
        """Fit to ``archs`` (length n) and targets ``y`` (shape (n,)); learn hyperparameters.

        Returns the :class:`FitResult` (also kept as :attr:`fit_result`). If the covariance
        cannot be factorised, the previous fit stays in place.
        """
        with blas_limit(len(archs)):
            return self._fit(archs, y)

    def _fit(self, archs: Sequence[Architecture], y: np.ndarray) -> FitResult:
        start = time.perf_counter()
        archs = list(archs)
        y = np.asarray(y, dtype=float).reshape(-1)
        if len(archs) == 0:
            raise ValueError("fit needs at least one observation, got 0 architectures")
        if len(archs) != len(y):
            raise ValueError(f"archs has {len(archs)} entries but y has {len(y)}")
        bad = np.flatnonzero(~np.isfinite(y))
        if bad.size:
            raise ValueError(f"y[{bad[0]}] = {y[bad[0]]} is not finite")
        u = self._target.to_latent(y)
        u_mean, u_std = self._target.standardisation(u)
        z = (u - u_mean) / u_std
        if hasattr(self.kernel, "set_reference"):
            # Kernels whose features depend on a reference set (the edit kernel's Bourgain
            # embedding) embed the training set, so fit and every later prediction share it.
            self.kernel.set_reference(archs)
        comps = self.components_cache.get(archs)
        options = MLOptions(
            learn=self.learn, n_restarts=self.n_restarts, amplitude0=self.amplitude0, noise0=self.noise0,
            amplitude_bounds=self.amplitude_bounds, noise_bounds=self.noise_bounds, max_iter=self.max_iter,
            ftol=self.ftol, screen=self.SCREEN, prior=self.prior, rate_bounds=self.rate_bounds,
        )
        hp = fit_hyperparameters(self.kernel, comps, z, options, self._rng, self._last_params)
        # Condition first: if the factorisation fails, the previous posterior stays intact.
        post = TrainingPosterior.condition(self.kernel, comps, archs, z, hp.theta, hp.amplitude, hp.noise)
        self._posterior, self._u_mean, self._u_std = post, u_mean, u_std
        self.fit_result = FitResult(
            theta=self.kernel.theta_dict(post.theta),
            amplitude=float(post.amplitude),
            noise=float(post.noise),
            log_marginal_likelihood=gaussian_log_likelihood(z, post.alpha, np.diag(post.L)),
            jitter=float(post.jitter),
            seconds=time.perf_counter() - start,
            n_obs=len(archs),
            transform=self.transform,
            candidates=hp.candidates,
            n_evaluations=hp.n_evaluations,
            initial_log_marginal_likelihood=hp.initial_log_marginal_likelihood,
        )
        return self.fit_result

    def floors(self) -> dict[str, float]:
        """Name -> value of every lower bound raised on purpose above the default box: the noise
        variance's, when ``noise_bounds`` starts above :data:`DEFAULT_NOISE_BOUNDS`'s numerical
        floor. A fit resting on such a floor has the value the caller chose (the data alone would
        have fitted less), not one the data left undetermined: :func:`nasviz.state.gp_fit_state`
        reports it apart from the bounds the fit hit."""
        return {"noise": self.noise_bounds[0]} if self.noise_bounds[0] > DEFAULT_NOISE_BOUNDS[0] else {}

    def search_box(self) -> dict[str, tuple[float, float]]:
        """Name -> (low, high) of every continuous hyperparameter's search box, the amplitude's
        and the noise's included: what a fit on a bound is measured against."""
        box = {h.name: searched_bounds(h, self.rate_bounds) for h in self.kernel.hyperparameters if h.discrete is None}
        box.update({"amplitude": self.amplitude_bounds, "noise": self.noise_bounds})
        return box

    # ------------------------------------------------------------------ prediction
    @property
    def noise_variance_y(self) -> float:
        """Observation-noise variance in the original ``y`` units.

        Exact for ``standardize`` / ``none`` (``s * std^2``). For ``log_error`` the noise is
        homoscedastic in ``u = -log(max - y)``; it is reported by the delta method at the
        median training error (``s * std^2 * median(max - y)^2``).
        """
        post = self._fitted_posterior()
        return self._target.noise_variance(post.noise * self._u_std**2, self._u_mean + self._u_std * post.z)

    def predict_latent(
        self, archs: Sequence[Architecture], full_cov: bool = True, include_noise: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Posterior of ``u`` (the target after the log transform, before standardisation).

        Eqs. (8), (9) of paper 000. Returns ``mean (m,)`` and ``cov (m, m)`` (``full_cov``) or
        ``var (m,)``. ``include_noise`` adds the observation noise (predictive of a new ``y``).
        """
        post = self._fitted_posterior()
        with blas_limit(len(post.train)):
            mean_z, second = latent_moments(self.kernel, post, list(archs), full_cov, include_noise)
        if len(mean_z) == 0:
            return mean_z, second
        return self._u_mean + self._u_std * mean_z, second * self._u_std**2

    def predict(
        self, archs: Sequence[Architecture], full_cov: bool = True, include_noise: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and covariance (``full_cov``) or standard deviation, in ``y`` units.

        Returns ``mean (m,)`` and ``cov (m, m)`` if ``full_cov`` else ``std (m,)``; for
        ``log_error`` the exact moments of the back-transform
        (:meth:`~nasviz.gp.transforms.TargetTransform.moments`).
        """
        mean_u, second = self.predict_latent(archs, full_cov=full_cov, include_noise=include_noise)
        return self._target.moments(mean_u, second, full_cov)

    def candidate_set(self, archs: Sequence[Architecture]) -> CandidateSet:
        """The :class:`~nasviz.gp.cross.CandidateSet` of the sequence ``archs``, made on the first
        call and kept for later calls with the *same* sequence object (a table's domain), so its
        components against the training set are computed once per pair."""
        cset = self._candidate_sets.get(id(archs))
        if cset is None or cset.source is not archs:
            if len(self._candidate_sets) >= 4:  # a few fixed sets per search, never a growing list
                self._candidate_sets.pop(next(iter(self._candidate_sets)))
            cset = self._candidate_sets[id(archs)] = CandidateSet(self.kernel, archs)
        return cset

    def predict_set(self, cset: CandidateSet) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and standard deviation at every candidate of ``cset``, ``(m,)`` each,
        in ``y`` units (as :meth:`predict` with ``full_cov=False``, from cached components)."""
        post = self._fitted_posterior()
        with blas_limit(len(post.train)):
            mean_z, var_z = set_moments(self.kernel, post, cset)
        return self._target.moments(self._u_mean + self._u_std * mean_z, var_z * self._u_std**2, False)

    def predict_interval(
        self, archs: Sequence[Architecture], level: float = 0.95, include_noise: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """Central ``level`` predictive interval in ``y`` units, ``(lower (m,), upper (m,))``.

        Exact quantiles: Gaussian in ``u``, mapped through the monotone back-transform.
        """
        if not 0 < level < 1:
            raise ValueError(f"level must be in (0, 1), got {level}")
        mean_u, var_u = self.predict_latent(archs, full_cov=False, include_noise=include_noise)
        lo, hi = central_interval(mean_u, var_u, level)
        return self._target.from_latent(lo), self._target.from_latent(hi)

    # ------------------------------------------------------------------ accessors
    @property
    def train_archs(self) -> list[Architecture]:
        return list(self._fitted_posterior().train)

    @property
    def theta(self) -> np.ndarray:
        """The kernel hyperparameter vector in use (kernel order)."""
        return self._fitted_posterior().theta.copy()

    @property
    def amplitude(self) -> float:
        return self._fitted_posterior().amplitude

    @property
    def alpha(self) -> np.ndarray:
        """``C^{-1} z``, shape ``(n,)`` (standardised units)."""
        return self._fitted_posterior().alpha.copy()

    @property
    def target_scale(self) -> tuple[float, float]:
        """``(mean, std)`` that standardise ``u``: ``z = (u - mean) / std``."""
        self._fitted_posterior()
        return self._u_mean, self._u_std

    @property
    def posterior(self) -> TrainingPosterior:
        """The conditioned state (training set, hyperparameters, Cholesky factor, ``alpha``)."""
        return self._fitted_posterior()

    def log_marginal_likelihood(self, theta: Sequence[float] | None = None, amplitude: float | None = None,
                                noise: float | None = None, with_gradient: bool = False):
        """Eq. (27) at given hyperparameters on the fitted data (defaults: the fitted values).

        With ``with_gradient`` also returns ``dL/d(theta_i)`` (continuous ones, natural units),
        ``dL/d amplitude`` and ``dL/d noise`` as one array (Eq. 28).
        """
        post = self._fitted_posterior()
        theta = post.theta if theta is None else np.asarray(theta, dtype=float)
        a = post.amplitude if amplitude is None else float(amplitude)
        s = post.noise if noise is None else float(noise)
        comps = self.components_cache.get(post.train)
        return log_marginal_likelihood_at(self.kernel, comps, post.z, theta, a, s, with_gradient)

    def _fitted_posterior(self) -> TrainingPosterior:
        if self._posterior is None:
            raise RuntimeError("the GaussianProcess is not fitted yet: call fit(archs, y) first")
        return self._posterior


__all__ = ["DEFAULT_NOISE_BOUNDS", "FitResult", "GaussianProcess"]
