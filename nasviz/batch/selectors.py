"""The batch selectors: each takes the pool's posterior (and acquisition) and returns a
:class:`BatchSelection`, the chosen indices plus what a dashboard needs to explain the choice."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nasviz.batch.kdpp import check_cov, check_k, check_vector, kdpp_with_fallback
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


# --------------------------------------------------------------------------- exact k-DPP


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
    cov = check_cov(cov)
    m = cov.shape[0]
    k = check_k(k, m)
    values = check_vector(values, m, "values")
    q = quality_scores(values, temperature)
    L = (q[:, None] * cov) * q[None, :]  # == diag(q) @ cov @ diag(q)
    order = np.argsort(-values, kind="stable")
    if anchor is None:
        chosen, eigenvalues, info = kdpp_with_fallback(L, k, rng, order)
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
            sub, _, info = kdpp_with_fallback(Lc, k - 1, rng, np.argsort(-values[rest], kind="stable"))
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
    cov = check_cov(cov)
    m = cov.shape[0]
    k = check_k(k, m)
    order = np.argsort(-acquisition, kind="stable") if acquisition is not None else np.argsort(-np.diag(cov), kind="stable")
    chosen, eigenvalues, info = kdpp_with_fallback(cov, k, rng, order)
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
    cov = check_cov(cov)
    m = cov.shape[0]
    k = check_k(k, m)
    mean = check_vector(mean, m, "mean")
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
    cov = check_cov(cov)
    m = cov.shape[0]
    k = check_k(k, m)
    mean = check_vector(mean, m, "mean")
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
    k = check_k(k, acquisition.shape[0])
    order = np.argsort(-acquisition, kind="stable")[:k]
    return BatchSelection("topk", [int(i) for i in order], acquisition=acquisition)


def select_random(m: int, k: int, rng: np.random.Generator, *, acquisition: np.ndarray | None = None) -> BatchSelection:
    """``k`` distinct pool members uniformly at random out of ``m`` (the "random batch" baseline)."""
    k = check_k(k, m)
    return BatchSelection("random", [int(i) for i in rng.choice(m, size=k, replace=False)], acquisition=acquisition)
