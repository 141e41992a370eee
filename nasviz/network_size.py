"""Size of a built network: trainable parameters and forward FLOPs per input.

FLOPs are counted by PyTorch's own :class:`torch.utils.flop_counter.FlopCounterMode` on one
forward pass of a single input (convolutions and matrix products, two FLOPs per multiply-add);
parameters are the trainable scalars of the network (BatchNorm running statistics are buffers,
not parameters). Depends on torch only, so the spaces' network builders can use it
(:mod:`nasviz.objectives.network_cost` measures the network a training setting builds).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode


def count_flops(model: nn.Module, input_shape: tuple[int, ...]) -> int:
    """Forward FLOPs of ``model`` on one input of shape ``input_shape`` (eval mode, no grad)."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            model(torch.zeros(1, *input_shape))
    finally:
        model.train(was_training)
    return int(counter.get_total_flops())


def count_parameters(model: nn.Module) -> int:
    """Trainable scalars of ``model``."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
