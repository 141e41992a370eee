"""A randomly wired network for live training (RWNN §3.1, scaled down for a CPU).

The network of a wired architecture (:func:`~nasviz.spaces.wired.graphs.to_architecture`):

* stem: ``Conv3x3(in_channels -> C)``-BN: the output of the graph's ``input`` node;
* each operation node sums its inputs with learned positive weights ``sigmoid(w_e)`` (one per
  in-edge, RWNN's aggregation) and applies ``ReLU -> Conv3x3(C -> C, no bias) -> BN``
  (``relu-conv3x3-bn``, RWNN's node transformation with a plain rather than separable convolution,
  as NAS-BOWL App. E.1 names it);
* the ``output`` node averages the sinks (RWNN: "the output node computes the average");
* global average pooling and a linear classifier.

RWNN stacks several graphs with downsampling between stages; one stage at ``C = 8`` channels and
full resolution is enough for the 8x8 digits and trains in seconds on a CPU. Shapes:
``(B, in_channels, H, W) -> (B, n_classes)``.
"""

from __future__ import annotations

import torch
from torch import nn

from nasviz.arch import Architecture


class WiredNode(nn.Module):
    """``ReLU -> Conv3x3 -> BN`` on the weighted sum of ``fan_in`` inputs, ``(B, C, H, W)`` each."""

    def __init__(self, channels: int, fan_in: int) -> None:
        super().__init__()
        self.weights = nn.Parameter(torch.zeros(fan_in))  # sigmoid(0) = 0.5 per input at the start
        self.body = nn.Sequential(nn.ReLU(), nn.Conv2d(channels, channels, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(channels))

    def forward(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        w = torch.sigmoid(self.weights)
        total = inputs[0] * w[0]
        for k in range(1, len(inputs)):
            total = total + inputs[k] * w[k]
        return self.body(total)


class WiredNetwork(nn.Module):
    """The network of one wired architecture (module docstring)."""

    def __init__(self, arch: Architecture, channels: int = 8, n_classes: int = 10, in_channels: int = 1) -> None:
        super().__init__()
        for name, value in (("channels", channels), ("n_classes", n_classes), ("in_channels", in_channels)):
            if int(value) < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        self.order = [v for v in arch.topological_order() if 0 < v < arch.n_nodes - 1]
        self.preds = arch.predecessors()
        self.sinks = list(self.preds[arch.n_nodes - 1])
        self.stem = nn.Sequential(nn.Conv2d(in_channels, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels))
        self.nodes = nn.ModuleDict({str(v): WiredNode(channels, len(self.preds[v])) for v in self.order})
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(channels, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = {0: self.stem(x)}
        for v in self.order:
            values[v] = self.nodes[str(v)]([values[u] for u in self.preds[v]])
        out = torch.stack([values[u] for u in self.sinks]).mean(dim=0)
        return self.classifier(self.pool(out).flatten(1))


def expected_parameter_count(arch: Architecture, channels: int = 8, n_classes: int = 10, in_channels: int = 1) -> int:
    """:class:`WiredNetwork`'s trainable parameters in closed form: stem ``9 in C + 2C``; per
    operation node ``9 C^2 + 2C`` and one weight per in-edge; classifier ``C n_classes + n_classes``."""
    ops = arch.n_nodes - 2
    into_ops = sum(1 for _, v in arch.edges if v < arch.n_nodes - 1)
    return 9 * in_channels * channels + 2 * channels + ops * (9 * channels**2 + 2 * channels) + into_ops \
        + channels * n_classes + n_classes
