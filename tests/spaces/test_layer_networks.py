"""The torch MLP of a layer DAG (paper 001 Sec. 2.2): concatenation, activations, averaging."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nasviz.spaces.mlp.networks import ACTIVATIONS, LayerNet, build_layer_network, input_layout
from nasviz.spaces import mlp as L


def test_shapes_and_parameter_count_of_a_chain():
    arch = L.feed_forward(["relu", "tanh"], [16, 8])
    net = build_layer_network(arch, 13, 3, seed=0)
    out = net(torch.randn(5, 13))
    assert out.shape == (5, 3)
    # 13*16+16 + 16*8+8 + 8*3+3
    assert sum(p.numel() for p in net.parameters()) == 13 * 16 + 16 + 16 * 8 + 8 + 8 * 3 + 3


def test_concatenation_and_crelu_widths():
    # input -> crelu(8) -> relu(4); input -> relu(4); both concat into the decision layer
    arch = L.parse("input;crelu:8<0;relu:8<1;relu:16<0;linear<2,3;output<4")
    net = LayerNet(arch, 5, 2)
    assert net.linears["2"].in_features == 16  # crelu doubles its 8 units
    assert net.linears["4"].in_features == 8 + 16
    assert input_layout(arch, 4, 5) == {2: (0, 8), 3: (8, 24)}
    assert net(torch.randn(3, 5)).shape == (3, 2)


def test_forward_matches_a_hand_computation():
    arch = L.parse("input;tanh:8<0;logistic:8<0;linear<1,2;output<3")
    net = build_layer_network(arch, 4, 1, seed=1)
    x = torch.randn(6, 4)
    h1 = torch.tanh(net.linears["1"](x))
    h2 = torch.sigmoid(net.linears["2"](x))
    expected = net.linears["3"](torch.cat([h1, h2], dim=1))
    assert torch.allclose(net(x), expected)


def test_several_decision_layers_are_averaged():
    arch = L.feed_forward(["relu"], [8], n_decision=2)
    net = build_layer_network(arch, 3, 2, seed=0)
    x = torch.randn(4, 3)
    h = torch.relu(net.linears["1"](x))
    expected = (net.linears["2"](h) + net.linears["3"](h)) / 2
    assert torch.allclose(net(x), expected)


def test_images_are_flattened_and_bad_inputs_rejected():
    net = build_layer_network(L.feed_forward(["relu"], [8]), 64, 10, seed=0)
    assert net(torch.randn(2, 1, 8, 8)).shape == (2, 10)
    by_shape = build_layer_network(L.feed_forward(["relu"], [8]), (1, 8, 8), 10, seed=0)
    assert by_shape.in_features == 64
    with pytest.raises(ValueError, match="expected inputs with 64 features"):
        net(torch.randn(2, 10))
    with pytest.raises(ValueError, match="positive"):
        LayerNet(L.feed_forward(["relu"], [8]), 0, 1)


def test_seed_reproducible_and_all_labels_run():
    arch = L.feed_forward(list(L.PROCESSING_LABELS), [8] * len(L.PROCESSING_LABELS))
    a, b = build_layer_network(arch, 3, 2, seed=7), build_layer_network(arch, 3, 2, seed=7)
    x = torch.randn(4, 3)
    assert torch.equal(a(x), b(x))
    assert set(ACTIVATIONS) >= set(L.PROCESSING_LABELS)
    assert torch.isfinite(a(x)).all()
