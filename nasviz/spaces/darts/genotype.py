"""DARTS genotypes: the two cells as text, and the moves between them.

A DARTS genotype (Liu et al., DARTS, ICLR 2019, Sec. 2.1; the NAS-Bench-301 space) is a *normal*
and a *reduction* cell. Each cell has two inputs, numbered 0 and 1 (the outputs of the two cells
before it, c_{k-2} and c_{k-1}), and four intermediate nodes numbered 2..5. Intermediate node
``k`` sums two edges; each edge applies one of :data:`OPERATIONS` to an earlier node (0..k-1), and
the two edges of a node read different nodes. The cell's output concatenates nodes 2..5.

Text form, one line (the ``genotype`` column of the shared ``darts_725.csv`` table)::

    normal=[(sep_conv_3x3,0),(dil_conv_3x3,1),...];normal_concat=[2,3,4,5];reduce=[...];reduce_concat=[2,3,4,5]

with the eight edges of a cell in node order (edges 2k-4 and 2k-3 end at node k). The DARTS
code's own ``repr``, ``Genotype(normal=[('sep_conv_3x3', 0), ...], normal_concat=range(2, 6), ...)``,
parses too.

Equality. The two edges of a node are summed, so their order does not matter: :func:`parse` and
every move write a node's edges in increasing order of their input (:func:`canonical_node`), and
two genotypes are the same cell pair exactly when they are equal. This is the sense in which the
table's 725 genotypes are distinct (its README: "even when the order of edges within a node is
ignored").

Moves (:func:`neighbours`): change one edge's operation (6 x 16 = 96 moves), or move one edge to
another input that the node's other edge does not read (24 moves): 120 neighbours per genotype.
:func:`sample` draws uniformly: per node two distinct inputs and two operations, as NASLib's random
DARTS sampler (``sample_random_architecture``) does.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Iterator

import numpy as np

#: DARTS's seven operations (no ``none``: a genotype never keeps the zero operation), in
#: NASLib's index order, which the shared table's README documents.
OPERATIONS: tuple[str, ...] = ("max_pool_3x3", "avg_pool_3x3", "skip_connect", "sep_conv_3x3", "sep_conv_5x5",
                               "dil_conv_3x3", "dil_conv_5x5")
#: The two cells of a genotype, in text order.
CELLS: tuple[str, ...] = ("normal", "reduce")
#: Intermediate nodes of a cell; node ``k`` reads nodes ``0 .. k-1``.
NODES: tuple[int, ...] = (2, 3, 4, 5)
#: The nodes every DARTS cell concatenates into its output.
CONCAT: tuple[int, ...] = NODES
#: Edges per cell (two per intermediate node).
EDGES_PER_CELL = 2 * len(NODES)
#: Genotypes in the space: per cell, each node k picks 2 of its k inputs and 7 x 7 operations
#: (1 x 3 x 6 x 10 x 49^4 = 1,037,664,180); two cells: about 1.08e18.
SPACE_SIZE = math.prod(math.comb(k, 2) * len(OPERATIONS) ** 2 for k in NODES) ** 2

#: One edge: (operation, input node).
Edge = tuple[str, int]
#: One intermediate node: its two edges, in increasing order of input.
Node = tuple[Edge, Edge]
#: One cell: its four intermediate nodes, 2..5.
Cell = tuple[Node, Node, Node, Node]


@dataclass(frozen=True)
class Genotype:
    """A normal and a reduction cell, each node's edges in increasing order of input.

    Build it with :func:`make` (which checks and orders the edges) or :func:`parse`.
    """

    normal: Cell
    reduce: Cell

    def cells(self) -> tuple[Cell, Cell]:
        return (self.normal, self.reduce)

    def edges(self) -> Iterator[tuple[int, int, int, Edge]]:
        """``(cell index, node, edge index 0/1, (op, input))`` for the 16 edges, in text order."""
        for c, cell in enumerate(self.cells()):
            for k, node in zip(NODES, cell):
                for e, edge in enumerate(node):
                    yield c, k, e, edge


class GenotypeError(ValueError):
    """A genotype that is not a DARTS cell pair; the message says which cell, node and edge."""


def canonical_node(cell: str, k: int, edges: list[Edge] | tuple[Edge, ...]) -> Node:
    """Node ``k``'s two edges checked and put in increasing order of input.

    ``GenotypeError`` names the cell and node of an unknown operation, an input outside 0..k-1,
    two edges reading the same node, or a count other than two.
    """
    if len(edges) != 2:
        raise GenotypeError(f"{cell} cell, node {k}: needs 2 edges, got {len(edges)}")
    for op, source in edges:
        if op not in OPERATIONS:
            raise GenotypeError(f"{cell} cell, node {k}: unknown operation {op!r}; expected one of {', '.join(OPERATIONS)}")
        if not 0 <= source < k:
            raise GenotypeError(f"{cell} cell, node {k}: input {source} is not an earlier node (0..{k - 1})")
    if edges[0][1] == edges[1][1]:
        raise GenotypeError(f"{cell} cell, node {k}: both edges read node {edges[0][1]}; DARTS keeps two different inputs")
    a, b = edges
    return (a, b) if a[1] < b[1] else (b, a)


def make(normal: list[Edge], reduce: list[Edge]) -> Genotype:
    """The genotype of two cells given as eight ``(op, input)`` edges each, in node order."""
    cells = []
    for name, edges in zip(CELLS, (normal, reduce)):
        if len(edges) != EDGES_PER_CELL:
            raise GenotypeError(f"{name} cell: needs {EDGES_PER_CELL} edges (two per node 2..5), got {len(edges)}")
        cells.append(tuple(canonical_node(name, k, edges[2 * i: 2 * i + 2]) for i, k in enumerate(NODES)))
    return Genotype(*cells)


# ---------------------------------------------------------------------- text
_CELL_RE = re.compile(r"(normal|reduce)\s*=\s*\[(.*?)\]", re.S)
_CONCAT_RE = re.compile(r"(normal|reduce)_concat\s*=\s*(\[[^\]]*\]|range\(\s*\d+\s*,\s*\d+\s*\))")
_EDGE_RE = re.compile(r"\(\s*'?\"?([A-Za-z0-9_]+)'?\"?\s*,\s*(-?\d+)\s*\)")


def parse(text: str) -> Genotype:
    """The genotype written as ``text`` (module docstring); ``GenotypeError`` says what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise GenotypeError("empty genotype: expected normal=[(op,input),...];normal_concat=[2,3,4,5];reduce=[...];"
                            "reduce_concat=[2,3,4,5]")
    found = {name: body for name, body in _CELL_RE.findall(text)}
    for name in CELLS:
        if name not in found:
            raise GenotypeError(f"no {name}=[...] list of (op,input) edges in {text[:80]!r}")
    for name, concat in _CONCAT_RE.findall(text):
        numbers = [int(x) for x in re.findall(r"\d+", concat)]
        nodes = list(range(*numbers)) if concat.startswith("range") else numbers
        if tuple(nodes) != CONCAT:
            raise GenotypeError(f"{name}_concat is {nodes}; a DARTS cell concatenates nodes {list(CONCAT)}")
    cells = []
    for name in CELLS:
        body = found[name]
        edges = [(op, int(source)) for op, source in _EDGE_RE.findall(body)]
        leftover = _EDGE_RE.sub("", body).replace(",", "").strip()
        if leftover:
            raise GenotypeError(f"{name} cell: cannot read {leftover[:40]!r} as an (op,input) edge")
        cells.append(edges)
    return make(*cells)


def format(genotype: Genotype) -> str:
    """The one-line text of ``genotype`` (inverse of :func:`parse`)."""
    parts = []
    for name, cell in zip(CELLS, genotype.cells()):
        edges = ",".join(f"({op},{source})" for node in cell for op, source in node)
        parts.append(f"{name}=[{edges}];{name}_concat=[{','.join(map(str, CONCAT))}]")
    return ";".join(parts)


# ---------------------------------------------------------------------- moves
def sample(rng: np.random.Generator, n: int = 1) -> list[Genotype]:
    """``n`` genotypes drawn uniformly (two distinct inputs and two operations per node)."""
    out = []
    for _ in range(n):
        cells = []
        for _cell in CELLS:
            nodes = []
            for k in NODES:
                inputs = sorted(int(i) for i in rng.choice(k, size=2, replace=False))
                ops = rng.integers(len(OPERATIONS), size=2)
                nodes.append(((OPERATIONS[ops[0]], inputs[0]), (OPERATIONS[ops[1]], inputs[1])))
            cells.append(tuple(nodes))
        out.append(Genotype(*cells))
    return out


def _replace(genotype: Genotype, c: int, i: int, e: int, edge: Edge) -> Genotype:
    """``genotype`` with edge ``e`` of node ``NODES[i]`` of cell ``c`` set to ``edge``."""
    cells = list(genotype.cells())
    node = list(cells[c][i])
    node[e] = edge
    nodes = list(cells[c])
    nodes[i] = canonical_node(CELLS[c], NODES[i], node)
    cells[c] = tuple(nodes)
    return Genotype(*cells)


def _input_moves(genotype: Genotype) -> list[tuple[int, int, int, int]]:
    """``(cell index, node index, edge index, new input)`` of the 24 moves that rewire one edge."""
    moves = []
    for c, cell in enumerate(genotype.cells()):
        for i, (k, node) in enumerate(zip(NODES, cell)):
            taken = {node[0][1], node[1][1]}
            moves += [(c, i, e, j) for e in (0, 1) for j in range(k) if j not in taken]
    return moves


def neighbours(genotype: Genotype) -> list[Genotype]:
    """The 120 genotypes one move away (module docstring), operation changes first."""
    out = []
    for c, cell in enumerate(genotype.cells()):
        for i, node in enumerate(cell):
            for e, (op, source) in enumerate(node):
                out.extend(_replace(genotype, c, i, e, (other, source)) for other in OPERATIONS if other != op)
    for c, i, e, j in _input_moves(genotype):
        out.append(_replace(genotype, c, i, e, (genotype.cells()[c][i][e][0], j)))
    return out


#: Moves that change one edge's operation: 16 edges x 6 other operations.
_OP_MOVES = 2 * EDGES_PER_CELL * (len(OPERATIONS) - 1)


def mutate(genotype: Genotype, rng: np.random.Generator) -> Genotype:
    """One neighbour drawn uniformly from :func:`neighbours`, without listing them (evolutionary
    pools mutate thousands of parents per step)."""
    inputs = _input_moves(genotype)
    m = int(rng.integers(_OP_MOVES + len(inputs)))
    if m >= _OP_MOVES:
        c, i, e, j = inputs[m - _OP_MOVES]
        return _replace(genotype, c, i, e, (genotype.cells()[c][i][e][0], j))
    edge, which = divmod(m, len(OPERATIONS) - 1)  # the edge in text order, and which other operation
    c, rest = divmod(edge, EDGES_PER_CELL)
    i, e = divmod(rest, 2)
    op, source = genotype.cells()[c][i][e]
    return _replace(genotype, c, i, e, ([o for o in OPERATIONS if o != op][which], source))
