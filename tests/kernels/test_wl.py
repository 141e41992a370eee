"""Weisfeiler-Lehman subtree kernel (paper 002 §3.1, Algorithm 2)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from nasviz.arch import Architecture
from nasviz.kernels import make_kernel
from nasviz.kernels.wl import WLKernel, wl_labels
from nasviz.spaces import nb201


@pytest.fixture(scope="module")
def cells() -> list[Architecture]:
    return nb201.sample(np.random.default_rng(7), 60)


def naive_wl_counts(arch: Architecture, h_max: int, direction: str) -> list[Counter]:
    """Algorithm 2 written literally: l_h(v) = (l_{h-1}(v), sorted neighbour labels), per node."""
    g = arch.reduced()
    pred, succ = g.predecessors(), g.successors()
    labels = [("L", lab) for lab in g.labels]
    out = [Counter(labels)]
    for _ in range(h_max):
        new = []
        for v in range(g.n_nodes):
            ins = tuple(sorted(labels[u] for u in pred[v])) if direction in ("in", "both") else ()
            outs = tuple(sorted(labels[u] for u in succ[v])) if direction in ("out", "both") else ()
            new.append((labels[v], ins, outs))
        labels = new
        out.append(Counter(labels))
    return out


def naive_components(archs_a, archs_b, h_max, base, normalize, direction):
    """One pair at a time, as a straightforward implementation does it."""
    ca = [naive_wl_counts(a, h_max, direction) for a in archs_a]
    cb = [naive_wl_counts(b, h_max, direction) for b in archs_b]

    def k(x: Counter, y: Counter) -> float:
        if base == "dot":
            return float(sum(x[f] * y[f] for f in x))
        return float(sum(min(x[f], y[f]) for f in x))

    out = {}
    for h in range(h_max + 1):
        K = np.zeros((len(ca), len(cb)))
        for i, x in enumerate(ca):
            for j, y in enumerate(cb):
                K[i, j] = sum(k(x[d], y[d]) for d in range(h + 1))
                if normalize:
                    kxx = sum(k(x[d], x[d]) for d in range(h + 1))
                    kyy = sum(k(y[d], y[d]) for d in range(h + 1))
                    K[i, j] /= np.sqrt(kxx * kyy)
        out[f"h{h}"] = K
    return out


@pytest.mark.parametrize("base", ["dot", "oa"])
@pytest.mark.parametrize("direction", ["in", "out", "both"])
@pytest.mark.parametrize("normalize", [True, False])
def test_components_match_naive_reference(cells, base, direction, normalize):
    a, b = cells[:15], cells[15:35]
    kernel = WLKernel(h_max=2, base=base, normalize=normalize, direction=direction)
    got = kernel.components(a, b)
    want = naive_components(a, b, 2, base, normalize, direction)
    assert set(got) == {"h0", "h1", "h2"}
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-12, atol=1e-12)


def test_isomorphic_cells_get_identical_features():
    rng = np.random.default_rng(3)
    archs = nb201.sample(rng, 400)
    kernel = WLKernel(h_max=3)
    phi, names, depths = kernel.features(archs)
    dense = phi.toarray()
    groups: dict[str, list[int]] = {}
    for i, arch in enumerate(archs):
        groups.setdefault(arch.canonical_key(), []).append(i)
    multi = [g for g in groups.values() if len(g) > 1]
    assert multi, "the sample should contain isomorphic cells"
    for g in multi:
        for i in g[1:]:
            np.testing.assert_array_equal(dense[i], dense[g[0]])


def test_relabelled_graph_has_identical_features():
    # Same DAG with the middle nodes numbered differently: isomorphic, so identical features.
    a = Architecture(("input", "nor_conv_3x3", "avg_pool_3x3", "nor_conv_1x1", "output"),
                     ((0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (1, 4)))
    perm = {0: 0, 1: 2, 2: 1, 3: 3, 4: 4}
    labels = [None] * 5
    for old, new in perm.items():
        labels[new] = a.labels[old]
    b = Architecture(tuple(labels), tuple((perm[u], perm[v]) for u, v in a.edges))
    assert a != b
    kernel = WLKernel(h_max=3)
    phi, _, _ = kernel.features([a, b])
    np.testing.assert_array_equal(phi.toarray()[0], phi.toarray()[1])
    K = kernel.components([a, b], [a, b])["h3"]
    np.testing.assert_allclose(K, 1.0)


def test_h0_features_are_operation_counts(cells):
    kernel = WLKernel(h_max=2)
    phi, names, depths = kernel.features(cells, h=0)
    assert (depths == 0).all()
    dense = phi.toarray()
    for i, arch in enumerate(cells):
        counts = Counter(arch.reduced().labels)
        got = {names[j]: dense[i, j] for j in np.flatnonzero(dense[i])}
        assert got == {k: float(v) for k, v in counts.items()}


def test_feature_names_are_readable():
    cell = nb201.parse("|nor_conv_3x3~0|+|none~0|nor_conv_1x1~1|+|skip_connect~0|none~1|avg_pool_3x3~2|")
    labels = wl_labels(cell.reduced(), 2, "in")
    assert "nor_conv_1x1 <- (nor_conv_3x3 <- (input))" in labels[2]
    kernel = WLKernel(h_max=1, direction="in")
    _, names, depths = kernel.features([cell])
    assert "nor_conv_1x1 <- (nor_conv_3x3)" in names
    assert "output <- (avg_pool_3x3, input)" in names
    assert set(depths.tolist()) == {0, 1}
    # The default relabels with out-neighbours (what consumes each node).
    _, names, _ = WLKernel(h_max=2).features([cell])
    assert "input -> (nor_conv_3x3, output)" in names
    assert "nor_conv_3x3 -> (nor_conv_1x1 -> (avg_pool_3x3))" in names


@pytest.mark.parametrize("base", ["dot", "oa"])
def test_positive_semidefinite(base):
    archs = nb201.sample(np.random.default_rng(11), 300)
    kernel = make_kernel("wl", base=base, h_max=2)
    comps = kernel.components(archs, archs)
    for h in range(3):
        K = kernel.combine(comps, [h])
        np.testing.assert_allclose(K, K.T, atol=1e-12)
        np.testing.assert_allclose(np.diag(K), 1.0)
        assert np.linalg.eigvalsh(K).min() >= -1e-8


def test_growing_vocabulary_keeps_old_values(cells):
    kernel = WLKernel(h_max=2)
    first = kernel.components(cells[:10], cells[:10])
    sizes = kernel.vocabulary_size()
    kernel.components(cells, cells)  # new cells add new features
    assert kernel.vocabulary_size()[2] > sizes[2]
    again = kernel.components(cells[:10], cells[:10])
    fresh = WLKernel(h_max=2).components(cells[:10], cells[:10])
    for name in first:
        np.testing.assert_allclose(again[name], first[name])
        np.testing.assert_allclose(fresh[name], first[name])


def test_combine_selects_depth_and_rejects_bad_theta(cells):
    kernel = WLKernel(h_max=2)
    comps = kernel.components(cells[:5], cells[:5])
    np.testing.assert_array_equal(kernel.combine(comps, [1]), comps["h1"])
    np.testing.assert_array_equal(kernel.combine(comps), comps["h2"])
    for bad in ([3], [-1], [0.5]):
        with pytest.raises(ValueError, match="WL depth h"):
            kernel.combine(comps, bad)
    K, grads = kernel.combine_with_gradients(comps, [0])
    assert len(grads) == 1 and not grads[0].any()
    hp = kernel.hyperparameters[0]
    assert hp.name == "h" and hp.discrete == (0.0, 1.0, 2.0)


def test_distances_and_diagonal(cells):
    kernel = WLKernel(h_max=2, base="oa")
    D = kernel.distances(cells[:20], cells[:20])
    for name, M in D.items():
        np.testing.assert_allclose(np.diag(M), 0.0, atol=1e-7)
        np.testing.assert_allclose(M, M.T, atol=1e-12)
        assert (M >= 0).all()
    unnorm = WLKernel(h_max=2, normalize=False)
    diag = unnorm.diagonal_components(cells[:20])
    full = unnorm.components(cells[:20], cells[:20])
    for name in full:
        np.testing.assert_allclose(diag[name], np.diag(full[name]))


def test_bad_options_raise():
    with pytest.raises(ValueError, match="base"):
        WLKernel(base="rbf")
    with pytest.raises(ValueError, match="direction"):
        WLKernel(direction="up")
    with pytest.raises(ValueError, match="h_max"):
        WLKernel(h_max=-1)
    with pytest.raises(ValueError, match=r"archs\[1\]"):
        WLKernel().components([nb201.sample(np.random.default_rng(0), 1)[0], "cell"], [])
