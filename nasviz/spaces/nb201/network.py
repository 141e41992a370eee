"""The NAS-Bench-201 network, sized so that it trains on a CPU.

Follows the NAS-Bench-201 paper (Dong & Yang, ICLR 2020, §2 and Fig. 1) and its reference
implementation (``TinyNetwork`` / ``InferCell`` / ``ResNetBasicblock``):

* stem: ``Conv3x3(in_channels -> C)`` + BatchNorm;
* three stages of ``N`` cells with ``C``, ``2C`` and ``4C`` channels, separated by two residual
  reduction blocks (``ReLU-Conv3x3(stride 2)-BN``, ``ReLU-Conv3x3-BN``, plus the shortcut
  ``AvgPool2x2 -> Conv1x1``);
* BatchNorm-ReLU, global average pooling and a linear classifier.

A cell has four nodes; node ``j`` is the sum of ``op_ij(node_i)`` over ``i < j`` and node 3 is
the cell output. The operations: ``none`` = zeros, ``skip_connect`` = identity,
``nor_conv_kxk`` = ReLU-Conv(k x k)-BN, ``avg_pool_3x3`` = 3x3 average pooling, stride 1,
padding 1, padding not counted (as in the reference code).

The paper's network uses ``C = 16, N = 5`` on 32x32 images; for 8x8 digits on a CPU the defaults
here are ``C = 8, N = 1``. Every module of every edge is built, so :func:`~nasviz.network_size.count_parameters`
equals the reference network's count for the same ``C``, ``N``; in ``forward`` edges that are
``none`` or that cannot reach the cell output are not computed (they contribute exactly zero to
the output, so the function and its gradients are unchanged -- this only saves time).
"""

from __future__ import annotations

import torch
from torch import nn

from nasviz.arch import Architecture
from nasviz.spaces.nb201 import cell as nb201

#: (source, target) cell nodes of the six edges, in NAS-Bench-201 string order.
CELL_EDGES = nb201.CELL_EDGES


class ReLUConvBN(nn.Sequential):
    """ReLU -> Conv2d(k x k, no bias) -> BatchNorm2d. Shapes: (B, C_in, H, W) -> (B, C_out, H', W')."""

    def __init__(self, c_in: int, c_out: int, kernel: int, stride: int = 1) -> None:
        super().__init__(
            nn.ReLU(inplace=False),
            nn.Conv2d(c_in, c_out, kernel, stride=stride, padding=kernel // 2, bias=False),
            nn.BatchNorm2d(c_out),
        )


class Zero(nn.Module):
    """The ``none`` operation: zeros of the input's shape (never called by :class:`Cell`)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mul(0.0)


def make_operation(name: str, channels: int) -> nn.Module:
    """One NB201 edge operation on ``channels`` channels, stride 1 (shape-preserving)."""
    if name == "none":
        return Zero()
    if name == "skip_connect":
        return nn.Identity()
    if name == "nor_conv_1x1":
        return ReLUConvBN(channels, channels, 1)
    if name == "nor_conv_3x3":
        return ReLUConvBN(channels, channels, 3)
    if name == "avg_pool_3x3":
        return nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
    raise ValueError(f"unknown NAS-Bench-201 operation {name!r}; expected one of {', '.join(nb201.OPERATIONS)}")


def _live_edges(ops: tuple[str, ...]) -> list[int]:
    """Indices of the edges (string order) that are not ``none`` and lie on an input->output path."""
    nonzero = [k for k, op in enumerate(ops) if op != "none"]
    reach_from_input = {0}
    for k in nonzero:  # string order is topological: sources come before targets
        src, dst = CELL_EDGES[k]
        if src in reach_from_input:
            reach_from_input.add(dst)
    reaches_output = {3}
    for k in reversed(nonzero):
        src, dst = CELL_EDGES[k]
        if dst in reaches_output:
            reaches_output.add(src)
    return [k for k in nonzero if CELL_EDGES[k][0] in reach_from_input and CELL_EDGES[k][1] in reaches_output]


class Cell(nn.Module):
    """A NAS-Bench-201 cell. Shapes: (B, C, H, W) -> (B, C, H, W).

    ``ops`` are the six edge operations in string order (see :mod:`nasviz.spaces.nb201`).
    A cell with no input->output path outputs zeros.
    """

    def __init__(self, ops: tuple[str, ...], channels: int) -> None:
        super().__init__()
        if len(ops) != len(CELL_EDGES):
            raise ValueError(f"a NAS-Bench-201 cell has {len(CELL_EDGES)} operations, got {len(ops)}")
        self.ops = tuple(ops)
        self.edges = nn.ModuleList(make_operation(op, channels) for op in ops)
        self.live = _live_edges(self.ops)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        nodes: list[torch.Tensor | None] = [x, None, None, None]
        for k in self.live:
            src, dst = CELL_EDGES[k]
            out = self.edges[k](nodes[src])
            nodes[dst] = out if nodes[dst] is None else nodes[dst] + out
        return nodes[3] if nodes[3] is not None else torch.zeros_like(x)


class ResidualReduction(nn.Module):
    """NB201's residual reduction block. Shapes: (B, C, H, W) -> (B, 2C, ceil(H/2), ceil(W/2))."""

    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.conv_a = ReLUConvBN(c_in, c_out, 3, stride=2)
        self.conv_b = ReLUConvBN(c_out, c_out, 3)
        self.shortcut = nn.Sequential(
            nn.AvgPool2d(2, stride=2, ceil_mode=True), nn.Conv2d(c_in, c_out, 1, bias=False)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.shortcut(x) + self.conv_b(self.conv_a(x))


class NB201Network(nn.Module):
    """The NAS-Bench-201 macro skeleton around one cell design.

    Shapes: input (B, in_channels, H, W) -> logits (B, n_classes).
    """

    def __init__(
        self, ops: tuple[str, ...], channels: int = 8, n_cells: int = 1, n_classes: int = 10, in_channels: int = 1
    ) -> None:
        super().__init__()
        for name, value in (("channels", channels), ("n_cells", n_cells), ("n_classes", n_classes), ("in_channels", in_channels)):
            if int(value) < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        self.ops = tuple(ops)
        c = channels
        self.stem = nn.Sequential(nn.Conv2d(in_channels, c, 3, padding=1, bias=False), nn.BatchNorm2d(c))
        layers: list[nn.Module] = []
        for stage in range(3):
            if stage > 0:
                layers.append(ResidualReduction(c, 2 * c))
                c *= 2
            layers.extend(Cell(self.ops, c) for _ in range(n_cells))
        self.cells = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.BatchNorm2d(c), nn.ReLU(inplace=False))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(c, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.head(self.cells(self.stem(x)))
        return self.classifier(self.pool(h).flatten(1))


def build_nb201_network(
    arch: Architecture, channels: int = 8, n_cells: int = 1, n_classes: int = 10, in_channels: int = 1
) -> NB201Network:
    """The network of a NAS-Bench-201 cell (an 8-node DAG from :func:`nasviz.spaces.nb201.parse`)."""
    return NB201Network(nb201.operations(arch), channels, n_cells, n_classes, in_channels)


def expected_parameter_count(ops: tuple[str, ...], channels: int, n_cells: int, n_classes: int, in_channels: int = 1) -> int:
    """The parameter count of :class:`NB201Network` in closed form (used by the tests).

    conv kxk on c channels: ``k*k*c*c`` weights + ``2c`` BatchNorm affine; stem ``9*in*C + 2C``;
    reduction c -> 2c: ``9*c*2c + 4c`` + ``9*2c*2c + 4c`` + ``c*2c``; head BatchNorm ``2*4C``;
    classifier ``4C*n_classes + n_classes``.
    """
    C = channels
    per_cell = lambda c: sum(  # noqa: E731
        (9 * c * c + 2 * c) if op == "nor_conv_3x3" else (c * c + 2 * c) if op == "nor_conv_1x1" else 0 for op in ops
    )
    total = 9 * in_channels * C + 2 * C
    c = C
    for stage in range(3):
        if stage > 0:
            total += 9 * c * 2 * c + 4 * c + 9 * 2 * c * 2 * c + 4 * c + c * 2 * c
            c *= 2
        total += n_cells * per_cell(c)
    return total + 2 * c + c * n_classes + n_classes
