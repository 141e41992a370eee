"""Plain OT and Gromov-Wasserstein baselines: exact solutions, symmetry, jitter bookkeeping."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import ot
import pytest

from nasviz.arch import Architecture
from nasviz.kernels import make_kernel
from nasviz.kernels.ot import GWKernel, OTKernel, gromov_wasserstein_square, layer_path_lengths, structure_matrix
from nasviz.spaces import nb201

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def chain(*ops: str) -> Architecture:
    labels = ("input", *ops, "output")
    return Architecture(labels, tuple((i, i + 1) for i in range(len(labels) - 1)))


@pytest.fixture(scope="module")
def cells() -> list[Architecture]:
    return nb201.sample(np.random.default_rng(5), 40)


@pytest.fixture(scope="module")
def kernels() -> dict:
    """One instance per kernel for the module: pair distances are cached, so solved once."""
    return {"ot": make_kernel("ot"), "gw": make_kernel("gw")}


def test_path_lengths_and_structure_matrix():
    # input -> a -> b -> output and input -> b (a skip over a)
    arch = Architecture(("input", "relu", "tanh", "output"), ((0, 1), (1, 2), (0, 2), (2, 3)))
    L = layer_path_lengths(arch)
    np.testing.assert_array_equal(L[:, 0], [0, 1, 1, 2])  # shortest from input
    np.testing.assert_array_equal(L[:, 1], [0, 1, 2, 3])  # longest from input
    np.testing.assert_array_equal(L[:, 2], [2, 2, 1, 0])  # shortest to output
    np.testing.assert_array_equal(L[:, 3], [3, 2, 1, 0])  # longest to output
    C = structure_matrix(arch)
    np.testing.assert_array_equal(C, [[0, 1, 1, 2], [1, 0, 1, 2], [1, 1, 0, 1], [2, 2, 1, 0]])
    edgeless = nb201.from_operations(["none"] * 6).reduced()
    np.testing.assert_array_equal(structure_matrix(edgeless), [[0, 2], [2, 0]])


def test_ot_one_label_change_costs_the_tree_distance_over_n():
    k = OTKernel()
    d = k.components([chain("nor_conv_1x1")], [chain("nor_conv_3x3")])["ot"][0, 0]
    assert d == pytest.approx(0.2 / 3, abs=1e-12)  # 1/3 of the mass moves at cost 0.2
    d = k.components([chain("nor_conv_1x1")], [chain("avg_pool_3x3")])["ot"][0, 0]
    assert d == pytest.approx(2.0 / 3, abs=1e-12)


def test_ot_equals_the_best_assignment_for_equal_sizes():
    """With uniform masses on equally many layers, an optimal plan is a permutation (Birkhoff)."""
    rng = np.random.default_rng(0)
    k = OTKernel(nu_str=0.7)
    cells = [c for c in nb201.sample(rng, 200)]
    pairs = [(a, b) for a, b in zip(cells[::2], cells[1::2]) if a.reduced().n_nodes == b.reduced().n_nodes]
    assert len(pairs) >= 10
    for a, b in pairs[:15]:
        plan, C = k.transport_plan(a, b)
        n = len(C)
        best = min(C[np.arange(n), list(p)].sum() for p in itertools.permutations(range(n))) / n
        assert k.components([a], [b])["ot"][0, 0] == pytest.approx(best, abs=1e-9)
        np.testing.assert_allclose(plan.sum(axis=1), 1 / n)
        np.testing.assert_allclose(plan.sum(axis=0), 1 / n)


def test_distances_are_symmetric_zero_on_diagonal_and_non_negative(cells, kernels):
    for name in ("ot", "gw"):
        k = kernels[name]
        D = k.distances(cells, cells)[name]
        assert np.array_equal(D, D.T), name
        assert np.all(np.diag(D) == 0) and np.all(D >= 0), name
        same = np.array([[a.reduced() == b.reduced() for b in cells] for a in cells])
        assert np.all(D[same] == 0)
        assert np.mean(D[~same] > 1e-9) > 0.8, name  # different graphs are (mostly) told apart
        # the rectangular call agrees with the square one, in either orientation
        R = k.distances(cells[:7], cells[20:])[name]
        np.testing.assert_array_equal(R, D[:7, 20:])
        np.testing.assert_array_equal(k.distances(cells[20:], cells[:7])[name], R.T)


def test_cached_matrices_equal_pots_public_solvers_pair_by_pair(cells, kernels):
    """components (fast solvers, dedup, cache) == pair_distances (ot.emd2 / gromov_wasserstein2)."""
    for name in ("ot", "gw"):
        D = kernels[name].distances(cells[:15], cells[15:30])[name]
        plain = make_kernel(name)
        for i in range(15):
            for j in range(15):
                assert D[i, j] == pytest.approx(plain.pair_distances(cells[i], cells[15 + j])[name], abs=1e-9)


def test_gw_matches_pot_on_a_pair():
    a = chain("nor_conv_3x3", "avg_pool_3x3")
    b = Architecture(("input", "relu", "relu", "output"), ((0, 1), (0, 2), (1, 3), (2, 3)))
    ca, cb = structure_matrix(a), structure_matrix(b)
    expected = ot.gromov.gromov_wasserstein2(ca, cb, np.full(4, 0.25), np.full(4, 0.25), loss_fun="square_loss")
    assert GWKernel().components([a], [b])["gw"][0, 0] == pytest.approx(float(expected), abs=1e-9)
    # GW ignores labels: relabelled isomorphic structure is at distance 0
    assert GWKernel().components([a], [chain("relu", "tanh")])["gw"][0, 0] == 0


def test_gw_solver_reproduces_pot_step_for_step():
    """Our conditional gradient reaches POT's local optimum exactly (ties in the LP included)."""
    rng = np.random.default_rng(9)
    graphs = [c.reduced() for c in nb201.sample(rng, 160)]
    for _ in range(6):  # random layer-like DAGs of 5-10 nodes
        n = int(rng.integers(5, 11))
        edges = {(i, i + 1) for i in range(n - 1)} | {
            (int(u), int(v)) for u, v in rng.integers(0, n, size=(n, 2)) if u < v
        }
        graphs.append(Architecture(("input",) + ("relu",) * (n - 2) + ("output",), tuple(edges)))
    for x, z in zip(graphs[::2], graphs[1::2]):
        C1, C2 = structure_matrix(x), structure_matrix(z)
        p, q = np.full(len(C1), 1 / len(C1)), np.full(len(C2), 1 / len(C2))
        expected = float(ot.gromov.gromov_wasserstein2(C1, C2, p, q, loss_fun="square_loss", max_iter=200))
        assert gromov_wasserstein_square(C1, C2, p, q, 200) == pytest.approx(expected, abs=1e-9)


def test_jitter_makes_the_gram_factorable_and_is_reported(cells, kernels):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("ot", "gw"):
            k = kernels[name]
            assert k.positive_definite is False
            comps = k.components(cells, cells)
            D = comps[name]
            K = k.combine(comps, [2.0])
            np.linalg.cholesky(K)  # factorable
            np.testing.assert_allclose(K - k.last_jitter * np.eye(len(K)), np.exp(-2.0 * D), atol=1e-12)
            raw = np.exp(-2.0 * D)
            raw_min = np.linalg.eigvalsh(raw)[0]
            # Eigenvalues of a symmetric matrix are only known to about n * eps * ||K||: a raw
            # minimum of -1e-16 is rounding noise whose sign depends on the BLAS build, and such a
            # Gram factorises without jitter. The property is: the jitter covers the negative part
            # of the spectrum up to that noise, and it is there whenever the spectrum is
            # negative beyond it.
            noise = len(raw) * np.finfo(float).eps * np.linalg.norm(raw, 2)
            assert k.last_jitter >= -raw_min - noise
            if raw_min < -noise:
                assert k.last_jitter > 0.0
            if name == "gw":  # strongly indefinite (test below): the jitter cannot be skipped here
                assert raw_min < -noise
            # a cross-covariance is never jittered
            k.combine(k.components(cells[:5], cells[5:9]), [2.0])
            assert k.last_jitter == 0.0
            K, (dK,) = k.combine_with_gradients(comps, [2.0])
            fd = (np.exp(-(2.0 + 1e-6) * D) - np.exp(-(2.0 - 1e-6) * D)) / 2e-6
            np.testing.assert_allclose(dK, fd, atol=1e-7)


def test_gw_kernel_is_indefinite_on_nb201_cells(cells, kernels):
    """The reason for the jitter (paper 000 Table 2): the raw Gram has negative eigenvalues."""
    D = kernels["gw"].components(cells, cells)["gw"]
    assert np.linalg.eigvalsh(np.exp(-D))[0] < -1e-6


def test_bad_input(cells):
    with pytest.raises(ValueError, match="nu_str"):
        OTKernel(nu_str=-1)
    with pytest.raises(ValueError, match="max_iter"):
        GWKernel(max_iter=0)
    with pytest.raises(ValueError, match="architecture 1"):
        OTKernel().components([cells[0], 3], [cells[0]])
    with pytest.raises(ValueError, match="lambda"):
        OTKernel().combine({"ot": np.zeros((2, 2))}, [-1.0])
    with pytest.raises(ValueError, match="lack 'gw'"):
        GWKernel().combine({"ot": np.zeros((2, 2))})
