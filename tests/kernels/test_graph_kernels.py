"""GraKeL baselines (random walk, shortest path, multiscale Laplacian) and the additive WL + MLP kernel."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.arch import Architecture
from nasviz.components import kernels_for
from nasviz.gp import GaussianProcess
from nasviz.kernels import make_kernel
from nasviz.kernels.additive import AdditiveWLMLGKernel
from nasviz.kernels.graph_kernels import (
    MultiscaleLaplacianKernel, RandomWalkKernel, ShortestPathKernel, grakel_graph,
)
from nasviz.spaces import get_space

CONV = Architecture(("input", "conv", "output"), ((0, 1), (1, 2)))
POOL = Architecture(("input", "pool", "output"), ((0, 1), (1, 2)))


@pytest.fixture(scope="module")
def cells():
    return get_space("nb101").sample(np.random.default_rng(5), 24)


def test_what_grakel_sees_by_hand():
    # SP counts (label u, label v, shortest distance) over reachable pairs: 3 features per chain,
    # only (input, output, 2) in common.
    sp = ShortestPathKernel()
    assert sp.matrix([CONV, POOL])[0, 1] == pytest.approx(1 / 3)
    # RW: walks of length 0 count all 3 x 3 node pairs; CONV with itself adds the label-matched
    # product walks (in,in)->(conv,conv)->(out,out): 2 of length 1, 1 of length 2.
    rw = RandomWalkKernel(lamda=0.5)
    assert rw.matrix([CONV, POOL])[0, 1] == pytest.approx(9 / (9 + 2 * 0.5 + 0.5**2))
    A, labels = grakel_graph(CONV, directed=False)
    assert np.array_equal(A, A.T) and labels == {0: "input", 1: "conv", 2: "output"}


def test_direction_matters_to_rw_and_sp():
    forward = Architecture(("input", "a", "b", "output"), ((0, 1), (1, 2), (2, 3), (0, 3)))
    backward = Architecture(("input", "b", "a", "output"), ((0, 1), (1, 2), (2, 3), (0, 3)))
    for kernel in (RandomWalkKernel(), ShortestPathKernel()):
        assert kernel.directed and kernel.matrix([forward, backward])[0, 1] < 1 - 1e-6
    assert not MultiscaleLaplacianKernel.directed


@pytest.mark.parametrize("kernel", [RandomWalkKernel(), ShortestPathKernel(), MultiscaleLaplacianKernel()],
                         ids=["rw", "sp", "mlg"])
def test_symmetric_finite_unit_diagonal_psd(kernel, cells):
    K = kernel.matrix(cells)
    assert K.shape == (24, 24) and np.isfinite(K).all()
    assert np.allclose(K, K.T) and np.allclose(np.diag(K), 1.0)
    assert np.linalg.eigvalsh(K).min() > -1e-8  # PSD: RW and SP exactly, MLP's Gaussian kernel too here
    assert kernel.hyperparameters == [] and kernel.combine_with_gradients({"gram": K})[1] == []
    assert np.allclose(kernel.distances(cells[:3], cells[:3])["gram"].diagonal(), 0.0)


@pytest.mark.parametrize("kernel", [RandomWalkKernel(), ShortestPathKernel()], ids=["rw", "sp"])
def test_pairwise_kernels_are_blocks_of_one_matrix(kernel, cells):
    full = kernel.matrix(cells)
    fresh = type(kernel)()
    assert np.allclose(fresh.components(cells[12:], cells[:12])["gram"], full[12:, :12])


def test_mlg_keeps_its_basis_until_the_training_set_grows(cells):
    kernel = MultiscaleLaplacianKernel(seed=3)
    train, test = cells[:16], cells[16:]
    K = kernel.components(train, train)["gram"]
    cross = kernel.components(test, train)["gram"]
    assert np.allclose(kernel.components(train, train)["gram"], K)  # same set: same basis
    assert np.allclose(kernel.components(test, train)["gram"], cross)
    kernel.components(cells, cells)  # a grown training set: refitted
    assert kernel._reference == frozenset(a.reduced() for a in cells)
    with pytest.raises(ValueError, match="features"):
        MultiscaleLaplacianKernel(features="labels")


def test_additive_kernel_is_eq_b1(cells):
    kernel = AdditiveWLMLGKernel(alpha=0.7)
    comps = kernel.components(cells, cells)
    wl, mlg = comps["wl:h2"], comps["mlg:gram"]
    assert np.allclose(kernel.combine(comps), 0.7 * wl + 0.3 * mlg)
    assert np.allclose(np.diag(kernel.combine(comps)), 1.0)
    learned = AdditiveWLMLGKernel(learn_alpha=True)
    assert [h.name for h in learned.hyperparameters] == ["h", "alpha"]
    comps = learned.components(cells, cells)
    theta = np.array([1.0, 0.4])
    K, (dh, dalpha) = learned.combine_with_gradients(comps, theta)
    step = 1e-6
    numeric = (learned.combine(comps, theta + [0, step]) - learned.combine(comps, theta - [0, step])) / (2 * step)
    assert np.allclose(dalpha, numeric) and not dh.any()
    with pytest.raises(ValueError, match="alpha must lie in"):
        AdditiveWLMLGKernel(alpha=1.5)


def test_the_learned_weight_stays_a_convex_combination(cells):
    y = np.array([len(a.edges) + 0.1 * i for i, a in enumerate(cells)], dtype=float)
    gp = GaussianProcess(make_kernel("wl+mlg-ml"), n_restarts=2, seed=0)
    fit = gp.fit(cells, y)
    assert 0.0 <= fit.theta["alpha"] <= 1.0 and fit.theta["h"] in (0.0, 1.0, 2.0)


def test_registered_for_the_graph_spaces():
    for space in ("nb101", "nb201"):
        assert {"rw", "sp", "mlg", "wl+mlg", "wl+mlg-ml", "wl-oa"} <= set(kernels_for(space))
    assert make_kernel("wl-oa").base == "oa"
    assert make_kernel("wl+mlg", base="oa").wl.base == "oa" and make_kernel("wl+mlg-ml").learn_alpha


def test_mlg_fits_cells_with_fewer_vertices_than_eigenvectors():
    """Two cells of one class (output = input) reduce to one graph of 2 vertices: GraKeL would ask
    for P = 3 eigenvalues of a 2 x 2 matrix; the kernel keeps as many as there are."""
    from nasviz.spaces import get_space

    space = get_space("nb201")
    a = space.parse("|none~0|+|none~0|none~1|+|skip_connect~0|none~1|none~2|")
    b = space.parse("|none~0|+|skip_connect~0|none~1|+|skip_connect~0|none~1|none~2|")
    assert a.reduced() == b.reduced() and a.reduced().n_nodes < MultiscaleLaplacianKernel().P
    gram = MultiscaleLaplacianKernel().distances([a], [b])["gram"]
    assert gram.shape == (1, 1) and np.isfinite(gram).all()
