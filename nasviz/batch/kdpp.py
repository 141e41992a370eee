"""k-DPP sampling (Kulesza & Taskar 2011, Alg. 8; paper 000 Sec. 4.2): elementary symmetric
polynomials of the eigenvalues, the exact eigen-decomposition sampler, exact subset probabilities
for tests, and the rank-deficient fallback the selectors use."""

from __future__ import annotations

from typing import Any

import numpy as np


# ------------------------------------------------------------------ argument checks
def check_k(k: int, m: int) -> int:
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"batch size k must be a positive integer, got {k!r}")
    if k > m:
        raise ValueError(f"batch size k={k} exceeds the pool size {m}")
    return int(k)


def check_cov(cov: np.ndarray, name: str = "cov") -> np.ndarray:
    cov = np.asarray(cov, dtype=float)
    if cov.ndim != 2 or cov.shape[0] != cov.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {cov.shape}")
    if not np.all(np.isfinite(cov)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return 0.5 * (cov + cov.T)


def check_vector(x: np.ndarray, m: int, name: str) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.shape != (m,):
        raise ValueError(f"{name} must have shape ({m},), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return x


# ------------------------------------------------------------------ k-DPPs
def elementary_symmetric_polynomials(eigenvalues: np.ndarray, k: int) -> np.ndarray:
    """Table ``E[l, n] = e_l(lambda_1, ..., lambda_n)`` for ``l = 0..k``, ``n = 0..N``.

    Kulesza & Taskar (2012), Algorithm 7 (the recursion
    ``e_l^n = e_l^{n-1} + lambda_n e_{l-1}^{n-1}``). Shape ``(k + 1, N + 1)``. Vectorised
    over ``l``: the loop is over the ``N`` eigenvalues only.
    """
    lam = np.asarray(eigenvalues, dtype=float)
    n = lam.shape[0]
    E = np.zeros((k + 1, n + 1))
    E[0, :] = 1.0
    for j in range(1, n + 1):
        E[1:, j] = E[1:, j - 1] + lam[j - 1] * E[:-1, j - 1]
    return E


def _sample_eigen_indices(lam: np.ndarray, k: int, rng: np.random.Generator) -> list[int]:
    """Kulesza & Taskar (2012), Algorithm 8: which ``k`` eigenvectors span the sample.

    Eigenvector ``n`` is included with probability ``lambda_n E[l-1, n-1] / E[l, n]`` going
    from ``n = N`` down, where ``l`` is the number still to choose.
    """
    E = elementary_symmetric_polynomials(lam, k)
    chosen: list[int] = []
    remaining = k
    for n in range(len(lam), 0, -1):
        if remaining == 0:
            break
        if n == remaining:  # must take all the rest (avoids 0/0 when E underflows)
            chosen.extend(range(n - 1, -1, -1))
            break
        denom = E[remaining, n]
        p = lam[n - 1] * E[remaining - 1, n - 1] / denom if denom > 0 else 0.0
        if rng.random() < p:
            chosen.append(n - 1)
            remaining -= 1
    return chosen


def _sample_from_eigenvectors(V: np.ndarray, rng: np.random.Generator) -> list[int]:
    """Kulesza & Taskar (2012), Algorithm 1, phase 2: sample one item per column of ``V``.

    ``V`` is ``(M, k)`` with orthonormal columns. Item ``i`` is chosen with probability
    ``||V[i]||^2 / k``; then ``V`` is projected onto the complement of ``e_i`` and
    re-orthonormalised.
    """
    V = V.copy()
    items: list[int] = []
    while V.shape[1] > 0:
        p = np.sum(V**2, axis=1)
        p = np.maximum(p, 0.0)
        p[items] = 0.0  # numerically tiny, but never re-pick
        p /= p.sum()
        i = int(rng.choice(len(p), p=p))
        items.append(i)
        # Eliminate the column with the largest |V[i, j]|, then make every column orthogonal
        # to e_i by subtracting a multiple of it.
        j = int(np.argmax(np.abs(V[i])))
        vj = V[:, j].copy()
        V = np.delete(V, j, axis=1)
        if V.shape[1] == 0:
            break
        V -= np.outer(vj, V[i] / vj[i])
        V, _ = np.linalg.qr(V)
    return items


def sample_kdpp(L: np.ndarray, k: int, rng: np.random.Generator, *, eig: tuple[np.ndarray, np.ndarray] | None = None) -> list[int]:
    """Draw a size-``k`` subset ``A`` with ``P(A) = det(L_A) / e_k(lambda(L))`` exactly.

    Kulesza & Taskar, "k-DPPs: fixed-size determinantal point processes" (ICML 2011):
    eigendecompose ``L`` (``(M, M)``, symmetric p.s.d.), choose ``k`` eigenvectors with
    Algorithm 8 (elementary symmetric polynomials), then sample items from their span
    (Algorithm 1). Not a greedy MAP approximation. Cost ``O(M^3 + M k^2)``.

    Eigenvalues are rescaled by the largest one (``P(A)`` is invariant to scaling ``L``) and
    those below ``1e-12`` of it are treated as zero. Raises ``ValueError`` if ``L`` has fewer
    than ``k`` non-zero eigenvalues (every size-``k`` subset then has probability 0).

    Returns the ``k`` distinct indices in the order they were drawn.
    """
    L = check_cov(L, "L")
    k = check_k(k, L.shape[0])
    lam, vecs = np.linalg.eigh(L) if eig is None else eig
    top = float(lam.max()) if lam.size else 0.0
    if top <= 0:
        raise ValueError("the k-DPP kernel L has no positive eigenvalue")
    lam = lam / top
    lam = np.where(lam > 1e-12, lam, 0.0)
    rank = int(np.count_nonzero(lam))
    if rank < k:
        raise ValueError(f"the k-DPP kernel L has numerical rank {rank} < k={k}: no size-{k} subset has positive probability")
    chosen = _sample_eigen_indices(lam, k, rng)
    return _sample_from_eigenvectors(vecs[:, chosen], rng)


def kdpp_probabilities(L: np.ndarray, k: int) -> dict[tuple[int, ...], float]:
    """Exact ``P(A) = det(L_A) / sum_B det(L_B)`` for every size-``k`` subset (small ``M`` only).

    For tests and teaching: enumerates ``C(M, k)`` subsets, keys are sorted index tuples.
    """
    import itertools

    L = check_cov(L, "L")
    k = check_k(k, L.shape[0])
    subsets = list(itertools.combinations(range(L.shape[0]), k))
    if len(subsets) > 200_000:
        raise ValueError(f"{len(subsets)} subsets: too many to enumerate")
    dets = np.array([max(np.linalg.det(L[np.ix_(s, s)]), 0.0) for s in subsets])
    return dict(zip(subsets, dets / dets.sum()))


def kdpp_with_fallback(
    L: np.ndarray, k: int, rng: np.random.Generator, fallback_order: np.ndarray
) -> tuple[list[int], np.ndarray, dict[str, Any]]:
    """Sample a k-DPP; if ``L``'s numerical rank ``r`` is below ``k``, sample an ``r``-DPP and
    fill the rest in ``fallback_order`` (descending acquisition). Returns indices, the
    eigenvalues of ``L`` (descending) and info."""
    lam, vecs = np.linalg.eigh(L)
    top = float(lam.max()) if lam.size else 0.0
    rank = int(np.count_nonzero(lam > 1e-12 * top)) if top > 0 else 0
    info: dict[str, Any] = {"rank": rank}
    k_dpp = min(k, rank)
    chosen: list[int] = sample_kdpp(L, k_dpp, rng, eig=(lam, vecs)) if k_dpp > 0 else []
    if k_dpp < k:
        # Rank-deficient L (e.g. pool members the kernel cannot tell apart): no size-k subset
        # has positive probability, so the remaining picks follow the acquisition.
        taken = set(chosen)
        extra = [int(i) for i in fallback_order if int(i) not in taken][: k - k_dpp]
        chosen += extra
        info["filled_by_acquisition"] = len(extra)
    return chosen, lam[::-1].copy(), info
