"""Search moves on cells (NAS-BOWL App. C and E.5) and the conversion to and from :class:`Architecture`.

:func:`neighbours` / :func:`mutate` change one vertex's operation or flip one edge, keeping only
results that are valid after pruning and whose hash differs from the parent; plus, by default,
one growth move (see :func:`neighbours` for why).
"""

from __future__ import annotations

import numpy as np

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.spaces.nb101.cell import MAX_EDGES, MAX_VERTICES, OPERATIONS, InvalidCellError, NB101Cell, _pairs, format, prune
from nasviz.spaces.nb101.enumeration import canonical


def to_architecture(cell: NB101Cell) -> Architecture:
    """The project's node-labelled DAG: labels = ``cell.ops``, edges = the matrix's 1 entries."""
    return Architecture(cell.ops, cell.edges)


def from_architecture(arch: Architecture) -> NB101Cell:
    """The pruned cell of a node-labelled DAG whose node 0 is ``input`` and last node ``output``.

    Nodes are put in topological order (an upper-triangular matrix needs one) and then pruned
    as by :func:`prune`, so a DAG with dead nodes or more than 7 nodes is accepted if its
    pruned form is a valid cell. Raises :class:`InvalidCellError` otherwise.
    """
    n = arch.n_nodes
    if arch.labels[0] != INPUT or arch.labels[-1] != OUTPUT:
        raise InvalidCellError(f"node 0 must be {INPUT!r} and node {n - 1} {OUTPUT!r}, got {arch.labels[0]!r} and {arch.labels[-1]!r}")
    if arch.predecessors()[0] or arch.successors()[n - 1]:
        raise InvalidCellError("the input has incoming edges or the output has outgoing edges")
    # Kahn's order with the smallest index first keeps node 0 first and node n-1 last here.
    order = arch.topological_order()
    pos = {node: i for i, node in enumerate(order)}
    m = np.zeros((n, n), dtype=np.int8)
    for u, v in arch.edges:
        m[pos[u], pos[v]] = 1
    return prune(m, [arch.labels[node] for node in order])


def _insert_vertex(m: np.ndarray, ops: tuple[str, ...], u: int, w: int, op: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """A copy with a new vertex labelled ``op`` placed just before ``w`` and wired ``u -> new -> w``."""
    n = m.shape[0]
    grown = np.zeros((n + 1, n + 1), dtype=np.int8)
    old = [i if i < w else i + 1 for i in range(n)]  # old vertex -> new position
    grown[np.ix_(old, old)] = m
    grown[old[u], w] = 1
    grown[w, old[w]] = 1
    return grown, ops[:w] + (op,) + ops[w:]


def _moves(cell: NB101Cell, grow: bool) -> list[list[tuple]]:
    """The candidate moves, grouped by the "dimension" they change (see :func:`mutate`)."""
    n = cell.n_vertices
    dims: list[list[tuple]] = []
    for v in range(1, n - 1):
        dims.append([("op", v, op) for op in OPERATIONS if op != cell.ops[v]])
    for i, j in _pairs(n):
        dims.append([("flip", i, j)])
    if grow and n < MAX_VERTICES and cell.n_edges + 2 <= MAX_EDGES:
        dims.append([("grow", u, w, op) for u, w in _pairs(n) for op in OPERATIONS])
    return dims


def _apply(cell: NB101Cell, move: tuple, parent: NB101Cell | None) -> NB101Cell | None:
    """The canonical cell a move gives, or ``None`` if it is invalid or equal to ``parent`` (the
    canonical form of ``cell``; ``None``: keep every valid child)."""
    m, ops = cell.array(), cell.ops
    kind = move[0]
    try:
        if kind == "op":
            _, v, op = move
            child = NB101Cell(m, ops[:v] + (op,) + ops[v + 1 :])
        elif kind == "flip":
            _, i, j = move
            m[i, j] ^= 1
            child = prune(m, ops)
        else:
            _, u, w, op = move
            child = NB101Cell(*_insert_vertex(m, ops, u, w, op))
    except InvalidCellError:
        return None
    child = canonical(child)
    return None if child == parent else child


def neighbours(cell: NB101Cell, grow: bool = True) -> list[NB101Cell]:
    """The distinct cells one move away, in canonical form, one per isomorphism class.

    Moves (NAS-BOWL App. C, the "standard mutation" of App. E.5: "any node or edge ... is
    randomly changed to any other possible status except its current one"):

    * **op change**: one operation vertex gets one of the two other operations;
    * **edge flip**: one entry ``(i, j)``, ``i < j``, of the cell's matrix is flipped; the result
      is pruned and kept only if valid (output reachable, at most 9 edges);
    * **growth** (``grow=True``, a deviation): a new vertex with any operation wired
      ``u -> new -> w`` for existing ``u < w``, if the cell has fewer than 7 vertices and at most
      7 edges. NAS-BOWL mutates the *unpruned* 7-vertex spec, where a single flip can connect a
      dangling vertex and so enlarge the pruned cell; the cells here are pruned, so without this
      move no mutation could ever add a vertex. Inserting a vertex on a new two-edge path is
      exactly such a flip (the dangling vertex already had its other edge).

    Children isomorphic to the parent are dropped (none arise in practice; the rule is kept as
    stated). ``cell`` itself need not be canonical.

    Cells are compared by their canonical forms, not module hashes: over the valid cells both
    give the same classes (the enumeration counts 423,624 of each), and the hash costs as much
    again as the canonical form, so moves compute no hash.
    """
    own = canonical(cell)
    seen, result = {own}, []
    for dim in _moves(cell, grow):
        for move in dim:
            child = _apply(cell, move, own)
            if child is not None and child not in seen:
                seen.add(child)
                result.append(child)
    return result


def mutate(cell: NB101Cell, rng: np.random.Generator, grow: bool = True, max_tries: int = 200) -> NB101Cell:
    """One random valid move (a member of :func:`neighbours`), chosen as NAS-BOWL's mutation does.

    NAS-BOWL draws a dimension uniformly (an operation vertex, an edge entry) and then a new
    value uniformly among the others, and redraws until the pruned child is valid. The growth
    move counts as one more dimension (its value: a uniform ``(u, w, op)``), so it is drawn
    about as often as a single edge flip. Raises :class:`InvalidCellError` if the cell has no
    valid move (the two-vertex cell with ``grow=False``).

    Unselected, repeated mutation drifts to small cells, because removing an edge often prunes
    vertices: from the two-vertex cell, 4,000 steps after a 1,000-step burn-in spent 87 % of
    the steps at 2-4 vertices and 0.05 % at 7 (against 85 % of all cells). Sampling raw specs
    and pruning them is biased the same way (``nb101_500.csv``, drawn so, holds one 7-vertex
    cell in 500). Use :func:`sample` for uniformly drawn cells.
    """
    dims, own = _moves(cell, grow), canonical(cell)
    for _ in range(max_tries):
        dim = dims[int(rng.integers(len(dims)))] if dims else []
        if not dim:
            break
        child = _apply(cell, dim[int(rng.integers(len(dim)))], own)
        if child is not None:
            return child
    # Rare (or impossible) valid moves: choose among all of them directly.
    options = neighbours(cell, grow)
    if not options:
        raise InvalidCellError(f"no valid mutation of {format(cell)} (grow={grow})")
    return options[int(rng.integers(len(options)))]



def generate(rng: np.random.Generator, n: int) -> list[NB101Cell]:
    """``n`` pruned cells drawn as NAS-BOWL's ``random_sampling`` draws them (paper 002 §5.1).

    Each of the 21 entries above the diagonal of a 7-vertex matrix is 1 with probability 1/2 and
    each of the five middle vertices takes one of the three operations uniformly (the same draw
    as NAS-Bench-101's ``random_spec``); the spec is pruned as NAS-Bench-101 does, and a spec it
    rejects (no input -> output path, more than 9 edges after pruning) is drawn again. The
    two-vertex cell (input wired to output) is kept at most once per call, as NAS-BOWL skips its
    repeats; other repeats are kept, so the result is a sample *with* replacement.

    This is not the uniform distribution over the 423,624 cells (:func:`sample`): pruning
    favours small cells, so NAS-BOWL's Table 1 scores the surrogate on a wider spread of cells
    than a uniform draw gives (``docs/benchmarks.md`` measures both).
    """
    n_pairs = MAX_VERTICES * (MAX_VERTICES - 1) // 2
    rows, cols = np.triu_indices(MAX_VERTICES, k=1)
    cells: list[NB101Cell] = []
    two_vertex_seen = False
    while len(cells) < n:
        matrix = np.zeros((MAX_VERTICES, MAX_VERTICES), dtype=np.int8)
        matrix[rows, cols] = rng.integers(0, 2, n_pairs)
        middle = [OPERATIONS[int(k)] for k in rng.integers(0, len(OPERATIONS), MAX_VERTICES - 2)]
        try:
            cell = prune(matrix, (INPUT, *middle, OUTPUT))
        except InvalidCellError:
            continue
        if len(cell.ops) == 2:
            if two_vertex_seen:
                continue
            two_vertex_seen = True
        cells.append(cell)
    return cells
