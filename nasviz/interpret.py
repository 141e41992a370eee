"""WL feature gradients: which sub-structures push the GP's prediction up or down (paper 002 §3.2).

For a GP with the WL kernel, the posterior mean at a candidate with WL feature vector ``phi_t``
is ``mu(phi_t) = a sum_i alpha_i k(phi_t, phi_i)`` (``alpha = C^{-1} z``, ``a`` the amplitude), so
its derivative with respect to the count of feature ``j`` is analytic (Eq. 3.2)::

    d mu / d phi_t^j = a sum_i alpha_i d k(phi_t, phi_i) / d phi_t^j

* dot product, unnormalised: ``a Phi^T alpha`` (Eq. C.2), the same for every candidate;
* dot product, cosine-normalised (what :class:`~nasviz.kernels.wl.WLKernel` uses by default):
  ``k = <phi_t, phi_i> / (|phi_t| |phi_i|)`` and
  ``dk/dphi_t = phi_i / (|phi_t| |phi_i|) - k phi_t / |phi_t|^2``, so the gradient differs per
  candidate (Eq. 3.2 applied to the normalised kernel the GP actually uses);
* optimal assignment: ``min`` is not differentiable; as paper 002 App. C we use its smooth
  approximation (Eq. C.3) ``min(x, c) ~ (x^p + c^p)^(1/p)`` with ``p = -5``, whose derivative is
  ``(x^p + c^p)^(1/p - 1) x^(p - 1)`` (-> 1 as ``x -> 0``; 0 where ``c = 0``), plus the
  normalisation term (``k(a, a) = sum_j a_j``).

The features are those of iterations ``0..h`` with ``h`` the depth the GP selected. Gradients are
reported in the units of ``y``: multiplied by the target standard deviation; for
``transform="log_error"`` they are the gradients of the predictive *median*
``max - exp(-u)`` (chain rule through the monotone back-transform).

:func:`operation_gradient_profile` aggregates them as in paper 002 Fig. 2: for each operation and
each number of its occurrences in a cell (of the reduced graph), the mean gradient over the
candidates with that count (and, if true values are given, their mean and standard deviation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.gp import GaussianProcess
from nasviz.kernels.wl import WLKernel

#: Exponent of the smooth minimum of Eq. (C.3), paper 002.
SMOOTH_MIN_P = -5.0


@dataclass
class FeatureGradients:
    """Posterior-mean gradients with respect to WL feature counts (plain data).

    names : list of str, length F
        Human-readable WL feature names.
    depths : ndarray (F,)
        WL iteration of each feature.
    operations : list of str, length F
        The operation at the root of each feature (for ``h = 0`` features, the feature itself).
    gradients : ndarray (m, F)
        ``d mean(y) / d phi^j`` for each candidate.
    counts : ndarray (m, F)
        Feature counts of the candidates.
    mean_gradient : ndarray (F,)
        Gradient averaged over the candidates.
    h : int
        WL depth used (the GP's selected ``h``).
    """

    names: list[str]
    depths: np.ndarray
    operations: list[str]
    gradients: np.ndarray
    counts: np.ndarray
    mean_gradient: np.ndarray
    h: int

    def top(self, k: int = 10, present_only: bool = True) -> list[tuple[str, float]]:
        """The ``k`` features with the largest absolute mean gradient, as ``(name, gradient)``."""
        mask = (self.counts > 0).any(axis=0) if present_only else np.ones(len(self.names), bool)
        order = [j for j in np.argsort(-np.abs(self.mean_gradient)) if mask[j]]
        return [(self.names[j], float(self.mean_gradient[j])) for j in order[:k]]


@dataclass
class OperationProfile:
    """Paper 002 Fig. 2 for one operation: mean gradient against its count in the cell."""

    operation: str
    counts: list[int]
    mean_gradient: list[float]
    n_archs: list[int]
    value_mean: list[float] | None = None
    value_std: list[float] | None = None


def _wl_setup(gp: GaussianProcess, archs: Sequence[Architecture]):
    kernel = gp.kernel
    if not isinstance(kernel, WLKernel):
        raise ValueError(f"feature gradients need a GP with the WL kernel, got {type(kernel).__name__}")
    h = int(round(gp.theta[0]))  # the depth of the GP's kernel: the mean is a function of these
    train = gp.train_archs
    archs = list(archs)
    # One call so that training and candidate features share the same columns.
    phi, names, depths = kernel.features(train + archs, h)
    phi = phi.toarray()
    return kernel, h, phi[: len(train)], phi[len(train) :], names, depths


def _latent_mean_and_grad(kernel: WLKernel, amplitude: float, alpha: np.ndarray, Phi: np.ndarray,
                          phi: np.ndarray, smooth_p: float) -> tuple[np.ndarray, np.ndarray]:
    """Standardised posterior mean ``(m,)`` and its gradient ``(m, F)`` from dense features."""
    if kernel.base == "dot":
        raw = phi @ Phi.T  # (m, n)
        if not kernel.normalize:
            return amplitude * raw @ alpha, np.broadcast_to(amplitude * (alpha @ Phi), phi.shape).copy()
        nt = np.sqrt(np.sum(phi * phi, axis=1))  # (m,)
        ni = np.sqrt(np.sum(Phi * Phi, axis=1))  # (n,)
        k = raw / np.outer(nt, ni)
        kalpha = k @ alpha  # (m,)
        grad = (alpha / ni) @ Phi  # (F,)
        grad = grad[None, :] / nt[:, None] - (kalpha / nt**2)[:, None] * phi
        return amplitude * kalpha, amplitude * grad
    # Optimal assignment with the smooth minimum of Eq. (C.3); chunks keep (chunk, n, F) small.
    p = smooth_p
    m, F = phi.shape
    ktt = phi.sum(axis=1)
    kii = Phi.sum(axis=1)
    mean = np.empty(m)
    grad = np.empty((m, F))
    chunk = max(1, int(2_000_000 // max(1, Phi.size)))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for lo in range(0, m, chunk):
            x = phi[lo : lo + chunk, None, :]  # (c, 1, F)
            c = Phi[None, :, :]  # (1, n, F)
            both = (x > 0) & (c > 0)
            s = np.where(both, np.power(np.where(both, x, 1.0), p) + np.power(np.where(both, c, 1.0), p), 1.0)
            smin = np.where(both, np.power(s, 1.0 / p), 0.0)  # (c, n, F)
            dmin = np.where(both, np.power(s, 1.0 / p - 1.0) * np.power(np.where(both, x, 1.0), p - 1.0),
                            np.where((x == 0) & (c > 0), 1.0, 0.0))
            kraw = smin.sum(axis=2)  # (c, n)
            norm_ = 1.0 / np.sqrt(np.outer(ktt[lo : lo + chunk], kii))  # (c, n)
            kval = kraw * norm_
            mean[lo : lo + chunk] = kval @ alpha
            # d k / d x_j = dmin_j * norm - 0.5 * k / k_tt   (d k_tt / d x_j = 1)
            w = alpha[None, :] * norm_  # (c, n)
            g = np.einsum("cn,cnf->cf", w, dmin)
            g -= (0.5 * (kval @ alpha) / ktt[lo : lo + chunk])[:, None]
            grad[lo : lo + chunk] = g
    return amplitude * mean, amplitude * grad


def _to_y_units(gp: GaussianProcess, mean_z: np.ndarray, grad_z: np.ndarray) -> np.ndarray:
    u_mean, u_std = gp.target_scale
    grad_u = u_std * grad_z
    if gp.transform == "log_error":
        # d/du of the median max - exp(-u) is exp(-u), at u = the candidate's posterior mean.
        grad_u = grad_u * np.exp(-(u_mean + u_std * mean_z))[:, None]
    return grad_u


def posterior_mean_from_features(gp: GaussianProcess, phi: np.ndarray, smooth_p: float = SMOOTH_MIN_P) -> np.ndarray:
    """The posterior mean as a function of (real-valued) feature vectors, in ``y`` units.

    ``phi`` has shape ``(m, F)`` with the columns of ``kernel.features(archs, h)`` for the GP's
    depth ``h`` (as in :attr:`FeatureGradients.counts`). For ``log_error`` the predictive median is returned. For the
    optimal-assignment base the smooth minimum of Eq. (C.3) is used, as for the gradients.
    Returns shape ``(m,)``.
    """
    kernel, h, Phi, _, _, _ = _wl_setup(gp, [])
    phi = np.asarray(phi, dtype=float)
    if phi.ndim != 2 or phi.shape[1] < Phi.shape[1]:
        raise ValueError(f"phi must have shape (m, >= {Phi.shape[1]}), got {phi.shape}")
    Phi = np.pad(Phi, ((0, 0), (0, phi.shape[1] - Phi.shape[1])))
    mean_z, _ = _latent_mean_and_grad(kernel, gp.amplitude, gp.alpha, Phi, phi, smooth_p)
    u_mean, u_std = gp.target_scale
    u = u_mean + u_std * mean_z
    return gp.max_value - np.exp(-u) if gp.transform == "log_error" else u


def wl_feature_gradients(gp: GaussianProcess, archs: Sequence[Architecture], max_depth: int | None = None,
                         smooth_p: float = SMOOTH_MIN_P) -> FeatureGradients:
    """Eq. (3.2) / (C.2) of paper 002: ``d mean / d phi^j`` for every candidate and WL feature.

    ``gp`` is a fitted :class:`~nasviz.gp.GaussianProcess` with a
    :class:`~nasviz.kernels.wl.WLKernel`; ``archs`` the ``m`` candidates. The derivatives are
    those of the GP's own mean (features of depths ``0..h``, ``h`` the depth it selected);
    ``max_depth`` keeps only the features of depth ``<= max_depth`` in the result (paper 002
    Fig. 2 shows ``h = 0``). See :class:`FeatureGradients` for the shapes.
    """
    archs = list(archs)
    if not archs:
        raise ValueError("wl_feature_gradients needs at least one candidate architecture")
    kernel, h, Phi, phi, names, depths = _wl_setup(gp, archs)
    if max_depth is not None and not 0 <= int(max_depth) <= kernel.h_max:
        raise ValueError(f"max_depth must be in 0..{kernel.h_max}, got {max_depth}")
    mean_z, grad_z = _latent_mean_and_grad(kernel, gp.amplitude, gp.alpha, Phi, phi, smooth_p)
    grads = _to_y_units(gp, mean_z, grad_z)
    keep = np.flatnonzero(np.asarray(depths) <= (h if max_depth is None else int(max_depth)))
    names = [names[j] for j in keep]
    ops = [n.split(" <- ", 1)[0].split(" -> ", 1)[0] for n in names]
    grads, phi = grads[:, keep], phi[:, keep]
    return FeatureGradients(names=names, depths=np.asarray(depths)[keep], operations=ops, gradients=grads,
                            counts=phi, mean_gradient=grads.mean(axis=0), h=h)


def operation_gradient_profile(fg: FeatureGradients, values: Sequence[float] | None = None,
                               skip: Sequence[str] = (INPUT, OUTPUT)) -> list[OperationProfile]:
    """Paper 002 Fig. 2: per operation (``h = 0`` feature), the mean gradient of the candidates
    grouped by how many nodes of that operation they have (counts ``>= 1``; ``values``, shape
    ``(m,)``, adds the mean and standard deviation of the true values per group)."""
    vals = None if values is None else np.asarray(values, dtype=float).reshape(-1)
    if vals is not None and len(vals) != fg.counts.shape[0]:
        raise ValueError(f"values has {len(vals)} entries for {fg.counts.shape[0]} candidates")
    out = []
    for j in np.flatnonzero(fg.depths == 0):
        op = fg.names[j]
        if op in skip:
            continue
        col = fg.counts[:, j]
        levels = sorted({int(c) for c in col if c >= 1})
        if not levels:
            continue
        groups = [col == c for c in levels]
        out.append(OperationProfile(
            operation=op,
            counts=levels,
            mean_gradient=[float(fg.gradients[g, j].mean()) for g in groups],
            n_archs=[int(g.sum()) for g in groups],
            value_mean=None if vals is None else [float(vals[g].mean()) for g in groups],
            value_std=None if vals is None else [float(vals[g].std()) for g in groups],
        ))
    return out


def supports_feature_gradients(gp: GaussianProcess) -> bool:
    """Whether ``gp`` has WL feature gradients: it is fitted and its kernel is WL."""
    return isinstance(gp.kernel, WLKernel) and gp.fit_result is not None


def operation_gradients(gp: GaussianProcess, archs: Sequence[Architecture],
                        skip: Sequence[str] = (INPUT, OUTPUT)) -> dict[str, float]:
    """Mean ``d mean / d phi^op`` over ``archs`` for each operation's ``h = 0`` feature.

    The summary a gradient-guided mutation (paper 002 §3.2, App. C) needs: positive means more
    of that operation raises the predicted value. Operations that never occur in a reduced graph
    (``none`` is removed and ``skip_connect`` bypassed by :meth:`Architecture.reduced`) have no
    WL feature and are absent from the result.
    """
    fg = wl_feature_gradients(gp, archs, max_depth=0)
    return {name: float(g) for name, g in zip(fg.names, fg.mean_gradient) if name not in skip}




def step_feature_gradients(gp: GaussianProcess, archs: Sequence[Architecture], max_features: int):
    """What a BO step reports: the ``max_features`` WL feature gradients (paper 002 Eq. 3.2) of
    largest magnitude over ``archs``, as a :class:`nasviz.state.FeatureGradients`; ``None`` when
    the kernel is not WL or they cannot be computed."""
    from nasviz.state import FeatureGradients as StepGradients

    if not supports_feature_gradients(gp):
        return None
    try:
        fg = wl_feature_gradients(gp, archs)
    except (ValueError, np.linalg.LinAlgError):
        return None
    keep = np.argsort(-np.abs(fg.mean_gradient), kind="stable")[:max_features]
    return StepGradients(tuple(fg.names[i] for i in keep), tuple(float(fg.mean_gradient[i]) for i in keep), int(fg.h),
                         tuple(int(fg.depths[i]) for i in keep))


def step_operation_gradients(gp: GaussianProcess, archs: Sequence[Architecture]) -> dict[str, float] | None:
    """:func:`operation_gradients` for a BO step's gradient pool, ``None`` when unavailable."""
    if not supports_feature_gradients(gp):
        return None
    try:
        return operation_gradients(gp, archs)
    except (ValueError, np.linalg.LinAlgError):
        return None


__all__ = ["FeatureGradients", "OperationProfile", "operation_gradient_profile", "operation_gradients",
           "posterior_mean_from_features", "step_feature_gradients", "step_operation_gradients",
           "supports_feature_gradients", "wl_feature_gradients"]
