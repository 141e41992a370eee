"""Acquisition functions: UCB and its schedule, expected improvement, Thompson draws."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.acquisition import expected_improvement, kappa_schedule, thompson_draws, ucb


def test_kappa_schedule_formula():
    # Paper 002 App. E.5: beta_n = beta_0 sqrt(0.5 log(2 (n + 1))), beta_0 = 3.
    assert kappa_schedule(3.0, 0) == pytest.approx(3.0 * np.sqrt(0.5 * np.log(2.0)))
    assert kappa_schedule(3.0, 9) == pytest.approx(3.0 * np.sqrt(0.5 * np.log(20.0)))
    values = [kappa_schedule(3.0, n) for n in range(50)]
    assert all(b > a for a, b in zip(values, values[1:]))
    with pytest.raises(ValueError, match="n"):
        kappa_schedule(3.0, -1)


def test_ucb_prefers_uncertainty_with_larger_kappa():
    mean = np.array([1.0, 0.8])
    std = np.array([0.0, 0.5])
    np.testing.assert_allclose(ucb(mean, std, 2.0), [1.0, 1.8])
    assert np.argmax(ucb(mean, std, 0.0)) == 0
    assert np.argmax(ucb(mean, std, 1.0)) == 1
    with pytest.raises(ValueError, match="kappa"):
        ucb(mean, std, -1.0)
    with pytest.raises(ValueError, match=r"std\[1\]"):
        ucb(mean, np.array([0.1, -0.1]), 1.0)
    with pytest.raises(ValueError, match="shape"):
        ucb(mean, np.array([0.1]), 1.0)


def test_expected_improvement_closed_form_matches_monte_carlo():
    rng = np.random.default_rng(0)
    mean = np.array([0.0, 1.0, -2.0, 0.5, 3.0])
    std = np.array([1.0, 0.3, 2.0, 0.01, 1.5])
    best = 0.7
    ei = expected_improvement(mean, std, best)
    samples = mean + std * rng.standard_normal((400_000, len(mean)))
    mc = np.maximum(samples - best, 0.0).mean(axis=0)
    se = np.maximum(samples - best, 0.0).std(axis=0) / np.sqrt(len(samples))
    assert np.all(np.abs(ei - mc) < 5 * se + 1e-12)
    assert (ei >= 0).all()


def test_expected_improvement_limits():
    ei = expected_improvement(np.array([2.0, 0.0]), np.array([0.0, 0.0]), best=1.0)
    np.testing.assert_allclose(ei, [1.0, 0.0])
    # EI grows with the mean and with the uncertainty.
    assert expected_improvement([1.0], [1.0], 1.0)[0] > expected_improvement([0.5], [1.0], 1.0)[0]
    assert expected_improvement([1.0], [2.0], 1.0)[0] > expected_improvement([1.0], [1.0], 1.0)[0]
    # xi shifts the incumbent.
    np.testing.assert_allclose(expected_improvement([1.0], [0.5], 0.5, xi=0.2), expected_improvement([1.0], [0.5], 0.7))
    with pytest.raises(ValueError, match="best"):
        expected_improvement([1.0], [1.0], float("nan"))


def test_thompson_draws_have_the_posterior_moments():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((4, 4))
    cov = A @ A.T + 0.1 * np.eye(4)
    mean = np.array([1.0, -1.0, 0.0, 2.0])
    draws = thompson_draws(mean, cov, 50_000, np.random.default_rng(2))
    assert draws.shape == (50_000, 4)
    np.testing.assert_allclose(draws.mean(axis=0), mean, atol=0.05)
    np.testing.assert_allclose(np.cov(draws.T), cov, atol=0.1 * np.abs(cov).max())
    again = thompson_draws(mean, cov, 5, np.random.default_rng(3))
    np.testing.assert_array_equal(again, thompson_draws(mean, cov, 5, np.random.default_rng(3)))


def test_thompson_draws_survive_a_non_psd_covariance():
    cov = np.array([[1.0, 1.2], [1.2, 1.0]])  # eigenvalues 2.2 and -0.2
    draws = thompson_draws(np.zeros(2), cov, 20_000, np.random.default_rng(0))
    assert np.isfinite(draws).all()
    # The project's PSD policy (nasviz.linalg.psd_factor) shifts the diagonal by the most
    # negative eigenvalue plus a 1e-8 floor, so the draws have covariance cov + 0.2 I (clipping
    # the spectrum instead, the policy before, would give 1.1 everywhere).
    np.testing.assert_allclose(np.cov(draws.T), 1.2 * np.ones((2, 2)), atol=0.06)
    with pytest.raises(ValueError, match="cov must have shape"):
        thompson_draws(np.zeros(3), cov, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="Generator"):
        thompson_draws(np.zeros(2), cov, 1, 0)
