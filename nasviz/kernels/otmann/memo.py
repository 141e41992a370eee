"""Memoised OTMANN distances: program (6) solved once per pair of distinct networks.

:class:`DistanceMemo` keeps, per canonical key (:meth:`Architecture.canonical_key`, equal for
isomorphic reduced graphs), the :class:`~nasviz.kernels.otmann.transport.NetworkSummary` of the
network, and per unordered pair of keys the distance ``d`` for every ``nu_str``. It is pure
memoisation: every value it returns is a function of the pair and the settings alone, bit for
bit, whatever was asked before:

* each pair is solved in one orientation, the smaller canonical key first (the simplex's
  optimum of ``(G1, G2)`` and ``(G2, G1)`` can differ in the last bits);
* a network's layers are put in a canonical order (:meth:`NetworkSummary.canonical`), so two
  numberings of isomorphic graphs give the same arrays whichever arrived first.

A growing training set only solves its new pairs. One lock guards the tables: a kernel (and so
its memo) may be shared between threads, e.g. dashboard sessions.
"""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.kernels.otmann.labels import BUILTIN, LabelTable
from nasviz.kernels.otmann.transport import NetworkSummary, pool_size, solve_pairs_parallel, summarise


class DistanceMemo:
    """OTMANN ``d`` for every ``nu_str`` between architectures, memoised (module docstring).

    ``nus`` ``(K,)``: the ``nu_str`` values; ``zeta``, ``cell_channels``, ``structure``: the
    settings of :func:`~nasviz.kernels.otmann.transport.summarise`; ``n_jobs``,
    ``parallel_min_pairs``: the worker policy of :func:`~nasviz.kernels.otmann.transport.pool_size`;
    ``table``: the labels' kinds and mismatch costs (a space's, or the built-in one).
    """

    def __init__(
        self, nus: Sequence[float], zeta: float, cell_channels: int, structure: str,
        n_jobs: int | None = None, parallel_min_pairs: int = 20000, table: LabelTable = BUILTIN,
    ) -> None:
        self.table = table
        self.nus = np.array(nus, dtype=float)
        self.settings = (float(zeta), int(cell_channels), str(structure))
        self.n_jobs, self.parallel_min_pairs = n_jobs, int(parallel_min_pairs)
        self._lock = threading.RLock()
        self._index: dict[str, int] = {}
        self._keys: list[str] = []
        self._nets: list[NetworkSummary] = []
        # d between memoised networks, (K, cap, cap); NaN = not solved yet
        self._D = np.full((len(self.nus), 0, 0), np.nan)

    def __getstate__(self) -> dict:  # locks do not pickle; a copy gets its own
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._nets)

    def index(self, arch: Architecture) -> int:
        """Row of ``arch`` in the tables (its network is summarised on first sight)."""
        key = arch.canonical_key()
        with self._lock:
            i = self._index.get(key)
            if i is None:
                self._nets.append(summarise(arch, *self.settings, self.table).canonical())
                self._keys.append(key)
                i = self._index[key] = len(self._nets) - 1
            return i

    def summary(self, arch: Architecture) -> NetworkSummary:
        """The network of ``arch`` (layers in canonical order)."""
        with self._lock:
            return self._nets[self.index(arch)]

    def distances(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> np.ndarray:
        """``d`` for every ``nu_str``, shape ``(K, len(archs_a), len(archs_b))``."""
        with self._lock:
            ia = np.array([self.index(a) for a in archs_a], dtype=np.intp)
            ib = np.array([self.index(b) for b in archs_b], dtype=np.intp)
            self._grow()
            self._solve_missing(np.unique(ia), np.unique(ib))
            return self._D[:, ia[:, None], ib[None, :]]

    def _grow(self) -> None:
        """Make room for every memoised network (capacity doubles; the diagonal is 0)."""
        n, old = len(self._nets), self._D.shape[1]
        if old >= n:
            return
        cap = max(n, 2 * old, 16)
        grown = np.full((len(self.nus), cap, cap), np.nan)
        grown[:, :old, :old] = self._D
        grown[:, np.arange(cap), np.arange(cap)] = 0.0
        self._D = grown

    def _solve_missing(self, rows: np.ndarray, cols: np.ndarray) -> None:
        """Solve the pairs of ``rows`` x ``cols`` not memoised yet, each unordered pair once and
        in its canonical orientation."""
        ii, jj = np.nonzero(np.isnan(self._D[0][np.ix_(rows, cols)]))
        if not len(ii):
            return
        lo, hi = np.minimum(rows[ii], cols[jj]), np.maximum(rows[ii], cols[jj])
        cap = self._D.shape[1]
        flat = np.unique(lo * cap + hi)
        pairs = np.stack([flat // cap, flat % cap], axis=1)
        keys = self._keys
        swap = np.fromiter((keys[i] > keys[j] for i, j in pairs), dtype=bool, count=len(pairs))
        pairs[swap] = pairs[swap][:, ::-1]
        workers = pool_size(len(pairs), self.n_jobs, self.parallel_min_pairs)
        values = solve_pairs_parallel(self._nets, self._nets, pairs, self.nus, workers, self.table.mismatch)  # (P, K)
        self._D[:, pairs[:, 0], pairs[:, 1]] = values.T
        self._D[:, pairs[:, 1], pairs[:, 0]] = values.T


__all__ = ["DistanceMemo"]
