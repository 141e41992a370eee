"""NAS-Bench-101 cells (Ying et al., ICML 2019): the cell model, pruning and the text forms.

A cell is a DAG of at most 7 vertices: vertex 0 is the cell input, vertex ``n - 1`` the cell
output, and every vertex in between carries one of three operations (:data:`OPERATIONS`). Edges
are given by a strictly upper-triangular 0/1 adjacency matrix (so the vertex order is a
topological order) and a cell has at most 9 edges.

Text forms
    The two columns of ``nb101_500.csv``: ``matrix`` = the rows of 0/1 digits joined by ``|``
    (``01100|00011|00001|00001|00000``), ``ops`` = the vertex labels joined by ``,``
    (``input,conv3x3-bn-relu,maxpool3x3,conv1x1-bn-relu,output``). The single-string form used
    for one CSV column is ``"<matrix>;<ops>"``. :func:`parse` reads either; :func:`format`
    writes the single string, :func:`format_matrix` / :func:`format_ops` the two columns.

Pruning
    :func:`prune` is NAS-Bench-101's ``ModelSpec`` pruning: a vertex that is not reachable from
    the input, or from which the output is not reachable, is removed with its edges; if the
    output is not reachable from the input the spec is invalid. The vertex and edge limits are
    checked on the *pruned* spec, as NAS-Bench-101 does. An :class:`NB101Cell` is always a
    pruned, valid cell.

The module hash is in :mod:`.hashing`, the canonical form and the enumeration in
:mod:`.enumeration`, its cache in :mod:`.cache`, the search moves in :mod:`.moves` and the table
import in :mod:`.tables`; the package re-exports all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Sequence

import numpy as np

from nasviz.arch import INPUT, OUTPUT
from nasviz.spaces.nb101.hashing import module_hash
from nasviz.spaces.nb101.ops import (  # noqa: F401 - re-exported: the cell module's names
    _INPUT_LABEL, _OP_INDEX, _OUTPUT_LABEL, CONV1X1, CONV3X3, MAX_EDGES, MAX_VERTICES, MAXPOOL3X3, NAME, OPERATIONS,
    PUBLISHED_CELL_COUNT,
)


class NB101Error(ValueError):
    """Base class of the errors this module raises (a ``ValueError``)."""


class NB101ParseError(NB101Error):
    """Text that is not a well-formed NAS-Bench-101 matrix / ops description."""


class InvalidCellError(NB101Error):
    """A spec that NAS-Bench-101 rejects (after pruning), or a cell that is not pruned."""


# ---------------------------------------------------------------------------------------- cells
def _check_spec(
    matrix: object,
    ops: Sequence[str],
    error: type[NB101Error] = InvalidCellError,
    max_vertices: int | None = MAX_VERTICES,
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Shape, value and label checks shared by raw (unpruned) specs and cells.

    Returns the matrix as an ``(n, n)`` int8 array and the ops as a tuple. Does *not* check
    pruning or the edge limit (those apply to the pruned spec); ``max_vertices=None`` lifts the
    vertex limit for raw specs, which NAS-Bench-101 also only checks after pruning.
    """
    try:
        m = np.asarray(matrix)
    except Exception as exc:  # ragged nested sequences
        raise error(f"the adjacency matrix is not a rectangular array: {exc}") from None
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise error(f"the adjacency matrix must be square, got shape {tuple(m.shape)}")
    n = m.shape[0]
    if n < 2 or (max_vertices is not None and n > max_vertices):
        raise error(f"a cell has 2 to {MAX_VERTICES} vertices, got {n}")
    # (plain comparisons, not np.isin / np.tril: this runs for every cell a search touches)
    if m.dtype.kind not in "biu" or not ((m == 0) | (m == 1)).all():
        bad = sorted({str(x) for x in np.asarray(m).ravel().tolist() if x not in (0, 1)})[:5]
        raise error(f"adjacency entries must be 0 or 1, got {', '.join(bad) or m.dtype}")
    m = m.astype(np.int8)
    rows, cols = _lower_triangle(n)
    if m[rows, cols].any():
        k = int(np.flatnonzero(m[rows, cols])[0])
        raise error(f"the adjacency matrix must be strictly upper triangular: entry ({rows[k]}, {cols[k]}) is 1")
    ops = tuple(ops)
    if len(ops) != n:
        raise error(f"{n} vertices but {len(ops)} operation(s)")
    if ops[0] != INPUT:
        raise error(f"vertex 0 must be {INPUT!r}, got {ops[0]!r}")
    if ops[-1] != OUTPUT:
        raise error(f"vertex {n - 1} (the last) must be {OUTPUT!r}, got {ops[-1]!r}")
    for v, op in enumerate(ops[1:-1], start=1):
        if op not in _OP_INDEX:
            raise error(f"vertex {v}: unknown operation {op!r}; expected one of {', '.join(OPERATIONS)}")
    return m, ops


@lru_cache(maxsize=None)
def _lower_triangle(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the diagonal and below of an ``(n, n)`` matrix."""
    return np.tril_indices(n)


def _on_path(m: np.ndarray) -> np.ndarray:
    """Boolean mask (n,) of the vertices on some input -> output path of upper-triangular ``m``.

    One forward sweep (reachable from the input) and one backward sweep (reaches the output)
    suffice because the vertex order is topological. Plain Python on the nested list: a cell
    has at most 7 vertices, where numpy's per-call overhead would dominate.
    """
    rows = m.tolist()
    n = len(rows)
    from_input = [False] * n
    from_input[0] = True
    for v in range(1, n):
        from_input[v] = any(from_input[u] and rows[u][v] for u in range(v))
    to_output = [False] * n
    to_output[n - 1] = True
    for v in range(n - 2, -1, -1):
        to_output[v] = any(to_output[w] and rows[v][w] for w in range(v + 1, n))
    return np.array([a and b for a, b in zip(from_input, to_output)], dtype=bool)


@dataclass(frozen=True)
class NB101Cell:
    """A valid, pruned NAS-Bench-101 cell.

    Parameters
    ----------
    matrix : tuple of n tuples of n ints (0/1)
        Strictly upper-triangular adjacency; ``matrix[i][j] = 1`` is the edge ``i -> j``.
        Lists and arrays are accepted and stored as tuples.
    ops : tuple of n str
        ``"input"``, then operations from :data:`OPERATIONS`, then ``"output"``.

    Invariants (checked, with a message naming the offending vertex or entry): 2 <= n <= 7,
    at most 9 edges, and every vertex lies on an input -> output path (the cell is pruned; use
    :func:`prune` for raw specs). Equality is that of the representation; two isomorphic
    cells share their :attr:`hash` (and :func:`canonical` maps both to the same cell).
    """

    matrix: tuple[tuple[int, ...], ...]
    ops: tuple[str, ...]
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        m, ops = _check_spec(self.matrix, self.ops)
        alive = _on_path(m)
        if not alive[-1]:
            raise InvalidCellError("the output is not reachable from the input")
        dead = np.flatnonzero(~alive).tolist()
        if dead:
            raise InvalidCellError(
                f"vertex/vertices {dead} not on an input->output path: the cell is not pruned (use prune())"
            )
        edges = int(m.sum())
        if edges > MAX_EDGES:
            raise InvalidCellError(f"{edges} edges; a cell has at most {MAX_EDGES}")
        object.__setattr__(self, "matrix", tuple(tuple(int(x) for x in row) for row in m))
        object.__setattr__(self, "ops", ops)

    @classmethod
    def _trusted(cls, matrix: tuple[tuple[int, ...], ...], ops: tuple[str, ...], h: str | None = None) -> "NB101Cell":
        """Build without validation: only for cells decoded from the (validated) enumeration."""
        cell = object.__new__(cls)
        object.__setattr__(cell, "matrix", matrix)
        object.__setattr__(cell, "ops", ops)
        object.__setattr__(cell, "_cache", {} if h is None else {"hash": h})
        return cell

    @property
    def n_vertices(self) -> int:
        return len(self.ops)

    @property
    def n_edges(self) -> int:
        return sum(map(sum, self.matrix))

    @property
    def edges(self) -> tuple[tuple[int, int], ...]:
        """The edges ``(i, j)`` in row-major order."""
        n = self.n_vertices
        return tuple((i, j) for i in range(n) for j in range(i + 1, n) if self.matrix[i][j])

    def array(self) -> np.ndarray:
        """The adjacency matrix as a new ``(n, n)`` int8 array."""
        return np.array(self.matrix, dtype=np.int8)

    @property
    def hash(self) -> str:
        """NAS-Bench-101's module hash (32 hex digits); see :func:`module_hash`."""
        if "hash" not in self._cache:
            self._cache["hash"] = module_hash(self.matrix, self.ops)
        return self._cache["hash"]

    def __str__(self) -> str:
        return format(self)


def prune(matrix: object, ops: Sequence[str]) -> NB101Cell:
    """NAS-Bench-101's ``ModelSpec`` pruning of a raw spec; raise :class:`InvalidCellError` if invalid.

    ``matrix`` is an ``(n, n)`` strictly upper-triangular 0/1 array-like and ``ops`` its n
    labels. Vertices not reachable from the input or not reaching the output are deleted (rows,
    columns and labels); the spec is invalid if the output is not reachable from the input, or
    if the pruned spec has more than 7 vertices or 9 edges (NAS-Bench-101 checks both limits
    after pruning, so a raw matrix with more edges can still be valid).
    """
    m, ops = _check_spec(matrix, ops, max_vertices=None)
    alive = _on_path(m)
    if not alive[-1]:
        raise InvalidCellError("the output is not reachable from the input: NAS-Bench-101 rejects this spec")
    keep = np.flatnonzero(alive)
    pruned = m[np.ix_(keep, keep)]
    if len(keep) > MAX_VERTICES:
        raise InvalidCellError(f"{len(keep)} vertices after pruning; a cell has at most {MAX_VERTICES}")
    if int(pruned.sum()) > MAX_EDGES:
        raise InvalidCellError(f"{int(pruned.sum())} edges after pruning; a cell has at most {MAX_EDGES}")
    return NB101Cell(pruned, tuple(ops[i] for i in keep))


def is_valid_spec(matrix: object, ops: Sequence[str]) -> bool:
    """Whether NAS-Bench-101 accepts the raw spec (it prunes to a valid cell)."""
    try:
        prune(matrix, ops)
    except NB101Error:
        return False
    return True


# ---------------------------------------------------------------------------------- text forms
def parse_matrix(text: str) -> np.ndarray:
    """Parse ``"011|001|000"`` into an ``(n, n)`` int8 array (shape and 0/1 digits checked)."""
    if not isinstance(text, str):
        raise NB101ParseError(f"expected a matrix string, got {type(text).__name__}")
    rows = text.strip().split("|")
    if rows == [""]:
        raise NB101ParseError("empty matrix string")
    n = len(rows)
    for i, row in enumerate(rows):
        if len(row) != n:
            raise NB101ParseError(f"matrix row {i} {row!r} has {len(row)} digit(s); a {n}-row matrix needs {n}")
        bad = [c for c in row if c not in "01"]
        if bad:
            raise NB101ParseError(f"matrix row {i} {row!r} has a character {bad[0]!r} that is not 0 or 1")
    return np.array([[int(c) for c in row] for row in rows], dtype=np.int8)


def parse_ops(text: str) -> tuple[str, ...]:
    """Parse ``"input,conv3x3-bn-relu,output"`` into a tuple of labels (whitespace stripped)."""
    if not isinstance(text, str):
        raise NB101ParseError(f"expected an ops string, got {type(text).__name__}")
    ops = tuple(op.strip() for op in text.strip().split(","))
    if ops == ("",):
        raise NB101ParseError("empty ops string")
    for k, op in enumerate(ops):
        if not op:
            raise NB101ParseError(f"ops string {text!r}: label {k} is empty")
    return ops


def parse_raw(text: str, ops: str | None = None) -> tuple[np.ndarray, tuple[str, ...]]:
    """Parse a possibly unpruned spec: ``"<matrix>;<ops>"``, or the matrix and ops columns.

    Checks syntax, shape, triangularity and labels (raising :class:`NB101ParseError`) but not
    pruning: feed the result to :func:`prune` (e.g. the ``raw_matrix`` / ``raw_ops`` columns).
    """
    if ops is None:
        if not isinstance(text, str):
            raise NB101ParseError(f"expected a NAS-Bench-101 string, got {type(text).__name__}")
        parts = text.strip().split(";")
        if len(parts) != 2:
            raise NB101ParseError(
                f"NAS-Bench-101 string {text!r} must be '<matrix>;<ops>' (one ';'), found {len(parts) - 1} ';'"
            )
        text, ops = parts
    matrix, labels = parse_matrix(text), parse_ops(ops)
    try:
        return _check_spec(matrix, labels, NB101ParseError, max_vertices=None)
    except NB101ParseError as exc:
        raise NB101ParseError(f"{exc} (in {text!r} / {ops!r})") from None


def parse(text: str, ops: str | None = None) -> NB101Cell:
    """Parse a pruned cell from ``"<matrix>;<ops>"`` or from the ``matrix`` and ``ops`` columns.

    Raises :class:`NB101ParseError` for malformed text and :class:`InvalidCellError` for a
    well-formed spec that is not a valid pruned cell (both are ``ValueError``).
    """
    return NB101Cell(*parse_raw(text, ops))


def format_matrix(matrix: NB101Cell | Sequence[Sequence[int]] | np.ndarray) -> str:
    """The ``matrix`` column text: rows of 0/1 digits joined by ``|``."""
    rows = matrix.matrix if isinstance(matrix, NB101Cell) else np.asarray(matrix).tolist()
    return "|".join("".join(str(int(x)) for x in row) for row in rows)


def format_ops(ops: NB101Cell | Sequence[str]) -> str:
    """The ``ops`` column text: labels joined by ``,``."""
    return ",".join(ops.ops if isinstance(ops, NB101Cell) else ops)


def format(cell: NB101Cell) -> str:  # noqa: A001 - mirrors parse(); the module is the namespace
    """The single-string form ``"<matrix>;<ops>"`` (inverse of :func:`parse`)."""
    return f"{format_matrix(cell)};{format_ops(cell)}"



@lru_cache(maxsize=None)
def _pairs(n: int) -> tuple[tuple[int, int], ...]:
    """The ``(i, j)``, ``i < j``, of an n x n upper triangle in row-major order (the bit order of
    :mod:`.enumeration`'s matrix codes)."""
    return tuple((i, j) for i in range(n) for j in range(i + 1, n))
