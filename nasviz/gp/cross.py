"""A fixed candidate set scored at every BO step, with its kernel components kept between steps.

Exact acquisition maximisation over an enumerable space (a table's 15,625 NAS-Bench-201 cells)
needs the posterior at every candidate after every new observation. The candidates do not
change, and the training set only grows, so the cross components ``k(candidate, train)`` are
computed once per pair: a :class:`CandidateSet` prepares its candidates once
(:meth:`~nasviz.kernels.base.Kernel.prepare_rows`) and adds one column per new training
architecture (:meth:`~nasviz.kernels.base.Kernel.components_prepared`). The posterior is then
one combination of cached components, one triangular solve and one matrix-vector product
(:func:`set_moments`, paper 000 Eqs. (8), (9)), over the *distinct* rows the kernel computes
(6,812 reduced graphs for NAS-Bench-201's 15,625 cells with TW or WL).

Kernels whose components depend on the whole set (``pairwise_components = False``: the edit
kernel's Bourgain embedding) are recomputed against the training set on every call instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
import scipy.linalg as sla

from nasviz.arch import Architecture

if TYPE_CHECKING:
    from nasviz.gp.posterior import TrainingPosterior
    from nasviz.kernels.base import Components, Kernel


class CandidateSet:
    """Candidates ``archs`` (m) and their cached components against every training architecture.

    Parameters
    ----------
    kernel : Kernel
    archs : sequence of Architecture
        The fixed candidates; :attr:`index` ``(m,)`` maps each to one of the :attr:`n_rows`
        distinct rows the kernel computes.
    """

    def __init__(self, kernel: "Kernel", archs: Sequence[Architecture]) -> None:
        self.kernel = kernel
        self.source = archs
        self.rows = kernel.prepare_rows(archs)
        self.cacheable = bool(getattr(kernel, "pairwise_components", True))
        self._columns: dict[Architecture, int] = {}
        self._store: dict[str, np.ndarray] = {}
        self._diagonal: "Components | None" = None

    @property
    def index(self) -> np.ndarray:
        return self.rows.index

    @property
    def n_rows(self) -> int:
        return self.rows.n_rows

    def __len__(self) -> int:
        return len(self.rows.archs)

    def cross(self, train: Sequence[Architecture]) -> "Components":
        """Components of the distinct rows against ``train`` (n): ``(n_rows, n)`` each.

        Columns of architectures seen before are read from the cache; new ones cost one
        :meth:`~nasviz.kernels.base.Kernel.components_prepared` call for all of them together.
        """
        train = list(train)
        if not self.cacheable:
            return self.kernel.components_prepared(self.rows, train)
        new = [a for a in dict.fromkeys(train) if a not in self._columns]
        if new:
            self._grow(new)
        idx = np.fromiter((self._columns[a] for a in train), dtype=np.int64, count=len(train))
        return {name: S[:, idx] for name, S in self._store.items()}

    def _grow(self, new: list[Architecture]) -> None:
        block = self.kernel.components_prepared(self.rows, new)  # (n_rows, len(new))
        start = len(self._columns)
        for j, arch in enumerate(new):
            self._columns[arch] = start + j
        end = len(self._columns)
        for name, cols in block.items():
            old = self._store.get(name)
            capacity = 0 if old is None else old.shape[1]
            if capacity < end:
                # Double the capacity: n one-by-one additions cost O(n) copies of the matrix.
                grown = np.empty((self.n_rows, max(end, 2 * capacity, 16)))
                if old is not None:
                    grown[:, :start] = old[:, :start]
                old = self._store[name] = grown
            old[:, start:end] = cols

    def diagonal(self) -> "Components":
        """Each component of ``k(x, x)`` at the distinct rows, ``(n_rows,)`` each (computed once)."""
        if self._diagonal is None:
            reps = _representatives(self.rows.archs, self.rows.index, self.n_rows)
            diag_fn = getattr(self.kernel, "diagonal_components", None)
            if diag_fn is not None:
                self._diagonal = {k: np.asarray(v, dtype=float) for k, v in diag_fn(reps).items()}
            else:
                parts: dict[str, list[np.ndarray]] = {}
                for lo in range(0, len(reps), 128):
                    block = reps[lo : lo + 128]
                    for name, M in self.kernel.components(block, block).items():
                        parts.setdefault(name, []).append(np.diag(np.asarray(M, dtype=float)))
                self._diagonal = {k: np.concatenate(v) for k, v in parts.items()}
        return self._diagonal


def _representatives(archs: Sequence[Architecture], index: np.ndarray, n_rows: int) -> list[Architecture]:
    """One architecture of each distinct row, in row order."""
    first = np.full(n_rows, -1, dtype=np.int64)
    for i in range(len(index) - 1, -1, -1):
        first[index[i]] = i
    return [archs[i] for i in first]


def set_moments(kernel: "Kernel", post: "TrainingPosterior", cset: CandidateSet) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and variance of ``z`` at every candidate of ``cset``: ``(m,)`` each.

    Paper 000 Eqs. (8), (9) on the distinct rows (R&W Algorithm 2.1): ``mean = K_* alpha``,
    ``var = a k(x, x) - ||L^{-1} K_*^T||^2`` with ``K_* = a K(rows, train)``; then expanded to
    the candidates by :attr:`CandidateSet.index`. Variances are clipped at 0 (round-off).
    """
    a = post.amplitude
    Ks = a * np.asarray(kernel.combine(cset.cross(post.train), post.theta), dtype=float)  # (R, n)
    mean = Ks @ post.alpha
    V = sla.solve_triangular(post.L, Ks.T, lower=True)  # (n, R)
    diag = {k: v[:, None] for k, v in cset.diagonal().items()}
    prior = a * np.asarray(kernel.combine(diag, post.theta), dtype=float).reshape(-1)
    var = np.maximum(prior - np.einsum("ij,ij->j", V, V), 0.0)
    return mean[cset.index], var[cset.index]


__all__ = ["CandidateSet", "set_moments"]
