"""Joint posterior draws: the one sampler behind every Thompson-sampling entry point."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz import acquisition, batch
from nasviz.batch import selectors as batch_selectors
from nasviz.linalg import psd_sqrt
from nasviz.gp.posterior import PosteriorSampler, sample_posterior


def test_every_thompson_entry_point_is_the_one_sampler():
    assert acquisition.thompson_draws is sample_posterior
    assert batch_selectors.joint_draws is sample_posterior


def test_draws_use_the_psd_policy_factor_and_continue_one_stream():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 5))
    cov = A @ A.T + 0.5 * np.eye(5)
    mean = np.arange(5.0)
    sampler = PosteriorSampler(mean, cov)
    assert sampler.jitter == 0.0
    np.testing.assert_array_equal(sampler.root, psd_sqrt(cov)[0])
    eps = np.random.default_rng(7).standard_normal((6, 5))
    rng = np.random.default_rng(7)
    chunks = np.vstack([sampler.draw(2, rng), sampler.draw(4, rng)])
    np.testing.assert_allclose(chunks, mean + eps @ sampler.root.T, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(sample_posterior(mean, cov, 6, np.random.default_rng(7)), chunks, rtol=1e-13, atol=1e-13)


def test_members_the_kernel_cannot_tell_apart_get_equal_draws():
    # A singular posterior covariance is sampled exactly (no jitter): equal rows give draws equal
    # up to round-off (a 1e-8 jitter would separate them by ~1e-4).
    X = np.random.default_rng(1).standard_normal((4, 3))
    X[3] = X[0]
    cov = X @ X.T
    sampler = PosteriorSampler(np.zeros(4), cov)
    assert sampler.jitter == 0.0
    draws = sampler.draw(2000, np.random.default_rng(2))
    np.testing.assert_allclose(draws[:, 0], draws[:, 3], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.cov(draws.T), cov, atol=0.15 * np.abs(cov).max())


def test_a_thompson_batch_reports_the_jitter():
    v = np.array([1.0, 2.0, 2.0, 0.5])  # rank 1, PSD: sampled as it is
    sel = batch.select_thompson(np.array([0.0, 1.0, 1.0, 0.5]), np.outer(v, v), 2, np.random.default_rng(0))
    assert sel.info["jitter"] == 0.0
    indefinite = batch.select_thompson(np.zeros(2), np.array([[1.0, 1.2], [1.2, 1.0]]), 1, np.random.default_rng(0))
    assert indefinite.info["jitter"] == pytest.approx(0.2, rel=1e-6)


def test_bad_sampler_input():
    with pytest.raises(ValueError, match="shape"):
        PosteriorSampler(np.zeros(3), np.eye(2))
    with pytest.raises(ValueError, match="non-finite"):
        PosteriorSampler(np.zeros(2), np.array([[1.0, np.inf], [np.inf, 1.0]]))
    with pytest.raises(ValueError, match="n_draws"):
        sample_posterior(np.zeros(2), np.eye(2), 0, np.random.default_rng(0))
