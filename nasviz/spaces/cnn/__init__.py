"""The NASBOT / Auto-Keras CNN space: DAGs of conv, res, pool and fc layers (paper 001 App. A, B.1).

One concern per module:

* :mod:`.graph`: what a network is (labels, resolutions, App. B.1's domain, the string format,
  the initial pool of Fig. 16);
* :mod:`.modifiers`: NASBOT's nine modifiers and its compound mutation on CNNs (App. B.2);
* :mod:`.networks`: the PyTorch network, 1-d for signals and 2-d for images;
* :mod:`.morphisms`: Auto-Keras's function-preserving morphisms and weight inheritance.

:class:`CNNSpace` puts them behind :class:`~nasviz.spaces.base.SearchSpace`. OTMANN reads it with
paper 001's Table 4 label mismatch (plus the res rule of App. A), which lives with the kernel
(:data:`nasviz.kernels.otmann.CNN_LABEL_MISMATCH`) and which :meth:`CNNSpace.label_mismatch`
returns.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.spaces.cnn import graph as G
from nasviz.spaces.cnn import modifiers
from nasviz.spaces.layered import space as common
from nasviz.spaces.layered.graph import DEFAULT_CONSTRAINTS, Constraints

#: The TW operation tree's first level for CNN labels: the groups of App. A's grouped structure.
OPERATION_GROUPS: dict[str, tuple[str, ...]] = {
    "conv": G.CONV_LABELS + G.RES_LABELS,
    "pool": G.POOL_LABELS,
    "fc": (G.FC_LABEL,),
    "decision": (G.DECISION_LABEL,),
    "input": (INPUT,),
    "output": (OUTPUT,),
}


def sample(rng: np.random.Generator, n: int = 1, constraints: Constraints = DEFAULT_CONSTRAINTS) -> list[Architecture]:
    """``n`` random networks: a random member of the initial pool after 1-4 compound mutations
    (the space is unbounded: there is no uniform distribution; as for the layer space)."""
    pool = [a for a in G.initial_pool() if G.is_valid(a, constraints)]
    return common.sample(pool, rng, n, constraints, modifiers.mutate)


class CNNSpace(common.LayerSpace):
    """CNNs as DAGs of layers (module docstring), with App. B.1's domain ``constraints``.

    Strings, validity, moves and morphisms go through :class:`~nasviz.spaces.layered.space.LayerSpace`
    to :mod:`.graph`, :mod:`.modifiers` and :mod:`.morphisms`.
    """

    name = G.NAME
    description = "NASBOT / Auto-Keras CNNs: DAGs of conv, res, pool and fc layers (1-d signals or 2-d images)"
    examples = ("input;conv3:16<0;max-pool<1;conv5:32<2;fc:64<3;softmax<4;output<5",)
    rules = G
    moves = modifiers

    def _morphisms(self) -> ModuleType:
        from nasviz.spaces.cnn import morphisms

        return morphisms

    def sample(self, rng: np.random.Generator, n: int = 1) -> list[Architecture]:
        return sample(rng, n, self.constraints)

    def operation_groups(self) -> dict[str, tuple[str, ...]]:
        return OPERATION_GROUPS

    def layer_kinds(self) -> dict[str, str]:
        """OTMANN's kinds of the CNN labels (conv: unit, res, pool, fc, softmax: decision)."""
        from nasviz.spaces.label_costs import layer_kind

        return {label: layer_kind(label) for label in G.LABELS}

    def label_mismatch(self) -> tuple[tuple[str, ...], np.ndarray]:
        """Paper 001 Table 4 with App. A's res rule, over :data:`graph.LABELS` (the kernel's table)."""
        from nasviz.spaces.label_costs import CNN_LABEL_MISMATCH, CNN_LABELS

        index = [CNN_LABELS.index(label) for label in G.LABELS]
        return G.LABELS, CNN_LABEL_MISMATCH[np.ix_(index, index)]

    # ------------------------------------------------------------------ training
    def build_network(self, arch: Architecture, input_shape: tuple[int, ...], n_outputs: int, **options: Any):
        from nasviz.spaces.cnn.networks import CNNNet

        self._refuse_options(options)
        return CNNNet(arch, tuple(input_shape), n_outputs)

    def training_defaults(self) -> dict[str, Any]:
        """SGD with Nesterov momentum and a cosine schedule, early stopping after 3 epochs without
        a lower validation loss (paper 003 App. D), at most 12 epochs."""
        return {"epochs": 12, "patience": 3, "lr": 0.05, "batch_size": 64}

    def trainable_on(self) -> frozenset[str]:
        return frozenset({"image", "signal"})


#: The space with the default constraints (spaces are stateless).
SPACE = CNNSpace()

__all__ = ["CNNSpace", "OPERATION_GROUPS", "SPACE", "sample"]
