"""The NAS-Bench-201 cell space (NB201 §2): six edges, five operations, 15,625 cells.

* :mod:`.cell`: the cell as an 8-node operation DAG, the official string format, enumeration,
  sampling, mutation and the equivalence key (a cell's output as a sum of terms);
* :mod:`.network`: the NAS-Bench-201 network skeleton around a cell, for live training;
* :class:`NB201Space`: both behind the :class:`~nasviz.spaces.base.SearchSpace` interface.

The names of :mod:`.cell` are re-exported, so ``from nasviz.spaces import nb201; nb201.parse(s)``
reads as before.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.errors import ConfigError
from nasviz.spaces.base import LABELLED_DAG, LAYERS, OPERATION_SLOTS, OPERATION_TREE, PATHS, SearchSpace
from nasviz.spaces.nb201.cell import (
    CELL_EDGES, DAG_EDGES, N_EDGES, NAME, OPERATIONS, SPACE_SIZE, canonical_key, enumerate_all, format,
    from_operations, mutate, neighbours, operations, parse, sample,
)

# ---------------------------------------------------------------------- the SearchSpace
#: The first level of the TW operation tree for these cells (paper 000 App. F: convolutions are
#: alike, pooling, identity and zero are groups of their own; input / output are pseudo-layers).
OPERATION_GROUPS: dict[str, tuple[str, ...]] = {
    "convolution": ("nor_conv_1x1", "nor_conv_3x3"),
    "pooling": ("avg_pool_3x3",),
    "identity": ("skip_connect",),
    "zero": ("none",),
    "input": (INPUT,),
    "output": (OUTPUT,),
}


#: The settings of the committed NB201-on-digits table (``data/README.md`` explains the choice).
TABLE_SETTINGS: dict[str, Any] = {
    "dataset": "digits",
    "dataset_seed": 0,
    "seeds": 10,
    "model_options": {"channels": 4, "n_cells": 1},
    "training": {"epochs": 3, "patience": 3, "estimate_epochs": 2, "lr": 0.4, "batch_size": 256, "optimizer": "sgd",
                 "weight_decay": 5e-4},
}


class NB201Space(SearchSpace):
    """The NAS-Bench-201 cell space (module docstring) behind the :class:`SearchSpace` interface."""

    name = NAME
    description = "NAS-Bench-201 cells: 6 edges x 5 operations, 15,625 cells (4,930 equivalence classes)"
    representations = frozenset({LABELLED_DAG, OPERATION_TREE, LAYERS, PATHS, OPERATION_SLOTS})
    examples = ("|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|",)

    def parse(self, text: str) -> Architecture:
        return parse(text)

    def format(self, arch: Architecture) -> str:
        return format(arch)

    def sample(self, rng: np.random.Generator, n: int = 1) -> list[Architecture]:
        return sample(rng, n)

    def mutate(self, arch: Architecture, rng: np.random.Generator) -> Architecture:
        return mutate(arch, rng)

    def neighbours(self, arch: Architecture) -> list[Architecture]:
        return neighbours(arch)

    def canonical_key(self, arch: Architecture) -> str:
        return canonical_key(arch)

    @property
    def size(self) -> int:
        return SPACE_SIZE

    def enumerate(self) -> Iterator[Architecture]:
        return enumerate_all()

    def operation_groups(self) -> dict[str, tuple[str, ...]]:
        return OPERATION_GROUPS

    def layer_kinds(self) -> dict[str, str]:
        return {"nor_conv_1x1": "unit", "nor_conv_3x3": "unit", "avg_pool_3x3": "pool", INPUT: "input", OUTPUT: "output"}

    def label_mismatch(self) -> tuple[tuple[str, ...], np.ndarray]:
        from nasviz.spaces.label_costs import NB201_LABEL_MISMATCH, NB201_LABELS

        return NB201_LABELS, NB201_LABEL_MISMATCH

    def slot_names(self) -> tuple[str, ...]:
        return tuple(f"{i}->{j}" for i, j in CELL_EDGES)

    def slot_choices(self) -> tuple[str, ...]:
        return OPERATIONS

    def slots(self, arch: Architecture) -> tuple[str, ...]:
        return operations(arch)

    def from_slots(self, ops: Sequence[str]) -> Architecture:
        return from_operations(ops)

    def build_network(self, arch: Architecture, input_shape: tuple[int, ...], n_outputs: int, *,
                      channels: int = 4, n_cells: int = 1):
        from nasviz.spaces.nb201.network import build_nb201_network

        if len(input_shape) != 3:
            raise ConfigError(f"NAS-Bench-201 cells need image inputs (C, H, W); got inputs of shape {tuple(input_shape)}")
        return build_nb201_network(arch, channels=channels, n_cells=n_cells, n_classes=n_outputs,
                                   in_channels=input_shape[0])

    def network_defaults(self) -> dict[str, int]:
        return {"channels": 4, "n_cells": 1}

    def training_defaults(self) -> dict[str, Any]:
        """One training seed of the embedded NB201-on-digits table (:data:`TABLE_SETTINGS`),
        so a live search on digits measures what the table averages."""
        return {k: v for k, v in TABLE_SETTINGS["training"].items()}

    def trainable_on(self) -> frozenset[str]:
        return frozenset({"image"})


#: The space instance (spaces are stateless).
SPACE = NB201Space()


__all__ = [
    "CELL_EDGES", "DAG_EDGES", "N_EDGES", "NAME", "NB201Space", "OPERATIONS", "OPERATION_GROUPS", "SPACE", "SPACE_SIZE",
    "canonical_key", "enumerate_all", "format", "from_operations", "mutate", "neighbours", "operations", "parse",
    "sample",
]
