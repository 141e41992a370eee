"""The canonical form of a cell and the enumeration of all 423,624 unique cells (NB101 §2.3).

:func:`canonical` maps a cell to the representative of its isomorphism class;
:func:`build_enumeration` lists every unique cell (distinct module hashes over every valid pruned
spec of 2 to 7 vertices) without brute force. :mod:`.cache` keeps the result on disk.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from nasviz.arch import INPUT, OUTPUT
from nasviz.spaces.nb101.cell import (
    _INPUT_LABEL, _OP_INDEX, _OUTPUT_LABEL, MAX_EDGES, MAX_VERTICES, OPERATIONS, NB101Cell, _pairs,
)
from nasviz.spaces.nb101.hashing import module_hash_batch

# -------------------------------------------------------------------------- canonical ordering
# A cell's matrix is encoded as an integer whose bit b is the b-th pair (i, j), i < j, in
# row-major order of the n x n upper triangle, and its ops as the base-3 number of the middle
# vertices' operation indices (first middle vertex most significant). The canonical form of a
# cell is the relabelling of its middle vertices (input and output stay put) that keeps the
# matrix upper triangular and minimises (matrix bits, ops code). The enumeration stores exactly
# this form, so canonical(cell) == cell_of_hash(cell.hash).


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
    if "hash" in cell._cache:  # isomorphic cells share the hash; computed only when asked for
        result._cache["hash"] = cell._cache["hash"]
    return result


# --------------------------------------------------------------------------------- enumeration
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

