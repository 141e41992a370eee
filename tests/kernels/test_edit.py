"""Auto-Keras edit distance and its Bourgain-embedded kernel (paper 003 Sec. 3.1, App. E, F)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nasviz.arch import Architecture
from nasviz.kernels import make_kernel
from nasviz.kernels.edit import EditDistanceKernel, bourgain_dimensions
from nasviz.kernels.edit_distance import edit_distance, layer_sequence, skip_distance
from nasviz.spaces import nb201

ACTIVATIONS = ("relu", "elu", "tanh", "logistic")


def chain(layers: list[tuple[str, int | None]], skips: list[tuple[int, int]] = ()) -> Architecture:
    """input -> layers... -> output in a line, plus extra (skip) edges by node index."""
    labels = ("input", *[label for label, _ in layers], "output")
    widths = (None, *[w for _, w in layers], None)
    n = len(labels)
    return Architecture(labels, [(i, i + 1) for i in range(n - 1)] + list(skips), widths)


def random_mlp(rng: np.random.Generator) -> Architecture:
    n_hidden = int(rng.integers(1, 7))
    layers = [(ACTIVATIONS[int(rng.integers(4))], int(rng.choice([8, 16, 32, 64]))) for _ in range(n_hidden)]
    layers.append(("linear", None))
    n = n_hidden + 3
    skips = [(u, v) for u in range(n - 2) for v in range(u + 2, n - 1) if rng.random() < 0.15]
    return chain(layers, skips)


# ---------------------------------------------------------------------------- worked examples
def test_widening_costs_eq_6():
    a = chain([("relu", 16), ("relu", 32), ("linear", None)])
    b = chain([("relu", 16), ("relu", 64), ("linear", None)])
    assert edit_distance(a, b) == pytest.approx(abs(32 - 64) / 64)  # 0.5


def test_inserting_a_layer_costs_one_and_a_type_change_costs_one():
    a = chain([("relu", 16), ("relu", 32), ("linear", None)])
    deeper = chain([("relu", 16), ("relu", 16), ("relu", 32), ("linear", None)])
    other_type = chain([("relu", 16), ("tanh", 32), ("linear", None)])
    assert edit_distance(a, deeper) == pytest.approx(1.0)
    assert edit_distance(a, other_type) == pytest.approx(1.0)


def test_dp_respects_order():
    # [8, 16] vs [16, 8]: matching in order costs 0.5 + 0.5; crossing is not allowed, and
    # deleting + inserting would cost 2.
    a = chain([("relu", 8), ("relu", 16), ("linear", None)])
    b = chain([("relu", 16), ("relu", 8), ("linear", None)])
    assert edit_distance(a, b) == pytest.approx(1.0)


def test_skip_connections_eq_8_9():
    a = chain([("relu", 16), ("relu", 32), ("linear", None)])
    a_skip = chain([("relu", 16), ("relu", 32), ("linear", None)], skips=[(0, 2)])  # u=0, delta=1
    assert edit_distance(a, a_skip, lam=0.5) == pytest.approx(0.5)  # one unmatched skip
    b_skip = chain([("relu", 16), ("relu", 32), ("linear", None)], skips=[(1, 3)])  # u=1, delta=1
    # d_s = (|0 - 1| + |1 - 1|) / (max(0, 1) + max(1, 1)) = 1 / 2
    assert edit_distance(a_skip, b_skip, lam=1.0) == pytest.approx(0.5)
    long_skip = chain([("relu", 16), ("relu", 32), ("linear", None)], skips=[(1, 4)])  # u=1, delta=2
    # (|0 - 1| + |1 - 2|) / (1 + 2) = 2/3
    assert skip_distance(np.array([[0.0, 1.0]]), np.array([[1.0, 2.0]])) == pytest.approx(2 / 3)
    assert edit_distance(a_skip, long_skip) == pytest.approx(2 / 3)


def test_hungarian_matching_picks_the_cheapest_pairs():
    sa = np.array([[0.0, 1.0], [2.0, 3.0]])
    sb = np.array([[2.0, 3.0], [0.0, 1.0], [5.0, 1.0]])
    assert skip_distance(sa, sb) == pytest.approx(1.0)  # both matched exactly, one extra
    assert skip_distance(sa, sb[:0]) == 2.0


def test_layer_sequence_conversion():
    # diamond: input -> A, input -> B, A -> C, B -> C, C -> output
    arch = Architecture(("input", "relu", "tanh", "relu", "output"), [(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)], (None, 8, 8, 16, None))
    seq = layer_sequence(arch)
    assert len(seq.labels) == 3 and seq.labels[2] == "relu" and seq.widths[2] == 16
    # positions: input 0, A/B at 1/2, C 3: skips (0 -> pos 2) and (pos 1 -> 3), each over one layer
    assert seq.skips.tolist() == [[0.0, 1.0], [1.0, 1.0]]
    cell = nb201.parse("|nor_conv_3x3~0|+|none~0|none~1|+|none~0|nor_conv_1x1~1|none~2|")
    s = layer_sequence(cell, cell_width=16)
    assert s.labels == ("nor_conv_3x3", "nor_conv_1x1") and s.widths.tolist() == [16, 16] and len(s.skips) == 0


def test_isomorphic_cells_have_distance_zero():
    # two parallel two-op branches, written through cell node 1 or node 2
    x = nb201.from_operations(["avg_pool_3x3", "nor_conv_3x3", "none", "none", "nor_conv_1x1", "nor_conv_3x3"])
    y = nb201.from_operations(["nor_conv_3x3", "avg_pool_3x3", "none", "none", "nor_conv_3x3", "nor_conv_1x1"])
    assert x != y and x.canonical_key() == y.canonical_key()
    assert layer_sequence(x).labels == layer_sequence(y).labels
    assert edit_distance(x, y) == 0.0


# ---------------------------------------------------------------------------- metric axioms
def test_distance_axioms_and_triangle_inequality():
    rng = np.random.default_rng(0)
    k = EditDistanceKernel()
    for archs in (nb201.sample(rng, 60), [random_mlp(rng) for _ in range(60)]):
        D = k.edit_distances(archs, archs)
        assert np.allclose(D, D.T) and np.all(np.diag(D) == 0) and np.all(D >= 0)
        keys = [a.canonical_key() for a in archs]
        distinct = np.array([[ka != kb for kb in keys] for ka in keys])
        assert np.all(D[distinct] > 0)  # definiteness on distinct (sequence, skip) views
        i, j, l = rng.integers(0, len(archs), size=(3, 400))
        assert np.all(D[i, l] <= D[i, j] + D[j, l] + 1e-12)


def test_vectorised_matrix_equals_the_plain_pairwise_computation():
    rng = np.random.default_rng(1)
    archs = nb201.sample(rng, 12) + [random_mlp(rng) for _ in range(12)]
    D = EditDistanceKernel(lam=0.7).edit_distances(archs, archs)
    plain = np.array([[edit_distance(a, b, lam=0.7) for b in archs] for a in archs])
    assert np.allclose(D, plain, atol=1e-12)


def test_fig1_style_triple():
    a = chain([("relu", 16), ("relu", 16), ("relu", 32), ("relu", 32), ("linear", None)])
    b = chain([("relu", 16), ("relu", 16), ("relu", 32), ("relu", 64), ("linear", None)], skips=[(1, 3)])
    c = chain([("tanh", 128), ("logistic", 256), ("tanh", 64), ("linear", None), ], skips=[(0, 2), (1, 3), (0, 4)])
    D = EditDistanceKernel().edit_distances([a, b, c], [a, b, c])
    assert D[0, 1] < D[0, 2] and D[0, 1] < D[1, 2]


# ---------------------------------------------------------------------------- Bourgain
@pytest.mark.parametrize("n, dims", [(100, 35), (200, 48), (500, 63)])
def test_bourgain_dimensions(n, dims):
    assert bourgain_dimensions(n) == dims
    assert dims <= 2 * math.log2(n) ** 2  # O(log^2 n)


def test_embedding_uses_all_dimensions_and_is_non_expansive():
    rng = np.random.default_rng(2)
    archs = list({a.canonical_key(): a for a in nb201.sample(rng, 400)}.values())[:100]
    k = EditDistanceKernel()
    comps = k.components(archs, archs)
    assert k.n_dimensions == bourgain_dimensions(100) == 35
    assert k.embed(archs).shape == (100, 35)
    assert np.all(comps["bourgain"] <= comps["edit"] + 1e-9)  # rho <= d
    assert np.corrcoef(comps["bourgain"].ravel(), comps["edit"].ravel())[0, 1] > 0.8


def test_kernel_is_psd_on_300_cells():
    rng = np.random.default_rng(3)
    archs = nb201.sample(rng, 300)
    k = make_kernel("edit")
    assert k.positive_definite
    K = k.matrix(archs)
    assert np.allclose(K, K.T) and np.allclose(np.diag(K), 1.0)
    assert np.linalg.eigvalsh(K)[0] >= -1e-8


def test_one_kernel_for_training_and_prediction():
    rng = np.random.default_rng(4)
    train, cand = nb201.sample(rng, 40), nb201.sample(rng, 15)
    k = EditDistanceKernel()
    K_train = k.matrix(train)
    dims = k.n_dimensions
    K_cross = k.matrix(cand, train)
    K_cand = k.matrix(cand, cand)  # candidates only: must not re-draw the anchors
    assert k.n_dimensions == dims
    # the joint Gram built from the three blocks is the kernel of one feature map: PSD
    joint = np.block([[K_train, K_cross.T], [K_cross, K_cand]])
    assert np.linalg.eigvalsh(joint)[0] >= -1e-8
    # a training row seen from a prediction call equals its row in the training Gram
    assert np.allclose(k.matrix(train[:3], train), K_train[:3])
    # a grown training set re-embeds (App. F)
    k.matrix(train + cand)
    assert k.n_dimensions == bourgain_dimensions(len({a.canonical_key() for a in train + cand}))


def test_gradient_and_validation():
    rng = np.random.default_rng(5)
    archs = nb201.sample(rng, 20)
    k = EditDistanceKernel()
    comps = k.components(archs, archs)
    K, (dK,) = k.combine_with_gradients(comps, [0.7])
    fd = (k.combine(comps, [0.7 + 1e-6]) - k.combine(comps, [0.7 - 1e-6])) / 2e-6
    assert np.allclose(dK, fd, atol=1e-7) and np.abs(dK).max() > 0
    with pytest.raises(ValueError, match="theta must have 1 entry"):
        k.combine(comps, [1.0, 2.0])
    with pytest.raises(ValueError, match="lam"):
        EditDistanceKernel(lam=-1)
    with pytest.raises(ValueError, match="no reference"):
        EditDistanceKernel().embed(archs)


def test_explicit_reference_is_kept_when_predicting_on_a_superset():
    rng = np.random.default_rng(6)
    train, cand = nb201.sample(rng, 30), nb201.sample(rng, 10)
    k = EditDistanceKernel(auto_reference=False)
    k.set_reference(train)
    phi = k.embed(train)
    K_train = k.matrix(train)
    k.matrix(train + cand)  # a full-covariance prediction over training + candidates
    assert np.allclose(k.embed(train), phi)
    assert np.allclose(k.matrix(train), K_train)


def test_gp_fit_does_not_depend_on_what_the_kernel_embedded_before():
    """Regressions: a square call over a grown set used to reset the default beta (and its
    bounds) to 1 / median(rho^2) of that call; and the anchors indexed the reference in the
    order the kernel first met its members, so two of the training cells that the kernel had
    seen before (isomorphic to cells of ``seen``) changed the embedding of the training set."""
    from nasviz.gp import GaussianProcess

    rng = np.random.default_rng(7)
    seen, train = nb201.sample(rng, 25), nb201.sample(rng, 15)
    y = rng.normal(size=len(train))
    used, fresh = EditDistanceKernel(), EditDistanceKernel()
    used.components(seen, seen)  # e.g. a distance view over other architectures
    assert used.hyperparameters == fresh.hyperparameters
    assert used.hyperparameters[0].default == 1.0  # the paper's beta (Eq. (3))
    fits = [GaussianProcess(k, n_restarts=2, seed=0).fit(train, y) for k in (used, fresh)]
    assert fits[0].theta == fits[1].theta
