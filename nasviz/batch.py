"""Batch selectors: choose B of the M architectures in a candidate pool.

Every selector takes the GP posterior on the pool -- mean ``(M,)`` and the covariance of the
latent function conditioned on the observations ``(M, M)`` (Eqs. (8), (9) of the
tree-Wasserstein paper, 000) -- and returns a :class:`BatchSelection`: the chosen indices plus
the numbers a dashboard needs to explain the choice.

=================  ===========================================================================
``kdpp-quality``   k-DPP on ``L = diag(q) Sigma diag(q)`` (paper 000 Eq. (12), Prop. 2)
``kdpp``           k-DPP on ``Sigma`` alone: pure exploration (Kathuria et al., 2016)
``bucb``           GP-BUCB / Kriging believer: greedy UCB, hallucinating the posterior mean
``thompson``       argmax of B joint posterior draws (Hernandez-Lobato et al., 2017)
``topk``           the B largest acquisition values
``random``         B pool members uniformly at random (a baseline: the pool alone, no selector)
=================  ===========================================================================

Randomness always comes from a ``numpy.random.Generator`` argument; no global state is touched
(the reference k-DPP code reseeded the global generator on every call).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nasviz.gp.posterior import PosteriorSampler, sample_posterior

BATCH_METHODS: tuple[str, ...] = ("kdpp-quality", "kdpp", "bucb", "thompson", "topk", "random")


@dataclass
class BatchSelection:
    """The chosen batch and why.

    Attributes
    ----------
    method : str
        One of :data:`BATCH_METHODS`.
    indices : list of int, length B
        Chosen pool indices, distinct, in the order they were chosen.
    acquisition : ndarray (M,) or None
        Acquisition values on the pool the choice used (UCB, EI, ...).
    qualities : ndarray (M,) or None
        k-DPP quality terms ``q_i`` (``kdpp-quality`` only).
    eigenvalues : ndarray (M,) or None
        Eigenvalues of the k-DPP kernel ``L`` (descending), for the k-DPP methods.
    std_after : ndarray (B, M) or None
        BUCB: posterior standard deviation on the pool just before each pick (row ``b`` is
        after hallucinating the first ``b`` picks) -- shows the variance shrinking.
    draws_argmax : list of int or None
        Thompson: the argmax index of every draw made (duplicates included).
    info : dict
        Extra plain data (temperature, kappa, numerical rank, fallbacks taken).
    """

    method: str
    indices: list[int]
    acquisition: np.ndarray | None = None
    qualities: np.ndarray | None = None
    eigenvalues: np.ndarray | None = None
    std_after: np.ndarray | None = None
    draws_argmax: list[int] | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data (arrays become lists)."""

        def plain(x):
            return None if x is None else np.asarray(x, dtype=float).tolist()

        return {
            "method": self.method,
            "indices": [int(i) for i in self.indices],
            "acquisition": plain(self.acquisition),
            "qualities": plain(self.qualities),
            "eigenvalues": plain(self.eigenvalues),
            "std_after": plain(self.std_after),
            "draws_argmax": None if self.draws_argmax is None else [int(i) for i in self.draws_argmax],
            "info": dict(self.info),
        }


# --------------------------------------------------------------------------- validation
def _check_k(k: int, m: int) -> int:
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"batch size k must be a positive integer, got {k!r}")
    if k > m:
        raise ValueError(f"batch size k={k} exceeds the pool size {m}")
    return int(k)


def _check_cov(cov: np.ndarray, name: str = "cov") -> np.ndarray:
    cov = np.asarray(cov, dtype=float)
    if cov.ndim != 2 or cov.shape[0] != cov.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {cov.shape}")
    if not np.all(np.isfinite(cov)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return 0.5 * (cov + cov.T)


def _check_vector(x: np.ndarray, m: int, name: str) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.shape != (m,):
        raise ValueError(f"{name} must have shape ({m},), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return x


# --------------------------------------------------------------------------- exact k-DPP
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
    L = _check_cov(L, "L")
    k = _check_k(k, L.shape[0])
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

    L = _check_cov(L, "L")
    k = _check_k(k, L.shape[0])
    subsets = list(itertools.combinations(range(L.shape[0]), k))
    if len(subsets) > 200_000:
        raise ValueError(f"{len(subsets)} subsets: too many to enumerate")
    dets = np.array([max(np.linalg.det(L[np.ix_(s, s)]), 0.0) for s in subsets])
    return dict(zip(subsets, dets / dets.sum()))


def _kdpp_with_fallback(
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


# --------------------------------------------------------------------------- selectors
def quality_scores(values: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Quality ``q_i = exp(z_i / temperature)`` with ``z`` the standardised ``values``, ``(M,)``.

    Paper 000 Eq. (12) uses ``q_i = exp(-mu(x_i))`` because it minimises an error; here the
    objective is maximised, so quality must *increase* with predicted performance, and the
    values are standardised over the pool (``z = (v - mean) / std``; all-equal values give
    ``q = 1``) so that the quality/diversity trade-off does not depend on the metric's units.
    Because ``P(A)`` is proportional to ``prod_{i in A} q_i^2 det(Sigma_A)``, a member one
    pool standard deviation better than another is ``exp(2 / temperature)`` times as likely,
    all else equal. The shift by ``max(z)`` only avoids overflow: a k-DPP is invariant to a
    common factor on ``q``.
    """
    if temperature <= 0:
        raise ValueError(f"quality temperature must be positive, got {temperature}")
    v = np.asarray(values, dtype=float)
    sd = float(v.std())
    z = (v - v.mean()) / sd if sd > 0 else np.zeros_like(v)
    return np.exp((z - z.max()) / temperature)


def select_kdpp_quality(
    cov: np.ndarray,
    values: np.ndarray,
    k: int,
    rng: np.random.Generator,
    *,
    temperature: float = 1.0,
    acquisition: np.ndarray | None = None,
    anchor: int | None = None,
) -> BatchSelection:
    """Quality k-DPP (paper 000 Eq. (12), Prop. 2): sample from ``L = diag(q) Sigma diag(q)``.

    ``cov`` ``(M, M)`` is the GP posterior covariance on the pool conditioned on the
    observations (Prop. 2: conditioning the DPP on the training set gives exactly this
    matrix); ``values`` ``(M,)`` are what the quality rewards (the posterior mean or an
    acquisition such as UCB), scaled by :func:`quality_scores`. ``L`` is a *matrix* product:
    the reference implementation multiplied elementwise, which zeroes every off-diagonal
    entry and removes all diversity.

    ``anchor`` (optional) conditions the k-DPP on containing that pool member: the batch is the
    anchor plus a ``(k-1)``-DPP sample from the Schur complement
    ``L' = L_{-a} - L_{-a,a} L_{a,-a} / L_aa`` (Kulesza & Taskar 2012, §2.4: conditioning a DPP on
    inclusion), which is exact, and equals the quality-weighted posterior covariance after
    observing the anchor -- the same conditioning as Prop. 2. The BO strategy anchors on the
    acquisition's argmax so a batch always contains the sequential choice (a deviation from
    paper 000, which samples all ``k``; see :class:`~nasviz.strategies.bo.BayesianOptimisation`).
    """
    cov = _check_cov(cov)
    m = cov.shape[0]
    k = _check_k(k, m)
    values = _check_vector(values, m, "values")
    q = quality_scores(values, temperature)
    L = (q[:, None] * cov) * q[None, :]  # == diag(q) @ cov @ diag(q)
    order = np.argsort(-values, kind="stable")
    if anchor is None:
        chosen, eigenvalues, info = _kdpp_with_fallback(L, k, rng, order)
    else:
        a = int(anchor)
        if not 0 <= a < m:
            raise ValueError(f"anchor {anchor} is outside the pool 0..{m - 1}")
        rest = np.delete(np.arange(m), a)
        eigenvalues = np.linalg.eigvalsh(L)[::-1].copy()
        chosen, info = [a], {}
        if k > 1:
            La = L[a, a] if L[a, a] > 0 else 1e-300
            Lc = L[np.ix_(rest, rest)] - np.outer(L[rest, a], L[a, rest]) / La
            sub, _, info = _kdpp_with_fallback(Lc, k - 1, rng, np.argsort(-values[rest], kind="stable"))
            chosen += [int(rest[i]) for i in sub]
        info["anchor"] = a
    info["temperature"] = temperature
    return BatchSelection(
        "kdpp-quality", chosen, acquisition=values if acquisition is None else acquisition, qualities=q, eigenvalues=eigenvalues, info=info
    )


def select_kdpp(
    cov: np.ndarray, k: int, rng: np.random.Generator, *, acquisition: np.ndarray | None = None
) -> BatchSelection:
    """Plain k-DPP on the posterior covariance ``Sigma`` ``(M, M)`` (Kathuria et al., 2016).

    Pure exploration: ``P(A)`` is proportional to ``det(Sigma_A)``, the volume spanned by the
    batch's posterior uncertainty. ``acquisition`` is only used to fill a rank-deficient pool
    and is reported for the dashboard.
    """
    cov = _check_cov(cov)
    m = cov.shape[0]
    k = _check_k(k, m)
    order = np.argsort(-acquisition, kind="stable") if acquisition is not None else np.argsort(-np.diag(cov), kind="stable")
    chosen, eigenvalues, info = _kdpp_with_fallback(cov, k, rng, order)
    return BatchSelection("kdpp", chosen, acquisition=acquisition, eigenvalues=eigenvalues, info=info)


def condition_on_point(cov: np.ndarray, j: int, noise_variance: float) -> np.ndarray:
    """Posterior covariance after observing pool member ``j`` with noise ``noise_variance``.

    Rank-1 update ``Sigma' = Sigma - Sigma[:, j] Sigma[j, :] / (Sigma[j, j] + noise)``, shape
    ``(M, M)``. This is GP-BUCB's hallucination (Desautels et al., 2014): the covariance does
    not depend on the observed value, and with the value set to the posterior mean (Kriging
    believer) the mean is unchanged, so only the covariance needs updating.
    """
    c = cov[:, j]
    return cov - np.outer(c, c) / (cov[j, j] + noise_variance)


def select_bucb(
    mean: np.ndarray,
    cov: np.ndarray,
    k: int,
    *,
    kappa: float,
    noise_variance: float,
) -> BatchSelection:
    """GP-BUCB / Kriging believer (Desautels et al., 2014; Ginsbourger et al., 2010).

    Pick ``argmax mu + kappa * sigma`` over the pool, hallucinate its observation at the
    posterior mean (mean unchanged, covariance shrunk by :func:`condition_on_point`), repeat
    ``k`` times. ``mean`` ``(M,)``, ``cov`` ``(M, M)`` in the same units as
    ``noise_variance``. Deterministic. ``std_after[b]`` is the standard deviation before pick
    ``b``; the returned ``acquisition`` is the UCB of the first pick.
    """
    cov = _check_cov(cov)
    m = cov.shape[0]
    k = _check_k(k, m)
    mean = _check_vector(mean, m, "mean")
    if noise_variance < 0:
        raise ValueError(f"noise_variance must be non-negative, got {noise_variance}")
    # A tiny floor keeps the hallucinated update defined for noise-free GPs.
    noise = max(float(noise_variance), 1e-10 * max(float(np.mean(np.diag(cov))), 1e-300))
    chosen: list[int] = []
    stds = []
    first_ucb = None
    for _ in range(k):
        std = np.sqrt(np.maximum(np.diag(cov), 0.0))
        stds.append(std)
        ucb = mean + kappa * std
        if first_ucb is None:
            first_ucb = ucb
        ucb = ucb.copy()
        ucb[chosen] = -np.inf
        j = int(np.argmax(ucb))
        chosen.append(j)
        cov = condition_on_point(cov, j, noise)
    return BatchSelection("bucb", chosen, acquisition=first_ucb, std_after=np.array(stds), info={"kappa": kappa, "noise_variance": noise})


#: ``n_draws`` joint samples of ``N(mean, cov)``, shape ``(n_draws, M)``: the project's one
#: sampler, :func:`nasviz.gp.posterior.sample_posterior` (its PSD policy is documented there).
joint_draws = sample_posterior


def select_thompson(
    mean: np.ndarray,
    cov: np.ndarray,
    k: int,
    rng: np.random.Generator,
    *,
    max_draws: int | None = None,
    acquisition: np.ndarray | None = None,
) -> BatchSelection:
    """Parallel Thompson sampling (Hernandez-Lobato et al., 2017) on a discrete pool.

    Draw joint posterior samples ``f ~ N(mean, cov)`` (``(M,)``, ``(M, M)``) and take the
    argmax of each; repeated argmaxes are skipped so the batch is ``k`` distinct members.
    After ``max_draws`` (default ``20 k``) draws without ``k`` distinct winners, the rest are
    filled by the posterior mean (recorded in ``info``). ``cov`` is factorised once by
    :class:`~nasviz.gp.posterior.PosteriorSampler` (the project's PSD policy); the diagonal
    jitter it needed is ``info["jitter"]``.
    """
    cov = _check_cov(cov)
    m = cov.shape[0]
    k = _check_k(k, m)
    mean = _check_vector(mean, m, "mean")
    max_draws = 20 * k if max_draws is None else max_draws
    chosen: list[int] = []
    argmaxes: list[int] = []
    sampler = PosteriorSampler(mean, cov)
    while len(chosen) < k and len(argmaxes) < max_draws:
        draws = sampler.draw(min(k - len(chosen), max_draws - len(argmaxes)), rng)
        for j in np.argmax(draws, axis=1):
            argmaxes.append(int(j))
            if int(j) not in chosen and len(chosen) < k:
                chosen.append(int(j))
    info: dict[str, Any] = {"n_draws": len(argmaxes), "jitter": sampler.jitter}
    if len(chosen) < k:
        extra = [int(i) for i in np.argsort(-mean, kind="stable") if int(i) not in chosen][: k - len(chosen)]
        chosen += extra
        info["filled_by_mean"] = len(extra)
    return BatchSelection("thompson", chosen, acquisition=acquisition, draws_argmax=argmaxes, info=info)


def select_topk(acquisition: np.ndarray, k: int) -> BatchSelection:
    """The ``k`` largest acquisition values ``(M,)`` (ties broken by pool order)."""
    acquisition = np.asarray(acquisition, dtype=float)
    if acquisition.ndim != 1:
        raise ValueError(f"acquisition must be a vector, got shape {acquisition.shape}")
    k = _check_k(k, acquisition.shape[0])
    order = np.argsort(-acquisition, kind="stable")[:k]
    return BatchSelection("topk", [int(i) for i in order], acquisition=acquisition)


def select_random(m: int, k: int, rng: np.random.Generator, *, acquisition: np.ndarray | None = None) -> BatchSelection:
    """``k`` distinct pool members uniformly at random out of ``m`` (the "random batch" baseline)."""
    k = _check_k(k, m)
    return BatchSelection("random", [int(i) for i in rng.choice(m, size=k, replace=False)], acquisition=acquisition)


# ------------------------------------------------------------------------ the uniform interface
@dataclass(frozen=True)
class SelectRequest:
    """What a batch selector gets: the pool's posterior and acquisition, and the batch size.

    ``mean`` ``(M,)``; ``cov`` ``(M, M)`` (``None`` unless the selector's registry entry declares
    ``covariance``); ``acquisition`` ``(M,)``; ``quality_values`` ``(M,)`` what a k-DPP quality
    rewards; ``kappa`` the UCB weight of the previous step (BUCB), ``noise_variance`` the GP's
    observation noise in the metric's units, ``temperature`` / ``anchor`` the quality k-DPP's.
    """

    mean: np.ndarray
    cov: np.ndarray | None
    acquisition: np.ndarray
    k: int
    rng: np.random.Generator
    kappa: float = 0.0
    noise_variance: float = 0.0
    quality_values: np.ndarray | None = None
    temperature: float = 0.5
    anchor: int | None = None


def topk_selector() -> Any:
    """:func:`select_topk` behind the uniform interface (registry entry ``topk``)."""
    return lambda r: select_topk(r.acquisition, r.k)


def random_selector() -> Any:
    """:func:`select_random` behind the uniform interface (registry entry ``random``)."""
    return lambda r: select_random(len(r.acquisition), r.k, r.rng, acquisition=r.acquisition)


def kdpp_quality_selector() -> Any:
    """:func:`select_kdpp_quality` behind the uniform interface (registry entry ``kdpp-quality``)."""
    return lambda r: select_kdpp_quality(r.cov, r.acquisition if r.quality_values is None else r.quality_values, r.k,
                                         r.rng, temperature=r.temperature, acquisition=r.acquisition, anchor=r.anchor)


def kdpp_selector() -> Any:
    """:func:`select_kdpp` behind the uniform interface (registry entry ``kdpp``)."""
    return lambda r: select_kdpp(r.cov, r.k, r.rng, acquisition=r.acquisition)


def bucb_selector() -> Any:
    """:func:`select_bucb` behind the uniform interface (registry entry ``bucb``)."""
    return lambda r: select_bucb(r.mean, r.cov, r.k, kappa=r.kappa, noise_variance=r.noise_variance)


def thompson_selector() -> Any:
    """:func:`select_thompson` behind the uniform interface (registry entry ``thompson``)."""
    return lambda r: select_thompson(r.mean, r.cov, r.k, r.rng, acquisition=r.acquisition)
