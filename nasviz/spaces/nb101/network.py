"""The NAS-Bench-101 network, sized so that one cell trains on a CPU in seconds.

Follows NAS-Bench-101 (Ying et al., ICML 2019, §2.1 and its model builder):

* stem: ``Conv3x3(in_channels -> C)``-BN-ReLU;
* three stacks of ``N`` cells; before stacks 2 and 3 a 2x2 max-pool with stride 2 halves the
  resolution and the first cell of the stack doubles the channels (``C``, ``2C``, ``4C``);
* global average pooling and a linear classifier (with bias).

A cell with ``c_in`` input and ``c_out`` output channels (:class:`NB101Cell`):

* the output's ``c_out`` channels are split among the vertices that feed the output (the input
  excluded): each gets ``c_out // k`` and the first ``c_out % k`` of them one more;
  every other operation vertex gets the largest channel count of the vertices it feeds
  (:func:`vertex_channels`);
* a vertex sums its inputs: a 1x1 conv-BN-ReLU *projection* of the cell input if the input
  feeds it, and the outputs of earlier vertices, truncated to its channel count (they have at
  most one channel more) -- then applies its operation (``conv3x3-bn-relu``,
  ``conv1x1-bn-relu``: conv without bias, BN, ReLU, channels kept; ``maxpool3x3``: 3x3 max
  pooling, stride 1, padding 1);
* the output concatenates the vertices that feed it, and adds a projection of the cell input
  to ``c_out`` channels if the input feeds it directly (the two-vertex cell is only that
  projection).

The paper's network uses ``C = 128, N = 3`` on 32x32 images; for 8x8 digits on a CPU the defaults
here are ``C = 8, N = 1``. ``C`` must be at least the number of vertices feeding the output (up
to 5), as every such vertex needs a channel. Deviation: BatchNorm uses PyTorch's defaults
(momentum 0.1, eps 1e-5) rather than NAS-Bench-101's TensorFlow settings (decay 0.997, eps 1e-5);
this changes no parameter count.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from nasviz.arch import Architecture
from nasviz.network_size import count_parameters
from nasviz.spaces.nb101 import cell as nb101
from nasviz.spaces.nb101.cell import NB101Cell
from nasviz.spaces.nb101.moves import from_architecture

__all__ = [
    "ConvBnRelu",
    "NB101CellModule",
    "NB101Network",
    "build_nb101_network",
    "count_parameters",
    "expected_parameter_count",
    "vertex_channels",
]


class ConvBnRelu(nn.Sequential):
    """Conv2d(k x k, no bias, 'same' padding) -> BatchNorm2d -> ReLU. (B, c_in, H, W) -> (B, c_out, H, W)."""

    def __init__(self, c_in: int, c_out: int, kernel: int) -> None:
        super().__init__(
            nn.Conv2d(c_in, c_out, kernel, padding=kernel // 2, bias=False),
            nn.BatchNorm2d(c_out),
            nn.ReLU(inplace=False),
        )


def make_operation(name: str, channels: int) -> nn.Module:
    """One NAS-Bench-101 vertex operation on ``channels`` channels (shape-preserving)."""
    if name == nb101.CONV3X3:
        return ConvBnRelu(channels, channels, 3)
    if name == nb101.CONV1X1:
        return ConvBnRelu(channels, channels, 1)
    if name == nb101.MAXPOOL3X3:
        return nn.MaxPool2d(3, stride=1, padding=1)
    raise ValueError(f"unknown NAS-Bench-101 operation {name!r}; expected one of {', '.join(nb101.OPERATIONS)}")


def vertex_channels(matrix: np.ndarray | tuple, c_in: int, c_out: int) -> list[int]:
    """Channels of every vertex of a pruned cell (NAS-Bench-101's rule, see the module docstring).

    ``result[0] = c_in``, ``result[-1] = c_out``. Raises ``ValueError`` if ``c_out`` is smaller
    than the number of vertices feeding the output (one would get no channel).
    """
    m = np.asarray(matrix, dtype=np.int64)
    n = m.shape[0]
    channels = [0] * n
    channels[0], channels[-1] = c_in, c_out
    if n == 2:
        return channels
    feeders = [v for v in range(1, n - 1) if m[v, n - 1]]
    if c_out < len(feeders):
        raise ValueError(f"{c_out} output channels cannot be split among the {len(feeders)} vertices feeding the output")
    share, extra = divmod(c_out, len(feeders))
    for k, v in enumerate(feeders):
        channels[v] = share + (1 if k < extra else 0)
    # Backwards, so that a vertex sees the final counts of the (later) vertices it feeds.
    for v in range(n - 3, 0, -1):
        if not m[v, n - 1]:
            channels[v] = max(channels[w] for w in range(v + 1, n - 1) if m[v, w])
    return channels


class NB101CellModule(nn.Module):
    """One NAS-Bench-101 cell. Shapes: (B, c_in, H, W) -> (B, c_out, H, W)."""

    def __init__(self, cell: NB101Cell, c_in: int, c_out: int) -> None:
        super().__init__()
        self.cell = cell
        m = cell.array()
        self.n = n = cell.n_vertices
        self.channels = vertex_channels(m, c_in, c_out)
        self.preds = [[s for s in range(1, t) if m[s, t]] for t in range(n)]  # operation vertices feeding t
        self.from_input = [bool(m[0, t]) for t in range(n)]
        self.to_output = [t for t in range(1, n - 1) if m[t, n - 1]]
        for t in range(1, n - 1):  # (the output concatenates; nothing is truncated there)
            for s in self.preds[t]:
                # NAS-Bench-101 asserts this: truncation only removes an uneven split's extra channel
                if not 0 <= self.channels[s] - self.channels[t] <= 1:
                    raise AssertionError(f"vertex {s} ({self.channels[s]} ch) cannot feed vertex {t} ({self.channels[t]} ch)")
        self.projections = nn.ModuleDict(
            {str(t): ConvBnRelu(c_in, self.channels[t], 1) for t in range(1, n) if self.from_input[t]}
        )
        self.ops = nn.ModuleDict({str(t): make_operation(cell.ops[t], self.channels[t]) for t in range(1, n - 1)})

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = self.n
        values: list[torch.Tensor] = [x]
        for t in range(1, n - 1):
            c = self.channels[t]
            inputs = [values[s][:, :c] for s in self.preds[t]]
            if self.from_input[t]:
                inputs.append(self.projections[str(t)](x))
            total = inputs[0]
            for extra in inputs[1:]:
                total = total + extra
            values.append(self.ops[str(t)](total))
        out = torch.cat([values[t] for t in self.to_output], dim=1) if self.to_output else None
        if self.from_input[n - 1]:
            skip = self.projections[str(n - 1)](x)
            out = skip if out is None else out + skip
        assert out is not None  # a pruned cell always reaches its output
        return out


class NB101Network(nn.Module):
    """The NAS-Bench-101 skeleton around one cell. Shapes: (B, in_channels, H, W) -> (B, n_classes)."""

    def __init__(
        self, cell: NB101Cell, channels: int = 8, n_cells: int = 1, n_classes: int = 10, in_channels: int = 1, n_stacks: int = 3
    ) -> None:
        super().__init__()
        for name, value in (
            ("channels", channels), ("n_cells", n_cells), ("n_classes", n_classes), ("in_channels", in_channels), ("n_stacks", n_stacks)
        ):
            if int(value) < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        self.cell = cell
        self.stem = ConvBnRelu(in_channels, channels, 3)
        layers: list[nn.Module] = []
        c_in = c_out = channels
        for stack in range(n_stacks):
            if stack > 0:
                layers.append(nn.MaxPool2d(2, stride=2, ceil_mode=True))  # ceil: TF 'same' on odd sizes
                c_out *= 2
            for _ in range(n_cells):
                layers.append(NB101CellModule(cell, c_in, c_out))
                c_in = c_out
        self.cells = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(c_out, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.pool(self.cells(self.stem(x))).flatten(1))


def _as_cell(arch_or_cell: NB101Cell | Architecture | str) -> NB101Cell:
    if isinstance(arch_or_cell, NB101Cell):
        return arch_or_cell
    if isinstance(arch_or_cell, Architecture):
        return from_architecture(arch_or_cell)
    if isinstance(arch_or_cell, str):
        return nb101.parse(arch_or_cell)
    raise TypeError(f"expected an NB101Cell, an Architecture or a cell string, got {type(arch_or_cell).__name__}")


def build_nb101_network(
    arch_or_cell: NB101Cell | Architecture | str,
    channels: int = 8,
    n_cells: int = 1,
    n_classes: int = 10,
    in_channels: int = 1,
) -> NB101Network:
    """The network of a cell given as :class:`NB101Cell`, a node-labelled DAG (pruned by
    :func:`nasviz.spaces.nb101.from_architecture`) or the ``"<matrix>;<ops>"`` string."""
    return NB101Network(_as_cell(arch_or_cell), channels, n_cells, n_classes, in_channels)


def expected_parameter_count(
    arch_or_cell: NB101Cell | Architecture | str,
    channels: int = 8,
    n_cells: int = 1,
    n_classes: int = 10,
    in_channels: int = 1,
    n_stacks: int = 3,
) -> int:
    """The trainable parameter count of :class:`NB101Network` in closed form.

    conv k x k from a to b channels with BN: ``k*k*a*b + 2b``; stem ``9*in*C + 2C``; per cell
    with ``c_in -> c_out`` and vertex channels ``ch`` (:func:`vertex_channels`): a projection
    ``c_in*ch[t] + 2ch[t]`` for each vertex ``t`` the input feeds (the output included), plus
    ``9ch[t]^2 + 2ch[t]`` per conv3x3 vertex, ``ch[t]^2 + 2ch[t]`` per conv1x1 vertex and nothing
    per max-pool vertex; classifier ``C_last*n_classes + n_classes``.
    """
    cell = _as_cell(arch_or_cell)
    m = cell.array()
    n = cell.n_vertices

    def cell_params(c_in: int, c_out: int) -> int:
        ch = vertex_channels(m, c_in, c_out)
        total = sum(c_in * ch[t] + 2 * ch[t] for t in range(1, n) if m[0, t])
        kernel = {nb101.CONV3X3: 9, nb101.CONV1X1: 1}
        return total + sum(kernel[op] * ch[t] ** 2 + 2 * ch[t] for t, op in enumerate(cell.ops) if op in kernel)

    total = 9 * in_channels * channels + 2 * channels
    c_in = c_out = channels
    for stack in range(n_stacks):
        if stack > 0:
            c_out *= 2
        for _ in range(n_cells):
            total += cell_params(c_in, c_out)
            c_in = c_out
    return total + c_out * n_classes + n_classes
