"""Randomly wired networks: NAS-BOWL's Flowers102 space (paper 002 App. E.1, after RWNN).

Architectures are 32-node DAGs drawn by the Erdos-Renyi, Barabasi-Albert and Watts-Strogatz
generators and oriented as RWNN does (:mod:`.graphs`), plus an input and an output node; every
operation node is ``relu-conv3x3-bn``. :mod:`.network` builds them for live training.

No benchmark table exists for this space (NAS-BOWL's 547 / 552 trained Flowers102 architectures
were not released): it is searched by training (``--objective train`` on a bundled image
dataset), and the Flower-102 column of paper 002 Table 1 / 2 cannot be reproduced.

Representations: ``labelled-dag`` (WL, the GraKeL kernels, edit, OT, GW), ``operation-tree`` (TW:
one convolution label, so the 1-gram measure is the same for every graph and TW compares the
anchored n-grams and the in-/out-degree measures) and ``layers`` (OTMANN: every node a
convolution ``unit`` of ``cell_channels`` channels). Not ``paths``: the number of input ->
output paths of a 32-node random DAG runs into the millions, so the path encoding is refused.

The generator and hyperparameters of each architecture are part of its string form. An
:class:`~nasviz.arch.Architecture` holds the graph only, so the space remembers the provenance
of the graphs it generated or parsed (the last :data:`PROVENANCE_LIMIT`); a graph it has not
seen formats as ``custom``.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.errors import ConfigError
from nasviz.spaces.base import LABELLED_DAG, LAYERS, OPERATION_TREE, SearchSpace
from nasviz.spaces.wired.graphs import (
    GENERATORS, GRIDS, N_NODES, OPERATION, Provenance, WiredGraph, format_graph, from_architecture, generate,
    grid_neighbours, parse_graph, rewire, rewirings, settings, to_architecture,
)

#: How many architectures' provenance the space keeps (least recently used forgotten first).
PROVENANCE_LIMIT = 100_000
#: Probability that :meth:`WiredSpace.mutate` regenerates instead of rewiring one edge.
REGENERATE_PROBABILITY = 0.2

#: Architecture -> provenance of the graphs generated or parsed, shared by every instance.
_PROVENANCE: OrderedDict[Architecture, Provenance] = OrderedDict()


class WiredSpace(SearchSpace):
    """32-node randomly wired DAGs (module docstring)."""

    name = "wired"
    description = "randomly wired 32-node DAGs (ER / BA / WS, RWNN), NAS-BOWL's Flowers102 space; no table"
    representations = frozenset({LABELLED_DAG, OPERATION_TREE, LAYERS})
    examples = ("ws:K=4,P=0.7,seed=0|" + ",".join(f"{i}-{i + 1}" for i in range(N_NODES - 1)),)

    # ------------------------------------------------------------------ provenance
    def _remember(self, graph: WiredGraph) -> Architecture:
        arch = to_architecture(graph)
        _PROVENANCE[arch] = graph.provenance
        _PROVENANCE.move_to_end(arch)
        while len(_PROVENANCE) > PROVENANCE_LIMIT:
            _PROVENANCE.popitem(last=False)
        return arch

    def graph(self, arch: Architecture) -> WiredGraph:
        """The wired graph of ``arch`` with its provenance (``custom`` if unknown)."""
        return from_architecture(arch, _PROVENANCE.get(arch))

    def provenance(self, arch: Architecture) -> Provenance:
        return self.graph(arch).provenance

    # ------------------------------------------------------------------ strings
    def parse(self, text: str) -> Architecture:
        return self._remember(parse_graph(text))

    def format(self, arch: Architecture) -> str:
        return format_graph(self.graph(arch))

    # ------------------------------------------------------------------ moves
    def sample(self, rng: np.random.Generator, n: int = 1) -> list[Architecture]:
        """A setting uniformly among the 69 of the grids (as NAS-BOWL trains 8 graphs per setting),
        then a graph drawn by that generator with a fresh seed."""
        grid = settings()
        out = []
        for _ in range(n):
            name, params = grid[int(rng.integers(len(grid)))]
            out.append(self._remember(generate(name, params, int(rng.integers(2**31)))))
        return out

    def neighbours(self, arch: Architecture) -> list[Architecture]:
        """Every single-edge rewiring (an edge ``u -> v`` moved to ``u -> w``, ``w > u``); the
        regeneration move of :meth:`mutate` is random and not listed."""
        graph = self.graph(arch)
        return [self._remember(rewire(graph, old, new)) for old, new in rewirings(graph)]

    def mutate(self, arch: Architecture, rng: np.random.Generator) -> Architecture:
        """With probability :data:`REGENERATE_PROBABILITY` a new graph from a neighbouring
        hyperparameter setting of the same generator (a random setting if the provenance is
        unknown), else one random single-edge rewiring (a member of :meth:`neighbours`)."""
        graph = self.graph(arch)
        if rng.random() < REGENERATE_PROBABILITY:
            options = grid_neighbours(graph.provenance)
            if options:
                params = options[int(rng.integers(len(options)))]
                return self._remember(generate(graph.provenance.generator, params, int(rng.integers(2**31))))
            grid = settings()
            name, params = grid[int(rng.integers(len(grid)))]
            return self._remember(generate(name, params, int(rng.integers(2**31))))
        moves = list(rewirings(graph))
        old, new = moves[int(rng.integers(len(moves)))]
        return self._remember(rewire(graph, old, new))

    # ------------------------------------------------------------------ representations
    def operation_groups(self) -> dict[str, tuple[str, ...]]:
        return {"convolution": (OPERATION,), "input": (INPUT,), "output": (OUTPUT,)}

    def layer_kinds(self) -> dict[str, str]:
        return {OPERATION: "unit", INPUT: "input", OUTPUT: "output"}

    def label_mismatch(self) -> tuple[tuple[str, ...], np.ndarray]:
        labels = (OPERATION, INPUT, OUTPUT)
        M = np.full((3, 3), np.inf)
        np.fill_diagonal(M, 0.0)
        return labels, M

    # ------------------------------------------------------------------ training
    def build_network(self, arch: Architecture, input_shape: tuple[int, ...], n_outputs: int, *, channels: int = 8):
        from nasviz.spaces.wired.network import WiredNetwork

        if len(input_shape) != 3:
            raise ConfigError(f"randomly wired networks need image inputs (C, H, W); got inputs of shape {tuple(input_shape)}")
        self.graph(arch)  # refuses an architecture that is not a wired graph
        return WiredNetwork(arch, channels=channels, n_classes=n_outputs, in_channels=input_shape[0])

    def network_defaults(self) -> dict[str, int]:
        return {"channels": 8}

    def training_defaults(self) -> dict[str, Any]:
        return {"epochs": 4, "patience": 4, "lr": 0.05, "batch_size": 64}

    def trainable_on(self) -> frozenset[str]:
        return frozenset({"image"})


#: The space instance.
SPACE = WiredSpace()

__all__ = [
    "GENERATORS", "GRIDS", "N_NODES", "OPERATION", "PROVENANCE_LIMIT", "Provenance", "SPACE", "WiredGraph",
    "WiredSpace", "format_graph", "from_architecture", "generate", "parse_graph", "to_architecture",
]
