"""WL feature gradients of the GP posterior mean (paper 002 §3.2, Eqs. (3.2), (C.2), (C.3))."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.gp import GaussianProcess
from nasviz.interpret import (
    operation_gradient_profile,
    operation_gradients,
    posterior_mean_from_features,
    wl_feature_gradients,
)
from nasviz.kernels import make_kernel
from nasviz.kernels.wl import WLKernel
from nasviz.spaces import nb201

WEIGHTS = {"nor_conv_3x3": 3.0, "nor_conv_1x1": 1.0, "avg_pool_3x3": -2.0, "skip_connect": 0.5, "none": -1.0}


@pytest.fixture(scope="module")
def cells():
    return nb201.sample(np.random.default_rng(21), 140)


def targets(archs):
    rng = np.random.default_rng(0)
    return np.array([80 + sum(WEIGHTS[o] for o in nb201.operations(a)) for a in archs]) + 0.3 * rng.standard_normal(len(archs))


def fitted(cells, transform="standardize", **wl):
    # Fixed hyperparameters (h = H = 2) so that features of every depth enter the mean.
    gp = GaussianProcess(WLKernel(**wl), transform=transform, learn=False, amplitude=1.5, noise=0.05)
    gp.fit(cells[:60], targets(cells[:60]))
    assert gp.theta[0] == 2
    return gp


def finite_difference_check(gp, cands, smooth=False):
    fg = wl_feature_gradients(gp, cands)
    phi = fg.counts
    base = posterior_mean_from_features(gp, phi)
    rng = np.random.default_rng(1)
    present = np.flatnonzero(phi.sum(axis=0) > 0)
    absent = np.flatnonzero(phi.sum(axis=0) == 0)
    cols = list(rng.choice(present, 8, replace=False)) + list(absent[:2])
    step = 1e-6
    for j in cols:
        up = phi.copy()
        up[:, j] += step
        down = phi.copy()
        down[:, j] = np.maximum(down[:, j] - step, 0.0)
        width = (up[:, j] - down[:, j])
        fd = (posterior_mean_from_features(gp, up) - posterior_mean_from_features(gp, down)) / width
        np.testing.assert_allclose(fg.gradients[:, j], fd, rtol=1e-4, atol=1e-6 * max(1.0, np.abs(base).max()),
                                   err_msg=f"feature {fg.names[j]!r}")
    return fg, base


def test_dot_gradients_match_finite_differences(cells):
    gp = fitted(cells)
    cands = cells[60:90]
    fg, base = finite_difference_check(gp, cands)
    # The feature-space mean is the GP's mean.
    np.testing.assert_allclose(base, gp.predict(cands, full_cov=False)[0], rtol=1e-10)
    assert fg.gradients.shape == (30, len(fg.names)) and fg.h == int(gp.theta[0])


def test_log_error_gradients_are_those_of_the_median(cells):
    gp = fitted(cells, transform="log_error")
    cands = cells[60:80]
    _, base = finite_difference_check(gp, cands)
    mean_u, _ = gp.predict_latent(cands, full_cov=False)
    np.testing.assert_allclose(base, 100 - np.exp(-mean_u), rtol=1e-10)


def test_unnormalised_dot_is_equation_c2(cells):
    gp = fitted(cells, normalize=False)
    fg = wl_feature_gradients(gp, cells[60:70])
    kernel = gp.kernel
    Phi = kernel.features(gp.train_archs, fg.h)[0].toarray()
    assert set(fg.depths.tolist()) == {0, 1, 2}
    want = gp.amplitude * (gp.alpha @ Phi) * gp.target_scale[1]
    for row in fg.gradients:
        np.testing.assert_allclose(row[: len(want)], want, rtol=1e-10)
    finite_difference_check(gp, cells[60:70])


def test_optimal_assignment_gradients_match_the_smooth_mean(cells):
    gp = fitted(cells, base="oa")
    finite_difference_check(gp, cells[60:75])


def test_gradients_point_the_right_way_and_fig2_profile(cells):
    gp = GaussianProcess(WLKernel(h_max=2), transform="standardize", n_restarts=2)
    gp.fit(cells[:100], targets(cells[:100]))
    cands = cells[100:]
    fg = wl_feature_gradients(gp, cands, max_depth=0)
    assert set(fg.depths.tolist()) == {0}
    grad = dict(zip(fg.names, fg.mean_gradient))
    # The synthetic target rewards 3x3 convolutions and penalises pooling.
    assert grad["nor_conv_3x3"] > 0 > grad["avg_pool_3x3"]
    assert grad["nor_conv_3x3"] > grad["nor_conv_1x1"]
    profile = operation_gradient_profile(fg, values=targets(cands))
    ops = {p.operation: p for p in profile}
    assert "input" not in ops and set(ops) <= {"nor_conv_3x3", "nor_conv_1x1", "avg_pool_3x3"}
    conv = ops["nor_conv_3x3"]
    assert conv.counts == sorted(conv.counts) and min(conv.counts) >= 1
    assert sum(conv.n_archs) == int((fg.counts[:, fg.names.index("nor_conv_3x3")] >= 1).sum())
    assert len(conv.value_mean) == len(conv.counts)
    assert fg.top(3)[0][0] in fg.names
    summary = operation_gradients(gp, cands)
    assert set(summary) == {"nor_conv_3x3", "nor_conv_1x1", "avg_pool_3x3"}
    assert summary["nor_conv_3x3"] == pytest.approx(grad["nor_conv_3x3"])


def test_bad_input(cells):
    gp = GaussianProcess(make_kernel("tw"), n_restarts=1)
    gp.fit(cells[:10], targets(cells[:10]))
    with pytest.raises(ValueError, match="WL kernel"):
        wl_feature_gradients(gp, cells[10:12])
    wl = fitted(cells)
    with pytest.raises(ValueError, match="at least one"):
        wl_feature_gradients(wl, [])
    with pytest.raises(ValueError, match="max_depth must be"):
        wl_feature_gradients(wl, cells[:2], max_depth=5)
    fg = wl_feature_gradients(wl, cells[:3])
    with pytest.raises(ValueError, match="values has 2"):
        operation_gradient_profile(fg, values=[1.0, 2.0])
