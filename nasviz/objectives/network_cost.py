"""Size and cost of the network a training setting builds: trainable parameters and forward FLOPs
per input (counted by :mod:`nasviz.network_size`).

FLOPs are counted by PyTorch's own :class:`torch.utils.flop_counter.FlopCounterMode` on one
forward pass of a single input (convolutions and matrix products, two FLOPs per multiply-add);
parameters are the trainable scalars of the built network (BatchNorm running statistics are
buffers, not parameters).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from nasviz.arch import Architecture
from nasviz.network_size import count_flops, count_parameters


@lru_cache(maxsize=4)
def _dataset(name: str, seed: int):
    from nasviz.objectives.datasets import load_dataset

    return load_dataset(name, seed=seed)


def network_cost(space_name: str, arch: Architecture, settings: dict[str, Any],
                 flops_cache: dict[str, int] | None = None) -> tuple[int, int]:
    """``(parameters, forward FLOPs per input)`` of the network the trainer builds for ``arch``
    with ``settings`` (``dataset``, ``dataset_seed``, ``model_options`` as in :mod:`nasviz.tabulate`).

    ``flops_cache`` (keyed by :meth:`Architecture.canonical_key`) skips the FLOP count for a cell
    whose reduced graph was counted before: the builders compute only what reaches the output,
    so isomorphic reduced graphs cost the same (parameters are counted every time: they include
    edges that cannot reach the output).
    """
    from nasviz.spaces import get_space

    data = _dataset(settings["dataset"], int(settings.get("dataset_seed", 0)))
    model = get_space(space_name).build_network(arch, tuple(data.input_shape), data.n_outputs,
                                                **settings.get("model_options", {}))
    if flops_cache is None:
        return count_parameters(model), count_flops(model, tuple(data.input_shape))
    key = arch.canonical_key()
    if key not in flops_cache:
        flops_cache[key] = count_flops(model, tuple(data.input_shape))
    return count_parameters(model), flops_cache[key]
