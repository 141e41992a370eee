"""Path-encoding kernel: paths derived from the graph, Hamming distance, PSD, gradients."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.arch import Architecture
from nasviz.kernels import make_kernel
from nasviz.kernels.path import PathEncodingKernel, operation_paths
from nasviz.spaces import nb201

CELL = "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|"


@pytest.fixture(scope="module")
def cells() -> list[Architecture]:
    return nb201.sample(np.random.default_rng(11), 300)


def test_paths_are_the_cells_input_to_output_paths():
    """The four NB201 paths 0->3, 0->1->3, 0->2->3, 0->1->2->3, with skip_connect adding nothing."""
    paths = operation_paths(nb201.parse(CELL))
    assert paths == {
        (): 1,  # 0 -> 3: skip
        ("nor_conv_3x3", "nor_conv_3x3"): 1,  # 0 -> 1 -> 3
        ("nor_conv_3x3",): 1,  # 0 -> 2 (conv) -> 3 (skip)
        ("nor_conv_3x3", "avg_pool_3x3"): 1,  # 0 -> 1 -> 2 (pool) -> 3 (skip)
    }


def test_paths_through_none_vanish_and_counts_add_up():
    assert operation_paths(nb201.from_operations(["none"] * 6)) == {}
    all_conv = operation_paths(nb201.from_operations(["nor_conv_1x1"] * 6))
    assert all_conv == {("nor_conv_1x1",): 1, ("nor_conv_1x1",) * 2: 2, ("nor_conv_1x1",) * 3: 1}
    # a generic DAG with two parallel branches of different depth
    arch = Architecture(("input", "relu", "tanh", "relu", "output"), ((0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (1, 4)))
    assert operation_paths(arch) == {("relu", "relu"): 1, ("tanh", "relu"): 1, ("relu",): 1}


def test_distances_are_hamming_and_match_the_pair_routine(cells):
    k = PathEncodingKernel()
    D = k.components(cells[:40], cells[40:60])["paths"]
    assert D.shape == (40, 20)
    for i in range(40):
        for j in range(20):
            a, b = set(operation_paths(cells[i])), set(operation_paths(cells[40 + j]))
            assert D[i, j] == len(a ^ b) == k.pair_distance(cells[i], cells[40 + j])
    counts = PathEncodingKernel(binary=False)
    Dc = counts.components(cells[:40], cells[:40])["paths"]
    # |c1 - c2| >= |[c1 > 0] - [c2 > 0]|: counts separate at least as much as indicators
    assert np.all(Dc >= k.components(cells[:40], cells[:40])["paths"])
    assert np.any(Dc > k.components(cells[:40], cells[:40])["paths"])
    assert Dc[0, 1] == counts.pair_distance(cells[0], cells[1])


def test_features_have_readable_names(cells):
    k = PathEncodingKernel()
    X, names = k.features([nb201.parse(CELL)])
    assert X.shape == (1, len(names))
    present = {name for name, v in zip(names, X[0]) if v}
    assert present == {
        "input>output",
        "input>nor_conv_3x3>output",
        "input>nor_conv_3x3>nor_conv_3x3>output",
        "input>nor_conv_3x3>avg_pool_3x3>output",
    }


def test_symmetric_zero_diagonal_and_psd_on_300_cells(cells):
    k = make_kernel("path")
    D = k.distances(cells, cells)["paths"]
    assert np.array_equal(D, D.T) and np.all(np.diag(D) == 0) and np.all(D >= 0)
    for lam in (0.05, 0.5, 5.0):
        assert np.linalg.eigvalsh(k.matrix(cells, theta=[lam]))[0] >= -1e-8


def test_gradient_matches_finite_differences(cells):
    k = PathEncodingKernel()
    comps = k.components(cells[:30], cells[:30])
    K, (dK,) = k.combine_with_gradients(comps, [0.8])
    fd = (k.combine(comps, [0.8 + 1e-6]) - k.combine(comps, [0.8 - 1e-6])) / 2e-6
    np.testing.assert_allclose(dK, fd, atol=1e-7)
    assert np.abs(dK).max() > 1e-2


def test_bad_input():
    k = PathEncodingKernel(max_paths=3)
    with pytest.raises(ValueError, match="max_paths=3"):
        k.components([nb201.from_operations(["nor_conv_1x1"] * 6)], [])
    with pytest.raises(ValueError, match="architecture 0"):
        PathEncodingKernel().components(["x"], [])
    with pytest.raises(ValueError, match="lambda"):
        PathEncodingKernel().combine({"paths": np.zeros((1, 1))}, [1.0, 2.0])
