"""The DARTS evaluation network around a genotype, sized so that it trains on a CPU.

Follows the DARTS paper (Liu et al., ICLR 2019, Sec. 2.1 and 3.2) and its evaluation network
(``NetworkCIFAR`` / ``Cell`` / ``operations.py`` of the DARTS code):

* stem: ``Conv3x3(in_channels -> 3C)`` + BatchNorm; the first cell reads the stem as both inputs;
* ``n_cells`` cells; those at ``n_cells // 3`` and ``2 n_cells // 3`` are reduction cells and double
  the channels; a cell's output concatenates its four intermediate nodes (``4C`` channels);
* each cell first applies ``preprocess`` to its inputs: ReLU-Conv1x1-BN, or a factorized reduce
  for input 0 when the cell before was a reduction cell (the resolutions differ);
* in a reduction cell, the edges from inputs 0 and 1 have stride 2 (``skip_connect`` becomes
  the factorized reduce, two strided 1x1 convolutions side by side);
* global average pooling and a linear classifier.

Not included, as in the DARTS code's parameter counts: the auxiliary head; and drop-path, a
training regulariser of the paper's 600-epoch schedule. The paper's CIFAR-10 network uses
``C = 36, n_cells = 20``; NAS-Bench-301's (the shared table's ``params`` column) ``C = 32,
n_cells = 8``; the defaults here, ``C = 8, n_cells = 5`` (N R N R N), train on 8x8 digits on a CPU.
Both published counts are tested (``tests/spaces/test_darts_network.py``).
"""

from __future__ import annotations

import torch
from torch import nn

from nasviz.spaces.darts.genotype import CONCAT, NODES, Genotype
# DARTS's ReLU-Conv-BN, which NAS-Bench-201's code took over unchanged
from nasviz.spaces.nb201.network import ReLUConvBN


class DilConv(nn.Sequential):
    """ReLU -> depthwise dilated Conv(k x k, dilation 2) -> Conv1x1 -> BN (DARTS ``dil_conv_kxk``)."""

    def __init__(self, c: int, kernel: int, stride: int) -> None:
        super().__init__(nn.ReLU(inplace=False),
                         nn.Conv2d(c, c, kernel, stride, padding=kernel - 1, dilation=2, groups=c, bias=False),
                         nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c))


class SepConv(nn.Sequential):
    """Two depthwise-separable convolutions, the first with the stride (DARTS ``sep_conv_kxk``)."""

    def __init__(self, c: int, kernel: int, stride: int) -> None:
        pad = kernel // 2
        super().__init__(nn.ReLU(inplace=False), nn.Conv2d(c, c, kernel, stride, pad, groups=c, bias=False),
                         nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c),
                         nn.ReLU(inplace=False), nn.Conv2d(c, c, kernel, 1, pad, groups=c, bias=False),
                         nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c))


class FactorizedReduce(nn.Module):
    """Halve the resolution: ReLU, two stride-2 1x1 convolutions on offset grids, concatenated, BN.

    Shapes: (B, C_in, H, W) -> (B, C_out, ceil(H/2), ceil(W/2)); ``C_out`` even.
    """

    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        if c_out % 2:
            raise ValueError(f"a factorized reduce needs an even number of output channels, got {c_out}")
        self.relu = nn.ReLU(inplace=False)
        self.conv_a = nn.Conv2d(c_in, c_out // 2, 1, stride=2, bias=False)
        self.conv_b = nn.Conv2d(c_in, c_out // 2, 1, stride=2, bias=False)
        self.bn = nn.BatchNorm2d(c_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu(x)
        a = self.conv_a(x)
        # the second grid starts one pixel in; pad odd sizes back so both halves have one shape
        b = self.conv_b(nn.functional.pad(x[:, :, 1:, 1:], (0, 1, 0, 1)))[:, :, : a.shape[2], : a.shape[3]]
        return self.bn(torch.cat([a, b], dim=1))


def make_operation(name: str, channels: int, stride: int) -> nn.Module:
    """One DARTS edge operation on ``channels`` channels (``stride`` 2 on a reduction cell's input edges)."""
    if name == "max_pool_3x3":
        return nn.MaxPool2d(3, stride=stride, padding=1)
    if name == "avg_pool_3x3":
        return nn.AvgPool2d(3, stride=stride, padding=1, count_include_pad=False)
    if name == "skip_connect":
        return nn.Identity() if stride == 1 else FactorizedReduce(channels, channels)
    if name in ("sep_conv_3x3", "sep_conv_5x5"):
        return SepConv(channels, int(name[-1]), stride)
    if name in ("dil_conv_3x3", "dil_conv_5x5"):
        return DilConv(channels, int(name[-1]), stride)
    raise ValueError(f"unknown DARTS operation {name!r}")


class Cell(nn.Module):
    """One DARTS cell. Shapes: (B, C_pp, H', W'), (B, C_p, H, W) -> (B, 4C, H or H/2, W or W/2)."""

    def __init__(self, cell: tuple, c_pp: int, c_p: int, c: int, reduction: bool, reduction_prev: bool) -> None:
        super().__init__()
        self.preprocess0 = FactorizedReduce(c_pp, c) if reduction_prev else ReLUConvBN(c_pp, c, 1)
        self.preprocess1 = ReLUConvBN(c_p, c, 1)
        self.inputs = [source for node in cell for _op, source in node]  # (8,) node each edge reads
        self.ops = nn.ModuleList(make_operation(op, c, 2 if reduction and source < 2 else 1)
                                 for node in cell for op, source in node)

    def forward(self, s0: torch.Tensor, s1: torch.Tensor) -> torch.Tensor:
        states = [self.preprocess0(s0), self.preprocess1(s1)]
        for i in range(len(NODES)):
            a, b = 2 * i, 2 * i + 1
            states.append(self.ops[a](states[self.inputs[a]]) + self.ops[b](states[self.inputs[b]]))
        return torch.cat([states[k] for k in CONCAT], dim=1)


class DartsNetwork(nn.Module):
    """The DARTS evaluation network (module docstring). Shapes: (B, in_channels, H, W) -> (B, n_classes)."""

    def __init__(self, genotype: Genotype, channels: int = 8, n_cells: int = 5, n_classes: int = 10,
                 in_channels: int = 1) -> None:
        super().__init__()
        for name, value in (("channels", channels), ("n_cells", n_cells), ("n_classes", n_classes),
                            ("in_channels", in_channels)):
            if int(value) < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        c_curr = 3 * channels
        self.stem = nn.Sequential(nn.Conv2d(in_channels, c_curr, 3, padding=1, bias=False), nn.BatchNorm2d(c_curr))
        c_pp, c_p, c = c_curr, c_curr, channels
        cells, reduction_prev = [], False
        for i in range(n_cells):
            reduction = i in (n_cells // 3, 2 * n_cells // 3)
            c = 2 * c if reduction else c
            cells.append(Cell(genotype.reduce if reduction else genotype.normal, c_pp, c_p, c, reduction, reduction_prev))
            reduction_prev = reduction
            c_pp, c_p = c_p, len(CONCAT) * c
        self.cells = nn.ModuleList(cells)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(c_p, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s0 = s1 = self.stem(x)
        for cell in self.cells:
            s0, s1 = s1, cell(s0, s1)
        return self.classifier(self.pool(s1).flatten(1))
