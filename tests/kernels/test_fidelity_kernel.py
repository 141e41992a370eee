"""The multi-fidelity GP's product kernel and the augmented EI (Huang et al. 2006, Eq. (12))."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from nasviz.kernels import make_kernel
from nasviz.kernels.fidelity import FidelityPoint, FidelityProductKernel
from nasviz.spaces import nb201
from nasviz.strategies.multi_fidelity.mf_gp import augmented_ei


@pytest.fixture
def points():
    cells = list(itertools.islice(nb201.enumerate_all(), 0, 600, 60))
    return [FidelityPoint(c, u) for c in cells for u in (0.0, 0.5, 1.0)][::2]


def test_product_kernel_values_psd_and_gradients(points):
    kernel = FidelityProductKernel(make_kernel("tw2g-hamming", space=nb201.SPACE))
    theta = kernel.default_theta()
    theta[-2], theta[-1] = 1.7, 0.3
    comps = kernel.components(points, points)
    K = kernel.combine(comps, theta)
    arch = kernel.arch_kernel.matrix([p.arch for p in points], theta=theta[:-2])
    u = np.array([p.position for p in points])
    expected = arch * np.exp(-1.7 * np.abs(u[:, None] - u[None, :])) + 0.3 * (u[:, None] == u[None, :])
    assert np.allclose(K, expected)
    assert np.linalg.eigvalsh(K).min() > -1e-9
    _, grads = kernel.combine_with_gradients(comps, theta)
    for i, h in enumerate(kernel.hyperparameters):
        if h.discrete is not None:
            continue
        step = 1e-6 * max(1.0, abs(theta[i]))
        up, down = theta.copy(), theta.copy()
        up[i] += step
        down[i] -= step
        numeric = (kernel.combine(comps, up) - kernel.combine(comps, down)) / (2 * step)
        assert np.allclose(grads[i], numeric, atol=1e-5), h.name
    diag = kernel.diagonal_components(points)
    assert np.allclose(kernel.combine({k: v[:, None] for k, v in diag.items()}, theta).ravel(), np.diag(K))


def test_augmented_ei_factors():
    """EI(x, top) x corr x (1 - sigma_eps / sqrt(s^2 + sigma_eps^2)) x C_top / C_l, by hand."""
    out = augmented_ei(np.array([2.0, 2.0, 2.0]), np.array([1.0, 0.5, -0.2]), np.array([3.0, 3.0, 3.0]), 1.0,
                       np.array([1.0, 0.25, 0.25]))
    alpha2 = 1 - 1 / 2
    assert out == pytest.approx([2 * 1 * alpha2 / 1, 2 * 0.5 * alpha2 / 0.25, 0.0])
