"""Operation-slot kernels (CoCaBO's exponentiated Hamming kernel, and TW times it) on NB201 cells."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.kernels import make_kernel
from nasviz.spaces import nb201

SPACE = nb201.SPACE


@pytest.fixture(scope="module")
def cells():
    return SPACE.sample(np.random.default_rng(4), 30)


def test_slot_kernel_is_the_exponentiated_weighted_hamming_distance(cells):
    kernel = make_kernel("slots", space=SPACE)
    theta = np.linspace(0.2, 1.7, len(SPACE.slot_names()))
    codes = np.array([SPACE.slots(a) for a in cells])  # (n, 6) operation names
    expected = np.exp(-((codes[:, None, :] != codes[None, :, :]) * theta).sum(axis=2))
    K = kernel.matrix(cells, cells, theta)
    assert np.allclose(K, expected)
    assert np.linalg.eigvalsh(K).min() > -1e-10  # positive semi-definite


def test_slot_kernel_sees_where_an_operation_sits():
    kernel = make_kernel("slots", space=SPACE)
    ops = ["nor_conv_3x3", "skip_connect", "nor_conv_3x3", "avg_pool_3x3", "none", "nor_conv_1x1"]
    a, b = SPACE.from_slots(ops), SPACE.from_slots(ops[:5] + ["nor_conv_3x3"])
    K = kernel.matrix([a], [a, b])
    assert K[0, 0] == pytest.approx(1.0) and K[0, 1] == pytest.approx(np.exp(-1.0))  # one slot differs, l = 1


@pytest.mark.parametrize("name", ["slots", "tw2g-slots"])
def test_gradients_match_finite_differences_and_prepared_rows_match(cells, name):
    kernel = make_kernel(name, space=SPACE)
    rng = np.random.default_rng(0)
    theta = kernel.default_theta() * rng.uniform(0.5, 1.5, len(kernel.default_theta()))
    comps = kernel.components(cells, cells)
    K, grads = kernel.combine_with_gradients(comps, theta)
    for i in range(len(theta)):
        step = 1e-6 * max(1.0, theta[i])
        up, down = theta.copy(), theta.copy()
        up[i] += step
        down[i] -= step
        numeric = (kernel.combine(comps, up) - kernel.combine(comps, down)) / (2 * step)
        assert np.allclose(grads[i], numeric, atol=1e-6), kernel.hyperparameters[i].name
    prepared = kernel.combine(kernel.components_prepared(kernel.prepare_rows(cells[:10]), cells), theta)
    assert np.allclose(prepared, K[:10])
    assert np.linalg.eigvalsh(K).min() > -1e-8
