"""The NAS-Bench-101 space behind the :class:`~nasviz.spaces.base.SearchSpace` interface.

An architecture of this space is the cell as a node-labelled DAG (:func:`to_architecture`):
node labels are the cell's vertex operations (``input``, ``conv3x3-bn-relu``, ``conv1x1-bn-relu``,
``maxpool3x3``, ``output``), edges its adjacency, vertex order the cell's *canonical form*
(:func:`~nasviz.spaces.nb101.canonical`). Every architecture the space hands out (parsed,
sampled, mutated, enumerated) is canonical, so two isomorphic cells are one ``Architecture``
and a table keyed by architectures finds a cell whatever vertex order its row was written in.
The canonical key is NAS-Bench-101's module hash.

Representations (:mod:`nasviz.spaces.base`):

* ``labelled-dag``: the cell itself (no zero or identity operations: ``reduced()`` keeps it);
* ``operation-tree``: :data:`OPERATION_GROUPS`. For the TW kernel (paper 000 Eq. (3)-(4)) the
  operations hang in the tree ``root -0.9- convolution -0.1- {conv3x3-bn-relu, conv1x1-bn-relu}``,
  ``root -0.9- pooling -0.1- maxpool3x3``, so conv3x3 vs conv1x1 costs 0.2 and a convolution vs
  the max-pool 2 (paper 000 Table 1's costs); ``input`` / ``output`` are groups of their own
  and only enter the 2- and 3-grams that start at the input or end at the output. The
  in-/out-degree measures of Eq. (4) are the in-/out-degrees of the cell's vertices (input and
  output included) placed at ``(eta + 1) / (M + 1)``, ``eta`` the longest path from the input
  (the output concatenates its in-edges, and each counts once);
* ``layers``: OTMANN layer kinds (both convolutions ``unit``, the max-pool ``pool``) and
  :data:`LABEL_MISMATCH` in the spirit of paper 001 Table 1: conv1x1 vs conv3x3 0.2 (Table 1's
  conv3 vs conv5), a convolution vs the pool incompatible, input / output only themselves.
  Masses come from the OTMANN kernel's ``cell_channels`` (every vertex has that many channels);
* ``paths``: a cell has at most 9 edges and 5 operation vertices, so at most 2^5 = 32
  input -> output paths: the path encoding (BANANAS, paper 000 §4.1) is small;
* ``categorical-parameters``: the encoding NAS-Bench-101's own hyperparameter-optimisation
  baselines search (its Sec. 5: 21 binary parameters for the entries above the diagonal of a
  7-vertex matrix, 5 categorical ones for the operations of vertices 1-5), as an Optuna user
  writes a cell: :data:`EDGE_PARAMETERS` (``"0"`` / ``"1"``) and :data:`OPERATION_PARAMETERS`. An
  assignment is pruned as NAS-Bench-101 prunes a spec; one it rejects is no cell
  (:meth:`NB101Space.from_parameters` returns ``None``). Many assignments give one cell.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterator, Mapping

import numpy as np

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.errors import ConfigError
from nasviz.spaces.base import LABELLED_DAG, LAYERS, OPERATION_TREE, PARAMETERS, PATHS, SearchSpace, check_parameters
from nasviz.spaces.nb101.cache import cell_of_hash, enumerate_all, sample
from nasviz.spaces.nb101.cell import (
    CONV1X1, CONV3X3, MAX_VERTICES, MAXPOOL3X3, NAME, OPERATIONS, PUBLISHED_CELL_COUNT, InvalidCellError, NB101Cell,
    NB101ParseError, format, parse, prune,
)
from nasviz.spaces.nb101.enumeration import canonical
from nasviz.spaces.nb101.moves import from_architecture, generate, mutate, neighbours, to_architecture

#: The first level of the TW operation tree (module docstring).
OPERATION_GROUPS: dict[str, tuple[str, ...]] = {
    "convolution": (CONV3X3, CONV1X1),
    "pooling": (MAXPOOL3X3,),
    "input": (INPUT,),
    "output": (OUTPUT,),
}

#: OTMANN layer kind of every label (paper 001 Sec. 3: mass rules by kind).
LAYER_KINDS: dict[str, str] = {CONV3X3: "unit", CONV1X1: "unit", MAXPOOL3X3: "pool", INPUT: "input", OUTPUT: "output"}

#: Labels of :data:`LABEL_MISMATCH`, in its row order.
LABELS: tuple[str, ...] = (CONV3X3, CONV1X1, MAXPOOL3X3, INPUT, OUTPUT)
#: OTMANN label-mismatch costs (module docstring); ``inf`` = incompatible.
LABEL_MISMATCH: np.ndarray = np.array([
    [0.0, 0.2, np.inf, np.inf, np.inf],
    [0.2, 0.0, np.inf, np.inf, np.inf],
    [np.inf, np.inf, 0.0, np.inf, np.inf],
    [np.inf, np.inf, np.inf, 0.0, np.inf],
    [np.inf, np.inf, np.inf, np.inf, 0.0],
])
LABEL_MISMATCH.setflags(write=False)

#: The ``categorical-parameters`` representation (module docstring): one binary parameter per entry
#: above the diagonal of a 7-vertex matrix, in row order, and the operation of each middle vertex.
_ROWS, _COLS = np.triu_indices(MAX_VERTICES, k=1)
EDGE_PARAMETERS: tuple[str, ...] = tuple(f"edge {i}->{j}" for i, j in zip(_ROWS.tolist(), _COLS.tolist()))
OPERATION_PARAMETERS: tuple[str, ...] = tuple(f"op {v}" for v in range(1, MAX_VERTICES - 1))
_EDGE_CHOICES: tuple[str, ...] = ("0", "1")

#: The example cell of the help texts (5 vertices, 6 edges).
EXAMPLE = "01100|00011|00001|00001|00000;input,conv3x3-bn-relu,maxpool3x3,conv1x1-bn-relu,output"


#: A module hash: NAS-Bench-101's ``hash_module`` is an MD5 hex digest.
_MODULE_HASH = re.compile(r"[0-9a-fA-F]{32}")


@lru_cache(maxsize=65_536)
def cell_of(arch: Architecture) -> NB101Cell:
    """The pruned cell of ``arch`` (:func:`from_architecture`), memoised per architecture."""
    return from_architecture(arch)


@lru_cache(maxsize=16_384)
def _neighbours_of(arch: Architecture) -> tuple[Architecture, ...]:
    return tuple(to_architecture(c) for c in neighbours(cell_of(arch)))


def _arch(cell: NB101Cell) -> Architecture:
    return to_architecture(canonical(cell))


class NB101Space(SearchSpace):
    """NAS-Bench-101 cells as canonical node-labelled DAGs (module docstring).

    Tables: a row's cell is its ``matrix`` and ``ops`` columns, or one ``hash`` column holding
    its NAS-Bench-101 module hash (``nb101_hash_20k.csv``: the cell is looked up in the
    enumeration, so such a table loads as it is, without ``table import-nb101``), or one ``arch``
    column holding ``"<matrix>;<ops>"``; rows of the same cell are averaged
    (:attr:`table_duplicates`): NAS-Bench-101 tables hold one row per training run, and a cell's
    value is their mean.
    """

    name = NAME
    description = "NAS-Bench-101 cells: up to 7 vertices, 3 operations, 423,624 unique cells"
    representations = frozenset({LABELLED_DAG, OPERATION_TREE, LAYERS, PATHS, PARAMETERS})
    examples = (EXAMPLE,)
    table_columns = (("matrix", "ops"), ("hash",))
    table_duplicates = "average"
    lead_metrics = ("valid_accuracy_108",)

    # ------------------------------------------------------------------ strings
    def parse(self, text: str) -> Architecture:
        """``"<matrix>;<ops>"``, or a cell's module hash (32 hexadecimal digits, as NAS-Bench-101's
        API and ``nb101_hash_20k.csv`` name cells), as the canonical cell; ``ValueError``
        (:class:`NB101ParseError`, :class:`InvalidCellError`) says what is wrong."""
        if _MODULE_HASH.fullmatch(text.strip()):
            try:
                return to_architecture(cell_of_hash(text))  # the enumeration holds canonical cells
            except KeyError:
                raise NB101ParseError(f"no NAS-Bench-101 cell has the module hash {text.strip()!r}") from None
        return _arch(parse(text))

    def parse_columns(self, values: tuple[str, ...]) -> Architecture:
        """The cell of a table row's ``matrix`` and ``ops`` columns (or its one ``arch`` column)."""
        return _arch(parse(*values)) if len(values) == 2 else self.parse(values[0])

    def format(self, arch: Architecture) -> str:
        return format(cell_of(arch))

    # ------------------------------------------------------------------ moves
    def sample(self, rng: np.random.Generator, n: int = 1) -> list[Architecture]:
        """Uniform over the 423,624 unique cells (the enumeration; built and cached on first use)."""
        return [to_architecture(c) for c in sample(rng, n)]

    def generate(self, rng: np.random.Generator, n: int = 1) -> list[Architecture]:
        """NAS-BOWL's sampler: random 7-vertex specs, pruned (:func:`~nasviz.spaces.nb101.moves.generate`)."""
        return [_arch(c) for c in generate(rng, n)]

    def mutate(self, arch: Architecture, rng: np.random.Generator) -> Architecture:
        return to_architecture(mutate(cell_of(arch), rng))

    def neighbours(self, arch: Architecture) -> list[Architecture]:
        """Every cell one move away (:func:`~nasviz.spaces.nb101.moves.neighbours`), memoised per
        cell: listing them canonicalises and hashes every move (tens of milliseconds), and mutation
        pools on a table ask for the same parents step after step."""
        return list(_neighbours_of(arch))

    def canonical_key(self, arch: Architecture) -> str:
        """NAS-Bench-101's module hash (equal for isomorphic cells)."""
        return cell_of(arch).hash

    # ------------------------------------------------------------------ finite space
    @property
    def size(self) -> int:
        """423,624: NAS-Bench-101's count, which the enumeration reproduces (a test checks it)."""
        return PUBLISHED_CELL_COUNT

    def enumerate(self) -> Iterator[Architecture]:
        """Every unique cell in ascending order of module hash."""
        return (to_architecture(c) for c in enumerate_all())

    # ------------------------------------------------------------------ representations
    def operation_groups(self) -> dict[str, tuple[str, ...]]:
        return OPERATION_GROUPS

    def layer_kinds(self) -> dict[str, str]:
        return LAYER_KINDS

    def label_mismatch(self) -> tuple[tuple[str, ...], np.ndarray]:
        return LABELS, LABEL_MISMATCH

    def parameter_choices(self) -> dict[str, tuple[str, ...]]:
        """21 edge bits (``"0"`` / ``"1"``), then the operations of vertices 1-5 (module docstring)."""
        return {**{name: _EDGE_CHOICES for name in EDGE_PARAMETERS}, **{name: OPERATIONS for name in OPERATION_PARAMETERS}}

    def parameter_label(self, name: str, choice: str) -> str | None:
        """A vertex operation is its node's label; an edge bit labels nothing."""
        return str(choice) if name in OPERATION_PARAMETERS else None

    def to_parameters(self, arch: Architecture) -> dict[str, str]:
        """The cell on a 7-vertex matrix: its vertices in canonical order on vertices ``0 .. n-2``,
        its output on vertex 6; unused middle vertices have no edges (pruning removes them) and
        the first operation."""
        cell = cell_of(arch)
        n = cell.n_vertices
        place = np.array([*range(n - 1), MAX_VERTICES - 1])  # (n,) cell vertex -> matrix vertex
        matrix = np.zeros((MAX_VERTICES, MAX_VERTICES), dtype=np.int8)
        matrix[np.ix_(place, place)] = cell.array()
        ops = [OPERATIONS[0]] * (MAX_VERTICES - 2)
        ops[: n - 2] = cell.ops[1:-1]
        edges = {name: str(int(bit)) for name, bit in zip(EDGE_PARAMETERS, matrix[_ROWS, _COLS])}
        return {**edges, **dict(zip(OPERATION_PARAMETERS, ops))}

    def from_parameters(self, params: Mapping[str, str]) -> Architecture | None:
        """The pruned, canonical cell of the assignment; ``None`` if NAS-Bench-101 rejects the spec."""
        check_parameters(params, self.parameter_choices())
        matrix = np.zeros((MAX_VERTICES, MAX_VERTICES), dtype=np.int8)
        matrix[_ROWS, _COLS] = [int(params[name]) for name in EDGE_PARAMETERS]
        try:
            return _arch(prune(matrix, (INPUT, *(params[name] for name in OPERATION_PARAMETERS), OUTPUT)))
        except InvalidCellError:
            return None

    # ------------------------------------------------------------------ training
    def build_network(self, arch: Architecture, input_shape: tuple[int, ...], n_outputs: int, *,
                      channels: int = 8, n_cells: int = 1):
        """The NAS-Bench-101 skeleton (:mod:`.network`): stem, three stacks of ``n_cells`` cells
        with ``channels``, ``2 channels``, ``4 channels``, global pooling, linear classifier."""
        from nasviz.spaces.nb101.network import build_nb101_network

        if len(input_shape) != 3:
            raise ConfigError(f"NAS-Bench-101 cells need image inputs (C, H, W); got inputs of shape {tuple(input_shape)}")
        return build_nb101_network(cell_of(arch), channels=channels, n_cells=n_cells, n_classes=n_outputs,
                                   in_channels=input_shape[0])

    def network_defaults(self) -> dict[str, int]:
        """``C = 8``, one cell per stack: a cell trains on 8x8 digits in seconds on a CPU."""
        return {"channels": 8, "n_cells": 1}

    def training_defaults(self) -> dict[str, Any]:
        """Four epochs without early stopping, SGD with NB201's cosine schedule (``bench nb101``'s settings)."""
        return {"epochs": 4, "patience": 4, "lr": 0.05, "batch_size": 64}

    def trainable_on(self) -> frozenset[str]:
        return frozenset({"image"})


#: The space instance (spaces are stateless; :func:`cell_of` memoises conversions).
SPACE = NB101Space()
