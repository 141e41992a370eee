"""Gaussian-process regression on architecture kernels, with type-II maximum likelihood.

Model (paper 000 §3, Eqs. (8), (9)): transformed targets ``z`` (see *Target transforms*) follow a
zero-mean GP with covariance ``C = a K_theta + s I``, where ``K_theta`` is the kernel's
:meth:`~nasviz.kernels.base.Kernel.combine` of precomputed components, ``a`` the amplitude
(signal variance) and ``s`` the observation-noise variance. The posterior over candidates is::

    mean  = a K(x', X) C^{-1} z                               (Eq. 8)
    cov   = a K(x', x') - a^2 K(x', X) C^{-1} K(X, x')        (Eq. 9)

Hyperparameters ``(theta, a, s)`` maximise the log marginal likelihood (paper 000 Eq. 27)::

    L = -1/2 z^T C^{-1} z - 1/2 log|C| - n/2 log(2 pi)

with the analytic gradient of Eq. (28), ``dL/dp = 1/2 tr((alpha alpha^T - C^{-1}) dC/dp)``,
``alpha = C^{-1} z``, where ``dC/dtheta_i = a dK/dtheta_i`` comes from the kernel's
:meth:`combine_with_gradients` (Eqs. 29-31 for tree-Wasserstein). Parameters are optimised in
log space where the kernel declares ``log_scale`` (amplitude and noise always), by multi-start
L-BFGS-B within bounds. Discrete hyperparameters (WL's depth ``h``) are chosen by optimising the
continuous ones for each discrete value and keeping the largest likelihood (paper 002 §3.1).
When no continuous kernel hyperparameter is left, the likelihood is evaluated from one
eigendecomposition of ``K`` (``C = U (a Lambda + s) U^T``), which makes each step O(n).

Kernel components for the training set are computed once per fit and reused by every
likelihood evaluation; :class:`ComponentsCache` also keeps them across fits so a growing
training set only costs the new rows.

Target transforms
-----------------
``"standardize"``: ``z = (y - mean(y)) / std(y)``. ``"log_error"`` (paper 002 App. D: "we
transform the validation errors into log-scale, normalise the data and transform it back"):
for accuracy-like targets with a known maximum ``max_value`` (100 for percent),
``u = -log(max_value - y)`` (the sign flip keeps "higher is better"), then standardised;
predictions are transformed back with the exact moments of the resulting shifted log-normal.
``"none"``: ``z = y`` (zero prior mean in the original units).
"""

from __future__ import annotations

import contextlib
import itertools
import time
import warnings
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import scipy.linalg as sla
from scipy.optimize import minimize
from scipy.stats import norm
from threadpoolctl import ThreadpoolController

from nasviz.arch import Architecture
from nasviz.kernels.base import Components, Kernel

TRANSFORMS = ("standardize", "log_error", "none")
_LOG_2PI = float(np.log(2.0 * np.pi))
#: Below this many observations BLAS runs single-threaded inside fit/predict: the matrices are
#: small, and multi-threaded OpenBLAS on a busy machine spends more time synchronising threads
#: than computing (measured: a 200-observation fit took 1.6 s with threads, 0.1 s without).
SINGLE_THREAD_BELOW = 1500
_THREADPOOLS: ThreadpoolController | None = None


def _blas_limit(n: int):
    """Context manager: single-threaded BLAS for small problems (see :data:`SINGLE_THREAD_BELOW`)."""
    global _THREADPOOLS
    if n >= SINGLE_THREAD_BELOW:
        return contextlib.nullcontext()
    if _THREADPOOLS is None:
        _THREADPOOLS = ThreadpoolController()
    return _THREADPOOLS.limit(limits=1, user_api="blas")


# ---------------------------------------------------------------------------------------------
# results and caches
# ---------------------------------------------------------------------------------------------
@dataclass
class FitResult:
    """What one :meth:`GaussianProcess.fit` learned (plain data, for hyperparameter traces).

    ``amplitude`` and ``noise`` are in the units of the transformed, standardised targets ``z``;
    :attr:`GaussianProcess.noise_variance_y` gives the noise in the original units.
    ``candidates`` lists, for each value of the discrete hyperparameters tried, the best log
    marginal likelihood reached (e.g. ``{"h=0": -60.1, "h=1": -52.3, "h=2": -55.0}``).
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


class ComponentsCache:
    """Kernel components over every architecture seen so far, grown one block at a time.

    ``get(archs)`` returns the components of ``archs`` against themselves, shape
    ``(len(archs), len(archs))`` each, computing only the rows of architectures not seen before
    (``kernel.components(new, all)``; the kernel is symmetric, so the columns are their
    transpose). Kernels whose components depend on the whole set (a data-dependent embedding)
    set ``pairwise_components = False`` and are recomputed on every call.
    """

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self._archs: list[Architecture] = []
        self._index: dict[Architecture, int] = {}
        self._store: dict[str, np.ndarray] = {}
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._archs)

    def get(self, archs: Sequence[Architecture]) -> Components:
        archs = list(archs)
        if not getattr(self.kernel, "pairwise_components", True):
            self.misses += len(archs)
            return self.kernel.components(archs, archs)
        new: list[Architecture] = []
        idx = np.empty(len(archs), dtype=np.int64)
        for j, arch in enumerate(archs):
            i = self._index.get(arch)
            if i is None:
                i = self._index[arch] = len(self._archs)
                self._archs.append(arch)
                new.append(arch)
            idx[j] = i
        self.misses += len(new)
        self.hits += len(archs) - len(new)
        if new:
            self._grow(new)
        return {name: M[np.ix_(idx, idx)] for name, M in self._store.items()}

    def _grow(self, new: list[Architecture]) -> None:
        n_total = len(self._archs)
        n_old = n_total - len(new)
        block = self.kernel.components(new, self._archs)  # (n_new, n_total)
        for name, rows in block.items():
            rows = np.asarray(rows, dtype=float)
            old = self._store.get(name)
            capacity = 0 if old is None else old.shape[0]
            if capacity < n_total:
                grown = np.zeros((max(n_total, 2 * capacity), max(n_total, 2 * capacity)))
                if old is not None:
                    grown[:capacity, :capacity] = old
                old = grown
            old[n_old:n_total, :n_total] = rows
            old[:n_total, n_old:n_total] = rows.T
            self._store[name] = old


# ---------------------------------------------------------------------------------------------
# linear algebra helpers
# ---------------------------------------------------------------------------------------------
def cholesky_with_jitter(C: np.ndarray, max_tries: int = 10, context: str = "") -> tuple[np.ndarray, float]:
    """Lower Cholesky factor of ``C``, adding escalating jitter to the diagonal if needed.

    Tries ``C``, then ``C + j I`` with ``j = mean(diag C) * 10^k`` for ``k = -10 .. -1``; warns
    (``RuntimeWarning``) with the jitter used. Returns ``(L, jitter)``, ``L`` shape ``(n, n)``.
    Raises ``numpy.linalg.LinAlgError`` if even the largest jitter fails.
    """
    n = len(C)
    try:
        return np.linalg.cholesky(C), 0.0
    except np.linalg.LinAlgError:
        pass
    scale = float(np.mean(np.diag(C))) if n else 1.0
    scale = scale if np.isfinite(scale) and scale > 0 else 1.0
    for k in range(-max_tries, 0):
        jitter = scale * 10.0**k
        try:
            L = np.linalg.cholesky(C + jitter * np.eye(n))
        except np.linalg.LinAlgError:
            continue
        warnings.warn(
            f"GP covariance matrix{(' (' + context + ')') if context else ''} is not positive definite "
            f"(duplicate or near-identical architectures?); added jitter {jitter:.3g} to the diagonal",
            RuntimeWarning,
            stacklevel=3,
        )
        return L, jitter
    raise np.linalg.LinAlgError(f"GP covariance matrix is not positive definite even with jitter {scale * 0.1:.3g}")


def _factor_solve_inverse(C: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Cholesky of ``C`` (n, n), ``alpha = C^{-1} z`` (n,) and ``C^{-1}`` (n, n) by LAPACK
    ``potrf``/``potrs``/``potri`` (called directly: about 4x faster than the checked wrappers for
    the n ~ 200 matrices of a likelihood step). ``None`` if ``C`` is not positive definite."""
    c, info = sla.lapack.dpotrf(C, lower=1, clean=1)
    if info != 0:
        return None
    alpha, info = sla.lapack.dpotrs(c, z, lower=1)
    inv, info2 = sla.lapack.dpotri(c, lower=1)
    if info != 0 or info2 != 0:
        return None
    # potri fills the lower triangle only (the upper one is zero after clean=1).
    inv = inv + inv.T
    inv[np.diag_indices_from(inv)] *= 0.5
    return c, alpha, inv


# ---------------------------------------------------------------------------------------------
# the model
# ---------------------------------------------------------------------------------------------
class GaussianProcess:
    """GP regression on a :class:`~nasviz.kernels.base.Kernel` with ML-II hyperparameters.

    Parameters
    ----------
    kernel : Kernel
        Any nasviz kernel; its components are cached per architecture.
    transform : {"standardize", "log_error", "none"}
        Target transform (see the module docstring).
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
        Bounds of the learned variances in ``z`` units.
    max_value : float
        Upper bound of an accuracy-like target for ``transform="log_error"`` (100 for percent).
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
        noise_bounds: tuple[float, float] = (1e-6, 2.0),
        max_value: float = 100.0,
        max_iter: int = 100,
        ftol: float = 1e-5,
    ) -> None:
        if not isinstance(kernel, Kernel):
            raise ValueError(f"kernel must be a nasviz Kernel, got {type(kernel).__name__}")
        if transform not in TRANSFORMS:
            raise ValueError(f"transform must be one of {', '.join(TRANSFORMS)}, got {transform!r}")
        if int(n_restarts) < 1:
            raise ValueError(f"n_restarts must be >= 1, got {n_restarts}")
        for name, (lo, hi) in (("amplitude_bounds", amplitude_bounds), ("noise_bounds", noise_bounds)):
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
        self.max_value = float(max_value)
        self.max_iter = int(max_iter)
        self.ftol = float(ftol)
        self.components_cache = ComponentsCache(kernel)
        self._rng = np.random.default_rng(seed)
        self._fitted = False
        self._last_params: dict[tuple, np.ndarray] = {}
        self.fit_result: FitResult | None = None

    # ------------------------------------------------------------------ target transforms
    def _to_latent(self, y: np.ndarray) -> np.ndarray:
        """``u``: the target before standardisation (identity, or ``-log(max - y)``)."""
        if self.transform != "log_error":
            return y
        bad = np.flatnonzero(y > self.max_value)
        if bad.size:
            raise ValueError(
                f"log_error transform needs y <= max_value={self.max_value}; y[{bad[0]}] = {y[bad[0]]}"
            )
        # y == max_value would give log(0): floor the error at a tiny fraction of the range.
        err = np.maximum(self.max_value - y, 1e-6 * max(abs(self.max_value), 1.0))
        return -np.log(err)

    def _standardise(self, u: np.ndarray) -> tuple[float, float]:
        if self.transform == "none":
            return 0.0, 1.0
        mu = float(np.mean(u))
        sd = float(np.std(u))
        return mu, (sd if sd > 1e-12 else 1.0)

    # ------------------------------------------------------------------ fitting
    def fit(self, archs: Sequence[Architecture], y: np.ndarray) -> FitResult:
        """Fit to ``archs`` (length n) and targets ``y`` (shape (n,)); learn hyperparameters.

        Returns the :class:`FitResult` (also kept as :attr:`fit_result`).
        """
        with _blas_limit(len(archs)):
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
        u = self._to_latent(y)
        u_mean, u_std = self._standardise(u)
        z = (u - u_mean) / u_std
        if hasattr(self.kernel, "set_reference"):
            # Kernels whose features depend on a reference set (the edit kernel's Bourgain
            # embedding) embed the training set, so fit and every later prediction share it.
            self.kernel.set_reference(archs)
        comps = self.components_cache.get(archs)

        hps = self.kernel.hyperparameters
        discrete = [i for i, h in enumerate(hps) if h.discrete is not None]
        continuous = [i for i, h in enumerate(hps) if h.discrete is None]
        theta0 = self.kernel.default_theta()
        candidates: dict[str, float] = {}
        n_evals = 0
        best: tuple[float, np.ndarray, float, float] | None = None
        initial_lml = float("nan")

        combos = list(itertools.product(*(hps[i].discrete for i in discrete))) if discrete else [()]
        if not self.learn:
            combos = [tuple(theta0[i] for i in discrete)]
        for combo in combos:
            theta = theta0.copy()
            for i, v in zip(discrete, combo):
                theta[i] = v
            objective = _Objective(self.kernel, comps, z, theta, continuous, hps)
            s0 = max(self.noise0, self.noise_bounds[0]) if self.learn else self.noise0
            p_default = objective.pack(theta, self.amplitude0, s0)
            if not np.isfinite(initial_lml) and combo == tuple(theta0[i] for i in discrete):
                initial_lml = -objective.value_and_grad(p_default)[0]
            if self.learn:
                bounds = objective.bounds(self.amplitude_bounds, self.noise_bounds)
                starts = [np.clip(p_default, bounds[:, 0], bounds[:, 1])]
                prev = self._last_params.get(combo)
                if prev is not None and len(prev) == len(p_default):
                    starts.insert(0, np.clip(prev, bounds[:, 0], bounds[:, 1]))
                n_random = self.n_restarts - len(starts)
                if n_random > 0:
                    # Random starts, screened: draw SCREEN x as many points uniformly in the
                    # (log) box, keep the ones with the best likelihood. Uniform points often
                    # land where the kernel is degenerate (e.g. every lambda ~ 1e3, K ~ I) and
                    # cost a long, useless L-BFGS-B run; a value costs a third of a gradient.
                    draws = self._rng.uniform(bounds[:, 0], bounds[:, 1], size=(self.SCREEN * n_random, len(bounds)))
                    scores = np.array([objective.value(q) for q in draws])
                    n_evals += len(draws)
                    starts.extend(draws[np.argsort(scores)[:n_random]])
                best_combo: tuple[float, np.ndarray] | None = None
                for p0 in starts[: max(self.n_restarts, 1)]:
                    res = minimize(
                        objective.value_and_grad, p0, jac=True, method="L-BFGS-B", bounds=bounds,
                        options={"maxiter": self.max_iter, "ftol": self.ftol},
                    )
                    n_evals += int(res.nfev)
                    if np.isfinite(res.fun) and (best_combo is None or res.fun < best_combo[0]):
                        best_combo = (float(res.fun), res.x.copy())
                if best_combo is None:
                    best_combo = (objective.value_and_grad(starts[0])[0], starts[0])
                p_best = best_combo[1]
                self._last_params[combo] = p_best
            else:
                p_best = p_default
            lml = -objective.value_and_grad(p_best)[0]
            n_evals += 1
            label = ",".join(f"{hps[i].name}={v:g}" for i, v in zip(discrete, combo)) or "all"
            candidates[label] = float(lml)
            if best is None or lml > best[0]:
                theta_best, a_best, s_best = objective.unpack(p_best)
                best = (lml, theta_best, a_best, s_best)

        assert best is not None
        lml, theta, a, s = best
        self._set_posterior(archs, comps, z, theta, a, s)
        self._u_mean, self._u_std = u_mean, u_std
        self._fitted = True
        self.fit_result = FitResult(
            theta=self.kernel.theta_dict(theta),
            amplitude=float(a),
            noise=float(s),
            log_marginal_likelihood=float(self._lml_exact(z)),
            jitter=float(self._jitter),
            seconds=time.perf_counter() - start,
            n_obs=len(archs),
            transform=self.transform,
            candidates=candidates,
            n_evaluations=n_evals,
            initial_log_marginal_likelihood=float(initial_lml),
        )
        return self.fit_result

    def _set_posterior(self, archs, comps, z, theta, a, s) -> None:
        theta = np.asarray(theta, dtype=float)
        C = a * np.asarray(self.kernel.combine(comps, theta), dtype=float) + s * np.eye(len(z))
        # Factor first: if it fails, the previous posterior stays intact.
        L, jitter = cholesky_with_jitter(C, context=f"n={len(z)}")
        self._train, self._theta, self._amplitude, self._noise = archs, theta, float(a), float(s)
        self._L, self._jitter = L, jitter
        self._alpha = sla.cho_solve((L, True), z)
        self._z = z

    def _lml_exact(self, z: np.ndarray) -> float:
        return float(-0.5 * z @ self._alpha - np.sum(np.log(np.diag(self._L))) - 0.5 * len(z) * _LOG_2PI)

    # ------------------------------------------------------------------ prediction
    @property
    def noise_variance_y(self) -> float:
        """Observation-noise variance in the original ``y`` units.

        Exact for ``standardize`` / ``none`` (``s * std^2``). For ``log_error`` the noise is
        homoscedastic in ``u = -log(max - y)``; it is reported by the delta method at the
        median training error (``s * std^2 * median(max - y)^2``).
        """
        self._check_fitted()
        var_u = self._noise * self._u_std**2
        if self.transform != "log_error":
            return float(var_u)
        u = self._u_mean + self._u_std * self._z
        return float(var_u * np.median(np.exp(-u)) ** 2)

    def predict_latent(
        self, archs: Sequence[Architecture], full_cov: bool = True, include_noise: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Posterior of ``u`` (the target after the log transform, before standardisation).

        Eqs. (8), (9) of paper 000. Returns ``mean (m,)`` and ``cov (m, m)`` (``full_cov``) or
        ``var (m,)``. ``include_noise`` adds the observation noise (predictive of a new ``y``).
        """
        self._check_fitted()
        with _blas_limit(len(self._train)):
            return self._predict_latent(archs, full_cov, include_noise)

    def _predict_latent(self, archs, full_cov: bool, include_noise: bool) -> tuple[np.ndarray, np.ndarray]:
        archs = list(archs)
        m = len(archs)
        if m == 0:
            return np.zeros(0), (np.zeros((0, 0)) if full_cov else np.zeros(0))
        a = self._amplitude
        Ks = a * np.asarray(self.kernel.combine(self.kernel.components(archs, self._train), self._theta))
        mean_z = Ks @ self._alpha
        V = sla.solve_triangular(self._L, Ks.T, lower=True)  # (n, m)
        scale2 = self._u_std**2
        mean_u = self._u_mean + self._u_std * mean_z
        if full_cov:
            Kss = a * np.asarray(self.kernel.combine(self.kernel.components(archs, archs), self._theta))
            cov = Kss - V.T @ V
            cov = 0.5 * (cov + cov.T)
            if include_noise:
                cov[np.diag_indices(m)] += self._noise
            return mean_u, cov * scale2
        var = a * self._prior_diag(archs) - np.einsum("ij,ij->j", V, V)
        var = np.maximum(var, 0.0) + (self._noise if include_noise else 0.0)
        return mean_u, var * scale2

    def predict(
        self, archs: Sequence[Architecture], full_cov: bool = True, include_noise: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and covariance (``full_cov``) or standard deviation, in ``y`` units.

        Returns ``mean (m,)`` and ``cov (m, m)`` if ``full_cov`` else ``std (m,)``. For
        ``log_error`` these are the exact moments of ``y = max - exp(-u)`` with ``u`` Gaussian
        (a shifted log-normal): ``E y = max - exp(-mu + v/2)``,
        ``Cov(y_i, y_j) = exp(-mu_i - mu_j + (v_i + v_j)/2) (exp(S_ij) - 1)``.
        """
        mean_u, second = self.predict_latent(archs, full_cov=full_cov, include_noise=include_noise)
        if self.transform != "log_error":
            return mean_u, (second if full_cov else np.sqrt(np.maximum(second, 0.0)))
        var_u = np.diag(second) if full_cov else second
        e_mean = np.exp(-mean_u + 0.5 * var_u)
        mean = self.max_value - e_mean
        if full_cov:
            cov = np.outer(e_mean, e_mean) * np.expm1(second)
            return mean, cov
        return mean, e_mean * np.sqrt(np.expm1(var_u))

    def predict_interval(
        self, archs: Sequence[Architecture], level: float = 0.95, include_noise: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """Central ``level`` predictive interval in ``y`` units, ``(lower (m,), upper (m,))``.

        Exact quantiles: Gaussian in ``u``, mapped through the monotone back-transform.
        """
        if not 0 < level < 1:
            raise ValueError(f"level must be in (0, 1), got {level}")
        mean_u, var_u = self.predict_latent(archs, full_cov=False, include_noise=include_noise)
        half = norm.ppf(0.5 + level / 2) * np.sqrt(var_u)
        lo, hi = mean_u - half, mean_u + half
        if self.transform == "log_error":
            lo, hi = self.max_value - np.exp(-lo), self.max_value - np.exp(-hi)
        return lo, hi

    def _prior_diag(self, archs: list[Architecture]) -> np.ndarray:
        """``K(x, x)`` for each candidate, shape ``(m,)``, without building an ``m x m`` matrix."""
        diag_fn = getattr(self.kernel, "diagonal_components", None)
        if diag_fn is not None:
            comps = {k: np.asarray(v, dtype=float)[:, None] for k, v in diag_fn(archs).items()}
            return np.asarray(self.kernel.combine(comps, self._theta)).reshape(-1)
        out = np.empty(len(archs))
        chunk = 128
        for lo in range(0, len(archs), chunk):
            part = archs[lo : lo + chunk]
            out[lo : lo + len(part)] = np.diag(self.kernel.combine(self.kernel.components(part, part), self._theta))
        return out

    # ------------------------------------------------------------------ accessors
    @property
    def train_archs(self) -> list[Architecture]:
        self._check_fitted()
        return list(self._train)

    @property
    def theta(self) -> np.ndarray:
        """The kernel hyperparameter vector in use (kernel order)."""
        self._check_fitted()
        return self._theta.copy()

    @property
    def amplitude(self) -> float:
        self._check_fitted()
        return self._amplitude

    @property
    def alpha(self) -> np.ndarray:
        """``C^{-1} z``, shape ``(n,)`` (standardised units)."""
        self._check_fitted()
        return self._alpha.copy()

    @property
    def target_scale(self) -> tuple[float, float]:
        """``(mean, std)`` that standardise ``u``: ``z = (u - mean) / std``."""
        self._check_fitted()
        return self._u_mean, self._u_std

    def log_marginal_likelihood(self, theta: Sequence[float] | None = None, amplitude: float | None = None,
                                noise: float | None = None, with_gradient: bool = False):
        """Eq. (27) at given hyperparameters on the fitted data (defaults: the fitted values).

        With ``with_gradient`` also returns ``dL/d(theta_i)`` (continuous ones, natural units),
        ``dL/d amplitude`` and ``dL/d noise`` as one array (Eq. 28).
        """
        self._check_fitted()
        theta = self._theta if theta is None else np.asarray(theta, dtype=float)
        a = self._amplitude if amplitude is None else float(amplitude)
        s = self._noise if noise is None else float(noise)
        comps = self.components_cache.get(self._train)
        hps = self.kernel.hyperparameters
        continuous = [i for i, h in enumerate(hps) if h.discrete is None]
        obj = _Objective(self.kernel, comps, self._z, theta, continuous, hps, allow_eig=False)
        p = obj.pack(theta, a, s)
        f, g = obj.value_and_grad(p)
        if not with_gradient:
            return -f
        # Chain rule back from packed (log) parameters to natural units.
        nat = np.empty_like(g)
        for k, i in enumerate(continuous):
            nat[k] = -g[k] / theta[i] if hps[i].log_scale else -g[k]
        nat[-2] = -g[-2] / a
        nat[-1] = -g[-1] / s
        return -f, nat

    def _check_fitted(self) -> None:
        if not self._fitted:
            raise RuntimeError("the GaussianProcess is not fitted yet: call fit(archs, y) first")


class _Objective:
    """Negative log marginal likelihood and its gradient in packed (log) parameters.

    Packed vector: continuous kernel hyperparameters (log where ``log_scale``), then
    ``log amplitude``, ``log noise``.
    """

    def __init__(self, kernel: Kernel, comps: Components, z: np.ndarray, theta: np.ndarray,
                 continuous: list[int], hps, allow_eig: bool = True) -> None:
        self.kernel, self.comps, self.z = kernel, comps, z
        self.theta = np.asarray(theta, dtype=float).copy()
        self.continuous, self.hps = continuous, hps
        self.n = len(z)
        self._eig = None
        if allow_eig and not continuous:
            # No continuous kernel hyperparameter: K is fixed; C = U (a lam + s) U^T.
            K = np.asarray(kernel.combine(comps, self.theta), dtype=float)
            lam, U = np.linalg.eigh(0.5 * (K + K.T))
            self._eig = (np.maximum(lam, 0.0), U.T @ z)

    def pack(self, theta: np.ndarray, a: float, s: float) -> np.ndarray:
        vals = [np.log(theta[i]) if self.hps[i].log_scale else theta[i] for i in self.continuous]
        return np.array(vals + [np.log(a), np.log(max(s, 1e-300))], dtype=float)

    def unpack(self, p: np.ndarray) -> tuple[np.ndarray, float, float]:
        theta = self.theta.copy()
        for k, i in enumerate(self.continuous):
            theta[i] = np.exp(p[k]) if self.hps[i].log_scale else p[k]
        return theta, float(np.exp(p[-2])), float(np.exp(p[-1]))

    def bounds(self, amp_bounds, noise_bounds) -> np.ndarray:
        rows = []
        for i in self.continuous:
            lo, hi = self.hps[i].bounds
            rows.append((np.log(lo), np.log(hi)) if self.hps[i].log_scale else (lo, hi))
        rows.append((np.log(amp_bounds[0]), np.log(amp_bounds[1])))
        rows.append((np.log(noise_bounds[0]), np.log(noise_bounds[1])))
        return np.array(rows, dtype=float)

    def value(self, p: np.ndarray) -> float:
        """Negative log marginal likelihood only (one Cholesky, no inverse)."""
        if self._eig is not None:
            return self.value_and_grad(p)[0]
        theta, a, s = self.unpack(p)
        C = a * np.asarray(self.kernel.combine(self.comps, theta), dtype=float)
        C[np.diag_indices(self.n)] += s
        c, info = sla.lapack.dpotrf(C, lower=1, clean=1)
        if info != 0:
            return 1e25
        alpha, info = sla.lapack.dpotrs(c, self.z, lower=1)
        lml = -0.5 * self.z @ alpha - np.sum(np.log(np.diag(c))) - 0.5 * self.n * _LOG_2PI
        return float(-lml) if info == 0 and np.isfinite(lml) else 1e25

    def value_and_grad(self, p: np.ndarray) -> tuple[float, np.ndarray]:
        theta, a, s = self.unpack(p)
        n, z = self.n, self.z
        if self._eig is not None:
            lam, zt = self._eig
            d = a * lam + s
            if d.min() <= 1e-12 * max(float(d.max()), 1e-300):  # singular C: not a valid point
                return 1e25, np.zeros_like(p)
            lml = -0.5 * np.sum(zt**2 / d) - 0.5 * np.sum(np.log(d)) - 0.5 * n * _LOG_2PI
            w = zt**2 / d**2 - 1.0 / d  # diag of (alpha alpha^T - C^{-1}) in the eigenbasis
            grad = np.array([0.5 * np.sum(w * a * lam), 0.5 * np.sum(w * s)])
            return float(-lml), -grad
        K, dKs = self.kernel.combine_with_gradients(self.comps, theta)
        C = a * np.asarray(K, dtype=float)
        C[np.diag_indices(n)] += s
        solved = _factor_solve_inverse(C, z)
        if solved is None:
            return 1e25, np.zeros_like(p)
        L, alpha, Cinv = solved
        lml = -0.5 * z @ alpha - np.sum(np.log(np.diag(L))) - 0.5 * n * _LOG_2PI
        # Eq. (28): dL/dp = 1/2 tr((alpha alpha^T - C^{-1}) dC/dp)
        #                 = 1/2 (alpha^T dC alpha - <C^{-1}, dC>)   (dC symmetric)
        grad = np.empty(len(p))
        for k, i in enumerate(self.continuous):
            dK = np.asarray(dKs[i], dtype=float)
            g = 0.5 * a * (alpha @ (dK @ alpha) - np.vdot(Cinv, dK))
            grad[k] = g * theta[i] if self.hps[i].log_scale else g
        K = np.asarray(K, dtype=float)
        grad[-2] = 0.5 * a * (alpha @ (K @ alpha) - np.vdot(Cinv, K))
        grad[-1] = 0.5 * s * (alpha @ alpha - np.trace(Cinv))
        if not np.isfinite(lml):
            return 1e25, np.zeros_like(p)
        return float(-lml), -grad


__all__ = ["ComponentsCache", "FitResult", "GaussianProcess", "TRANSFORMS", "cholesky_with_jitter"]
