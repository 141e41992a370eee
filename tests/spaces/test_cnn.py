"""The CNN space (paper 001 App. A, B.1): rules, string format, initial pool, modifiers, kernels, networks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nasviz.errors import ArchitectureError
from nasviz.kernels import make_kernel
from nasviz.kernels.otmann import CNN_LABEL_MISMATCH, CNN_LABELS, layer_masses
from nasviz.spaces import get_space
from nasviz.spaces.cnn import graph as G
from nasviz.spaces.cnn import modifiers as M
from nasviz.spaces.cnn.networks import CNNNet, build_cnn

S = get_space("cnn")
FIG1B = "input;conv3:16<0;conv5:16<1;conv3:16<1;conv3:32<2,3;max-pool<4;fc:16<5;softmax<6;output<7"


def test_parse_format_round_trip_and_levels():
    arch = S.parse(FIG1B)
    assert S.format(arch) == FIG1B and S.contains(arch)
    assert G.levels(arch) == {0: 0, 1: 0, 2: 0, 3: 0, 4: 0, 5: 1}
    assert G.channels(arch, 4) == 32 and G.channels(arch, 5) == 32  # a pool keeps its input's channels
    # OTMANN's masses (Sec. 3): conv 16 x 1 (input counted as 1 channel), 16 x 16 twice, 32 x (16 + 16)
    assert G.total_mass(arch) == pytest.approx(16 + 256 + 256 + 1024 + 32 + 0.1 * 16 * 32)


@pytest.mark.parametrize("text, message", [
    ("input;fc:16<0;conv3:16<1;softmax<2;output<3", "reads feature maps, not the fc"),
    ("input;conv3:16<0;max-pool<1;conv3:16<0,2;softmax<3;output<4", "different resolutions"),
    ("input;max-pool:8<0;softmax<1;output<2", "pooling layer has no units"),
    ("input;conv3:4<0;softmax<1;output<2", "units must be in [8, 1024]"),
    ("input;conv3:16<0;fc:16<1;output<2", "must be 'softmax'"),
    ("input;conv9:16<0;softmax<1;output<2", "unknown label 'conv9'"),
    ("input;softmax:10<0;output<1", "size comes from the task"),
])
def test_invalid_networks_are_named(text, message):
    with pytest.raises(ArchitectureError, match=message.replace("[", r"\[").replace("]", r"\]")):
        S.parse(text)


def test_the_initial_pool_is_feed_forward_vgg_then_blocked():
    pool = S.initial_pool()
    assert len(pool) == 10 and all(S.contains(a) for a in pool)
    assert all(all(len(p) <= 1 for p in a.predecessors()) for a in pool)  # feed forward
    assert [a.labels.count("conv3") for a in pool[:3]] == [8, 13, 16]  # VGG-11 / -16 / -19 layouts
    assert S.format(pool[3]).startswith("input;conv3:64<0;max-pool<1;conv3:64<2;max-pool<3;conv3:64<4")  # Auto-Keras


def test_the_space_provides_table_4_for_otmann():
    labels, M_ = S.label_mismatch()
    assert labels == CNN_LABELS and np.array_equal(M_, CNN_LABEL_MISMATCH)
    i = {label: k for k, label in enumerate(labels)}
    assert M_[i["conv3"], i["conv5"]] == 0.2 and M_[i["max-pool"], i["avg-pool"]] == 0.25
    assert M_[i["res3"], i["conv5"]] == pytest.approx(0.9 * 0.2 + 0.1)  # App. A's res rule
    assert M_[i["fc"], i["conv3"]] > 2  # a blank of Table 4: never matched
    kinds = S.layer_kinds()
    assert kinds["res5"] == "res" and kinds["softmax"] == "decision" and kinds["max-pool"] == "pool"
    masses = layer_masses(S.parse(FIG1B))
    assert masses[5] == 32 and masses[6] == pytest.approx(0.1 * 16 * 32)  # pool: its input; fc: x 0.1


def test_every_modifier_gives_valid_networks_and_skips_bridge_resolutions():
    rng = np.random.default_rng(0)
    fired = set()
    for arch in S.initial_pool()[:4] + S.sample(rng, 4):
        for name, modifier in M.MODIFIERS.items():
            for _ in range(3):
                child = modifier(arch, rng)
                if child is not None:
                    assert G.is_valid(child), (name, G.format(child))
                    fired.add(name)
    assert fired == set(M.MODIFIERS)
    arch = S.parse("input;conv3:16<0;max-pool<1;max-pool<2;conv3:16<3;softmax<4;output<5")
    g = M.Graph(arch)
    assert M.connect(g, arch, 1, 4)  # level 0 -> a reader at level 2: two avg-pools on the way
    child = g.finish(G.DEFAULT_CONSTRAINTS, G.is_valid)
    assert child.labels.count("avg-pool") == 2 and G.is_valid(child)
    assert not M.connect(M.Graph(arch), arch, 3, 2)  # never from a coarser map to a finer one


def test_mutation_and_neighbours_stay_in_the_domain():
    rng = np.random.default_rng(1)
    arch = S.initial_pool()[9]
    for _ in range(40):
        arch = S.mutate(arch, rng)
        assert S.contains(arch) and arch.n_nodes <= 62
    neighbours = S.neighbours(S.initial_pool()[9])
    assert len(neighbours) == len(set(neighbours)) > 20 and all(S.contains(a) for a in neighbours)


@pytest.mark.slow
def test_every_kernel_that_reads_the_space_gives_a_valid_matrix():
    from nasviz.components import kernels_for

    archs = S.initial_pool()[:3] + S.sample(np.random.default_rng(2), 3)
    from nasviz.kernels import make_psd

    names = kernels_for("cnn")
    assert {"otmann", "edit", "wl", "tw2g", "path"} <= set(names)
    for name in names:
        kernel = make_kernel(name, space=S)
        K = kernel.matrix(archs)
        assert K.shape == (6, 6) and np.all(np.isfinite(K)), name
        assert np.allclose(K, K.T, atol=1e-8), name
        K_pd, _ = make_psd(K) if not kernel.positive_definite else (K, 0.0)
        assert np.linalg.eigvalsh(K_pd).min() > -1e-6 * max(1.0, float(np.abs(K).max())), name


@pytest.mark.parametrize("shape", [(1, 40), (3, 8, 8)])
def test_networks_are_1d_for_signals_and_2d_for_images(shape):
    arch = S.parse("input;conv7:8<0;res3:16<1;max-pool<1,2;fc:16<3;softmax<3,4;output<5")
    net = build_cnn(arch, shape, 4, seed=0)
    conv = net.layers["1"].conv
    assert isinstance(conv, torch.nn.Conv1d if len(shape) == 2 else torch.nn.Conv2d)
    out = net(torch.randn(5, *shape))
    assert out.shape == (5, 4)
    spatial = shape[1:]
    assert net.shapes[3] == (8 + 16, *[(s + 1) // 2 for s in spatial])  # the pool halves, concatenated channels
    with pytest.raises(ValueError, match="signals .* or images"):
        CNNNet(arch, (40,), 4)
    assert S.trainable_on() == {"image", "signal"}


def test_views_draw_cnns_and_their_transport_plan():
    from nasviz.viz import plot_architecture, plot_transport_plan

    a, b = S.initial_pool()[3], S.parse(FIG1B)
    assert plot_architecture(a, "three-layer CNN").data
    kernel = make_kernel("otmann", space=S)
    assert plot_transport_plan(kernel.transport_plan(a, b)).data
