"""Batch selectors: exact k-DPP sampling, quality k-DPP, BUCB, Thompson, top-k."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from nasviz.batch import (
    condition_on_point,
    elementary_symmetric_polynomials,
    kdpp_probabilities,
    quality_scores,
    sample_kdpp,
    select_bucb,
    select_kdpp,
    select_kdpp_quality,
    select_thompson,
    select_topk,
)


def _random_psd(m: int, rank: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, rank))
    return X @ X.T


def test_elementary_symmetric_polynomials_match_brute_force():
    lam = np.array([0.5, 2.0, 1.5, 3.0, 0.1])
    E = elementary_symmetric_polynomials(lam, 3)
    for l in range(4):
        for n in range(len(lam) + 1):
            expected = sum(np.prod(c) for c in itertools.combinations(lam[:n], l)) if l <= n else 0.0
            assert E[l, n] == pytest.approx(expected)


@pytest.mark.slow
def test_kdpp_sampling_frequencies_match_determinants():
    # Chi-square goodness of fit of 6000 draws against det(L_A) / e_k on all C(6, 3) = 20 subsets.
    L = _random_psd(6, 6, seed=3) + 0.3 * np.eye(6)
    probs = kdpp_probabilities(L, 3)
    rng = np.random.default_rng(12345)
    n = 6000
    counts = Counter(tuple(sorted(sample_kdpp(L, 3, rng))) for _ in range(n))
    subsets = sorted(probs)
    observed = np.array([counts.get(s, 0) for s in subsets])
    expected = np.array([probs[s] * n for s in subsets])
    assert observed.sum() == n  # every draw is a valid 3-subset
    _, p_value = stats.chisquare(observed, expected)
    assert p_value > 0.001, (observed, expected.round(1))


def test_kdpp_never_picks_a_subset_of_zero_probability():
    # Items 0 and 1 are identical: det of any subset holding both is 0.
    X = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    L = X @ X.T
    rng = np.random.default_rng(0)
    for _ in range(300):
        s = set(sample_kdpp(L, 2, rng))
        assert len(s) == 2 and s != {0, 1}


def test_kdpp_rank_too_small_is_a_clear_error():
    with pytest.raises(ValueError, match="rank 2 < k=3"):
        sample_kdpp(_random_psd(5, 2, seed=0), 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="exceeds the pool size"):
        sample_kdpp(np.eye(3), 4, np.random.default_rng(0))


def test_kdpp_sampling_is_deterministic_given_the_generator():
    L = _random_psd(30, 30, seed=1)
    a = sample_kdpp(L, 5, np.random.default_rng(7))
    b = sample_kdpp(L, 5, np.random.default_rng(7))
    assert a == b and len(set(a)) == 5


def test_quality_kdpp_uses_matrix_product_and_prefers_quality():
    cov = _random_psd(8, 8, seed=2) / 8 + 0.05 * np.eye(8)
    values = np.arange(8, dtype=float)
    sel = select_kdpp_quality(cov, values, 3, np.random.default_rng(0), temperature=0.5)
    q = sel.qualities
    assert np.all(np.diff(q) > 0)  # quality increases with the value
    # L = diag(q) cov diag(q) keeps off-diagonal entries (the reference lost them).
    L = np.diag(q) @ cov @ np.diag(q)
    assert np.allclose(np.sort(sel.eigenvalues)[::-1], sel.eigenvalues)
    assert np.allclose(np.sort(np.linalg.eigvalsh(L))[::-1], sel.eigenvalues)
    # Over many draws, the best items are chosen far more often than the worst.
    rng = np.random.default_rng(1)
    counts = Counter(i for _ in range(400) for i in select_kdpp_quality(cov, values, 3, rng, temperature=0.5).indices)
    assert counts[7] > 3 * max(counts[0], 1)


def test_quality_kdpp_is_diverse_where_topk_is_not():
    # Two tight clusters: items 0-4 near-identical and best, items 5-9 near-identical and a bit worse.
    base = np.zeros((10, 2))
    base[:5, 0] = 1.0
    base[5:, 1] = 1.0
    cov = base @ base.T + 1e-3 * np.eye(10)
    values = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 0.8, 0.8, 0.8, 0.8, 0.8])
    top = select_topk(values, 2)
    assert set(top.indices) <= set(range(5))
    rng = np.random.default_rng(0)
    both_clusters = sum(
        (min(sel.indices) < 5 <= max(sel.indices))
        for sel in (select_kdpp_quality(cov, values, 2, rng) for _ in range(200))
    )
    assert both_clusters > 180


def test_quality_scores_validation_and_scale_invariance():
    v = np.array([0.2, 0.5, 0.9])
    assert np.allclose(quality_scores(v), quality_scores(100 * v + 3))
    assert np.allclose(quality_scores(np.ones(4)), 1.0)
    with pytest.raises(ValueError, match="temperature"):
        quality_scores(v, temperature=0.0)


def test_plain_kdpp_falls_back_when_rank_deficient():
    cov = _random_psd(6, 2, seed=4)
    acq = np.arange(6, dtype=float)
    sel = select_kdpp(cov, 4, np.random.default_rng(0), acquisition=acq)
    assert len(set(sel.indices)) == 4
    assert sel.info["rank"] == 2 and sel.info["filled_by_acquisition"] == 2


def test_bucb_keeps_mean_and_shrinks_variance_at_chosen_points():
    cov = _random_psd(10, 10, seed=5) / 10
    mean = np.linspace(0, 1, 10)
    noise = 0.01
    after = condition_on_point(cov, 3, noise)
    # The hallucinated observation equals the posterior mean, so the mean is unchanged; the
    # closed-form update equals conditioning the joint Gaussian on a noisy observation of item 3.
    expected = cov - np.outer(cov[:, 3], cov[3]) / (cov[3, 3] + noise)
    assert np.allclose(after, expected)
    assert after[3, 3] < cov[3, 3]
    assert np.all(np.diag(after) <= np.diag(cov) + 1e-12)
    sel = select_bucb(mean, cov, 4, kappa=2.0, noise_variance=noise)
    assert len(set(sel.indices)) == 4
    for b, j in enumerate(sel.indices[:-1]):
        # the variance at the point picked at step b has shrunk by the next step
        assert sel.std_after[b + 1, j] < sel.std_after[b, j]
    assert np.allclose(sel.acquisition, mean + 2.0 * np.sqrt(np.diag(cov)))


def test_bucb_avoids_a_near_duplicate_of_its_first_pick():
    # Items 0 and 1 are perfectly correlated; after picking 0, item 1 has no variance left.
    X = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    cov = X @ X.T
    sel = select_bucb(np.array([1.0, 1.0, 0.9]), cov, 2, kappa=1.0, noise_variance=1e-6)
    assert sel.indices == [0, 2]


def test_thompson_distinct_and_deterministic():
    cov = _random_psd(20, 20, seed=6) / 20
    mean = np.linspace(0, 0.5, 20)
    a = select_thompson(mean, cov, 5, np.random.default_rng(3))
    b = select_thompson(mean, cov, 5, np.random.default_rng(3))
    assert a.indices == b.indices and len(set(a.indices)) == 5
    # A dominant item with no uncertainty wins every draw: the rest come from the mean.
    mean2 = np.array([10.0, 0.0, 0.1, 0.2])
    sel = select_thompson(mean2, 1e-6 * np.eye(4), 3, np.random.default_rng(0), max_draws=10)
    assert sel.indices == [0, 3, 2] and sel.info["filled_by_mean"] == 2


def test_topk_and_input_validation():
    assert select_topk(np.array([0.1, 0.9, 0.5]), 2).indices == [1, 2]
    with pytest.raises(ValueError, match="positive integer"):
        select_topk(np.array([0.1, 0.9]), 0)
    with pytest.raises(ValueError, match="square"):
        select_kdpp(np.ones((2, 3)), 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="values must have shape"):
        select_kdpp_quality(np.eye(3), np.ones(2), 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="NaN"):
        select_bucb(np.array([np.nan, 0.0]), np.eye(2), 1, kappa=1.0, noise_variance=0.0)


@pytest.mark.slow
def test_anchored_quality_kdpp_is_the_exact_conditional_kdpp():
    # Conditioning on item 2: frequencies of the full batch match det(L_A) over subsets holding 2.
    rng0 = np.random.default_rng(9)
    cov = _random_psd(6, 6, seed=8) / 6
    values = rng0.standard_normal(6)
    q = quality_scores(values)
    probs = kdpp_probabilities(np.diag(q) @ cov @ np.diag(q), 3)
    cond = {s: p for s, p in probs.items() if 2 in s}
    total = sum(cond.values())
    rng = np.random.default_rng(1)
    n = 5000
    draws = [select_kdpp_quality(cov, values, 3, rng, anchor=2).indices for _ in range(n)]
    assert all(d[0] == 2 and len(set(d)) == 3 for d in draws)
    counts = Counter(tuple(sorted(d)) for d in draws)
    subsets = sorted(cond)
    observed = np.array([counts.get(s, 0) for s in subsets])
    expected = np.array([cond[s] / total * n for s in subsets])
    _, p_value = stats.chisquare(observed, expected)
    assert p_value > 0.001
    with pytest.raises(ValueError, match="anchor 9"):
        select_kdpp_quality(cov, values, 2, rng, anchor=9)
