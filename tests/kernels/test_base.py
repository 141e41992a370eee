"""Helpers every kernel shares: the kernel-induced distance."""

from __future__ import annotations

import numpy as np

from nasviz.dashboard import kernels as dashboard_kernels
from nasviz.kernels.base import feature_distances, induced_distance


def test_induced_distance_is_the_one_feature_distance():
    assert dashboard_kernels.induced_distance is induced_distance  # the pages use the one in kernels.base
    Phi = np.random.default_rng(3).standard_normal((6, 4))
    K = Phi @ Phi.T
    D = induced_distance(K)
    expected = np.linalg.norm(Phi[:, None, :] - Phi[None, :, :], axis=-1)
    np.testing.assert_allclose(D, expected, atol=1e-7)
    np.testing.assert_array_equal(D, feature_distances(K, np.diag(K), np.diag(K)))
    # A kernel that is not PD can give negative squared distances: clipped to 0.
    assert induced_distance(np.array([[1.0, 2.0], [2.0, 1.0]]))[0, 1] == 0.0
