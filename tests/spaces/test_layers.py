"""The layer space (paper 001 Sec. 2.2, App. A, B.1) and NASBOT's modifiers (Table 6)."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.spaces.mlp import modifiers as M
from nasviz.arch import Architecture
from nasviz.spaces import get_space
from nasviz.spaces import mlp as L


def chain(*units, labels=None):
    labels = labels or ["relu"] * len(units)
    return L.feed_forward(labels, list(units))


# ---------------------------------------------------------------- space
def test_registered_and_round_trip():
    space = get_space("layers")
    assert isinstance(space, L.MLPSpace) and space.name == "layers" and get_space("layers") is space
    rng = np.random.default_rng(0)
    for arch in L.initial_pool() + L.sample(rng, 50):
        text = L.format(arch)
        assert L.parse(text) == arch
        L.validate(arch)


def test_format_example():
    arch = L.feed_forward(["relu", "tanh"], [64, 32])
    assert L.format(arch) == "input;relu:64<0;tanh:32<1;linear<2;output<3"


def test_initial_pool_is_ten_feed_forward_networks():
    pool = L.initial_pool()
    assert len(pool) == 10 and len(set(pool)) == 10
    for arch in pool:
        # feed forward: every layer has exactly one parent and one child (a chain)
        assert all(len(p) <= 1 for p in arch.predecessors())
        assert len(L.decision_layers(arch)) == 1


@pytest.mark.parametrize(
    "text, needle",
    [
        ("input;relu:64<0;linear<1;output<9", "parent 9"),
        ("input;relu:64<0;linear<1;output", "no parent"),
        ("input;relu:4<0;linear<1;output<2", "units must be in [8, 1024]"),
        ("input;relu:2000<0;linear<1;output<2", "units must be in [8, 1024]"),
        ("input;relu<0;linear<1;output<2", "units must be in"),
        ("input;swish:8<0;linear<1;output<2", "unknown label 'swish'"),
        ("input;relu:8<0;output<1", "decision layer and must be 'linear'"),
        ("input;relu:8<0;linear:8<1;output<2", "width comes from the task"),
        ("input;linear:8<0;linear<1;output<2", "reserved for decision layers"),
        ("input;relu:x<0;linear<1;output<2", "not an integer"),
        ("input;relu:8<0;linear<1;relu:8<2;linear<3;output<4", "layer 2 ('linear'): 'linear' is reserved"),
        ("input;relu:8<0;linear<1;relu:8<2;linear<3;output<2,4", "may only feed the output"),
        ("", "empty"),
    ],
)
def test_parse_errors_name_the_problem(text, needle):
    with pytest.raises(ValueError, match=None) as err:
        L.parse(text)
    assert needle in str(err.value)


def test_constraints_degree_edges_layers():
    # six parallel branches into one layer: in-degree 6 > 5
    labels = ["input"] + ["relu"] * 7 + ["linear", "output"]
    widths = [None] + [8] * 7 + [None, None]
    edges = [(0, i) for i in range(1, 7)] + [(i, 7) for i in range(1, 7)] + [(7, 8), (8, 9)]
    arch = Architecture(labels, edges, widths)
    assert any("in-degree 6 exceeds 5" in p for p in L.problems(arch))
    assert any("out-degree 6 exceeds 5" in p for p in L.problems(arch))
    assert L.is_valid(arch, L.Constraints(max_in_degree=6, max_out_degree=6))
    assert not L.is_valid(chain(8, 8, 8), L.Constraints(max_layers=4))
    assert not L.is_valid(chain(8, 8, 8), L.Constraints(max_edges=3))
    assert not L.is_valid(chain(1000, 1000), L.Constraints(max_mass=1e5))
    with pytest.raises(ValueError, match="min_units"):
        L.Constraints(min_units=10, max_units=5)


def test_label_mismatch_matrix_is_table_5():
    Mx = L.label_mismatch_matrix()
    i = {lab: k for k, lab in enumerate(L.LABELS)}
    assert Mx.shape == (10, 10)
    assert np.all(np.diag(Mx) == 0)
    assert Mx[i["relu"], i["crelu"]] == 0.1 and Mx[i["elu"], i["softplus"]] == 0.1
    assert Mx[i["relu"], i["tanh"]] == 0.25 and Mx[i["logistic"], i["leaky-relu"]] == 0.25
    assert Mx[i["logistic"], i["tanh"]] == 0.1
    assert np.isinf(Mx[i["linear"], i["relu"]]) and np.isinf(Mx[i["input"], i["output"]])
    assert np.allclose(Mx, Mx.T)


def test_normalise_renumbers_topologically():
    # output given as node 1: normalise moves it last
    arch = Architecture(["input", "output", "relu", "linear"], [(0, 2), (2, 3), (3, 1)], [None, None, 16, None])
    norm = L.normalise(arch)
    assert norm.labels == ("input", "relu", "linear", "output")
    L.validate(norm)


def test_mutate_and_neighbours_valid_and_distinct():
    rng = np.random.default_rng(3)
    arch = chain(64, 32)
    for _ in range(30):
        child = L.mutate(arch, rng)
        assert child != arch and L.is_valid(child)
    nb = L.neighbours(arch)
    assert len(nb) == len(set(nb)) > 10
    assert arch not in nb and all(L.is_valid(a) for a in nb)


# ---------------------------------------------------------------- modifiers
def test_dec_and_inc_single_change_one_layer_by_an_eighth():
    arch = chain(64, 64, 64)
    rng = np.random.default_rng(0)
    dec = M.dec_single(arch, rng)
    inc = M.inc_single(arch, rng)
    assert sorted(w for w in dec.widths if w) == [56, 64, 64]
    assert sorted(w for w in inc.widths if w) == [64, 64, 72]
    assert dec.edges == arch.edges and dec.labels == arch.labels


def test_unit_modifiers_skip_when_out_of_bounds():
    rng = np.random.default_rng(0)
    assert M.dec_single(chain(8), rng) is None
    assert M.inc_single(chain(1024), rng) is None
    assert M.inc_en_masse(chain(1024, 1024), rng) is None


@pytest.mark.parametrize("n_layers, expected", [(4, 2), (8, 2), (16, 2)])
def test_en_masse_block_sizes(n_layers, expected):
    # 1/2 of <= 4 layers, 1/4 of <= 8 layers, 1/8 of more (Table 6)
    arch = chain(*([64] * n_layers))
    rng = np.random.default_rng(1)
    child = M.dec_en_masse(arch, rng)
    changed = [v for v in range(arch.n_nodes) if arch.widths[v] != child.widths[v]]
    assert len(changed) == expected
    assert all(child.widths[v] == 56 for v in changed)
    assert changed == list(range(changed[0], changed[0] + expected))  # consecutive in order
    child = M.inc_en_masse(arch, rng)
    assert sorted(set(w for w in child.widths if w)) == [64, 72]


def test_dup_path_duplicates_interior_layers():
    rng = np.random.default_rng(0)
    arch = chain(32, 16, labels=["tanh", "elu"])
    for _ in range(20):
        child = M.dup_path(arch, rng)
        if child is None:
            continue
        assert child.n_nodes > arch.n_nodes
        added = child.n_nodes - arch.n_nodes
        # each duplicate copies a layer's label and width
        from collections import Counter

        c_old = Counter(zip(arch.labels, arch.widths))
        c_new = Counter(zip(child.labels, child.widths))
        extra = c_new - c_old
        assert sum(extra.values()) == added and all(k in c_old for k in extra)
        assert L.is_valid(child)


def test_remove_layer_keeps_network_connected():
    rng = np.random.default_rng(0)
    arch = chain(32, 16, 8)
    for _ in range(10):
        child = M.remove_layer(arch, rng)
        assert child.n_nodes == arch.n_nodes - 1 and L.is_valid(child)
    assert M.remove_layer(L.feed_forward([], []), rng) is None  # nothing removable


def test_skip_adds_a_forward_edge():
    rng = np.random.default_rng(0)
    arch = chain(32, 16, 8)
    child = M.skip(arch, rng)
    assert len(child.edges) == len(arch.edges) + 1 and child.labels == arch.labels
    assert set(arch.edges) < set(child.edges)


def test_swap_label_changes_one_label():
    rng = np.random.default_rng(0)
    arch = chain(32, 16)
    child = M.swap_label(arch, rng)
    diff = [v for v in range(arch.n_nodes) if arch.labels[v] != child.labels[v]]
    assert len(diff) == 1 and child.labels[diff[0]] in L.PROCESSING_LABELS


def test_wedge_layer_units_are_the_mean_of_its_ends():
    rng = np.random.default_rng(0)
    arch = chain(32, 16)
    seen = set()
    for _ in range(30):
        child = M.wedge_layer(arch, rng)
        assert child.n_nodes == arch.n_nodes + 1 and len(child.edges) == len(arch.edges) + 1
        seen |= set(child.widths) - {None, 32, 16}
    assert seen == {24}  # (32 + 16) / 2 on the middle edge; the ends' own units elsewhere


def test_modifiers_respect_constraints():
    rng = np.random.default_rng(0)
    tight = L.Constraints(max_layers=5, max_in_degree=1, max_out_degree=1)
    arch = chain(32, 16)  # 5 layers
    for name, mod in M.MODIFIERS.items():
        for _ in range(10):
            child = mod(arch, rng, tight)
            if child is not None:
                assert L.is_valid(child, tight), name
    # nothing that adds a layer or an edge fits
    for name in ("dup_path", "skip", "wedge_layer"):
        assert all(M.MODIFIERS[name](arch, rng, tight) is None for _ in range(10)), name


def test_compound_mutation_step_distribution():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="sum to 1"):
        M.mutate(chain(64), rng, probabilities=(0.5, 0.4))
    # only k=1 with swap-free network: a one-step mutation changes little
    arch = chain(64, 64, 64)
    one = M.mutate(arch, rng, probabilities=(1.0,))
    assert one != arch
