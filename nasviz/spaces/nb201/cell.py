"""The NAS-Bench-201 cell space.

A NAS-Bench-201 cell has four nodes (0..3) and an operation on each of the six edges
``i -> j`` (``i < j``). The official string lists, for each target node ``j = 1, 2, 3``, the
operations of its incoming edges with their source index::

    |nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|

Node-labelled DAG. Like NAS-BOWL and the tree-Wasserstein paper, every edge operation becomes a
node, giving an 8-node DAG: node 0 is the cell input, nodes 1..6 are the six operations in string
order -- (0->1), (0->2), (1->2), (0->3), (1->3), (2->3) -- and node 7 is the cell output. An
operation node on edge ``i -> j`` reads the sum of the operations that end at cell node ``i`` (the
input if ``i = 0``) and feeds every operation that starts at ``j`` (the output if ``j = 3``), so the
edges are 0->1, 0->2, 0->4, 1->3, 1->5, 2->6, 3->6, 4->7, 5->7, 6->7.

The :class:`~nasviz.arch.Architecture` returned by :func:`parse` keeps all eight nodes so that
:func:`format` can write the string back. Kernels compare :meth:`Architecture.reduced`, in which
``none`` operations are removed (they output zeros), ``skip_connect`` operations are bypassed
(their inputs are wired straight to their outputs, with multiplicity: the all-``skip_connect``
cell reduces to four parallel input -> output edges, ``4x``) and dead nodes are pruned to a fixed
point; a cell with no path from input to output becomes ``input  output`` with no edge.

Equivalent cells. :func:`canonical_key` is the cell's output written as a sum of terms
(:func:`nasviz.arch.term_expression`): two cells get the same key exactly when they compute the
same function with weights tied term by term. The 15,625 cells form 4,930 such classes; every
class of NAS-Bench-201's own rule (``to_unique_str(consider_zero=True)`` of its reference code,
6,466 classes: it keeps zero terms, so it splits some equivalent cells) lies inside one of them.
Both counts, and that members of a class give the same network output with tied weights, are
tested (``tests/spaces/test_nb201.py``, ``tests/models/test_nb201_net.py``).
"""

from __future__ import annotations

import itertools
from typing import Iterator, Sequence

import numpy as np

from nasviz.arch import INPUT, OUTPUT, Architecture, term_expression

NAME = "nb201"

#: The five operations, in the order NAS-Bench-201 uses.
OPERATIONS: tuple[str, ...] = ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")

#: (source, target) cell nodes of the six edges, in string order.
CELL_EDGES: tuple[tuple[int, int], ...] = ((0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3))

#: Edges of the 8-node operation DAG (see the module docstring).
DAG_EDGES: tuple[tuple[int, int], ...] = tuple(
    sorted(
        [(0, 1 + k) for k, (src, _) in enumerate(CELL_EDGES) if src == 0]
        + [
            (1 + a, 1 + b)
            for a, (_, dst_a) in enumerate(CELL_EDGES)
            for b, (src_b, _) in enumerate(CELL_EDGES)
            if dst_a == src_b
        ]
        + [(1 + k, 7) for k, (_, dst) in enumerate(CELL_EDGES) if dst == 3]
    )
)

N_EDGES = len(CELL_EDGES)
#: The operation DAG, validated once; every cell is this graph with its own labels.
_TEMPLATE = Architecture((INPUT, *["none"] * N_EDGES, OUTPUT), DAG_EDGES)
SPACE_SIZE = len(OPERATIONS) ** N_EDGES  # 15,625


def from_operations(ops: Sequence[str]) -> Architecture:
    """The 8-node DAG of a cell given its six edge operations in string order."""
    if len(ops) != N_EDGES:
        raise ValueError(f"a NAS-Bench-201 cell has {N_EDGES} operations, got {len(ops)}")
    for k, op in enumerate(ops):
        if op not in OPERATIONS:
            raise ValueError(f"unknown operation {op!r} on edge {k} {CELL_EDGES[k]}; expected one of {', '.join(OPERATIONS)}")
    return _TEMPLATE.relabelled((INPUT, *ops, OUTPUT))


def operations(arch: Architecture) -> tuple[str, ...]:
    """The six edge operations of a cell built by :func:`parse` / :func:`from_operations`."""
    if arch.n_nodes != N_EDGES + 2 or arch.edges != DAG_EDGES:
        raise ValueError("not a NAS-Bench-201 cell: expected the fixed 8-node operation DAG")
    return arch.labels[1:-1]


def parse(text: str) -> Architecture:
    """Parse the official string format; raise ``ValueError`` saying what is wrong and where."""
    if not isinstance(text, str):
        raise ValueError(f"expected a NAS-Bench-201 string, got {type(text).__name__}")
    s = text.strip()
    if not s:
        raise ValueError("empty NAS-Bench-201 string")
    nodes = s.split("+")
    if len(nodes) != 3:
        raise ValueError(
            f"NAS-Bench-201 string {s!r} has {len(nodes)} node group(s) separated by '+', expected 3"
        )
    ops: list[str] = []
    for j, group in enumerate(nodes, start=1):
        if not (group.startswith("|") and group.endswith("|")) or len(group) < 2:
            raise ValueError(f"node {j} group {group!r} must start and end with '|'")
        items = group[1:-1].split("|")
        if len(items) != j:
            raise ValueError(f"node {j} must have {j} incoming operation(s), got {len(items)} in {group!r}")
        for i, item in enumerate(items):
            op, sep, src = item.partition("~")
            if not sep:
                raise ValueError(f"node {j}, input {i}: {item!r} is not of the form 'operation~index'")
            if op not in OPERATIONS:
                raise ValueError(
                    f"node {j}, input {i}: unknown operation {op!r}; expected one of {', '.join(OPERATIONS)}"
                )
            if src != str(i):
                raise ValueError(f"node {j}, input {i}: bad input index {src!r}, expected {i}")
            ops.append(op)
    return from_operations(ops)


def format(arch: Architecture) -> str:  # noqa: A001 - mirrors parse(); the module is the namespace
    """The official string of a cell (inverse of :func:`parse`)."""
    ops = operations(arch)
    groups, k = [], 0
    for j in range(1, 4):
        groups.append("|" + "|".join(f"{ops[k + i]}~{i}" for i in range(j)) + "|")
        k += j
    return "+".join(groups)


def canonical_key(arch: Architecture) -> str:
    """The cell's output as a canonical sum of terms, e.g. ``nor_conv_3x3(x)+x`` (module docstring).

    Equal for two cells exactly when they compute the same function with weights tied term by
    term: 4,930 classes on the 15,625 cells.
    """
    operations(arch)  # a NAS-Bench-201 cell, not any DAG
    return term_expression(arch)


def enumerate_all() -> Iterator[Architecture]:
    """All 15,625 cells, in lexicographic order of their operation indices."""
    for ops in itertools.product(OPERATIONS, repeat=N_EDGES):
        yield from_operations(ops)


def sample(rng: np.random.Generator, n: int = 1) -> list[Architecture]:
    """``n`` cells drawn uniformly (with replacement) from the space."""
    idx = rng.integers(0, len(OPERATIONS), size=(n, N_EDGES))
    return [from_operations([OPERATIONS[i] for i in row]) for row in idx]


def neighbours(arch: Architecture) -> list[Architecture]:
    """All 24 cells that differ from ``arch`` in exactly one edge operation."""
    ops = list(operations(arch))
    result = []
    for k in range(N_EDGES):
        for op in OPERATIONS:
            if op != ops[k]:
                result.append(from_operations(ops[:k] + [op] + ops[k + 1 :]))
    return result


def mutate(arch: Architecture, rng: np.random.Generator) -> Architecture:
    """One uniformly random one-step mutation: one edge gets a different operation."""
    ops = list(operations(arch))
    k = int(rng.integers(N_EDGES))
    choices = [op for op in OPERATIONS if op != ops[k]]
    ops[k] = choices[int(rng.integers(len(choices)))]
    return from_operations(ops)
