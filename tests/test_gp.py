"""GP regression on architecture kernels with ML-II (paper 000 Eqs. (8), (9), (26)-(31))."""

from __future__ import annotations

import warnings
from typing import Mapping, Sequence

import numpy as np
import pytest
from scipy.stats import spearmanr

from nasviz.arch import Architecture
from nasviz.gp import ComponentsCache, GaussianProcess, cholesky_with_jitter
from nasviz.kernels import Hyperparameter, Kernel, make_kernel
from nasviz.kernels.wl import WLKernel
from nasviz.spaces import nb201


class ExpWLDistanceKernel(Kernel):
    """A second real kernel with continuous hyperparameters for the gradient tests:
    ``k = exp(-l0 D0 - l1 D1)`` on the WL feature distances of depth 0 and 1 (an exponential of a
    negative-definite distance sum, so PD like Eq. (25) of paper 000)."""

    name = "exp-wl"

    def __init__(self) -> None:
        self.wl = WLKernel(h_max=1)

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        return [Hyperparameter("l0", 1.0, (1e-3, 1e2)), Hyperparameter("l1", 0.5, (1e-3, 1e2))]

    def components(self, a, b):
        return self.wl.distances(a, b)

    def combine(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> np.ndarray:
        t = self.default_theta() if theta is None else np.asarray(theta, dtype=float)
        return np.exp(-t[0] * components["h0"] - t[1] * components["h1"])

    def combine_with_gradients(self, components, theta=None):
        K = self.combine(components, theta)
        return K, [-components["h0"] * K, -components["h1"] * K]


@pytest.fixture(scope="module")
def cells() -> list[Architecture]:
    return nb201.sample(np.random.default_rng(5), 120)


def synthetic_targets(archs: list[Architecture]) -> np.ndarray:
    """A smooth function of the cell's operations, in percent like an accuracy."""
    weights = {"nor_conv_3x3": 3.0, "nor_conv_1x1": 1.5, "avg_pool_3x3": -1.0, "skip_connect": 0.5, "none": -2.0}
    return np.array([80.0 + sum(weights[o] for o in nb201.operations(a)) for a in archs])


# --------------------------------------------------------------------------- closed forms
def test_single_observation_closed_form(cells):
    # One observation y1, prior k(x,x) = 1 (normalised WL): mean(x') = a k(x',x1) y1 / (a + s),
    # var(x') = a - a^2 k(x',x1)^2 / (a + s)   (Eqs. (8), (9) with n = 1).
    a, s = 2.0, 0.5
    gp = GaussianProcess(WLKernel(h_max=1), transform="none", learn=False, amplitude=a, noise=s)
    gp.fit(cells[:1], np.array([3.0]))
    k = WLKernel(h_max=1).matrix(cells[1:6], cells[:1])[:, 0]
    mean, cov = gp.predict(cells[1:6], full_cov=True)
    np.testing.assert_allclose(mean, a * k * 3.0 / (a + s), rtol=1e-12)
    np.testing.assert_allclose(np.diag(cov), a - a**2 * k**2 / (a + s), rtol=1e-12)


def test_posterior_matches_direct_formula(cells):
    train, test = cells[:30], cells[30:50]
    y = synthetic_targets(train)
    a, s = 1.7, 0.05
    gp = GaussianProcess(WLKernel(h_max=2), transform="standardize", learn=False, amplitude=a, noise=s)
    gp.fit(train, y)
    kern = WLKernel(h_max=2)
    K = a * kern.matrix(train, train)
    Ks = a * kern.matrix(test, train)
    Kss = a * kern.matrix(test, test)
    mu, sd = y.mean(), y.std()
    z = (y - mu) / sd
    C = K + s * np.eye(len(train))
    want_mean = mu + sd * Ks @ np.linalg.solve(C, z)
    want_cov = sd**2 * (Kss - Ks @ np.linalg.solve(C, Ks.T))
    mean, cov = gp.predict(test, full_cov=True)
    np.testing.assert_allclose(mean, want_mean, rtol=1e-10)
    np.testing.assert_allclose(cov, want_cov, atol=1e-10)
    mean2, std = gp.predict(test, full_cov=False)
    np.testing.assert_allclose(mean2, mean)
    np.testing.assert_allclose(std**2, np.maximum(np.diag(cov), 0), atol=1e-10)
    assert gp.noise_variance_y == pytest.approx(s * sd**2)


def test_log_error_transform_round_trip(cells):
    train = cells[:40]
    y = synthetic_targets(train)
    gp = GaussianProcess(WLKernel(h_max=2), transform="log_error", n_restarts=2)
    gp.fit(train, y)
    mean_u, var_u = gp.predict_latent(train[:5], full_cov=False)
    mean, std = gp.predict(train[:5], full_cov=False)
    # Exact log-normal moments of y = 100 - exp(-u).
    np.testing.assert_allclose(mean, 100 - np.exp(-mean_u + var_u / 2))
    np.testing.assert_allclose(std, np.exp(-mean_u + var_u / 2) * np.sqrt(np.expm1(var_u)))
    _, cov = gp.predict(train[:5], full_cov=True)
    np.testing.assert_allclose(np.sqrt(np.diag(cov)), std, rtol=1e-8)
    lo, hi = gp.predict_interval(train[:5], level=0.95)
    assert (lo < mean).all() and (mean < hi).all() and (hi < 100).all()
    with pytest.raises(ValueError, match=r"y\[2\]"):
        gp.fit(train[:3], np.array([50.0, 60.0, 101.0]))


# --------------------------------------------------------------------------- ML-II
def test_analytic_gradients_match_finite_differences(cells):
    train = cells[:40]
    y = synthetic_targets(train)
    gp = GaussianProcess(ExpWLDistanceKernel(), transform="standardize", learn=False, amplitude=1.3, noise=0.2)
    gp.fit(train, y)
    theta, a, s = np.array([0.7, 1.9]), 1.3, 0.2
    _, grad = gp.log_marginal_likelihood(theta, a, s, with_gradient=True)
    params = np.array([theta[0], theta[1], a, s])

    def lml(p):
        return gp.log_marginal_likelihood(p[:2], p[2], p[3])

    for i in range(4):
        h = 1e-6 * params[i]
        up, down = params.copy(), params.copy()
        up[i] += h
        down[i] -= h
        fd = (lml(up) - lml(down)) / (2 * h)
        assert grad[i] == pytest.approx(fd, rel=1e-5, abs=1e-7), f"parameter {i}"


def test_tree_wasserstein_gradients_match_finite_differences(cells):
    train = cells[:40]
    gp = GaussianProcess(make_kernel("tw"), learn=False)
    gp.fit(train, synthetic_targets(train))
    theta = np.array([0.8, 0.3, 0.5])
    _, grad = gp.log_marginal_likelihood(theta, 1.1, 0.1, with_gradient=True)
    for i in range(3):
        up, down = theta.copy(), theta.copy()
        up[i] += 1e-6
        down[i] -= 1e-6
        fd = (gp.log_marginal_likelihood(up, 1.1, 0.1) - gp.log_marginal_likelihood(down, 1.1, 0.1)) / 2e-6
        assert grad[i] == pytest.approx(fd, rel=1e-5, abs=1e-7)


def test_ml2_improves_marginal_likelihood(cells):
    train = cells[:60]
    y = synthetic_targets(train)
    gp = GaussianProcess(ExpWLDistanceKernel(), transform="standardize", n_restarts=2, seed=1)
    fit = gp.fit(train, y)
    assert fit.log_marginal_likelihood > fit.initial_log_marginal_likelihood + 1.0
    # ... and beats random hyperparameters in the bounds.
    rng = np.random.default_rng(0)
    for _ in range(10):
        theta = np.exp(rng.uniform(np.log(1e-3), np.log(1e2), 2))
        a, s = np.exp(rng.uniform(np.log(1e-2), np.log(1e2))), np.exp(rng.uniform(np.log(1e-6), np.log(2)))
        assert gp.log_marginal_likelihood(theta, a, s) <= fit.log_marginal_likelihood + 1e-6
    assert set(fit.theta) == {"l0", "l1"} and fit.n_obs == 60 and fit.seconds > 0


def test_discrete_depth_chosen_by_likelihood(cells):
    train = cells[:60]
    gp = GaussianProcess(WLKernel(h_max=2), transform="standardize")
    fit = gp.fit(train, synthetic_targets(train))
    assert set(fit.candidates) == {"h=0", "h=1", "h=2"}
    best = max(fit.candidates, key=fit.candidates.get)
    assert fit.theta["h"] == float(best.split("=")[1])
    assert fit.log_marginal_likelihood == pytest.approx(fit.candidates[best], abs=1e-6)
    # The target is a sum over operations: the h=0 histogram explains it; likelihood sees that.
    assert fit.candidates["h=0"] > fit.candidates["h=2"]


def test_singular_kernel_matrix_gets_jitter_and_warning(cells):
    train = [cells[0], cells[0], cells[1], cells[1], cells[2]]
    y = np.array([70.0, 71.0, 60.0, 60.5, 65.0])
    gp = GaussianProcess(WLKernel(h_max=1), transform="standardize", learn=False, noise=0.0)
    with pytest.warns(RuntimeWarning, match="jitter"):
        fit = gp.fit(train, y)
    assert fit.jitter > 0
    mean, std = gp.predict(cells[:3], full_cov=False)
    assert np.isfinite(mean).all() and np.isfinite(std).all()
    # Duplicates average: the mean at the duplicated cell lies between its two observations.
    assert 70.0 <= mean[0] <= 71.0
    with pytest.raises(np.linalg.LinAlgError):
        cholesky_with_jitter(-np.eye(3))


def test_components_are_reused_across_fits(cells):
    kernel = WLKernel(h_max=2)
    gp = GaussianProcess(kernel, n_restarts=1)
    calls = []
    original = kernel.components

    def counting(a, b):
        calls.append((len(a), len(b)))
        return original(a, b)

    kernel.components = counting  # count calls on the real kernel (no behaviour changed)
    gp.fit(cells[:30], synthetic_targets(cells[:30]))
    gp.fit(cells[:35], synthetic_targets(cells[:35]))
    assert calls == [(30, 30), (5, 35)]
    assert gp.components_cache.hits == 30 and gp.components_cache.misses == 35
    cache_comps = gp.components_cache.get(cells[:35][::-1])
    direct = original(cells[:35][::-1], cells[:35][::-1])
    for name in direct:
        np.testing.assert_allclose(cache_comps[name], direct[name])


def test_calibration_on_gp_samples():
    # Draw targets from the GP prior itself; the fitted model's 95% intervals should cover
    # about 95% of held-out draws.
    archs = list({a.canonical_key(): a for a in nb201.sample(np.random.default_rng(2), 700)}.values())[:400]
    kern = WLKernel(h_max=1)
    K = 2.0 * kern.matrix(archs, archs) + 0.05 * np.eye(len(archs))
    rng = np.random.default_rng(4)
    y = 50 + 3 * np.linalg.cholesky(K + 1e-9 * np.eye(len(K))) @ rng.standard_normal(len(archs))
    gp = GaussianProcess(WLKernel(h_max=1), transform="standardize", n_restarts=2)
    gp.fit(archs[:150], y[:150])
    lo, hi = gp.predict_interval(archs[150:], level=0.95)
    coverage = np.mean((y[150:] >= lo) & (y[150:] <= hi))
    assert 0.85 <= coverage <= 0.995
    mean, _ = gp.predict(archs[150:], full_cov=False)
    assert spearmanr(mean, y[150:])[0] > 0.5


@pytest.mark.nb201
def test_surrogate_on_real_table(nb201_table):
    rng = np.random.default_rng(0)
    idx = rng.choice(len(nb201_table), 250, replace=False)
    archs = [nb201_table.archs[i] for i in idx]
    y = np.asarray(nb201_table.values["cifar10"])[idx]
    gp = GaussianProcess(WLKernel(h_max=2), transform="log_error")
    gp.fit(archs[:50], y[:50])
    mean, _ = gp.predict(archs[50:], full_cov=False)
    assert spearmanr(mean, y[50:])[0] > 0.7
    lo, hi = gp.predict_interval(archs[50:])
    assert 0.8 <= np.mean((y[50:] >= lo) & (y[50:] <= hi)) <= 1.0


def test_bad_input_raises(cells):
    gp = GaussianProcess(WLKernel())
    with pytest.raises(ValueError, match="at least one"):
        gp.fit([], np.array([]))
    with pytest.raises(ValueError, match="3 entries but y has 2"):
        gp.fit(cells[:3], np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"y\[1\]"):
        gp.fit(cells[:2], np.array([1.0, np.nan]))
    with pytest.raises(RuntimeError, match="not fitted"):
        gp.predict(cells[:2])
    with pytest.raises(ValueError, match="transform"):
        GaussianProcess(WLKernel(), transform="log")
    with pytest.raises(ValueError, match="Kernel"):
        GaussianProcess("wl")
    with pytest.raises(ValueError, match="n_restarts"):
        GaussianProcess(WLKernel(), n_restarts=0)
