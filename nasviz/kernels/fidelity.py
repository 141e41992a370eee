"""A kernel over (architecture, budget) pairs: an architecture kernel times a fidelity kernel.

The multi-fidelity GP (:mod:`nasviz.strategies.multi_fidelity.mf_gp`) models the value of an
architecture ``a`` trained for budget ``f`` as one Gaussian process over pairs, with the product
covariance of multi-task / multi-fidelity GPs (Swersky, Snoek & Adams 2013, Sec. 2.1; Kandasamy et
al. 2017, BOCA, Sec. 2) plus one random offset per budget::

    k((a, u), (a', u')) = k_arch(a, a') * exp(-r |u - u'|) + c [u = u']

``u`` is the budget's place on its ladder on a log scale (0 = the lowest budget, 1 = the full one,
:meth:`~nasviz.fidelity.Ladder.position`), ``r`` the fidelity rate (how fast values at two budgets
decorrelate) and ``c`` the variance of a budget's own offset (values after 4 epochs lie tens of
points below those after 108: a mean per budget, learned with the rest). ``k_arch`` is any
project kernel (the default's TW 2-gram x Hamming product, TW, WL, ...). Both factors are PD (the
exponential kernel on the line, and a product and sum of PD kernels), so the GP's ML-II learns
``r`` and ``c`` next to the architecture kernel's own hyperparameters. The correlation the GP
then assigns between a cell's value at budget ``u`` and at the full budget is what the augmented
EI weighs a cheap evaluation by.

Inputs are :class:`FidelityPoint`\\ s. Components are the architecture kernel's (computed once per
distinct architecture and expanded), named ``arch:<name>``, plus ``fidelity_distance`` ``|u - u'|``
and ``same_fidelity`` ``[u = u']``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.kernels.base import Components, Hyperparameter, Kernel

_PREFIX = "arch:"
_DISTANCE = "fidelity_distance"
_SAME = "same_fidelity"


@dataclass(frozen=True)
class FidelityPoint:
    """An architecture at a budget's place ``position`` on its ladder (0 lowest, 1 full)."""

    arch: Architecture
    position: float


class FidelityProductKernel(Kernel):
    """``k_arch(a, a') exp(-r |u - u'|) + c [u = u']`` over :class:`FidelityPoint` s (module docstring)."""

    positive_definite = True

    def __init__(self, arch_kernel: Kernel) -> None:
        self.arch_kernel = arch_kernel
        self.name = f"{arch_kernel.name}*fidelity"
        self.reads = arch_kernel.reads
        self._n_arch = len(arch_kernel.hyperparameters)

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        return [*self.arch_kernel.hyperparameters,
                Hyperparameter("fidelity_rate", 1.0, (1e-2, 1e2), rate=True),
                Hyperparameter("fidelity_offset", 0.1, (1e-4, 1e1))]

    # ------------------------------------------------------------------ components
    def components(self, points_a: Sequence[FidelityPoint], points_b: Sequence[FidelityPoint]) -> Components:
        archs_a, index_a = _distinct([p.arch for p in points_a])
        archs_b, index_b = _distinct([p.arch for p in points_b])
        inner = self.arch_kernel.components(archs_a, archs_b)
        out = {_PREFIX + name: np.asarray(m, dtype=float)[np.ix_(index_a, index_b)] for name, m in inner.items()}
        u_a = np.array([p.position for p in points_a], dtype=float)
        u_b = np.array([p.position for p in points_b], dtype=float)
        out[_DISTANCE] = np.abs(u_a[:, None] - u_b[None, :])
        out[_SAME] = (out[_DISTANCE] < 1e-12).astype(float)
        return out

    def diagonal_components(self, points: Sequence[FidelityPoint]) -> dict[str, np.ndarray]:
        """``k((a, u), (a, u))``'s components without the ``m x m`` matrix."""
        archs, index = _distinct([p.arch for p in points])
        diag = getattr(self.arch_kernel, "diagonal_components", None)
        if diag is not None:
            inner = {name: np.asarray(v, dtype=float)[index] for name, v in diag(archs).items()}
        else:
            inner = {name: np.diagonal(np.asarray(m, dtype=float))[index]
                     for name, m in self.arch_kernel.components(archs, archs).items()}
        out = {_PREFIX + name: v for name, v in inner.items()}
        out[_DISTANCE] = np.zeros(len(points))
        out[_SAME] = np.ones(len(points))
        return out

    # ------------------------------------------------------------------ combination
    def _split(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None):
        theta = self.default_theta() if theta is None else np.asarray(theta, dtype=float)
        inner = {name[len(_PREFIX):]: m for name, m in components.items() if name.startswith(_PREFIX)}
        return theta, inner

    def combine(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> np.ndarray:
        theta, inner = self._split(components, theta)
        k_arch = np.asarray(self.arch_kernel.combine(inner, theta[: self._n_arch]), dtype=float)
        rate, offset = theta[self._n_arch], theta[self._n_arch + 1]
        return k_arch * np.exp(-rate * components[_DISTANCE]) + offset * components[_SAME]

    def combine_with_gradients(self, components: Mapping[str, np.ndarray],
                               theta: Sequence[float] | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
        """``K`` and ``dK/dtheta``: the architecture kernel's gradients times the fidelity factor,
        ``dK/dr = -|u - u'| k_arch exp(-r |u - u'|)`` and ``dK/dc = [u = u']``."""
        theta, inner = self._split(components, theta)
        k_arch, inner_grads = self.arch_kernel.combine_with_gradients(inner, theta[: self._n_arch])
        k_arch = np.asarray(k_arch, dtype=float)
        rate, offset = theta[self._n_arch], theta[self._n_arch + 1]
        decay = np.exp(-rate * components[_DISTANCE])
        product = k_arch * decay
        grads = [np.asarray(g, dtype=float) * decay for g in inner_grads]
        grads.append(-components[_DISTANCE] * product)
        grads.append(np.array(components[_SAME], dtype=float))
        return product + offset * components[_SAME], grads


def _distinct(archs: Sequence[Architecture]) -> tuple[list[Architecture], np.ndarray]:
    """The distinct architectures of ``archs`` (first-seen order) and each one's index among them."""
    rows: dict[Architecture, int] = {}
    index = np.empty(len(archs), dtype=np.int64)
    for i, arch in enumerate(archs):
        index[i] = rows.setdefault(arch, len(rows))
    return list(rows), index


__all__ = ["FidelityPoint", "FidelityProductKernel"]
