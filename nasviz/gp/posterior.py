"""The GP posterior: conditioning on data, predictive moments, intervals.

With training architectures ``X`` (n), standardised targets ``z`` (n,), kernel hyperparameters
``theta``, amplitude ``a`` and noise variance ``s``, the covariance of the observations is
``C = a K(X, X) + s I`` and, for candidates ``x'`` (m), (paper 000 Eqs. (8), (9); Rasmussen &
Williams Eqs. 2.25, 2.26)::

    mean = a K(x', X) C^{-1} z                               (m,)
    cov  = a K(x', x') - a^2 K(x', X) C^{-1} K(X, x')         (m, m)

computed as in R&W Algorithm 2.1 from the Cholesky factor ``L`` of ``C``: ``alpha = C^{-1} z``,
``V = L^{-1} a K(X, x')``, ``cov = a K(x', x') - V^T V``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
import scipy.linalg as sla
from scipy.stats import norm

from nasviz.gp.linalg import cholesky_with_jitter

if TYPE_CHECKING:
    from nasviz.arch import Architecture
    from nasviz.kernels.base import Components, Kernel


@dataclass(frozen=True, eq=False)
class TrainingPosterior:
    """What conditioning on the training data leaves (standardised ``z`` units).

    ``train`` (n architectures), ``theta`` (kernel hyperparameters, kernel order), ``amplitude``
    ``a``, ``noise`` ``s``, ``L`` (n, n) the lower Cholesky factor of ``C = a K + s I`` (plus
    ``jitter I`` if it had to be added), ``alpha = C^{-1} z`` (n,) and ``z`` (n,).
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
        ``alpha``; raises ``numpy.linalg.LinAlgError`` if ``C`` cannot be factorised."""
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
    covariance is symmetrised and otherwise left as computed.
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
    half = norm.ppf(0.5 + level / 2) * np.sqrt(var)
    return mean - half, mean + half


__all__ = ["TrainingPosterior", "central_interval", "latent_moments", "prior_diagonal"]
