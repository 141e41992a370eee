"""PyTorch CNNs built from the DAGs of :mod:`nasviz.spaces.cnn.graph` (paper 001 Sec. 2.2, App. A).

One builder serves signals and images: the input's shape decides, ``(C, L)`` gives 1-d
convolutions and pools, ``(C, H, W)`` 2-d ones (:func:`conv_dims`). Each layer reads the
concatenation of its parents in increasing parent index: along the channels for convolution and
pooling layers, flattened (channel-major, ``torch.flatten``) for fc and decision layers.

* ``conv k``: ``Conv(in, units, k, padding=k // 2, bias=False)``, ``BatchNorm``, ReLU
  (the conv-BN-ReLU block Auto-Keras inserts, paper 003 Sec. 3.3);
* ``res k``: ``relu(BN2(conv2(relu(BN1(conv1(x))))) + proj(x))``, ``proj`` a 1 x 1 convolution;
* pools: kernel 2, stride 2, ``ceil_mode=True`` (a size of 1 stays 1, odd sizes round up);
* ``fc``: ``Linear`` + ReLU; ``softmax``: ``Linear`` to the classes; the output layer averages the
  decision layers' logits (the loss applies the softmax, as in the layer space).

:func:`input_blocks` says where each parent's features sit in a layer's input, which weight
inheritance (:mod:`nasviz.spaces.cnn.morphisms`) relies on.
"""

from __future__ import annotations

import math
from typing import Sequence

import torch
from torch import nn
from torch.nn import functional as F

from nasviz.arch import INPUT, Architecture
from nasviz.spaces.cnn import graph as G
# Structure is checked, but not the search-domain limits (a built network may be any size).
from nasviz.spaces.layered.graph import STRUCTURE_ONLY


def conv_dims(input_shape: Sequence[int]) -> int:
    """1 for signals ``(C, L)``, 2 for images ``(C, H, W)``; ``ValueError`` otherwise."""
    if len(input_shape) not in (2, 3):
        raise ValueError(f"a CNN reads signals (C, L) or images (C, H, W), got inputs of shape {tuple(input_shape)}")
    return len(input_shape) - 1


def _conv(dims: int) -> type[nn.Module]:
    return nn.Conv1d if dims == 1 else nn.Conv2d


def _bn(dims: int) -> type[nn.Module]:
    return nn.BatchNorm1d if dims == 1 else nn.BatchNorm2d


class ConvLayer(nn.Module):
    """conv k - BN - ReLU."""

    def __init__(self, dims: int, in_channels: int, units: int, k: int) -> None:
        super().__init__()
        self.conv = _conv(dims)(in_channels, units, k, padding=k // 2, bias=False)
        self.bn = _bn(dims)(units)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.bn(self.conv(x)))


class ResLayer(nn.Module):
    """He et al.'s basic block with a 1 x 1 projection shortcut (module docstring)."""

    def __init__(self, dims: int, in_channels: int, units: int, k: int) -> None:
        super().__init__()
        conv, bn = _conv(dims), _bn(dims)
        self.conv1 = conv(in_channels, units, k, padding=k // 2, bias=False)
        self.bn1 = bn(units)
        self.conv2 = conv(units, units, k, padding=k // 2, bias=False)
        self.bn2 = bn(units)
        self.proj = conv(in_channels, units, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.proj(x))


def _pool(label: str, dims: int) -> nn.Module:
    if label == "max-pool":
        return (nn.MaxPool1d if dims == 1 else nn.MaxPool2d)(2, 2, ceil_mode=True)
    return (nn.AvgPool1d if dims == 1 else nn.AvgPool2d)(2, 2, ceil_mode=True)


def _pooled(size: int) -> int:
    """Size after a kernel-2, stride-2 pool with ``ceil_mode=True``."""
    return max(1, math.ceil(size / 2))


def feature_shapes(arch: Architecture, input_shape: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """``{node: output shape}`` per sample: ``(C, *spatial)`` for the input and feature-map
    layers, ``(units,)`` for fc layers (decision and output layers are left out)."""
    shapes: dict[int, tuple[int, ...]] = {}
    pred = arch.predecessors()
    for v in arch.topological_order():
        label = arch.labels[v]
        if label == INPUT:
            shapes[v] = tuple(int(d) for d in input_shape)
        elif label in G.MAP_LABELS:
            spatial = shapes[pred[v][0]][1:]
            if label in G.POOL_LABELS:
                spatial = tuple(_pooled(s) for s in spatial)
            shapes[v] = (G.channels(arch, v, input_shape[0]), *spatial)
        elif label == G.FC_LABEL:
            shapes[v] = (int(arch.widths[v]),)
    return shapes


def input_blocks(arch: Architecture, node: int, shapes: dict[int, tuple[int, ...]]) -> dict[int, tuple[int, int, int]]:
    """``{parent: (start, stop, per_channel)}``: where each parent's features sit in ``node``'s
    input, in increasing parent order. For a feature-map layer the positions are channels
    (``per_channel = 1``); for fc and decision layers flattened features, a parent channel ``c``
    taking positions ``start + c * per_channel .. start + (c + 1) * per_channel - 1``."""
    flat = arch.labels[node] not in G.MAP_LABELS
    out, start = {}, 0
    for p in sorted(arch.predecessors()[node]):
        shape = shapes[p]
        per = math.prod(shape[1:]) if flat else 1
        stop = start + shape[0] * per
        out[p] = (start, stop, per)
        start = stop
    return out


class CNNNet(nn.Module):
    """The network of a CNN architecture.

    Parameters
    ----------
    arch : a valid network of :mod:`nasviz.spaces.cnn.graph` (domain limits are not enforced)
    input_shape : ``(C, L)`` or ``(C, H, W)`` of one sample
    out_features : classes (the output is logits) or 1 for regression

    ``forward(x)``: ``(N, *input_shape) -> (N, out_features)``.
    """

    def __init__(self, arch: Architecture, input_shape: Sequence[int], out_features: int) -> None:
        super().__init__()
        self.dims = conv_dims(input_shape)
        if out_features < 1 or any(int(d) < 1 for d in input_shape):
            raise ValueError(f"need positive sizes, got input {tuple(input_shape)} and {out_features} outputs")
        G.validate(arch, STRUCTURE_ONLY)
        self.arch = arch
        self.input_shape = tuple(int(d) for d in input_shape)
        self.out_features = int(out_features)
        self.shapes = feature_shapes(arch, self.input_shape)
        last = arch.n_nodes - 1
        self.decision = G.decision_layers(arch)
        self.order = [v for v in arch.topological_order() if v not in (0, last)]
        self.parents = {v: sorted(arch.predecessors()[v]) for v in self.order}
        self.flat = {v: arch.labels[v] not in G.MAP_LABELS for v in self.order}
        self.layers = nn.ModuleDict()
        for v in self.order:
            self.layers[str(v)] = self._layer(v)

    def _layer(self, v: int) -> nn.Module:
        label = self.arch.labels[v]
        blocks = input_blocks(self.arch, v, self.shapes)
        fan_in = max(stop for _, stop, _ in blocks.values())
        if label in G.CONV_LABELS:
            return ConvLayer(self.dims, fan_in, int(self.arch.widths[v]), G.kernel_size(label))
        if label in G.RES_LABELS:
            return ResLayer(self.dims, fan_in, int(self.arch.widths[v]), G.kernel_size(label))
        if label in G.POOL_LABELS:
            return _pool(label, self.dims)
        units = self.out_features if v in self.decision else int(self.arch.widths[v])
        return nn.Linear(fan_in, units)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not torch.jit.is_tracing() and not torch.compiler.is_compiling() and tuple(x.shape[1:]) != self.input_shape:
            raise ValueError(f"expected inputs of shape (N, {', '.join(map(str, self.input_shape))}), got {tuple(x.shape)}")
        outs: dict[int, torch.Tensor] = {0: x}
        decision = set(self.decision)
        for v in self.order:
            ps = self.parents[v]
            if self.flat[v]:
                parts = [torch.flatten(outs[p], 1) for p in ps]
            else:
                parts = [outs[p] for p in ps]
            inp = parts[0] if len(parts) == 1 else torch.cat(parts, dim=1)
            z = self.layers[str(v)](inp)
            outs[v] = z if v in decision or not self.flat[v] else F.relu(z)
        return torch.stack([outs[d] for d in self.decision]).mean(dim=0)


def build_cnn(arch: Architecture, input_shape: Sequence[int], out_features: int, seed: int | None = None) -> CNNNet:
    """A freshly initialised :class:`CNNNet` (``seed`` makes the initial weights reproducible)."""
    if seed is None:
        return CNNNet(arch, input_shape, out_features)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return CNNNet(arch, input_shape, out_features)
