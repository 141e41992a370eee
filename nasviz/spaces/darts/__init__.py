"""The DARTS cell space (NAS-Bench-301's): a normal and a reduction cell, about 10^18 genotypes.

* :mod:`.genotype`: the genotype, its text form, sampling and the 120 one-move neighbours;
* :mod:`.graph`: the genotype as one 23-node labelled DAG for the kernels;
* :class:`DartsSpace`: both behind the :class:`~nasviz.spaces.base.SearchSpace` interface.

Tables: the shared ``darts_725.csv`` holds 725 genotypes (column ``genotype``) with
NAS-Bench-301's *surrogate* validation accuracy, not trained results (its README). The space has
about 1.08e18 genotypes (per cell 1 x 3 x 6 x 10 input pairs times 49^4 operation pairs, squared),
so a table covers a tiny part of it: searches on it draw from the table's rows
(``table_neighbours="nearest"`` in the default preset), and the Optuna peers' proposals are
projected onto the nearest row (:mod:`nasviz.strategies.optuna_peer`).

Representations (:mod:`nasviz.spaces.base`):

* ``labelled-dag``: :func:`~nasviz.spaces.darts.graph.to_architecture`;
* ``operation-tree``: :data:`OPERATION_GROUPS`: the four convolutions and the reduction cell's
  factorized reduce are alike, the two poolings are alike, the identity is its own group, and the
  graph's fixed nodes (stem, preprocess, concat, output) are groups of their own;
* ``categorical-parameters``: per cell and node, each of the two edges' operation (7 choices) and
  input (``0 .. k-1``), 32 parameters, edges in increasing order of input
  (:meth:`DartsSpace.to_parameters`). An assignment whose two edges of a node read the same input
  is no genotype (:meth:`DartsSpace.from_parameters` returns ``None``).

* ``paths``: the graph of a sampled genotype has 47 to 151 input -> output paths (50 samples),
  few enough for the path encoding (BANANAS encodes DARTS cells by their paths too).

Not provided: ``layers`` (OTMANN's layer masses need channel counts a genotype does not fix) and
``operation-slots`` (the inputs' choices differ per node).

Training: :mod:`.network` builds DARTS's evaluation network around a genotype (its parameter
counts match DARTS's published 3.3M for DARTS_V2 and the shared table's ``params`` column), so a
genotype can also be trained live on a bundled image dataset.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterator, Mapping

import numpy as np

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.errors import ConfigError
from nasviz.spaces.base import LABELLED_DAG, OPERATION_TREE, PARAMETERS, PATHS, SearchSpace, check_parameters
from nasviz.spaces.darts import genotype as gt
from nasviz.spaces.darts.graph import CONCAT, FACTORIZED_REDUCE, PREPROCESS, from_architecture, to_architecture

NAME = "darts"

#: The first level of the TW operation tree (module docstring).
OPERATION_GROUPS: dict[str, tuple[str, ...]] = {
    "convolution": ("sep_conv_3x3", "sep_conv_5x5", "dil_conv_3x3", "dil_conv_5x5", FACTORIZED_REDUCE),
    "pooling": ("max_pool_3x3", "avg_pool_3x3"),
    "identity": ("skip_connect",),
    "input": (INPUT,),
    "preprocess": (PREPROCESS,),
    "concat": (CONCAT,),
    "output": (OUTPUT,),
}

#: Example genotype: ``DARTS_V2`` of the DARTS code's ``genotypes.py`` (the second-order DARTS cells), each
#: node's edges in increasing order of input as :func:`~nasviz.spaces.darts.genotype.format` writes them.
EXAMPLE = ("normal=[(sep_conv_3x3,0),(sep_conv_3x3,1),(sep_conv_3x3,0),(sep_conv_3x3,1),(skip_connect,0),(sep_conv_3x3,1),"
           "(skip_connect,0),(dil_conv_3x3,2)];normal_concat=[2,3,4,5];"
           "reduce=[(max_pool_3x3,0),(max_pool_3x3,1),(max_pool_3x3,1),(skip_connect,2),(max_pool_3x3,0),(skip_connect,2),"
           "(max_pool_3x3,1),(skip_connect,2)];reduce_concat=[2,3,4,5]")


def parameter_name(cell: str, k: int, e: int, what: str) -> str:
    """The categorical parameter of edge ``e`` (0: the smaller input) of node ``k``: ``what`` is ``op`` or ``input``."""
    return f"{cell} node {k} edge {e} {what}"


#: Parameter name -> choices, in genotype order (:meth:`DartsSpace.parameter_choices`).
PARAMETER_CHOICES: dict[str, tuple[str, ...]] = {
    parameter_name(cell, k, e, what): (gt.OPERATIONS if what == "op" else tuple(str(j) for j in range(k)))
    for cell in gt.CELLS for k in gt.NODES for e in (0, 1) for what in ("op", "input")
}


@lru_cache(maxsize=16_384)
def _neighbours_of(arch: Architecture) -> tuple[Architecture, ...]:
    return tuple(to_architecture(g) for g in gt.neighbours(from_architecture(arch)))


class DartsSpace(SearchSpace):
    """DARTS genotypes as 23-node labelled DAGs (module docstring)."""

    name = NAME
    description = "DARTS / NAS-Bench-301 cells: a normal and a reduction cell, 4 nodes x 2 edges x 7 operations each"
    representations = frozenset({LABELLED_DAG, OPERATION_TREE, PARAMETERS, PATHS})
    examples = (EXAMPLE,)
    table_columns = (("genotype",),)

    # ------------------------------------------------------------------ strings
    def parse(self, text: str) -> Architecture:
        """The genotype's graph; ``ValueError`` (:class:`~nasviz.spaces.darts.genotype.GenotypeError`) says
        which cell, node and edge is wrong."""
        return to_architecture(gt.parse(text))

    def format(self, arch: Architecture) -> str:
        return gt.format(from_architecture(arch))

    # ------------------------------------------------------------------ moves
    def sample(self, rng: np.random.Generator, n: int = 1) -> list[Architecture]:
        return [to_architecture(g) for g in gt.sample(rng, n)]

    def mutate(self, arch: Architecture, rng: np.random.Generator) -> Architecture:
        return to_architecture(gt.mutate(from_architecture(arch), rng))

    def neighbours(self, arch: Architecture) -> list[Architecture]:
        """The 120 one-move neighbours, memoised per genotype: pools and the local search of the
        acquisition ask for the same parents step after step."""
        return list(_neighbours_of(arch))

    def canonical_key(self, arch: Architecture) -> str:
        """The genotype's text: each node's edges are already in a fixed order (:mod:`.genotype`)."""
        return self.format(arch)

    # ------------------------------------------------------------------ finite, not enumerable
    @property
    def size(self) -> int:
        """:data:`~nasviz.spaces.darts.genotype.SPACE_SIZE`, about 1.08e18. Finite, so a table's rows are
        known to be a strict part of the space: mutation pools draw among a parent's neighbours that are
        rows, and ``table_neighbours="nearest"`` adds its nearest rows (as on NAS-Bench-101's tables)."""
        return gt.SPACE_SIZE

    def enumerate(self) -> Iterator[Architecture]:
        raise ConfigError(f"the {self.name!r} space has {gt.SPACE_SIZE:.3g} genotypes: too many to enumerate")

    # ------------------------------------------------------------------ representations
    def operation_groups(self) -> dict[str, tuple[str, ...]]:
        return OPERATION_GROUPS

    def parameter_choices(self) -> dict[str, tuple[str, ...]]:
        return dict(PARAMETER_CHOICES)

    def parameter_label(self, name: str, choice: str) -> str | None:
        """An edge's operation is its node's label (a reduction cell's ``skip_connect`` from a cell
        input becomes ``factorized_reduce`` in the graph: its gradient is read as ``skip_connect``'s);
        an edge's input labels nothing."""
        return str(choice) if name.endswith(" op") else None

    def to_parameters(self, arch: Architecture) -> dict[str, str]:
        params = {}
        for c, k, e, (op, source) in from_architecture(arch).edges():
            cell = gt.CELLS[c]
            params[parameter_name(cell, k, e, "op")] = op
            params[parameter_name(cell, k, e, "input")] = str(source)
        return params

    def from_parameters(self, params: Mapping[str, str]) -> Architecture | None:
        """The genotype of the assignment (a node's edges in either order), or ``None`` when a node's two
        edges read the same input."""
        check_parameters(params, PARAMETER_CHOICES)
        cells = []
        for cell in gt.CELLS:
            cells.append([(params[parameter_name(cell, k, e, "op")], int(params[parameter_name(cell, k, e, "input")]))
                          for k in gt.NODES for e in (0, 1)])
        try:
            return to_architecture(gt.make(*cells))
        except gt.GenotypeError:
            return None

    # ------------------------------------------------------------------ training
    def build_network(self, arch: Architecture, input_shape: tuple[int, ...], n_outputs: int, *,
                      channels: int = 8, n_cells: int = 5):
        """The DARTS evaluation network (:mod:`.network`): stem, ``n_cells`` cells with reduction cells at a
        third and two thirds, global pooling, linear classifier."""
        from nasviz.spaces.darts.network import DartsNetwork

        if len(input_shape) != 3:
            raise ConfigError(f"DARTS cells need image inputs (C, H, W); got inputs of shape {tuple(input_shape)}")
        return DartsNetwork(from_architecture(arch), channels=channels, n_cells=n_cells, n_classes=n_outputs,
                            in_channels=input_shape[0])

    def network_defaults(self) -> dict[str, int]:
        """``C = 8``, five cells (N R N R N): a genotype trains on 8x8 digits in seconds on a CPU."""
        return {"channels": 8, "n_cells": 5}

    def training_defaults(self) -> dict[str, Any]:
        """Four epochs without early stopping, SGD with a cosine schedule (as the other cell spaces)."""
        return {"epochs": 4, "patience": 4, "lr": 0.05, "batch_size": 64}

    def trainable_on(self) -> frozenset[str]:
        return frozenset({"image"})


#: The space instance (spaces are stateless).
SPACE = DartsSpace()

__all__ = ["DartsSpace", "EXAMPLE", "NAME", "OPERATION_GROUPS", "PARAMETER_CHOICES", "SPACE", "parameter_name"]
