"""Slot kernels (CoCaBO's exponentiated Hamming kernel, and TW times it) on NB201 and NB101 cells."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.kernels import make_kernel
from nasviz.spaces import nb101, nb201

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


@pytest.mark.parametrize("name", ["slots", "tw2g-slots", "tw2g-hamming"])
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


def test_slot_kernel_reads_nb101_cells_as_their_categorical_parameters():
    """NAS-Bench-101's parameters (21 edge bits, five operations): one lengthscale each, and the
    kernel is the exponentiated weighted Hamming distance between the parameter assignments."""
    space = nb101.SPACE
    cells = space.sample(np.random.default_rng(7), 25)
    kernel = make_kernel("slots", space=space)
    names = list(space.parameter_choices())
    assert len(kernel.hyperparameters) == len(names) == 26
    theta = np.linspace(0.1, 2.0, len(names))
    params = np.array([[space.to_parameters(a)[n] for n in names] for a in cells])  # (25, 26) choices
    expected = np.exp(-((params[:, None, :] != params[None, :, :]) * theta).sum(axis=2))
    assert np.allclose(kernel.matrix(cells, cells, theta), expected)


def test_tw_slots_kernel_runs_on_nb101_with_gradients():
    space = nb101.SPACE
    cells = space.sample(np.random.default_rng(8), 20)
    kernel = make_kernel("tw2g-slots", space=space)
    theta = kernel.default_theta()
    comps = kernel.components(cells, cells)
    K, grads = kernel.combine_with_gradients(comps, theta)
    assert len(grads) == len(theta) == 3 + 26
    assert np.allclose(np.diag(K), 1.0) and np.linalg.eigvalsh(K).min() > -1e-8


@pytest.mark.parametrize("space", [nb201.SPACE, nb101.SPACE], ids=["nb201", "nb101"])
def test_shared_lengthscale_is_the_normalised_hamming_distance(space):
    """``ard=False`` (the ``tw2g-hamming`` kernel's slot part): one lengthscale, exp(-l h) with h
    the share of parameters that differ."""
    cells = space.sample(np.random.default_rng(9), 15)
    names = list(space.parameter_choices())
    params = np.array([[space.to_parameters(a)[n] for n in names] for a in cells])
    share = (params[:, None, :] != params[None, :, :]).mean(axis=2)
    kernel = make_kernel("slots", space=space, ard=False)
    assert [h.name for h in kernel.hyperparameters] == ["l[hamming]"]
    assert np.allclose(kernel.matrix(cells, cells, [2.5]), np.exp(-2.5 * share))
    combined = make_kernel("tw2g-hamming", space=space)
    assert len(combined.hyperparameters) == 3 + 1
    theta = combined.default_theta()
    tw = make_kernel("tw2g").matrix(cells, cells, theta[:3])
    assert np.allclose(combined.matrix(cells, cells, theta), tw * np.exp(-theta[3] * share))
