"""The NAS-Bench-101 network: shapes, channel split, exact parameter counts, a short training run."""

from __future__ import annotations

import pytest
import torch

from nasviz.spaces.nb101.network import (
    NB101CellModule,
    build_nb101_network,
    count_parameters,
    expected_parameter_count,
    vertex_channels,
)
from nasviz.spaces import nb101

C3, C1, MP = nb101.CONV3X3, nb101.CONV1X1, nb101.MAXPOOL3X3
EXAMPLE = f"01100|00011|00001|00001|00000;input,{C3},{MP},{C1},output"
TRIVIAL = "01|00;input,output"
# 7 vertices, 9 edges: input -> 1, 5 and output; 1 -> 2 -> 3 -> 4 -> 5; 3 and 5 -> output
SEVEN = f"0100011|0010000|0001000|0000101|0000010|0000001|0000000;input,{C3},{C1},{MP},{C3},{C1},output"


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny convolutions only lose from intra-op threads on a shared machine (the runners use 1 too)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _chain(op: str) -> str:
    return f"0101|0010|0001|0000;input,{op},{op},output"


@pytest.mark.parametrize("text", [EXAMPLE, TRIVIAL, SEVEN, _chain(MP)])
@pytest.mark.parametrize("C,N", [(5, 1), (8, 2)])
def test_output_shape_and_exact_parameter_count(text, C, N):
    net = build_nb101_network(text, channels=C, n_cells=N, n_classes=10, in_channels=1)
    assert net(torch.randn(3, 1, 8, 8)).shape == (3, 10)
    assert count_parameters(net) == expected_parameter_count(text, C, N, 10, 1)


def test_parameter_count_by_hand_for_the_two_vertex_cell():
    # stem 9*1*4 + 8 = 44; cells are one 1x1 projection each: 4->4: 16+8, 4->8: 32+16, 8->16: 128+32;
    # classifier 16*10 + 10
    net = build_nb101_network(TRIVIAL, channels=4)
    assert count_parameters(net) == 44 + 24 + 48 + 160 + 170


def test_channel_split_follows_nas_bench_101():
    cell = nb101.parse(SEVEN)
    # output fed by vertices 3 and 5 (and by the input): 7 = 4 + 3, the extra channel to the
    # earliest; 1, 2 and 4 feed only later vertices and take the largest count among those
    assert vertex_channels(cell.array(), 6, 7) == [6, 4, 4, 4, 3, 3, 7]
    assert vertex_channels(nb101.parse(EXAMPLE).array(), 8, 16) == [8, 6, 5, 5, 16]
    with pytest.raises(ValueError, match="3 output channels cannot be split among the 4"):
        vertex_channels(nb101.parse(f"011110|000001|000001|000001|000001|000000;input,{C3},{C3},{C3},{C3},output").array(), 3, 3)


def test_operations_rank_by_parameters_on_the_same_topology():
    counts = {op: count_parameters(build_nb101_network(_chain(op), channels=8)) for op in nb101.OPERATIONS}
    assert counts[C3] > counts[C1] > counts[MP]
    # per cell and op vertex c channels: conv3x3 9c^2+2c, conv1x1 c^2+2c; two op vertices per
    # cell, c = 8, 16, 32 in the three stacks
    diff = sum(2 * 8 * c * c for c in (8, 16, 32))
    assert counts[C3] - counts[C1] == diff
    assert counts[C1] - counts[MP] == sum(2 * (c * c + 2 * c) for c in (8, 16, 32))


def test_cell_computes_what_the_docstring_says():
    torch.manual_seed(0)
    cell = nb101.parse(SEVEN)
    module = NB101CellModule(cell, 6, 7).eval()
    x = torch.randn(2, 6, 5, 5)
    p, o = module.projections, module.ops
    assert sorted(p) == ["1", "5", "6"] and sorted(o) == ["1", "2", "3", "4", "5"]
    v1 = o["1"](p["1"](x))
    v2 = o["2"](v1)
    v3 = o["3"](v2)
    v4 = o["4"](v3[:, :3])  # 4 channels truncated to 3
    v5 = o["5"](p["5"](x) + v4)
    expected = torch.cat([v3, v5], dim=1) + p["6"](x)
    out = module(x)
    assert out.shape == (2, 7, 5, 5) and torch.allclose(out, expected)


def test_builder_accepts_cells_architectures_and_strings_and_odd_sizes():
    cell = nb101.parse(EXAMPLE)
    a = build_nb101_network(cell)
    b = build_nb101_network(nb101.to_architecture(cell))
    assert count_parameters(a) == count_parameters(b)
    assert build_nb101_network(cell, channels=5, in_channels=3, n_classes=4)(torch.randn(2, 3, 9, 7)).shape == (2, 4)
    with pytest.raises(TypeError, match="expected an NB101Cell"):
        build_nb101_network(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_cells must be at least 1"):
        build_nb101_network(cell, n_cells=0)


@pytest.mark.slow
def test_one_cell_trains_on_digits():  # its speed: python -m nasviz.bench.nb101
    from nasviz.objectives.datasets import load_dataset
    from nasviz.objectives.trainer import train_model

    data = load_dataset("digits", seed=0)
    torch.manual_seed(0)
    net = build_nb101_network(SEVEN, channels=8, n_cells=1, n_classes=data.n_classes)
    result = train_model(net, data, epochs=4, patience=2, lr=0.05, batch_size=64, device="cpu")
    assert result.ok and result.epochs_run == 4
    assert result.valid_score > 50  # percent; chance is 10
