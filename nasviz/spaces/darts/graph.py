"""A DARTS genotype as one node-labelled DAG (:class:`~nasviz.arch.Architecture`).

The kernels compare labelled DAGs, so a genotype's two cells become one graph, laid out as the
first cells of a DARTS network meet (DARTS ``NetworkCIFAR``: the stem feeds the first cell as both
of its inputs, and a reduction cell reads the stem's successor and the normal cell):

==========  ========================================================================
node        what it is
==========  ========================================================================
0           ``input``: the stem
1, 2        the normal cell's ``preprocess`` of its inputs 0 and 1 (DARTS's 1x1
            ReLU-conv-BN); both read the stem
3 .. 10     the normal cell's eight edge operations, in text order
11          ``concat``: the normal cell's output (nodes 2..5 concatenated)
12, 13      the reduction cell's ``preprocess`` of its inputs 0 (the stem) and 1 (node 11)
14 .. 21    the reduction cell's eight edge operations
22          ``output``: the reduction cell's output
==========  ========================================================================

As in NAS-Bench-201 and NAS-BOWL (paper 002 Sec. 5: edge-labelled cells become node-labelled
graphs), each edge operation is a node: an operation on an edge from input 0 or 1 reads that
input's ``preprocess`` node; one from intermediate node ``j`` reads the two operation nodes that
end at ``j`` (their sum); every operation node feeds the cell's output (DARTS concatenates all
four intermediate nodes). A reduction cell's ``skip_connect`` on an edge from its inputs is not an
identity (it halves the resolution: DARTS's ``FactorizedReduce``, two strided 1x1 convolutions),
so that node is labelled :data:`FACTORIZED_REDUCE`: :meth:`Architecture.reduced` bypasses only
true identities. Every other ``skip_connect`` is an identity and is bypassed.

The ``preprocess`` nodes keep inputs 0 and 1 apart, so the graph is one-to-one with the genotype
(:func:`from_architecture` reads it back). Kernels compare the graphs up to isomorphism, and for
the first normal cell, whose two inputs are the same stem, swapping inputs 0 and 1 changes nothing;
the Hamming factor over the categorical parameters still tells such genotypes apart.
"""

from __future__ import annotations

from functools import lru_cache

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.spaces.darts.genotype import CELLS, EDGES_PER_CELL, NODES, Genotype, make

#: Label of the 1x1 ReLU-conv-BN each cell applies to its two inputs.
PREPROCESS = "preprocess"
#: Label of the normal cell's output (the reduction cell's output is the graph's ``output``).
CONCAT = "concat"
#: Label of a reduction cell's ``skip_connect`` from an input (stride 2: not an identity).
FACTORIZED_REDUCE = "factorized_reduce"

#: Nodes per cell in the graph: two preprocess nodes, eight operations, one output.
_CELL_SPAN = 2 + EDGES_PER_CELL + 1
N_NODES = 1 + 2 * _CELL_SPAN  # 23


def _layout(cell: int) -> tuple[int, int, int, int]:
    """Graph node of cell ``cell``'s ``preprocess`` 0 and 1, its first operation, and its output."""
    base = 1 + cell * _CELL_SPAN
    return base, base + 1, base + 2, base + 2 + EDGES_PER_CELL


@lru_cache(maxsize=65_536)
def to_architecture(genotype: Genotype) -> Architecture:
    """The 23-node graph of ``genotype`` (module docstring)."""
    labels = [INPUT] + [""] * (N_NODES - 2) + [OUTPUT]
    edges: list[tuple[int, int]] = []
    for c, cell in enumerate(genotype.cells()):
        pre0, pre1, first, out = _layout(c)
        feeds = (0, 0) if c == 0 else (0, _layout(0)[3])  # what each preprocess node reads
        labels[pre0] = labels[pre1] = PREPROCESS
        edges += [(feeds[0], pre0), (feeds[1], pre1)]
        if c == 0:
            labels[out] = CONCAT
        for i, node in enumerate(cell):
            for e, (op, source) in enumerate(node):
                here = first + 2 * i + e
                reduces = CELLS[c] == "reduce" and source < 2
                labels[here] = FACTORIZED_REDUCE if reduces and op == "skip_connect" else op
                if source < 2:
                    edges.append((pre0 if source == 0 else pre1, here))
                else:
                    j = first + 2 * (source - NODES[0])
                    edges += [(j, here), (j + 1, here)]
                edges.append((here, out))
    return Architecture(tuple(labels), tuple(edges))


@lru_cache(maxsize=65_536)
def from_architecture(arch: Architecture) -> Genotype:
    """The genotype of a graph built by :func:`to_architecture`; ``ValueError`` for any other graph."""
    if arch.n_nodes != N_NODES:
        raise ValueError(f"a DARTS genotype's graph has {N_NODES} nodes, got {arch.n_nodes}")
    preds = arch.predecessors()
    cells = []
    for c in range(len(CELLS)):
        pre0, pre1, first, _out = _layout(c)
        edges = []
        for here in range(first, first + EDGES_PER_CELL):
            label = arch.labels[here]
            op = "skip_connect" if label == FACTORIZED_REDUCE else label
            sources = preds[here]
            if sources == (pre0,):
                source = 0
            elif sources == (pre1,):
                source = 1
            elif len(sources) == 2 and first <= sources[0] < here and sources[1] == sources[0] + 1:
                source = NODES[0] + (sources[0] - first) // 2
            else:
                raise ValueError(f"node {here} of the graph is not a DARTS edge operation (inputs {sources})")
            edges.append((op, source))
        cells.append(edges)
    genotype = make(*cells)
    if to_architecture(genotype) != arch:
        raise ValueError("the graph is not the layout of a DARTS genotype")
    return genotype
