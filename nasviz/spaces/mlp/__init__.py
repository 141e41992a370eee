"""The NASBOT / Auto-Keras layer space: networks as DAGs of layers with widths (paper 001 Sec. 2.2).

The package holds one concern per module:

* :mod:`.graph`: what a network is (labels, domain constraints of App. B.1, validity, string
  format ``input;relu:64<0;tanh:32<1;linear<2;output<3``, NASBOT's initial pool of Fig. 16);
* :mod:`.modifiers`: NASBOT's nine modifiers and the compound mutation of App. B.2;
* :mod:`.networks`: the PyTorch network of an architecture;
* :mod:`.morphisms`: Auto-Keras's function-preserving network morphisms and weight inheritance.

:class:`MLPSpace` puts them behind the :class:`~nasviz.spaces.base.SearchSpace` interface. The
names of :mod:`.graph` are re-exported here, so ``from nasviz.spaces import mlp as L;
L.format(arch)`` reads as before.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.spaces.layered import space as common
from nasviz.spaces.mlp import graph, modifiers
from nasviz.spaces.mlp.graph import (
    DECISION_LABEL, DEFAULT_CONSTRAINTS, LABELS, NAME, PROCESSING_LABELS, RECTIFIERS, SIGMOIDS, Constraints,
    build, canonical_key, decision_layers, feed_forward, format, initial_pool, is_valid, label_mismatch_matrix,
    normalise, output_width, parse, problems, processing_layers, total_mass, validate,
)


def sample(rng: np.random.Generator, n: int = 1, constraints: Constraints = DEFAULT_CONSTRAINTS) -> list[Architecture]:
    """``n`` random networks: a random member of :func:`initial_pool` after 1-4 compound mutations.

    The layer space is unbounded, so there is no uniform distribution over it; this draws
    from the neighbourhood NASBOT's EA explores around its initial pool.
    """
    return common.sample(initial_pool(), rng, n, constraints, modifiers.mutate)


def mutate(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture:
    """NASBOT's compound k-step mutation (paper 001 App. B.2); see :func:`.modifiers.mutate`."""
    return modifiers.mutate(arch, rng, constraints)


def neighbours(arch: Architecture, constraints: Constraints = DEFAULT_CONSTRAINTS) -> list[Architecture]:
    """Every distinct valid network one modifier away (see :func:`.modifiers.one_step_neighbours`)."""
    return modifiers.one_step_neighbours(arch, constraints)


#: The TW operation tree's first level for MLP labels: NASBOT's label groups (Table 5).
OPERATION_GROUPS: dict[str, tuple[str, ...]] = {
    "rectifier": tuple(sorted(RECTIFIERS)),
    "saturating": tuple(sorted(SIGMOIDS)),
    "dense": (DECISION_LABEL,),
    "input": (INPUT,),
    "output": (OUTPUT,),
}


class MLPSpace(common.LayerSpace):
    """Multi-layer perceptrons as DAGs of layers (module docstring), with domain ``constraints``.

    Strings, validity, moves and morphisms go through :class:`~nasviz.spaces.layered.space.LayerSpace`
    to :mod:`.graph`, :mod:`.modifiers` and :mod:`.morphisms`.
    """

    name = NAME
    description = "NASBOT / Auto-Keras MLPs: DAGs of fully connected layers with widths (unbounded)"
    examples = ("input;relu:64<0;tanh:32<1;linear<2;output<3",)
    rules = graph
    moves = modifiers

    def _morphisms(self) -> ModuleType:
        from nasviz.spaces.mlp import morphisms

        return morphisms

    def sample(self, rng: np.random.Generator, n: int = 1) -> list[Architecture]:
        return sample(rng, n, self.constraints)

    def canonical_key(self, arch: Architecture) -> str:
        return canonical_key(arch)

    def operation_groups(self) -> dict[str, tuple[str, ...]]:
        return OPERATION_GROUPS

    def layer_kinds(self) -> dict[str, str]:
        return {**{label: "unit" for label in PROCESSING_LABELS}, DECISION_LABEL: "decision",
                INPUT: "input", OUTPUT: "output"}

    def label_mismatch(self) -> tuple[tuple[str, ...], np.ndarray]:
        return LABELS, label_mismatch_matrix()

    def build_network(self, arch: Architecture, input_shape: tuple[int, ...], n_outputs: int, **options: Any):
        from nasviz.spaces.mlp.networks import build_layer_network

        self._refuse_options(options)
        in_features = input_shape[0] if len(input_shape) == 1 else tuple(input_shape)
        return build_layer_network(arch, in_features, n_outputs)

    def trainable_on(self) -> frozenset[str]:
        return frozenset({"tabular", "image", "signal"})


__all__ = [
    "DECISION_LABEL", "DEFAULT_CONSTRAINTS", "LABELS", "MLPSpace", "NAME", "OPERATION_GROUPS", "PROCESSING_LABELS",
    "RECTIFIERS", "SIGMOIDS", "SPACE", "Constraints", "build", "canonical_key", "decision_layers", "feed_forward", "format",
    "initial_pool", "is_valid", "label_mismatch_matrix", "mutate", "neighbours", "normalise", "output_width", "parse",
    "problems", "processing_layers", "sample", "total_mass", "validate",
]


#: The space with the default constraints (spaces are stateless).
SPACE = MLPSpace()
