"""Tree-Wasserstein kernel: paper 000's worked example (App. F), exactness against POT, metric
and kernel properties on NAS-Bench-201 cells."""

from __future__ import annotations

import itertools

import numpy as np
import ot
import pytest

from nasviz.arch import Architecture
from nasviz.kernels import make_kernel
from nasviz.kernels.tw import (
    OPERATION_GROUPS,
    DeclaredTree,
    OperationTree,
    TreeWassersteinKernel,
    chain_wasserstein,
    degree_measures,
    ngram_measure,
)
from nasviz.spaces import nb201

# ------------------------------------------------------------------ App. F networks
A_X = [
    [0, 1, 1, 1, 0, 0],
    [0, 0, 0, 0, 1, 0],
    [0, 0, 0, 0, 1, 0],
    [0, 0, 0, 0, 0, 1],
    [0, 0, 0, 0, 0, 1],
    [0, 0, 0, 0, 0, 0],
]
A_Z = [
    [0, 1, 1, 0, 0, 0],
    [0, 0, 0, 0, 1, 1],
    [0, 0, 0, 1, 0, 0],
    [0, 0, 0, 0, 1, 0],
    [0, 0, 0, 0, 0, 1],
    [0, 0, 0, 0, 0, 0],
]
FIG8_GROUPS = {"conv": ["cv1", "cv3"], "pool": ["mp3"]}


def from_adjacency(labels, adjacency) -> Architecture:
    return Architecture(tuple(labels), tuple(map(tuple, np.argwhere(np.array(adjacency)))))


@pytest.fixture(scope="module")
def x() -> Architecture:
    return from_adjacency(["in", "cv1", "cv3", "cv3", "cv3", "out"], A_X)


@pytest.fixture(scope="module")
def z() -> Architecture:
    return from_adjacency(["in", "cv3", "cv1", "mp3", "mp3", "out"], A_Z)


@pytest.fixture(scope="module")
def cells() -> list[Architecture]:
    return nb201.sample(np.random.default_rng(7), 300)


def test_table_1_costs_from_the_fig_8_tree():
    tree = OperationTree(FIG8_GROUPS)
    cost = lambda a, b: tree.distance((a,), (b,))  # noqa: E731
    assert cost("cv1", "cv1") == 0
    assert cost("cv1", "cv3") == pytest.approx(0.2, abs=1e-12)
    assert cost("cv3", "mp3") == pytest.approx(2.0, abs=1e-12)
    assert cost("cv1", "mp3") == pytest.approx(1 + 0.9 + 0.1, abs=1e-12)  # the caption's sum


def test_app_f_measures(x, z):
    assert ngram_measure(x, 1) == pytest.approx({("cv1",): 1 / 4, ("cv3",): 3 / 4})
    assert ngram_measure(z, 1) == pytest.approx({("cv1",): 1 / 4, ("cv3",): 1 / 4, ("mp3",): 2 / 4})
    assert ngram_measure(x, 2) == pytest.approx({("cv1", "cv3"): 1 / 2, ("cv3", "cv3"): 1 / 2})
    assert ngram_measure(z, 2) == pytest.approx({("cv1", "mp3"): 1 / 3, ("cv3", "mp3"): 1 / 3, ("mp3", "mp3"): 1 / 3})
    # Eqs. (20)-(22): eta_x = (0,1,1,1,2,3), M_x = 3; eta_z = (0,1,1,2,3,4), M_z = 4.
    pos, din, dout = degree_measures(x)
    np.testing.assert_allclose(pos, (np.array([0, 1, 1, 1, 2, 3]) + 1) / 4)
    np.testing.assert_allclose(din, np.array([0, 1, 1, 1, 2, 2]) / 7)
    np.testing.assert_allclose(dout, np.array([3, 1, 1, 1, 1, 0]) / 7)
    pos, din, dout = degree_measures(z)
    np.testing.assert_allclose(pos, (np.array([0, 1, 1, 2, 3, 4]) + 1) / 5)
    np.testing.assert_allclose(din, np.array([0, 1, 1, 1, 2, 2]) / 7)
    np.testing.assert_allclose(dout, np.array([2, 2, 1, 1, 1, 0]) / 7)


def test_app_f_one_gram_distance_is_exactly_one(x, z):
    """Eq. (16): 0.1|1/4-1/4| + 0.1|3/4-1/4| + 0.9|1-2/4| + 1|0-2/4| = 1."""
    k = TreeWassersteinKernel(ngram=1, tree=FIG8_GROUPS)
    W = k.components([x, z], [x, z])["operations"]
    assert W[0, 1] == pytest.approx(1.0, abs=1e-12)
    assert k.pair_distances(x, z)["operations"] == pytest.approx(1.0, abs=1e-12)
    # Term by term: g(omega) = (w_e omega(Gamma(v_e)))_e.
    g = OperationTree(FIG8_GROUPS).embed(ngram_measure(x, 1))
    assert g[("group", ("conv",))] == pytest.approx(0.9 * 1.0)
    assert g[("op", ("cv3",))] == pytest.approx(0.1 * 3 / 4)


def test_app_f_in_degree_distance_is_4_over_70(x, z):
    """Eq. (23) gives W_- = 4/70."""
    k = TreeWassersteinKernel(ngram=1, tree=FIG8_GROUPS)
    comps = k.components([x], [z])
    assert comps["in_degree"][0, 0] == pytest.approx(4 / 70, abs=1e-12)


def test_app_f_out_degree_distance(x, z):
    """Eq. (24) is garbled in the text; by hand from its measures (Fig. 9):
    x: 3/7 @ 1/4, 3/7 @ 2/4, 1/7 @ 3/4;  z: 2/7 @ 1/5, 3/7 @ 2/5, 1/7 @ 3/5, 1/7 @ 4/5;
    int |F_x - F_z| = (0.1 + 0.15 + 0.2 + 0.1 + 0 + 0.05) / 7 = 6/70."""
    k = TreeWassersteinKernel(ngram=1, tree=FIG8_GROUPS)
    assert k.components([x], [z])["out_degree"][0, 0] == pytest.approx(6 / 70, abs=1e-12)


def test_app_f_two_gram_distance_is_two(x, z):
    """Eq. (17): 0.1|1/2| + 0.1|1/2| + 0.9|1| + 0.01|1/3| + 0.01|1/3| + 0.99|2/3| + 1|1/3| = 2.

    The 2-gram tree itself is in a figure missing from the text; its weights are read off the
    terms of Eq. (17). We check (a) the default n-gram tree, whose rule (leaf edge a^k, k = number
    of distinct groups) yields exactly these edges -- except that pool-pool is split into
    0.9 + 0.1 instead of one edge of length 1, which gives the same subtree masses and
    distances -- and (b) that tree stated verbatim as a DeclaredTree."""
    k = TreeWassersteinKernel(ngram=2, cumulative=False, tree=FIG8_GROUPS, anchored=False)
    assert k.components([x], [z])["operations"][0, 0] == pytest.approx(2.0, abs=1e-12)

    tree = OperationTree(FIG8_GROUPS)
    gx, gz = tree.embed(ngram_measure(x, 2)), tree.embed(ngram_measure(z, 2))
    assert gx == pytest.approx(
        {("group", ("conv", "conv")): 0.9 * 1, ("op", ("cv1", "cv3")): 0.1 / 2, ("op", ("cv3", "cv3")): 0.1 / 2}
    )
    assert gz == pytest.approx(
        {
            ("group", ("conv", "pool")): 0.99 * 2 / 3,
            ("op", ("cv1", "mp3")): 0.01 / 3,
            ("op", ("cv3", "mp3")): 0.01 / 3,
            ("group", ("pool", "pool")): 0.9 / 3,
            ("op", ("mp3", "mp3")): 0.1 / 3,
        }
    )

    verbatim = DeclaredTree(
        {
            "conv-conv": (0.9, {("cv1", "cv3"): (0.1, None), ("cv3", "cv3"): (0.1, None)}),
            "conv-pool": (0.99, {("cv1", "mp3"): (0.01, None), ("cv3", "mp3"): (0.01, None)}),
            ("mp3", "mp3"): (1.0, None),
        }
    )
    assert verbatim.wasserstein(ngram_measure(x, 2), ngram_measure(z, 2)) == pytest.approx(2.0, abs=1e-12)


def test_cumulative_two_gram_is_the_mean_of_one_and_two_grams(x, z):
    k = TreeWassersteinKernel(ngram=2, cumulative=True, tree=FIG8_GROUPS, anchored=False)
    assert k.components([x], [z])["operations"][0, 0] == pytest.approx((1.0 + 2.0) / 2, abs=1e-12)


def test_nb201_tree_groups_and_masses():
    """Each group's mass is the sum of its children's (the reference's 2-gram mapping was not)."""
    tree = OperationTree()
    assert set(OPERATION_GROUPS["convolution"]) >= {"nor_conv_1x1", "nor_conv_3x3"}
    assert tree.group_of("avg_pool_3x3") == "pooling" != tree.group_of("nor_conv_1x1")
    assert tree.distance(("nor_conv_1x1",), ("nor_conv_3x3",)) == pytest.approx(0.2)
    assert tree.distance(("nor_conv_3x3",), ("avg_pool_3x3",)) == pytest.approx(2.0)
    ops = ["nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3", "skip_connect", "none"]
    rng = np.random.default_rng(0)
    for n in (1, 2, 3):
        leaves = list(itertools.product(ops, repeat=n))
        mass = rng.dirichlet(np.ones(len(leaves)))
        measure = dict(zip(leaves, mass))
        masses = tree.subtree_masses(measure)
        children = tree.children(leaves)
        assert sum(masses[c] for c in children[None]) == pytest.approx(1.0)
        for node, kids in children.items():
            if node is not None:
                assert masses[node] == pytest.approx(sum(masses[c] for c in kids), abs=1e-14)
        # a group holds exactly the n-grams with its group sequence
        for node, kids in children.items():
            if node is not None and node[0] == "group":
                assert all(tuple(tree.group_of(s) for s in kid[1]) == node[1] for kid in kids)
        # every leaf lies at depth 1
        assert all(sum(w for _, w in tree.path(leaf)) == pytest.approx(1.0) for leaf in leaves)


def _emd_tree(tree, mu, nu) -> float:
    sa, sb = list(mu), list(nu)
    M = np.array([[tree.distance(a, b) for b in sb] for a in sa])
    return float(ot.emd2(np.array([mu[a] for a in sa]), np.array([nu[b] for b in sb]), M))


def test_tree_wasserstein_equals_exact_emd_on_random_measures():
    tree = OperationTree()
    labels = ["nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3", "relu", "tanh", "mystery"]
    rng = np.random.default_rng(1)
    for n in (1, 2, 3):
        leaves = list(itertools.product(labels, repeat=n))
        for _ in range(10):
            picks = [rng.choice(len(leaves), size=rng.integers(1, 8), replace=False) for _ in range(2)]
            mu, nu = ({leaves[i]: w for i, w in zip(p, rng.dirichlet(np.ones(len(p))))} for p in picks)
            tw = tree.wasserstein(mu, nu)
            ga, gb = tree.embed(mu), tree.embed(nu)
            l1 = sum(abs(ga.get(k, 0.0) - gb.get(k, 0.0)) for k in set(ga) | set(gb))
            emd = _emd_tree(tree, mu, nu)
            assert tw == pytest.approx(emd, abs=1e-9)
            assert l1 == pytest.approx(emd, abs=1e-9)


@pytest.mark.slow
def test_tree_wasserstein_equals_exact_emd_on_real_cells(cells):
    k = TreeWassersteinKernel(ngram=2, cumulative=True)
    a, b = cells[:25], cells[25:50]
    comps = k.components(a, b)
    tree = k.tree
    for i, j in itertools.product(range(len(a)), range(len(b))):
        ma, mb = k.ngram_measures(a[i]), k.ngram_measures(b[j])
        w_o = np.mean([_emd_tree(tree, ma[n], mb[n]) for n in (1, 2)])
        assert comps["operations"][i, j] == pytest.approx(w_o, abs=1e-9)
        pa, ia, oa = degree_measures(a[i])
        pb, ib, ob = degree_measures(b[j])
        M = np.abs(pa[:, None] - pb[None, :])
        assert comps["in_degree"][i, j] == pytest.approx(ot.emd2(ia, ib, M), abs=1e-9)
        assert comps["out_degree"][i, j] == pytest.approx(ot.emd2(oa, ob, M), abs=1e-9)


def test_vectorised_components_match_the_per_pair_computation(cells):
    k = TreeWassersteinKernel(ngram=3)
    a, b = cells[:30], cells[30:45]
    comps = k.components(a, b)
    assert all(c.shape == (30, 15) for c in comps.values())
    fresh = TreeWassersteinKernel(ngram=3)
    for i, j in itertools.product(range(30), range(15)):
        for name, value in fresh.pair_distances(a[i], b[j]).items():
            assert comps[name][i, j] == pytest.approx(value, abs=1e-12)


def test_chain_wasserstein_matches_emd():
    rng = np.random.default_rng(3)
    for _ in range(20):
        pa, pb = rng.random(rng.integers(1, 6)), rng.random(rng.integers(1, 6))
        ma, mb = rng.dirichlet(np.ones(len(pa))), rng.dirichlet(np.ones(len(pb)))
        emd = ot.emd2(ma, mb, np.abs(pa[:, None] - pb[None, :]))
        assert chain_wasserstein(pa, ma, pb, mb) == pytest.approx(emd, abs=1e-12)


def test_metric_properties_on_cells(cells):
    k = TreeWassersteinKernel()
    comps = k.components(cells[:60], cells[:60])
    for name, D in comps.items():
        assert np.allclose(D, D.T, atol=0), name
        assert np.all(np.diag(D) == 0), name
        assert np.all(D >= 0), name
        # triangle inequality on all 216,000 ordered triples
        assert np.all(D[:, None, :] <= D[:, :, None] + D[None, :, :] + 1e-12), name
    # a pseudometric: cells with the same reduced graph are at distance 0, others mostly not
    same = np.array([[a.reduced() == b.reduced() for b in cells[:60]] for a in cells[:60]])
    total = sum(comps.values())
    assert np.all(total[same] == 0)
    assert np.mean(total[~same] > 0) > 0.9


def test_kernel_is_positive_semidefinite_on_300_cells(cells):
    k = TreeWassersteinKernel()
    comps = k.components(cells, cells)
    rng = np.random.default_rng(0)
    thetas = [None] + [np.exp(rng.uniform(np.log(1e-2), np.log(1e2), 3)) for _ in range(3)]
    for theta in thetas:
        K = k.combine(comps, theta)
        assert np.linalg.eigvalsh(K)[0] >= -1e-8


def test_gradients_are_analytic_and_every_lambda_matters(cells):
    k = make_kernel("tw", ngram=2)
    comps = k.components(cells[:40], cells[:40])
    theta = np.array([0.7, 2.0, 3.0])
    K, grads = k.combine_with_gradients(comps, theta)
    assert len(grads) == 3
    for i in range(3):
        step = np.zeros(3)
        step[i] = 1e-6
        fd = (k.combine(comps, theta + step) - k.combine(comps, theta - step)) / 2e-6
        np.testing.assert_allclose(grads[i], fd, atol=1e-7)
        # each lambda changes the matrix (the reference ignored lambda_3)
        assert np.abs(grads[i]).max() > 1e-3
        bumped = theta.copy()
        bumped[i] += 1.0
        assert not np.allclose(k.combine(comps, bumped), K)


def test_anchored_grams_also_run_through_input_and_output(x):
    """anchored=True (the kernel's default) adds the 2-grams that start at the input or end at
    the output; 1-grams stay App. F's operation-only histogram."""
    assert ngram_measure(x, 2, anchored=True) == pytest.approx(
        {("in", "cv1"): 1 / 7, ("in", "cv3"): 2 / 7, ("cv1", "cv3"): 1 / 7, ("cv3", "cv3"): 1 / 7, ("cv3", "out"): 2 / 7}
    )
    assert ngram_measure(x, 1, anchored=True) == ngram_measure(x, 1)
    # an edge straight from input to output is no gram; a cell with no operation has none
    bypass = Architecture(("input", "nor_conv_3x3", "output"), ((0, 1), (1, 2), (0, 2)))
    assert ngram_measure(bypass, 2, anchored=True) == pytest.approx(
        {("input", "nor_conv_3x3"): 0.5, ("nor_conv_3x3", "output"): 0.5}
    )
    anchored, plain = TreeWassersteinKernel(ngram=2), TreeWassersteinKernel(ngram=2, anchored=False)
    assert anchored.anchored and not plain.anchored
    # same operations, different position relative to the input: only anchored grams see it
    labels = ("input", "nor_conv_3x3", "nor_conv_1x1", "output")
    early = Architecture(labels, ((0, 1), (1, 2), (2, 3), (0, 2)))  # the 1x1 also reads the input
    late = Architecture(labels, ((0, 1), (1, 2), (2, 3), (1, 3)))  # the 3x3 also feeds the output
    assert plain.components([early], [late])["operations"][0, 0] == pytest.approx(0.0)
    assert anchored.components([early], [late])["operations"][0, 0] > 0


def test_degenerate_cells_give_finite_distinct_distances():
    zero = nb201.from_operations(["none"] * 6)
    identity = nb201.from_operations(["skip_connect"] * 6)
    one_op = nb201.from_operations(["none", "none", "none", "nor_conv_3x3", "none", "none"])
    deep = nb201.from_operations(["nor_conv_3x3"] * 6)
    archs = [zero, identity, one_op, deep]
    k = TreeWassersteinKernel(ngram=2)
    comps = k.components(archs, archs)
    total = sum(comps.values())
    assert np.all(np.isfinite(total))
    off = total[~np.eye(4, dtype=bool)]
    assert np.all(off > 0)  # all four are told apart
    assert ngram_measure(one_op, 2) == {(): 1.0}
    assert np.linalg.eigvalsh(k.matrix(archs))[0] >= -1e-12


def test_layer_space_labels_and_different_sizes():
    """Variable-size MLP-like DAGs with activation labels; unknown labels get their own group."""
    a = Architecture(("input", "relu", "relu", "tanh", "output"), ((0, 1), (1, 2), (1, 3), (2, 4), (3, 4)))
    b = Architecture(("input", "elu", "logistic", "output"), ((0, 1), (1, 2), (2, 3)))
    c = Architecture(("input", "wavelet", "output"), ((0, 1), (1, 2)))
    k = TreeWassersteinKernel(ngram=2)
    D = k.components([a, b, c], [a, b, c])
    assert D["operations"].shape == (3, 3)
    tree = k.tree
    assert tree.distance(("relu",), ("elu",)) == pytest.approx(0.2)
    assert tree.distance(("relu",), ("tanh",)) == pytest.approx(2.0)
    assert tree.distance(("wavelet",), ("relu",)) == pytest.approx(2.0)
    assert np.all(np.isfinite(k.matrix([a, b, c])))


def test_features_are_computed_once_per_reduced_graph(cells):
    k = TreeWassersteinKernel()
    k.components(cells[:50], cells[:50])
    n = len(k._features)
    assert n == len({c.reduced() for c in cells[:50]})
    k.components(cells[:50], cells[10:20])
    assert len(k._features) == n


def test_bad_input_is_rejected(cells):
    with pytest.raises(ValueError, match="ngram"):
        TreeWassersteinKernel(ngram=4)
    with pytest.raises(ValueError, match="leaf_weight"):
        TreeWassersteinKernel(leaf_weight=1.5)
    with pytest.raises(ValueError, match="two groups"):
        OperationTree({"a": ["relu"], "b": ["relu"]})
    k = TreeWassersteinKernel()
    with pytest.raises(ValueError, match="architecture 1"):
        k.components([cells[0], "nope"], [cells[0]])
    comps = k.components(cells[:3], cells[:3])
    with pytest.raises(ValueError, match="lambda"):
        k.combine(comps, [1.0, 2.0])
    with pytest.raises(ValueError, match="non-negative"):
        k.combine(comps, [1.0, -2.0, 1.0])
    with pytest.raises(ValueError, match="lack"):
        k.combine({"operations": comps["operations"]})
    with pytest.raises(ValueError, match="not a leaf"):
        DeclaredTree({"g": (1.0, {"a": (0.5, None)})}).path(("b",))


def test_every_lambda_changes_the_gp_likelihood(nb201_table):
    """The reference's likelihood ignored lambda_3; here each lambda moves the GP's Eq. (27)."""
    from nasviz.gp import GaussianProcess

    rng = np.random.default_rng(0)
    idx = rng.choice(len(nb201_table.archs), size=60, replace=False)
    archs = [nb201_table.archs[i] for i in idx]
    y = np.asarray(nb201_table.values["cifar10"], dtype=float)[idx]
    gp = GaussianProcess(TreeWassersteinKernel(), learn=False)
    gp.fit(archs, y)
    theta = np.array([1.0, 3.0, 3.0])
    base = gp.log_marginal_likelihood(theta)
    for i in range(3):
        bumped = theta.copy()
        bumped[i] *= 4.0
        assert abs(gp.log_marginal_likelihood(bumped) - base) > 1e-3, f"lambda_{i + 1} has no effect"
