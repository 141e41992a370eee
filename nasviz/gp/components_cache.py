"""Kernel components cached across GP fits: :class:`ComponentsCache`.

A BO search refits its GP after every evaluation on a training set that grows by a few
architectures; the kernel's components of the old ones against each other do not change, so
the cache keeps them and computes only the new rows (:mod:`nasviz.gp.model` holds one per GP).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.kernels.base import Components, Kernel


class ComponentsCache:
    """Kernel components over every architecture seen so far, grown one block at a time.

    ``get(archs)`` returns the components of ``archs`` against themselves, shape
    ``(len(archs), len(archs))`` each, computing only the rows of architectures not seen before
    (``kernel.components(new, all)``; the kernel is symmetric, so the columns are their
    transpose). Kernels whose components depend on the whole set (a data-dependent embedding)
    set ``pairwise_components = False`` and are recomputed on every call.
    """

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self._archs: list[Architecture] = []
        self._index: dict[Architecture, int] = {}
        self._store: dict[str, np.ndarray] = {}
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._archs)

    def get(self, archs: Sequence[Architecture]) -> Components:
        archs = list(archs)
        if not getattr(self.kernel, "pairwise_components", True):
            self.misses += len(archs)
            return self.kernel.components(archs, archs)
        new: list[Architecture] = []
        idx = np.empty(len(archs), dtype=np.int64)
        for j, arch in enumerate(archs):
            i = self._index.get(arch)
            if i is None:
                i = self._index[arch] = len(self._archs)
                self._archs.append(arch)
                new.append(arch)
            idx[j] = i
        self.misses += len(new)
        self.hits += len(archs) - len(new)
        if new:
            self._grow(new)
        return {name: M[np.ix_(idx, idx)] for name, M in self._store.items()}

    def _grow(self, new: list[Architecture]) -> None:
        n_total = len(self._archs)
        n_old = n_total - len(new)
        block = self.kernel.components(new, self._archs)  # (n_new, n_total)
        for name, rows in block.items():
            rows = np.asarray(rows, dtype=float)
            old = self._store.get(name)
            capacity = 0 if old is None else old.shape[0]
            if capacity < n_total:
                # Double the capacity so n one-by-one additions cost O(n^2) copies, not O(n^3).
                grown = np.zeros((max(n_total, 2 * capacity), max(n_total, 2 * capacity)))
                if old is not None:
                    grown[:capacity, :capacity] = old
                old = grown
            old[n_old:n_total, :n_total] = rows
            old[:n_total, n_old:n_total] = rows.T
            self._store[name] = old
