"""The DARTS evaluation network: published parameter counts, shapes, the reduction cells, training."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import torch

from nasviz.objectives.table import shared_data_path
from nasviz.spaces import get_space
from nasviz.spaces.darts import EXAMPLE
from nasviz.spaces.darts import genotype as gt
from nasviz.network_size import count_parameters
from nasviz.spaces.darts.network import DartsNetwork, FactorizedReduce


def test_darts_v2_has_the_papers_parameter_count():
    """DARTS Table 1: DARTS (second order), 3.3M parameters at C = 36, 20 cells; the DARTS code logs
    ``param size = 3.349342MB`` for it (auxiliary head excluded, as here)."""
    net = DartsNetwork(gt.parse(EXAMPLE), channels=36, n_cells=20, n_classes=10, in_channels=3)
    assert count_parameters(net) == 3_349_342


def _edge_batchnorm_affine(net: DartsNetwork) -> int:
    return sum(p.numel() for name, p in net.named_parameters() if ".ops." in name and p.dim() == 1)


def test_the_shared_tables_params_column_is_the_same_network_without_affine_edge_batchnorms():
    """NASLib (the table's source) builds the edge operations' BatchNorms without affine parameters, its
    search-space default; the DARTS evaluation network has them. Everything else agrees exactly."""
    path = shared_data_path("darts_725.csv")
    if path is None:
        pytest.skip("the shared table darts_725.csv is absent (../shared/data or $NASVIZ_SHARED_DATA)")
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows[::60]:  # 13 rows spread over the table
        net = DartsNetwork(gt.parse(row["genotype"]), channels=32, n_cells=8, n_classes=10, in_channels=3)
        assert count_parameters(net) - _edge_batchnorm_affine(net) == int(row["params"]), row["genotype"]


def test_shapes_reductions_and_odd_sizes(one_torch_thread):
    net = DartsNetwork(gt.parse(EXAMPLE), channels=4, n_cells=5, n_classes=7, in_channels=1)
    sizes = []
    for cell in net.cells:
        cell.register_forward_hook(lambda _m, _i, out: sizes.append(tuple(out.shape[1:])))
    out = net(torch.randn(2, 1, 8, 8))
    # reduction cells at 5 // 3 = 1 and 2 * 5 // 3 = 3 double the channels (4 nodes x C) and halve the size
    assert sizes == [(16, 8, 8), (32, 4, 4), (32, 4, 4), (64, 2, 2), (64, 2, 2)]
    assert isinstance(net.cells[2].preprocess0, FactorizedReduce)  # the cell after a reduction
    assert not isinstance(net.cells[1].preprocess0, FactorizedReduce)
    for size in (9, 7):
        out = net(torch.randn(2, 1, size, size))
        assert out.shape == (2, 7) and torch.isfinite(out).all()
    out.sum().backward()
    assert all(p.grad is not None for p in net.parameters())


def test_a_reduction_cells_skip_from_an_input_is_a_factorized_reduce():
    genotype = gt.make([("sep_conv_3x3", 0), ("sep_conv_3x3", 1)] * 4, [("skip_connect", 0), ("max_pool_3x3", 1)]
                       + [("skip_connect", 0), ("skip_connect", 2)] * 3)
    net = DartsNetwork(genotype, channels=4, n_cells=3)
    reduce_ops = net.cells[1].ops
    assert isinstance(reduce_ops[0], FactorizedReduce)  # from input 0: stride 2
    assert isinstance(reduce_ops[3], torch.nn.Identity)  # from node 2: stride 1


def test_every_sampled_genotype_builds_through_the_space(one_torch_thread):
    space = get_space("darts")
    assert space.network_defaults() == {"channels": 8, "n_cells": 5}
    for arch in space.sample(np.random.default_rng(0), 5):
        net = space.build_network(arch, (1, 8, 8), 10)
        assert net(torch.randn(3, 1, 8, 8)).shape == (3, 10)
    with pytest.raises(Exception, match="image inputs"):
        space.build_network(arch, (16,), 3)


@pytest.mark.slow
def test_a_genotype_trains_on_digits(one_torch_thread):
    from nasviz.objectives.datasets import load_dataset
    from nasviz.objectives.trainer import train_model

    data = load_dataset("digits", seed=0)
    torch.manual_seed(0)
    space = get_space("darts")
    net = space.build_network(space.parse(EXAMPLE), (1, 8, 8), data.n_classes)
    result = train_model(net, data, **space.training_defaults(), device="cpu")
    assert result.ok and result.epochs_run == 4
    assert result.valid_score > 50  # percent; chance is 10
