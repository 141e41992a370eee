"""Auto-Keras's morphisms on CNNs (paper 003 Sec. 3.3, App. B): every kind keeps the function."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nasviz.spaces import get_space
from nasviz.spaces.cnn import graph as G
from nasviz.spaces.cnn import morphisms as MO
from nasviz.spaces.cnn.networks import build_cnn
from nasviz.spaces.morphs import Morph

S = get_space("cnn")
pytestmark = pytest.mark.usefixtures("one_torch_thread")
SHAPES = [(1, 40), (2, 8, 8)]


def _randomise_batch_norm(net: torch.nn.Module, seed: int) -> torch.nn.Module:
    """Trained-looking BN state (running statistics, scale and shift), so that "eval mode" means
    something: a fresh network's BN is the identity on its initial statistics."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)):
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.3)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
                m.weight.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.2)
    return net.eval()


def _random_parent(rng: np.random.Generator, shape, seed: int):
    arch = S.sample(rng, 1)[0]
    return arch, _randomise_batch_norm(build_cnn(arch, shape, 5, seed=seed), seed)


@pytest.mark.slow
@pytest.mark.parametrize("shape", SHAPES, ids=["signal", "image"])
@pytest.mark.parametrize("kind", ["deep", "wide", "add", "concat"])
def test_every_morphism_preserves_the_function_in_eval_mode(kind, shape):
    rng = np.random.default_rng(sum(map(ord, kind)))
    tested = 0
    for trial in range(6):
        parent, net = _random_parent(rng, shape, trial)
        x = torch.randn(32, *shape, generator=torch.Generator().manual_seed(trial)) * 2
        morphs = [m for ms in MO.possible_morphs(parent).values() for m in ms if m.kind == kind]
        for i in rng.choice(len(morphs), size=min(3, len(morphs)), replace=False) if morphs else []:
            result = MO.apply_morph(parent, morphs[int(i)])
            assert G.is_valid(result.child)
            child = MO.inherit_weights(net, result, seed=7).eval()
            with torch.no_grad():
                expected, got = net(x), child(x)
            assert float(expected.abs().max()) > 1e-3  # a function worth preserving
            assert torch.allclose(got, expected, atol=1e-5, rtol=0), str(morphs[int(i)])
            tested += 1
    assert tested >= 6


def test_deep_inserts_a_conv_bn_relu_identity_only_after_non_negative_outputs():
    arch = S.parse("input;max-pool<0;conv3:16<1;avg-pool<2;fc:32<3;softmax<4;output<5")
    assert MO.deep_labels(arch, 1) == ()  # a pool of the raw input can be negative
    assert MO.deep_labels(arch, 3) == G.CONV_LABELS and MO.deep_labels(arch, 4) == ("fc",)
    r = MO.apply_morph(arch, Morph("deep", 2, label="conv5"))
    new = r.node_origin.index(None)
    assert r.child.labels[new] == "conv5" and r.child.widths[new] == 16 and r.feature_origin[new] == 2
    net = MO.inherit_weights(build_cnn(arch, (1, 12), 3, seed=0), r)
    w = net.layers[str(new)].conv.weight
    assert torch.equal(w[:, :, 2], torch.eye(16)) and float(w[:, :, [0, 1, 3, 4]].detach().abs().sum()) == 0
    with pytest.raises(ValueError, match="not function-preserving"):
        MO.apply_morph(arch, Morph("deep", 1, label="conv3"))


def test_a_skip_across_pools_goes_through_new_average_pools_with_zero_weights():
    arch = S.parse("input;conv3:8<0;max-pool<1;conv3:16<2;max-pool<3;conv3:16<4;softmax<5;output<6")
    r = MO.apply_morph(arch, Morph("add", 1, 5))  # from level 0 into a reader at level 2
    assert r.child.labels.count("avg-pool") == 2 and r.node_origin.count(None) == 2
    net = _randomise_batch_norm(build_cnn(arch, (1, 16), 3, seed=0), 0)
    child = MO.inherit_weights(net, r).eval()
    x = torch.randn(8, 1, 16)
    with torch.no_grad():
        assert torch.allclose(child(x), net(x), atol=1e-5)
    with pytest.raises(ValueError, match="must come before"):
        MO.apply_morph(arch, Morph("concat", 4, 1))
    branches = S.parse("input;conv3:8<0;max-pool<1;conv3:8<2;conv3:8<0;softmax<3,4;output<5")
    with pytest.raises(ValueError, match="cannot be pooled"):  # never from a coarser map to a finer one
        MO.apply_morph(branches, Morph("add", 3, 4))


def test_wide_reaches_readers_through_pools_and_sequences_compose():
    arch = S.parse("input;conv3:8<0;res5:8<1;max-pool<1,2;fc:16<3;softmax<4;output<5")
    morphs = [Morph("wide", 1, units=16), Morph("wide", 2, units=16), Morph("wide", 4, units=32),
              Morph("concat", 1, 4)]
    net = _randomise_batch_norm(build_cnn(arch, (3, 6, 6), 4, seed=1), 1)
    child = S.morph_network(net, morphs, seed=3).eval()
    assert child.arch == S.apply_morphs(arch, morphs)[-1].child
    assert child.shapes[3][0] == 16 + 16  # the pool passes both widened parents on
    x = torch.randn(8, 3, 6, 6)
    with torch.no_grad():
        assert torch.allclose(child(x), net(x), atol=1e-5)


def test_sample_morphs_draws_distinct_valid_children_of_each_type():
    rng = np.random.default_rng(0)
    arch = S.initial_pool()[3]
    results = S.sample_morphs(arch, rng, 24)
    assert len({r.child for r in results}) == len(results) == 24
    assert {r.morph.kind for r in results} == {"deep", "wide", "add", "concat"}
    assert all(G.is_valid(r.child) and r.parent == arch for r in results)
