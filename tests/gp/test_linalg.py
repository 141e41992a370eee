"""The project's one PSD-repair policy: psd_factor (solves), psd_sqrt (sampling) and the wrappers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from nasviz.linalg import PSD_REL_FLOOR, cholesky_with_jitter, make_psd, psd_factor, psd_sqrt


def _low_rank(m: int, rank: int, seed: int) -> np.ndarray:
    X = np.random.default_rng(seed).standard_normal((m, rank))
    return X @ X.T


def test_a_positive_definite_matrix_is_left_alone():
    K = _low_rank(6, 6, 0) + 0.1 * np.eye(6)
    K_psd, L, jitter = psd_factor(K)
    assert jitter == 0.0
    np.testing.assert_array_equal(K_psd, K)
    np.testing.assert_array_equal(L, np.linalg.cholesky(K))  # bit for bit: nothing was changed


def test_a_singular_matrix_gets_the_floor_and_nothing_more():
    K = _low_rank(30, 5, 1)  # rank 5: Cholesky fails, lambda_min is round-off
    K_psd, L, jitter = psd_factor(K)
    scale = np.mean(np.diag(K))
    assert PSD_REL_FLOOR * scale <= jitter <= 2 * PSD_REL_FLOOR * scale + 1e-12 * scale
    off = ~np.eye(30, dtype=bool)
    np.testing.assert_array_equal(K_psd[off], K[off])  # only the diagonal moves
    np.testing.assert_allclose(np.diag(K_psd) - np.diag(K), jitter, rtol=1e-6)
    np.testing.assert_allclose(L @ L.T, K_psd, atol=1e-12 * scale)


def test_an_indefinite_matrix_is_shifted_by_its_most_negative_eigenvalue():
    K = np.array([[1.0, 1.2], [1.2, 1.0]])  # eigenvalues 2.2 and -0.2
    K_psd, L, jitter = psd_factor(K)
    assert jitter == pytest.approx(0.2 + PSD_REL_FLOOR, rel=1e-9)
    np.testing.assert_allclose(L @ L.T, K + jitter * np.eye(2), atol=1e-14)
    # Only the diagonal moves: a kernel's Gram keeps its off-diagonal entries.
    assert K_psd[0, 1] == K[0, 1]


def test_the_jitter_doubles_until_cholesky_succeeds(monkeypatch):
    K = np.array([[1.0, 1.2], [1.2, 1.0]])
    real = np.linalg.cholesky
    calls = []

    def failing_three_times(A):
        calls.append(A)
        if len(calls) <= 3:
            raise np.linalg.LinAlgError("simulated")
        return real(A)

    monkeypatch.setattr(np.linalg, "cholesky", failing_three_times)
    _, _, jitter = psd_factor(K)
    assert len(calls) == 4  # as given, then j0, 2 j0, 4 j0
    assert jitter == pytest.approx(4 * (0.2 + PSD_REL_FLOOR), rel=1e-9)


def test_what_the_policy_refuses():
    with pytest.raises(np.linalg.LinAlgError, match="outweighs"):
        psd_factor(-np.eye(3))  # more negative than positive: not a covariance
    with pytest.raises(np.linalg.LinAlgError, match="non-finite"):
        psd_factor(np.array([[1.0, np.nan], [np.nan, 1.0]]))
    with pytest.raises(ValueError, match="square"):
        psd_factor(np.ones((2, 3)))
    # A zero matrix is a (degenerate) covariance: it gets the floor on a unit scale.
    assert psd_factor(np.zeros((3, 3)))[2] == pytest.approx(PSD_REL_FLOOR)


def test_a_square_root_needs_no_jitter_for_a_singular_psd_matrix():
    K = _low_rank(30, 5, 1)
    K[7], K[:, 7] = K[3], K[:, 3]  # two points the kernel cannot tell apart
    K[7, 7] = K[3, 3]
    R, jitter = psd_sqrt(K)
    assert jitter == 0.0  # lambda_min is round-off: the matrix is PSD as it stands
    np.testing.assert_allclose(R @ R.T, K, atol=1e-10 * np.abs(K).max())
    lam, U = np.linalg.eigh(K)
    np.testing.assert_array_equal(R, U * np.sqrt(np.maximum(lam, 0.0)))


def test_a_square_root_of_an_indefinite_matrix_gets_the_same_shift_as_a_factor():
    K = np.array([[1.0, 1.2], [1.2, 1.0]])
    R, jitter = psd_sqrt(K)
    assert jitter == pytest.approx(0.2 + PSD_REL_FLOOR, rel=1e-9) == psd_factor(K)[2]
    np.testing.assert_allclose(R @ R.T, K + jitter * np.eye(2), atol=1e-12)
    with pytest.raises(np.linalg.LinAlgError, match="outweighs"):
        psd_sqrt(-np.eye(2))
    assert psd_sqrt(np.zeros((0, 0)))[0].shape == (0, 0)


def test_make_psd_and_cholesky_with_jitter_are_the_same_policy():
    K = _low_rank(20, 4, 2)
    K_psd, L, jitter = psd_factor(K)
    made, made_jitter = make_psd(K)
    np.testing.assert_array_equal(made, K_psd)
    assert made_jitter == jitter
    with pytest.warns(RuntimeWarning, match=f"jitter {jitter:.3g}"):
        L2, jitter2 = cholesky_with_jitter(K, context="n=20")
    np.testing.assert_array_equal(L2, L)
    assert jitter2 == jitter
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a positive definite covariance: no warning
        assert cholesky_with_jitter(K + np.eye(20))[1] == 0.0


def test_the_kernels_use_the_same_function():
    from nasviz.kernels import make_psd as from_kernels
    from nasviz.kernels.base import make_psd as from_base

    assert from_base is make_psd and from_kernels is make_psd
