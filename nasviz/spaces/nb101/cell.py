"""The NAS-Bench-101 cell space (Ying et al., ICML 2019).

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

Module hash
    :func:`module_hash` is NAS-Bench-101's fingerprint of a labelled DAG (re-implemented from its
    description): an MD5 of iterated in/out-neighbour hashes, equal for isomorphic cells. It is
    the canonical key of the space (:func:`canonical_key`).

Enumeration
    :func:`enumerate_all` lists the 423,624 distinct cells (distinct module hashes over every
    valid pruned spec of 2 to 7 vertices, NAS-Bench-101 §2.3); see :func:`build_enumeration`
    for how they are found without brute force, and :func:`load_enumeration` for the on-disk
    cache (``$NASVIZ_CACHE_DIR``, default ``~/.cache/nasviz``).

Search moves
    :func:`neighbours` / :func:`mutate` follow NAS-BOWL App. C and E.5 (Ru et al., ICLR 2021):
    change one vertex's operation or flip one edge, keeping only results that are valid after
    pruning and whose hash differs from the parent; plus, by default, one growth move (see
    :func:`neighbours` for why).
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from nasviz.arch import INPUT, OUTPUT, Architecture

NAME = "nb101"

CONV3X3 = "conv3x3-bn-relu"
CONV1X1 = "conv1x1-bn-relu"
MAXPOOL3X3 = "maxpool3x3"

#: The three operations, in the order whose indices label vertices in the module hash.
OPERATIONS: tuple[str, ...] = (CONV3X3, CONV1X1, MAXPOOL3X3)

MAX_VERTICES = 7
MAX_EDGES = 9

#: The number of unique cells NAS-Bench-101 reports (its §2.3); :func:`count` computes it.
PUBLISHED_CELL_COUNT = 423_624

#: Environment variable naming the directory of the enumeration cache.
CACHE_ENV = "NASVIZ_CACHE_DIR"
#: Environment variable naming the folder of the shared benchmark tables (``nb101_500.csv``, ...).
SHARED_DATA_ENV = "NASVIZ_SHARED_DATA"

#: Bumped whenever the cache file's content or layout changes, so stale caches are rebuilt.
_CACHE_VERSION = 1

_INPUT_LABEL = -1
_OUTPUT_LABEL = -2
_OP_INDEX = {op: i for i, op in enumerate(OPERATIONS)}


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
    if m.dtype.kind not in "biu" or not np.isin(m, (0, 1)).all():
        bad = sorted({str(x) for x in np.asarray(m).ravel().tolist() if x not in (0, 1)})[:5]
        raise error(f"adjacency entries must be 0 or 1, got {', '.join(bad) or m.dtype}")
    m = m.astype(np.int8)
    lower = np.argwhere(np.tril(m) != 0)
    if len(lower):
        i, j = lower[0]
        raise error(f"the adjacency matrix must be strictly upper triangular: entry ({i}, {j}) is 1")
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


def _on_path(m: np.ndarray) -> np.ndarray:
    """Boolean mask (n,) of the vertices on some input -> output path of upper-triangular ``m``.

    One forward sweep (reachable from the input) and one backward sweep (reaches the output)
    suffice because the vertex order is topological.
    """
    n = m.shape[0]
    from_input = np.zeros(n, dtype=bool)
    from_input[0] = True
    for v in range(1, n):
        from_input[v] = bool((m[:v, v].astype(bool) & from_input[:v]).any())
    to_output = np.zeros(n, dtype=bool)
    to_output[n - 1] = True
    for v in range(n - 2, -1, -1):
        to_output[v] = bool((m[v, v + 1 :].astype(bool) & to_output[v + 1 :]).any())
    return from_input & to_output


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


# ------------------------------------------------------------------------------------ the hash
def _md5(text: str) -> str:
    return hashlib.md5(text.encode("ascii")).hexdigest()


def hash_labels(ops: Sequence[str]) -> list[int]:
    """The vertex labels the module hash uses: -1 input, -2 output, else the index in :data:`OPERATIONS`."""
    return [_INPUT_LABEL] + [_OP_INDEX[op] for op in ops[1:-1]] + [_OUTPUT_LABEL]


def module_hash(matrix: Sequence[Sequence[int]] | np.ndarray, ops: Sequence[str]) -> str:
    """NAS-Bench-101's module hash of a (pruned) spec, as 32 hex digits.

    The rule (NAS-Bench-101's ``hash_module``, from its description):

    1. label each vertex (:func:`hash_labels`) and start from
       ``h_v = md5(str((out_degree_v, in_degree_v, label_v)))``, e.g. ``md5("(2, 0, -1)")``;
    2. ``n`` times (n = number of vertices), update every vertex at once:
       ``h_v = md5("".join(sorted(h_u for u -> v)) + "|" + "".join(sorted(h_w for v -> w)) + "|" + h_v)``;
    3. the fingerprint is ``md5(str(sorted(h)))``, the ``str`` of a Python list of strings.

    Isomorphic cells get equal hashes. The hash of an unpruned spec is computed as given (no
    pruning here): NAS-Bench-101 hashes the pruned spec, so pass a :class:`NB101Cell`'s fields.
    """
    m = np.asarray(matrix, dtype=np.int8)
    n = m.shape[0]
    labels = hash_labels(ops)
    pred = [np.flatnonzero(m[:, v]).tolist() for v in range(n)]
    succ = [np.flatnonzero(m[v, :]).tolist() for v in range(n)]
    # Python ints (len), so that str() of the tuple reads "(2, 0, -1)", not numpy scalar reprs.
    hashes = [_md5(str((len(succ[v]), len(pred[v]), labels[v]))) for v in range(n)]
    for _ in range(n):
        hashes = [
            _md5("".join(sorted(hashes[u] for u in pred[v])) + "|" + "".join(sorted(hashes[w] for w in succ[v])) + "|" + hashes[v])
            for v in range(n)
        ]
    return _md5(str(sorted(hashes)))


def canonical_key(cell: NB101Cell) -> str:
    """The space's canonical key: the module hash (equal for isomorphic cells)."""
    return cell.hash


# -------------------------------------------------------------------------- canonical ordering
# A cell's matrix is encoded as an integer whose bit b is the b-th pair (i, j), i < j, in
# row-major order of the n x n upper triangle, and its ops as the base-3 number of the middle
# vertices' operation indices (first middle vertex most significant). The canonical form of a
# cell is the relabelling of its middle vertices (input and output stay put) that keeps the
# matrix upper triangular and minimises (matrix bits, ops code). The enumeration stores exactly
# this form, so canonical(cell) == cell_of_hash(cell.hash).


@lru_cache(maxsize=None)
def _pairs(n: int) -> tuple[tuple[int, int], ...]:
    return tuple((i, j) for i in range(n) for j in range(i + 1, n))


@lru_cache(maxsize=None)
def _middle_perms(n: int) -> np.ndarray:
    """All vertex permutations fixing 0 and n-1, shape (k!, n), identity first."""
    mids = list(itertools.permutations(range(1, n - 1)))
    return np.array([(0, *p, n - 1) for p in mids], dtype=np.int64).reshape(len(mids), n)


def _matrix_tuple(bits: int, n: int) -> tuple[tuple[int, ...], ...]:
    rows = [[0] * n for _ in range(n)]
    for b, (i, j) in enumerate(_pairs(n)):
        if bits >> b & 1:
            rows[i][j] = 1
    return tuple(map(tuple, rows))


@lru_cache(maxsize=None)
def _ops_of_code(code: int, n: int) -> tuple[str, ...]:
    """The n labels of a base-3 ops code (first middle vertex most significant)."""
    ops = []
    for _ in range(n - 2):
        ops.append(OPERATIONS[code % 3])
        code //= 3
    return (INPUT, *reversed(ops), OUTPUT)


def canonical(cell: NB101Cell) -> NB101Cell:
    """The canonical representative of ``cell``'s isomorphism class (see the comment above).

    Every permutation of the middle vertices is tried (at most 5! = 120), vectorised.
    """
    n = cell.n_vertices
    if n <= 3:
        return cell  # 0 or 1 middle vertex: nothing to permute
    m = cell.array()
    perms = _middle_perms(n)
    # The permuted matrix M'[p(i), p(j)] = M[i, j], i.e. M' = M[p^-1][:, p^-1].
    inv = np.argsort(perms, axis=1)
    permuted = m[inv[:, :, None], inv[:, None, :]]  # (P, n, n)
    upper = ~np.tril(permuted).any(axis=(1, 2))
    pairs = _pairs(n)
    weights = np.array([1 << b for b in range(len(pairs))], dtype=np.int64)
    ii, jj = np.array(pairs).T
    bits = (permuted[:, ii, jj].astype(np.int64) * weights).sum(axis=1)
    op_idx = np.array([_OP_INDEX[op] for op in cell.ops[1:-1]], dtype=np.int64)
    # labels follow their vertex: the op at new position p(i) is the op of old vertex i.
    new_ops = op_idx[inv[:, 1:-1] - 1]
    codes = (new_ops * (3 ** np.arange(n - 3, -1, -1))).sum(axis=1)
    key = np.where(upper, bits * (3 ** (n - 2)) + codes, np.iinfo(np.int64).max)
    best = int(np.argmin(key))
    if best == 0:
        return cell
    ops = (INPUT, *(OPERATIONS[i] for i in new_ops[best]), OUTPUT)
    result = NB101Cell(permuted[best], ops)
    result._cache["hash"] = cell._cache.get("hash") or cell.hash
    return result


# --------------------------------------------------------------------------------- enumeration
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_BAR = ord("|")

try:  # CPython's own MD5: about half the per-call overhead of the OpenSSL wrapper, same digests
    from _md5 import md5 as _fast_md5
except ImportError:  # pragma: no cover - builds without it
    _fast_md5 = hashlib.md5


def _md5_hex_batch(messages: np.ndarray, dedup: bool = False) -> np.ndarray:
    """MD5 hex digests of a 1-D bytes (``S``) array, as an ``S32`` array of the same length.

    Messages never contain NUL bytes, so numpy's ``S`` dtype (which strips trailing NULs)
    returns them exactly. With ``dedup`` equal messages are hashed once; that only pays where
    most messages repeat (sorting long byte strings costs more than hashing them).
    """
    if dedup:
        messages, inverse = np.unique(messages, return_inverse=True)
    digests = np.frombuffer(b"".join([_fast_md5(m).digest() for m in messages.tolist()]), dtype=np.uint8)
    digests = digests.reshape(-1, 16)
    hexes = np.empty((len(digests), 32), dtype=np.uint8)
    hexes[:, 0::2] = _HEX[digests >> 4]
    hexes[:, 1::2] = _HEX[digests & 15]
    out = hexes.view("S32").ravel()
    return out[inverse.ravel()] if dedup else out


def _as_bytes_rows(*blocks: np.ndarray) -> np.ndarray:
    """Concatenate uint8 blocks (each (R, w)) row-wise into one ``S<total>`` string per row."""
    joined = np.ascontiguousarray(np.concatenate(blocks, axis=1))
    return joined.view(f"S{joined.shape[1]}").ravel()


def module_hash_batch(matrices: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """:func:`module_hash` of many cells with the same vertex count, vectorised.

    Parameters
    ----------
    matrices : (R, n, n) 0/1 array
        Upper-triangular adjacency matrices (pruned cells).
    labels : (R, n) int array
        Hash labels (:func:`hash_labels`): -1 input, -2 output, op indices in between.

    Returns an ``(R,)`` array of ``S32`` hex hashes. The same rule as :func:`module_hash`; rows
    are grouped by the in/out-degree of the vertex being updated so that every message in a
    group has the same length and is built with whole-array operations. Only MD5 itself runs
    per message (in the first round once per distinct message: those repeat ~10x).
    """
    adj = np.asarray(matrices).astype(bool)
    labels = np.asarray(labels, dtype=np.int64)
    r, n = labels.shape
    in_deg = adj.sum(axis=1)
    out_deg = adj.sum(axis=2)
    # initial hashes: one MD5 per distinct (out, in, label) triple
    key = (out_deg * 8 + in_deg) * 8 + (labels + 2)
    uniq, inverse = np.unique(key, return_inverse=True)
    first = [_md5(str((int(k) // 64, int(k) // 8 % 8, int(k) % 8 - 2))) for k in uniq]
    h = np.array(first, dtype="S32")[inverse.reshape(r, n)]
    # The grouping and the neighbour indices are the same in every round: compute them once.
    plans = []  # (v, rows, in-neighbour indices (rows, din) or None, out-neighbour indices or None)
    for v in range(n):
        group = in_deg[:, v] * 8 + out_deg[:, v]
        for g in np.unique(group):
            rows = np.flatnonzero(group == g)
            din, dout = int(g) // 8, int(g) % 8
            pred = np.nonzero(adj[rows, :, v])[1].reshape(len(rows), din) if din else None
            succ = np.nonzero(adj[rows, v, :])[1].reshape(len(rows), dout) if dout else None
            plans.append((v, rows, pred, succ))
    bar = np.full((r, 1), _BAR, dtype=np.uint8)
    for t in range(n):
        new = np.empty_like(h)
        for v, rows, pred, succ in plans:
            blocks = []
            for idx in (pred, succ):
                if idx is not None:
                    nb = np.sort(h[rows[:, None], idx], axis=1)
                    blocks.append(nb.view(np.uint8).reshape(len(rows), -1))
                blocks.append(bar[: len(rows)])
            blocks.append(h[rows, v].view(np.uint8).reshape(len(rows), 32))
            # Only the first round's messages repeat much (measured: ~10x at t = 0, <1.2x after).
            new[rows, v] = _md5_hex_batch(_as_bytes_rows(*blocks), dedup=t == 0)
        h = new
    # fingerprint: md5(str(sorted(hashes))) == md5("['h1', 'h2', ...]")
    hs = np.ascontiguousarray(np.sort(h, axis=1)).view(np.uint8).reshape(r, n, 32)
    blocks = [np.frombuffer(b"['", dtype=np.uint8)[None].repeat(r, 0)]
    for v in range(n):
        if v:
            blocks.append(np.frombuffer(b"', '", dtype=np.uint8)[None].repeat(r, 0))
        blocks.append(hs[:, v])
    blocks.append(np.frombuffer(b"']", dtype=np.uint8)[None].repeat(r, 0))
    return _md5_hex_batch(_as_bytes_rows(*blocks))


def _full_dags(n: int) -> np.ndarray:
    """Bit-encoded n-vertex matrices with at most 9 edges whose every vertex is on an input->output path.

    With a topological vertex order, "on a path" is equivalent to: every vertex but the input
    has an in-edge and every vertex but the output has an out-edge (follow in-edges back to
    the only source, out-edges forward to the only sink). Checked on all ``2^(n(n-1)/2)``
    matrices at once with bit masks.
    """
    pairs = _pairs(n)
    allm = np.arange(1 << len(pairs), dtype=np.uint32)
    ok = np.bitwise_count(allm) <= MAX_EDGES
    for v in range(n):
        if v > 0:
            col = sum(1 << b for b, (i, j) in enumerate(pairs) if j == v)
            ok &= (allm & np.uint32(col)) != 0
        if v < n - 1:
            row = sum(1 << b for b, (i, j) in enumerate(pairs) if i == v)
            ok &= (allm & np.uint32(row)) != 0
    return allm[ok]


_BAD = np.uint32(1 << 31)  # flags an image that is not upper triangular (larger than any matrix)


def _perm_tables(n: int) -> np.ndarray:
    """Lookup tables (P, chunks, 256): image bits of each byte of a matrix under each middle permutation.

    The image of bit (i, j) under p is bit (p(i), p(j)), or the flag :data:`_BAD` if p(i) > p(j).
    OR-ing the tables of a matrix's bytes gives its permuted matrix in three lookups.
    """
    pairs = _pairs(n)
    index = {pair: b for b, pair in enumerate(pairs)}
    perms = _middle_perms(n)
    chunks = (len(pairs) + 7) // 8
    byte = np.arange(256, dtype=np.uint32)
    tables = np.zeros((len(perms), chunks, 256), dtype=np.uint32)
    for p, perm in enumerate(perms):
        for b, (i, j) in enumerate(pairs):
            a, c = int(perm[i]), int(perm[j])
            image = _BAD if a > c else np.uint32(1 << index[(a, c)])
            tables[p, b // 8] |= np.where((byte >> (b % 8)) & 1, image, np.uint32(0))
    return tables


def _permute_bits(bits: np.ndarray, table: np.ndarray) -> np.ndarray:
    out = np.zeros_like(bits)
    for c in range(table.shape[0]):
        out |= table[c][(bits >> np.uint32(8 * c)) & np.uint32(255)]
    return out


def _labelled_classes(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Canonical (bits, ops code) of every isomorphism class of valid n-vertex labelled cells.

    1. the valid unlabelled matrices (:func:`_full_dags`) are reduced to canonical
       representatives: the smallest bit code over the middle-vertex permutations that keep the
       matrix upper triangular (images under the other permutations carry the :data:`_BAD` flag
       and so never win);
    2. the automorphisms of each representative are the permutations that map it to itself;
    3. per automorphism group (representatives are grouped by it), a labelling of the middle
       vertices is canonical when its base-3 code is the smallest in its orbit.

    Two labelled cells are isomorphic iff they have the same (bits, code) pair.
    """
    k = n - 2
    dags = _full_dags(n)
    if k <= 0:
        return dags.astype(np.int64), np.zeros(len(dags), dtype=np.int64)
    tables = _perm_tables(n)
    canon = dags.copy()
    for table in tables[1:]:
        np.minimum(canon, _permute_bits(dags, table), out=canon)
    reps = dags[canon == dags]
    autos = np.stack([_permute_bits(reps, table) == reps for table in tables], axis=1)  # (R, P)
    perms = _middle_perms(n)
    inv = np.argsort(perms, axis=1)[:, 1:-1] - 1  # (P, k): old middle index at each new position
    labellings = np.array(list(itertools.product(range(3), repeat=k)), dtype=np.int64).reshape(-1, k)
    powers = 3 ** np.arange(k - 1, -1, -1)
    images = np.stack([(labellings[:, inv[p]] * powers).sum(axis=1) for p in range(len(perms))])  # (P, 3^k)
    all_bits, all_codes = [], []
    groups: dict[bytes, list[int]] = {}
    for r, row in enumerate(autos):
        groups.setdefault(row.tobytes(), []).append(r)
    for members in groups.values():
        group = np.flatnonzero(autos[members[0]])
        orbit_min = images[group].min(axis=0)
        codes = np.flatnonzero(orbit_min == np.arange(len(labellings)))
        all_bits.append(np.repeat(reps[members].astype(np.int64), len(codes)))
        all_codes.append(np.tile(codes, len(members)))
    bits, codes = np.concatenate(all_bits), np.concatenate(all_codes)
    order = np.lexsort((codes, bits))
    return bits[order], codes[order]


def _decode(n: int, bits: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, n, n) matrices and (R, n) hash labels from bit codes and ops codes."""
    pairs = _pairs(n)
    mats = np.zeros((len(bits), n, n), dtype=np.int8)
    for b, (i, j) in enumerate(pairs):
        mats[:, i, j] = (bits >> b) & 1
    labels = np.empty((len(bits), n), dtype=np.int64)
    labels[:, 0], labels[:, -1] = _INPUT_LABEL, _OUTPUT_LABEL
    rest = codes.copy()
    for v in range(n - 2, 0, -1):
        labels[:, v] = rest % 3
        rest //= 3
    return mats, labels


@dataclass(frozen=True, eq=False)  # arrays: compare them explicitly, not with ==
class Enumeration:
    """Every unique NAS-Bench-101 cell, sorted by module hash (N cells).

    Attributes
    ----------
    hashes : (N,) ``S32``
        Module hashes, ascending (so lookups are binary searches).
    n_vertices : (N,) uint8
    bits : (N,) uint32
        Canonical adjacency bit code (bit b = b-th pair (i, j), i < j, of the n x n upper
        triangle in row-major order).
    codes : (N,) uint16
        Canonical ops code (base 3, first middle vertex most significant, digits index
        :data:`OPERATIONS`).
    info : dict
        How the enumeration was obtained: ``isomorphism_classes`` (labelled classes before
        deduplicating by hash; more than N iff the hash collides), ``seconds`` to build,
        ``per_vertex_count``.
    """

    hashes: np.ndarray
    n_vertices: np.ndarray
    bits: np.ndarray
    codes: np.ndarray
    info: dict = field(default_factory=dict, compare=False)

    def __len__(self) -> int:
        return len(self.hashes)

    def cell(self, i: int) -> NB101Cell:
        """The i-th cell (canonical form) with its hash already set."""
        n, bits, code = int(self.n_vertices[i]), int(self.bits[i]), int(self.codes[i])
        return NB101Cell._trusted(_matrix_tuple(bits, n), _ops_of_code(code, n), self.hashes[i].decode("ascii"))

    def index_of_hash(self, h: str) -> int:
        """Position of the cell with module hash ``h``; ``KeyError`` if no cell has it."""
        key = h.strip().lower().encode("ascii") if isinstance(h, str) else bytes(h)
        i = int(np.searchsorted(self.hashes, key))
        if i < len(self.hashes) and self.hashes[i] == key:
            return i
        raise KeyError(f"no NAS-Bench-101 cell has the module hash {h!r}")

    def __contains__(self, h: object) -> bool:
        try:
            self.index_of_hash(h)  # type: ignore[arg-type]
        except (KeyError, UnicodeEncodeError, TypeError):
            return False
        return True


_HASH_CHUNK = 60_000


def build_enumeration(max_vertices: int = MAX_VERTICES) -> Enumeration:
    """Enumerate every unique cell with 2..``max_vertices`` vertices (no cache; see :func:`load_enumeration`).

    NAS-Bench-101 brute-forces all ~500M (matrix, labelling) pairs; here, per vertex count,
    the valid unlabelled DAGs are found with bit masks, reduced to isomorphism classes, labelled
    once per orbit of their automorphism group (:func:`_labelled_classes`), hashed in batches
    (:func:`module_hash_batch`) and deduplicated by hash. ``max_vertices < 7`` gives the
    sub-space used by the tests' brute-force cross-check.
    """
    start = time.perf_counter()
    hashes, nv, bits, codes, per_n = [], [], [], [], {}
    for n in range(2, max_vertices + 1):
        b, c = _labelled_classes(n)
        mats, labels = _decode(n, b, c)
        # in chunks: the message buffers of one round are ~0.5 kB per cell
        hashes.extend(
            module_hash_batch(mats[i : i + _HASH_CHUNK], labels[i : i + _HASH_CHUNK]) for i in range(0, len(b), _HASH_CHUNK)
        )
        nv.append(np.full(len(b), n, dtype=np.uint8))
        bits.append(b)
        codes.append(c)
        per_n[n] = len(b)
    all_hashes = np.concatenate(hashes)
    classes = len(all_hashes)
    # Sort by hash, then by (n, bits, code) so that if two classes ever shared a hash the
    # kept one would be the smallest, deterministically.
    nv_all, bits_all, codes_all = np.concatenate(nv), np.concatenate(bits), np.concatenate(codes)
    order = np.lexsort((codes_all, bits_all, nv_all, all_hashes))
    all_hashes = all_hashes[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = all_hashes[1:] != all_hashes[:-1]
    keep = order[first]
    info = {
        "isomorphism_classes": int(classes),
        "per_vertex_count": {int(k): int(v) for k, v in per_n.items()},
        "seconds": round(time.perf_counter() - start, 2),
        "max_vertices": int(max_vertices),
    }
    return Enumeration(
        all_hashes[first],
        nv_all[keep].astype(np.uint8),
        bits_all[keep].astype(np.uint32),
        codes_all[keep].astype(np.uint16),
        info,
    )


# ------------------------------------------------------------------------------------ the cache
def cache_dir() -> Path:
    """Where the enumeration is cached: ``$NASVIZ_CACHE_DIR``, else ``~/.cache/nasviz``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "nasviz"


def _cache_file(directory: Path) -> Path:
    return directory / f"nb101_cells_v{_CACHE_VERSION}.npz"


def _save(enum: Enumeration, path: Path) -> None:
    """Write atomically (a temporary file renamed into place) so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.stem, suffix=".tmp.npz", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(
                handle,
                version=np.int64(_CACHE_VERSION),
                hashes=enum.hashes,
                n_vertices=enum.n_vertices,
                bits=enum.bits,
                codes=enum.codes,
                info=np.array(json.dumps(enum.info)),
            )
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _load(path: Path) -> Enumeration | None:
    """The cached enumeration, or ``None`` if the file is missing, stale or inconsistent."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if int(data["version"]) != _CACHE_VERSION:
                return None
            info = json.loads(str(data["info"]))
            info["per_vertex_count"] = {int(k): v for k, v in info.get("per_vertex_count", {}).items()}
            enum = Enumeration(data["hashes"], data["n_vertices"], data["bits"], data["codes"], info)
    except (OSError, KeyError, ValueError):
        return None
    n = len(enum.hashes)
    if not (
        n > 0
        and enum.hashes.dtype == np.dtype("S32")
        and len(enum.n_vertices) == len(enum.bits) == len(enum.codes) == n
        and bool(np.all(enum.hashes[1:] > enum.hashes[:-1]))  # sorted and unique
        and int(enum.n_vertices.min()) >= 2
        and int(enum.n_vertices.max()) <= MAX_VERTICES
    ):
        return None
    return enum


_LOADED: dict[Path, Enumeration] = {}


def load_enumeration(directory: str | Path | None = None, refresh: bool = False) -> Enumeration:
    """The full enumeration: from memory, else from the disk cache, else built and cached.

    ``directory`` defaults to :func:`cache_dir`. The file is ``nb101_cells_v1.npz`` (plain numpy
    arrays, read with ``allow_pickle=False``; about 17 MB). A missing, stale or inconsistent file
    is rebuilt (about 25 s on one core, ~230 MB peak); ``refresh`` forces a rebuild. The ``info``
    of the result says ``source`` ("built" or "cache") and ``load_seconds``.
    """
    path = _cache_file(Path(directory).expanduser() if directory is not None else cache_dir())
    if not refresh and path in _LOADED:
        return _LOADED[path]
    start = time.perf_counter()
    enum = None if refresh else _load(path)
    if enum is None:
        enum = build_enumeration()
        _save(enum, path)
        enum.info["source"] = "built"
    else:
        enum.info["source"] = "cache"
    enum.info["load_seconds"] = round(time.perf_counter() - start, 3)
    enum.info["path"] = str(path)
    _LOADED[path] = enum
    return enum


# -------------------------------------------------------------------------------- space API
def enumerate_all() -> Iterator[NB101Cell]:
    """All unique cells (canonical forms), in ascending order of module hash."""
    enum = load_enumeration()
    for i in range(len(enum)):
        yield enum.cell(i)


def count() -> int:
    """The number of unique cells, from the enumeration (NAS-Bench-101 reports 423,624)."""
    return len(load_enumeration())


def index_of_hash(h: str) -> int:
    """Position in :func:`enumerate_all` of the cell with module hash ``h`` (``KeyError`` if none)."""
    return load_enumeration().index_of_hash(h)


def cell_of_hash(h: str) -> NB101Cell:
    """The cell (canonical form) with module hash ``h``; ``KeyError`` if no cell has it."""
    enum = load_enumeration()
    return enum.cell(enum.index_of_hash(h))


def sample(rng: np.random.Generator, n: int = 1) -> list[NB101Cell]:
    """``n`` cells drawn uniformly (with replacement) from the unique cells.

    Uniform over the 423,624 cells, not over raw specs: NAS-Bench-101's own ``random_spec``
    samples raw matrices, which over-weights cells with many raw encodings.
    """
    enum = load_enumeration()
    return [enum.cell(int(i)) for i in rng.integers(0, len(enum), size=n)]


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


def _apply(cell: NB101Cell, move: tuple) -> NB101Cell | None:
    """The canonical cell a move gives, or ``None`` if it is invalid or has the parent's hash."""
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
    return None if child.hash == cell.hash else canonical(child)


def neighbours(cell: NB101Cell, grow: bool = True) -> list[NB101Cell]:
    """The distinct cells one move away, in canonical form, deduplicated by hash.

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

    Children with the parent's hash are dropped (none arise in practice; the rule is kept as
    stated). ``cell`` itself need not be canonical.
    """
    seen, result = {cell.hash}, []
    for dim in _moves(cell, grow):
        for move in dim:
            child = _apply(cell, move)
            if child is not None and child.hash not in seen:
                seen.add(child.hash)
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
    dims = _moves(cell, grow)
    for _ in range(max_tries):
        dim = dims[int(rng.integers(len(dims)))] if dims else []
        if not dim:
            break
        child = _apply(cell, dim[int(rng.integers(len(dim)))])
        if child is not None:
            return child
    # Rare (or impossible) valid moves: choose among all of them directly.
    options = neighbours(cell, grow)
    if not options:
        raise InvalidCellError(f"no valid mutation of {format(cell)} (grow={grow})")
    return options[int(rng.integers(len(options)))]


# --------------------------------------------------------------------------------- the tables
def shared_data_path(name: str) -> Path | None:
    """A shared benchmark file if present (:func:`nasviz.objectives.table.shared_data_path`)."""
    from nasviz.objectives.table import shared_data_path as shared

    return shared(name)


@dataclass(frozen=True)
class ImportResult:
    """What :func:`import_hash_table` did."""

    out_path: Path
    rows_read: int
    rows_joined: int
    unknown_hashes: tuple[str, ...]  # hashes no cell has (the rows were skipped)
    duplicate_hashes: tuple[str, ...]  # later rows of a hash already written (skipped)
    columns: tuple[str, ...]

    def __str__(self) -> str:
        return (
            f"{self.rows_joined} of {self.rows_read} rows joined -> {self.out_path} "
            f"({len(self.unknown_hashes)} unknown hash(es), {len(self.duplicate_hashes)} duplicate(s))"
        )


#: Column renames applied by :func:`import_hash_table`: the table loader reads columns whose
#: name ends in ``_seconds`` as the cost of an evaluation, and ``train_seconds_108`` does not.
HASH_TABLE_RENAMES = {"train_seconds_108": "train_seconds"}


def import_hash_table(
    hash_csv: str | Path,
    out_csv: str | Path,
    hash_column: str = "hash",
    arch_column: str = "arch",
    renames: dict[str, str] | None = None,
) -> ImportResult:
    """Join a table of cells known only by module hash with the enumeration; write a normal table.

    ``hash_csv`` is e.g. ``nb101_hash_20k.csv`` (columns ``hash, valid_accuracy_4, _12, _36,
    _108, train_seconds_108, params``). Every row whose hash names a cell is written to
    ``out_csv`` as ``arch`` (the cell's single-string form, :func:`format`, canonical) followed
    by the other columns in their order and with their text unchanged, renamed by ``renames``
    (default :data:`HASH_TABLE_RENAMES`, so ``train_seconds_108`` becomes the cost column
    ``train_seconds``; that run's budget is still 108 epochs). Rows with an unknown hash and
    repeated hashes are skipped and listed in the result. The parent folder of ``out_csv`` is
    created; the file is replaced atomically. Raises ``ValueError`` if ``hash_column`` is missing
    or ``out_csv`` is ``hash_csv``.
    """
    src, dst = Path(hash_csv), Path(out_csv)
    if dst.resolve() == src.resolve():
        raise ValueError(f"refusing to overwrite the input table {src}")
    renames = HASH_TABLE_RENAMES if renames is None else renames
    enum = load_enumeration()
    with open(src, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None or hash_column not in header:
            raise ValueError(f"{src} has no {hash_column!r} column (header: {header})")
        h_idx = header.index(hash_column)
        others = [k for k, name in enumerate(header) if k != h_idx]
        columns = (arch_column, *(renames.get(header[k], header[k]) for k in others))
        rows, unknown, dupes, seen, read = [], [], [], set(), 0
        for row in reader:
            if not row:
                continue
            read += 1
            h = row[h_idx].strip().lower()
            if h in seen:
                dupes.append(h)
                continue
            try:
                i = enum.index_of_hash(h)
            except (KeyError, UnicodeEncodeError):
                unknown.append(h)
                continue
            seen.add(h)
            rows.append([format(enum.cell(i)), *(row[k] for k in others)])
    dst.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=dst.stem, suffix=".tmp", dir=dst.parent)
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(columns)
            writer.writerows(rows)
        os.replace(tmp, dst)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return ImportResult(dst, read, len(rows), tuple(unknown), tuple(dupes), columns)
