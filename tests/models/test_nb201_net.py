"""The NAS-Bench-201 network: output shape, exact parameter count, zero cells, equivalences."""

from __future__ import annotations

import pytest
import torch

from nasviz.models.nb201_net import (
    NB201Network,
    build_nb201_network,
    count_parameters,
    expected_parameter_count,
)
from nasviz.spaces import nb201

ALL_CONV3 = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|"
MIXED = "|nor_conv_3x3~0|+|avg_pool_3x3~0|skip_connect~1|+|nor_conv_1x1~0|none~1|nor_conv_3x3~2|"
EMPTY = "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"


@pytest.mark.parametrize("arch", [ALL_CONV3, MIXED, EMPTY])
@pytest.mark.parametrize("C,N", [(4, 1), (8, 2)])
def test_output_shape_and_exact_parameter_count(arch, C, N):
    net = build_nb201_network(nb201.parse(arch), channels=C, n_cells=N, n_classes=10, in_channels=1)
    out = net(torch.randn(5, 1, 8, 8))
    assert out.shape == (5, 10)
    assert count_parameters(net) == expected_parameter_count(nb201.operations(nb201.parse(arch)), C, N, 10, 1)


def test_parameter_count_by_hand_for_all_conv3_c4_n1():
    # stem 9*1*4 + 8 = 44; cells: 6*(9*c*c + 2c) for c = 4, 8, 16 -> 912 + 3552 + 14016;
    # reductions 4->8: 288+16 + 576+16 + 32 = 928; 8->16: 1152+32 + 2304+32 + 128 = 3648;
    # head BN 32; classifier 16*10 + 10 = 170.
    net = build_nb201_network(nb201.parse(ALL_CONV3), channels=4, n_cells=1)
    assert count_parameters(net) == 44 + 912 + 3552 + 14016 + 928 + 3648 + 32 + 170


def test_input_resolution_and_channels_are_configurable():
    net = NB201Network(nb201.operations(nb201.parse(MIXED)), channels=4, n_cells=1, n_classes=3, in_channels=3)
    assert net(torch.randn(2, 3, 16, 16)).shape == (2, 3)


def test_cell_without_path_outputs_a_constant():
    torch.manual_seed(0)
    net = build_nb201_network(nb201.parse(EMPTY), channels=4).eval()
    out = net(torch.randn(6, 1, 8, 8))
    assert torch.allclose(out, out[0].expand_as(out))  # the input cannot influence the logits


def test_skipped_dead_edges_do_not_change_the_function():
    # Edge 0->1 feeds node 1, whose outgoing edges are none: it cannot reach the output, so the
    # network equals the one with that edge set to none (same weights).
    a = nb201.parse("|nor_conv_3x3~0|+|nor_conv_1x1~0|none~1|+|none~0|none~1|nor_conv_3x3~2|")
    b = nb201.parse("|none~0|+|nor_conv_1x1~0|none~1|+|none~0|none~1|nor_conv_3x3~2|")
    na, nb = build_nb201_network(a, channels=4), build_nb201_network(b, channels=4)
    state = {k: v for k, v in na.state_dict().items() if k in nb.state_dict()}
    nb.load_state_dict(state)
    x = torch.randn(4, 1, 8, 8)
    assert torch.allclose(na.eval()(x), nb.eval()(x), atol=1e-6)


def test_bad_arguments():
    with pytest.raises(ValueError, match="channels"):
        NB201Network(nb201.operations(nb201.parse(MIXED)), channels=0)
    with pytest.raises(ValueError, match="unknown NAS-Bench-201 operation"):
        NB201Network(("conv_5x5",) * 6)
