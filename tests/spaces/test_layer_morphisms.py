"""Auto-Keras network morphisms (paper 003 Sec. 3.3, App. B) and weight inheritance."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nasviz.spaces.mlp import morphisms as MO
from nasviz.spaces.mlp.networks import build_layer_network
from nasviz.spaces import mlp as L

#: relu / crelu / tanh / logistic layers, a concatenation and a skip: every morph kind applies.
BASE = L.parse("input;relu:16<0;crelu:8<1;tanh:12<0,2;logistic:8<3;linear<4;output<5")


def outputs_equal(parent_net, child_net, n_in, tol=1e-5):
    x = torch.randn(256, n_in, generator=torch.Generator().manual_seed(0)) * 3
    with torch.no_grad():
        return float((parent_net(x) - child_net(x)).abs().max()) <= tol


def test_possible_morphs_cover_every_kind():
    ops = MO.possible_morphs(BASE)
    assert ops["deep"] and ops["wide"] and ops["skip"]
    kinds = {m.kind for m in ops["skip"]}
    assert kinds == {"add", "concat"}
    # deep only after layers whose outputs are non-negative (relu, crelu, logistic here)
    assert {BASE.labels[m.u] for m in ops["deep"]} == {"relu", "crelu", "logistic"}


@pytest.mark.parametrize("kind", ["deep", "wide", "add", "concat"])
def test_each_morph_preserves_the_function(kind):
    net = build_layer_network(BASE, 6, 3, seed=0)
    ops = [m for ms in MO.possible_morphs(BASE).values() for m in ms if m.kind == kind]
    assert ops
    rng = np.random.default_rng(0)
    for i in rng.choice(len(ops), size=min(6, len(ops)), replace=False):
        m = ops[int(i)]
        r = MO.apply_morph(BASE, m)
        L.validate(r.child)
        child = MO.inherit_weights(net, r, seed=1)
        assert outputs_equal(net, child, 6), str(m)


def test_deep_inserts_an_identity_layer():
    u = 1  # relu:16
    r = MO.apply_morph(BASE, MO.Morph("deep", u, label="relu"))
    assert r.child.n_nodes == BASE.n_nodes + 1
    new = [c for c, o in enumerate(r.node_origin) if o is None]
    assert len(new) == 1 and r.child.widths[new[0]] == 16
    net = MO.inherit_weights(build_layer_network(BASE, 6, 3, seed=0), r)
    w = net.linears[str(new[0])].weight
    assert torch.equal(w, torch.eye(16))
    with pytest.raises(ValueError, match="not function-preserving"):
        MO.apply_morph(BASE, MO.Morph("deep", 3, label="relu"))  # after tanh
    with pytest.raises(ValueError, match="not a processing layer"):
        MO.apply_morph(BASE, MO.Morph("deep", 0, label="relu"))


def test_wide_updates_consumers_shapes_and_breaks_symmetry():
    r = MO.apply_morph(BASE, MO.Morph("wide", 2, units=16))  # crelu 8 -> 16 units (32 features)
    parent = build_layer_network(BASE, 6, 3, seed=0)
    child = MO.inherit_weights(parent, r, seed=3)
    assert child.linears["2"].out_features == 16
    assert child.linears["3"].in_features == 6 + 32  # tanh reads input + crelu
    new_rows = child.linears["2"].weight[8:]
    assert new_rows.abs().sum() > 0 and not torch.allclose(new_rows[0], new_rows[1])  # noise
    assert outputs_equal(parent, child, 6)
    with pytest.raises(ValueError, match="needs more than"):
        MO.apply_morph(BASE, MO.Morph("wide", 2, units=8))


def test_add_and_concat_edges():
    r = MO.apply_morph(BASE, MO.Morph("add", 1, 4))
    assert (1, 4) in r.child.edges and len(r.child.edges) == len(BASE.edges) + 1
    r = MO.apply_morph(BASE, MO.Morph("concat", 1, 3))  # 1 now feeds 3's child (4)
    assert (1, 4) in r.child.edges
    with pytest.raises(ValueError, match="already exists"):
        MO.apply_morph(BASE, MO.Morph("add", 0, 1))
    with pytest.raises(ValueError, match="before"):
        MO.apply_morph(BASE, MO.Morph("add", 4, 1))


def test_morphs_respect_constraints():
    tight = L.Constraints(max_layers=BASE.n_nodes, max_units=16, max_in_degree=2)
    ops = MO.possible_morphs(BASE, tight)
    assert not ops["deep"]  # would add a layer
    assert all(m.units <= 16 for m in ops["wide"])
    for m in ops["skip"]:
        assert L.is_valid(MO.apply_morph(BASE, m, tight).child, tight)


def test_random_morph_sequences_preserve_the_function():
    rng = np.random.default_rng(0)
    pool = [L.initial_pool()[i] for i in (0, 7, 8)]  # relu, crelu, relu/tanh
    for i, arch in enumerate(pool):
        net = build_layer_network(arch, 10, 4, seed=i)
        seq, cur = [], arch
        for _ in range(4):
            children = MO.sample_morphs(cur, rng, 1)
            seq.append(children[0].morph)
            cur = children[0].child
        child = MO.morph_network(net, seq, seed=0)
        assert child.arch == cur
        assert outputs_equal(net, child, 10)


def test_sample_morphs_gives_distinct_valid_children():
    rng = np.random.default_rng(1)
    children = MO.sample_morphs(BASE, rng, 8)
    assert len(children) == 8 and len({r.child for r in children}) == 8
    assert all(L.is_valid(r.child) for r in children)
