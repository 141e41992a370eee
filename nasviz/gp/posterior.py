"""The GP posterior: conditioning on data, predictive moments, intervals, joint draws.

With training architectures ``X`` (n), standardised targets ``z`` (n,), kernel hyperparameters
``theta``, amplitude ``a`` and noise variance ``s``, the covariance of the observations is
``C = a K(X, X) + s I`` and, for candidates ``x'`` (m), (paper 000 Eqs. (8), (9); Rasmussen &
Williams Eqs. 2.25, 2.26)::

    mean = a K(x', X) C^{-1} z                               (m,)
    cov  = a K(x', x') - a^2 K(x', X) C^{-1} K(X, x')         (m, m)

computed as in R&W Algorithm 2.1 from the Cholesky factor ``L`` of ``C``: ``alpha = C^{-1} z``,
``V = L^{-1} a K(X, x')``, ``cov = a K(x', x') - V^T V``.

:func:`sample_posterior` draws joint samples ``f ~ N(mean, cov)`` over a finite pool (Thompson
sampling, Hernandez-Lobato et al., 2017); its square root of ``cov`` follows the project's one
PSD-repair policy (:func:`nasviz.linalg.psd_sqrt`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
import scipy.linalg as sla
from scipy.special import ndtri  # the standard normal quantile, without importing scipy.stats

from nasviz.linalg import cholesky_with_jitter, psd_sqrt

if TYPE_CHECKING:
    from nasviz.arch import Architecture
    from nasviz.kernels.base import Components, Kernel


@dataclass(frozen=True, eq=False)
class TrainingPosterior:
    """What conditioning on the training data leaves (standardised ``z`` units).

    ``train`` (n architectures), ``theta`` (kernel hyperparameters, kernel order), ``amplitude``
    ``a``, ``noise`` ``s``, ``L`` (n, n) the lower Cholesky factor of ``C = a K + s I`` (plus
    ``jitter I`` if the PSD policy had to add it), ``alpha = C^{-1} z`` (n,) and ``z`` (n,).
    """

    train: list[Architecture]
    theta: np.ndarray
    amplitude: float
    noise: float
    L: np.ndarray
    jitter: float
    alpha: np.ndarray
    z: np.ndarray

    @classmethod
    def condition(cls, kernel: Kernel, comps: Components, train: list[Architecture], z: np.ndarray,
                  theta: np.ndarray, amplitude: float, noise: float) -> TrainingPosterior:
        """Factor ``C = a K_theta + s I`` (components ``comps`` of ``train``) and solve for
        ``alpha``; raises ``numpy.linalg.LinAlgError`` if the PSD policy refuses ``C``."""
        theta = np.asarray(theta, dtype=float)
        C = amplitude * np.asarray(kernel.combine(comps, theta), dtype=float) + noise * np.eye(len(z))
        L, jitter = cholesky_with_jitter(C, context=f"n={len(z)}")
        alpha = sla.cho_solve((L, True), z)
        return cls(train, theta, float(amplitude), float(noise), L, jitter, alpha, z)


def latent_moments(
    kernel: Kernel, post: TrainingPosterior, archs: list[Architecture], full_cov: bool, include_noise: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior of ``z`` at ``archs`` (m): ``mean (m,)`` and ``cov (m, m)`` or ``var (m,)``.

    Eqs. (8), (9) of paper 000. ``include_noise`` adds ``s`` (the predictive of a new
    observation). Variances are clipped at 0 (round-off in ``a k(x,x) - v^T v``); the full
    covariance is symmetrised and left as computed, for the caller's PSD policy to handle.
    """
    m = len(archs)
    if m == 0:
        return np.zeros(0), (np.zeros((0, 0)) if full_cov else np.zeros(0))
    a = post.amplitude
    Ks = a * np.asarray(kernel.combine(kernel.components(archs, post.train), post.theta))
    mean_z = Ks @ post.alpha
    V = sla.solve_triangular(post.L, Ks.T, lower=True)  # (n, m)
    if full_cov:
        Kss = a * np.asarray(kernel.combine(kernel.components(archs, archs), post.theta))
        cov = Kss - V.T @ V
        cov = 0.5 * (cov + cov.T)
        if include_noise:
            cov[np.diag_indices(m)] += post.noise
        return mean_z, cov
    var = a * prior_diagonal(kernel, post.theta, archs) - np.einsum("ij,ij->j", V, V)
    var = np.maximum(var, 0.0) + (post.noise if include_noise else 0.0)
    return mean_z, var


def prior_diagonal(kernel: Kernel, theta: np.ndarray, archs: list[Architecture]) -> np.ndarray:
    """``k_theta(x, x)`` for each of ``archs``, shape ``(m,)``, without an ``m x m`` matrix
    (the kernel's ``diagonal_components`` when it has them, else 128-row diagonal blocks)."""
    diag_fn = getattr(kernel, "diagonal_components", None)
    if diag_fn is not None:
        comps = {k: np.asarray(v, dtype=float)[:, None] for k, v in diag_fn(archs).items()}
        return np.asarray(kernel.combine(comps, theta)).reshape(-1)
    out = np.empty(len(archs))
    chunk = 128
    for lo in range(0, len(archs), chunk):
        part = archs[lo : lo + chunk]
        out[lo : lo + len(part)] = np.diag(kernel.combine(kernel.components(part, part), theta))
    return out


def central_interval(mean: np.ndarray, var: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Central ``level`` interval of ``N(mean, var)``, elementwise: ``(lower (m,), upper (m,))``."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    half = ndtri(0.5 + level / 2) * np.sqrt(var)
    return mean - half, mean + half


class PosteriorSampler:
    """Joint draws from ``N(mean, cov)`` over a finite pool, factorising ``cov`` once.

    ``f = mean + R eps`` with ``eps ~ N(0, I_m)`` and ``R`` the square root of ``cov`` from
    :func:`~nasviz.linalg.psd_sqrt` (R&W App. A.2). Under the project's PSD-repair policy a
    posterior covariance that is PSD up to round-off is used as it is (no jitter), so pool members
    the kernel cannot tell apart (equal rows of ``cov``) get draws equal up to round-off; a
    genuinely indefinite one is shifted by the least diagonal jitter, reported as :attr:`jitter`.

    Parameters
    ----------
    mean : array (m,)
    cov : array (m, m), symmetric
    """

    def __init__(self, mean: Sequence[float] | np.ndarray, cov: np.ndarray) -> None:
        mean = np.asarray(mean, dtype=float).reshape(-1)
        cov = np.asarray(cov, dtype=float)
        m = len(mean)
        if cov.shape != (m, m):
            raise ValueError(f"cov must have shape ({m}, {m}) to match mean, got {cov.shape}")
        if not np.all(np.isfinite(cov)):
            raise ValueError("cov contains non-finite values")
        self.root, self.jitter = psd_sqrt(cov)  # (m, m), float
        self.mean = mean

    def draw(self, n_draws: int, rng: np.random.Generator) -> np.ndarray:
        """``n_draws`` joint samples, shape ``(n_draws, m)``; consumes ``n_draws * m`` standard
        normals from ``rng``, so consecutive calls continue one stream."""
        if int(n_draws) < 1:
            raise ValueError(f"n_draws must be >= 1, got {n_draws}")
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
        eps = rng.standard_normal((int(n_draws), len(self.mean)))
        return self.mean[None, :] + eps @ self.root.T


def sample_posterior(mean: Sequence[float] | np.ndarray, cov: np.ndarray, n_draws: int,
                     rng: np.random.Generator) -> np.ndarray:
    """``n_draws`` joint samples of ``N(mean, cov)``, shape ``(n_draws, m)``.

    ``mean`` (m,), ``cov`` (m, m). See :class:`PosteriorSampler` for the PSD policy; use it
    directly to draw repeatedly from one factorisation.
    """
    if int(n_draws) < 1:
        raise ValueError(f"n_draws must be >= 1, got {n_draws}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    return PosteriorSampler(mean, cov).draw(n_draws, rng)


__all__ = ["PosteriorSampler", "TrainingPosterior", "central_interval", "latent_moments", "prior_diagonal",
           "sample_posterior"]
