"""PyTorch multi-layer perceptrons built from layer DAGs (paper 001, Sec. 2.2).

Every processing and decision layer ``v`` is a ``Linear`` applied to the concatenation of its
parents' outputs, in increasing parent index (the input layer contributes the flattened data
point), followed by ``v``'s activation (:data:`ACTIVATIONS`); decision layers are linear maps to
the task's outputs and the output layer averages them ("When a network has multiple decision
layers, we average the output of each decision layer", Sec. 2.2). We average the decision
layers' *logits* (paper: probabilities); the loss then applies softmax once, which keeps
training numerically simple and agrees with the paper for a single decision layer.

:func:`input_layout` states where each parent's features sit in a layer's input; the weight
inheritance of :mod:`nasviz.spaces.mlp.morphisms` relies on it.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from nasviz.arch import Architecture
from nasviz.spaces.layered.graph import STRUCTURE_ONLY
from nasviz.spaces.mlp import graph as L


def _crelu(z: torch.Tensor) -> torch.Tensor:
    return torch.cat([F.relu(z), F.relu(-z)], dim=-1)


#: Activation of each label; ``crelu`` doubles the features (``[relu(z), relu(-z)]``).
ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": F.relu,
    "crelu": _crelu,
    "leaky-relu": lambda z: F.leaky_relu(z, 0.01),
    "softplus": F.softplus,
    "elu": F.elu,
    "logistic": torch.sigmoid,
    "tanh": torch.tanh,
    "linear": lambda z: z,
}


def feature_width(arch: Architecture, node: int, in_features: int) -> int:
    """Features node ``node`` outputs: ``in_features`` for the input, else :func:`layers.output_width`."""
    if node == 0:
        return in_features
    w = L.output_width(arch, node)
    if w is None:
        raise ValueError(f"layer {node} ({arch.labels[node]!r}) has no output features (a decision or output layer)")
    return w


def input_layout(arch: Architecture, node: int, in_features: int) -> dict[int, tuple[int, int]]:
    """``{parent: (start, stop)}``: the columns of ``node``'s input that hold each parent's features.

    Parents are concatenated in increasing index order.
    """
    layout, start = {}, 0
    for p in sorted(arch.predecessors()[node]):
        stop = start + feature_width(arch, p, in_features)
        layout[p] = (start, stop)
        start = stop
    return layout


class LayerNet(nn.Module):
    """The MLP of a layer network.

    Parameters
    ----------
    arch : a valid network of :mod:`nasviz.spaces.mlp` (domain limits are not enforced)
    in_features : int or shape tuple
        Features of one flattened input; a shape ``s`` (e.g. ``(1, 8, 8)``) means ``prod(s)``
        (inputs of shape ``(N, *s)`` are flattened to ``(N, prod(s))``).
    out_features : int
        Classes (the output is logits) or 1 for regression.

    ``forward(x)``: ``x`` of shape ``(N, in_features)`` (or ``(N, *s)``) -> ``(N, out_features)``.
    """

    def __init__(self, arch: Architecture, in_features: int | Sequence[int], out_features: int) -> None:
        super().__init__()
        if not isinstance(in_features, int):
            in_features = math.prod(int(d) for d in in_features)
        if in_features < 1 or out_features < 1:
            raise ValueError(f"in_features and out_features must be positive, got {in_features}, {out_features}")
        L.validate(arch, STRUCTURE_ONLY)  # structure only: a built network may be any size
        self.arch = arch
        self.in_features = int(in_features)
        self.out_features = int(out_features)
        last = arch.n_nodes - 1
        self.decision = L.decision_layers(arch)
        self.order = [v for v in arch.topological_order() if v not in (0, last)]
        self.parents = {v: sorted(arch.predecessors()[v]) for v in self.order}
        self.linears = nn.ModuleDict()
        for v in self.order:
            fan_in = sum(feature_width(arch, p, in_features) for p in self.parents[v])
            units = out_features if v in self.decision else arch.widths[v]
            self.linears[str(v)] = nn.Linear(fan_in, units)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.reshape(x.shape[0], -1)
        if x.shape[1] != self.in_features:
            raise ValueError(f"expected inputs with {self.in_features} features, got {x.shape[1]}")
        outs: dict[int, torch.Tensor] = {0: x}
        decision = set(self.decision)
        for v in self.order:
            ps = self.parents[v]
            inp = outs[ps[0]] if len(ps) == 1 else torch.cat([outs[p] for p in ps], dim=1)
            z = self.linears[str(v)](inp)
            outs[v] = z if v in decision else ACTIVATIONS[self.arch.labels[v]](z)
        return torch.stack([outs[d] for d in self.decision]).mean(dim=0)


def build_layer_network(
    arch: Architecture, in_features: int | Sequence[int], out_features: int, seed: int | None = None
) -> LayerNet:
    """A freshly initialised :class:`LayerNet` (``seed`` makes the initial weights reproducible)."""
    if seed is None:
        return LayerNet(arch, in_features, out_features)
    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        return LayerNet(arch, in_features, out_features)
    finally:
        torch.random.set_rng_state(state)

