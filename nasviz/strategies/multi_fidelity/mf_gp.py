"""A multi-fidelity GP that chooses the architecture and the budget by expected improvement per cost.

The model is one GP over (architecture, budget) pairs with the product kernel of
:class:`~nasviz.kernels.fidelity.FidelityProductKernel` (any architecture kernel, by default the
default strategy's TW 2-gram x Hamming, times an exponential kernel in the budget's log position,
plus an offset per budget), fitted by ML-II to every evaluation at every budget.

Each step scores every candidate pair ``(x, l)`` (a new cell at any budget, or a cell already
evaluated continued to a higher budget) by the **augmented expected improvement** of Huang, Allen,
Notz & Miller (2006, "Sequential kriging optimization using multiple-fidelity evaluations",
Eq. (12)), the expected improvement at the full budget per unit cost::

    AEI(x, l) = EI(x, top) * alpha1(x, l) * alpha2(x, l) * alpha3(l)
    alpha1 = corr[Y_l(x), Y_top(x)]                 (posterior correlation, Eq. (13))
    alpha2 = 1 - sigma_eps / sqrt(s_l^2(x) + sigma_eps^2)      (Eq. (14): measuring again where
                                                     the noise dominates teaches nothing)
    alpha3 = C_top / C_l                             (Eq. (15): the cost ratio)

``EI(x, top)`` is the expected improvement of the posterior at the full budget over the best
full-budget value measured (Jones et al. 1998), ``s_l^2`` and ``sigma_eps^2`` the posterior and
noise variances at budget ``l``, and ``C_l`` the cost of evaluating ``x`` at ``l`` by the
objective's cost model (``l / top`` of a full evaluation from scratch; continuing resumes pay only
the budget added, restarts pay ``l`` again). The strategy does not read a table's cost column for
cells it has not evaluated: every cell's full evaluation costs the same to it.

Two steps. Ranking every pair by ``AEI`` alone spends nearly the whole budget screening new cells
at the lowest budget: ``alpha3`` is 16.7 for NAS-Bench-201's 12 epochs, while a low-budget
evaluation never improves the incumbent, which only full evaluations set (on NAS-Bench-201
CIFAR-10, development seeds 1000-1001, 30 full evaluations: 467 of 469 evaluations at 12 epochs,
mean regret 1.49). So the strategy chooses the **cell** by ``EI(x, top)`` (candidate cells new or
already screened) and that cell's **budget** by ``AEI``: a new cell is screened where the cost ratio
and the correlation make it worth it, a screened cell is continued, and a cell is continued to the
full budget only once it is the most promising one. This is the split of BOCA (Kandasamy et al.
2017, Alg. 1: the point by the full-fidelity acquisition, then the fidelity), with Huang et al.'s
per-cost factors deciding the fidelity.

Deviation: Huang et al. use a hierarchical kriging model with one fidelity above the other; the
product kernel is the form Swersky et al. (2013) and Kandasamy et al. (BOCA, 2017) use, with one
GP over every budget. The search starts with one bracket of successive halving (random cells,
``eta``, :mod:`.brackets`), so the GP sees every budget and at least one full evaluation before it
chooses.

Candidates each step: the cells evaluated below the full budget (continued to each higher budget),
and new cells: the one-edit neighbours (nearest table members on sparse tables) of the ten cells
with the best predicted full-budget value, and uniform samples, ``pool_size`` in all.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
import scipy.linalg as sla

from nasviz.acquisition import expected_improvement
from nasviz.arch import Architecture
from nasviz.candidates import TableNeighbourhood, is_strict_subset, random_pool
from nasviz.errors import ConfigError
from nasviz.fidelity.ladder import FidelityRequest
from nasviz.gp import GaussianProcess
from nasviz.kernels import make_kernel
from nasviz.kernels.fidelity import FidelityPoint, FidelityProductKernel
from nasviz.objectives.base import Evaluation
from nasviz.spaces.base import PARAMETERS
from nasviz.state import GPFit, PoolState, StepState, gp_fit_state
from nasviz.strategies.multi_fidelity.base import FidelityAware
from nasviz.strategies.multi_fidelity.brackets import BracketSearch, default_eta

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace


def augmented_ei(ei_top: np.ndarray, correlation: np.ndarray, variance: np.ndarray, noise: float,
                 cost: np.ndarray) -> np.ndarray:
    """Huang et al. 2006, Eq. (12): ``EI(x, top) * alpha1 * alpha2 * alpha3`` per candidate pair.

    ``ei_top`` (m,) the full-budget EI, ``correlation`` (m,) ``corr[Y_l, Y_top]`` (clipped to
    [0, 1]: a budget that anti-correlates tells nothing we would act on), ``variance`` (m,) the
    posterior variance at ``l`` and ``noise`` the noise variance (same units), ``cost`` (m,) the
    cost of the evaluation in full evaluations (``alpha3 = 1 / cost``)."""
    alpha1 = np.clip(correlation, 0.0, 1.0)
    alpha2 = 1.0 - np.sqrt(noise) / np.sqrt(np.maximum(variance, 0.0) + noise)
    return ei_top * alpha1 * alpha2 / np.maximum(cost, 1e-12)


@dataclass(frozen=True)
class _Scored:
    """Candidate pairs of one step: cell, budget, budget continued from, and their scores (m,)."""

    archs: list[Architecture]
    budgets: np.ndarray
    previous: list[float | None]
    aei: np.ndarray
    ei_top: np.ndarray
    mean_top: np.ndarray
    std_top: np.ndarray
    correlation: np.ndarray


class MultiFidelityGP(FidelityAware):
    """The multi-fidelity GP strategy (module docstring; registry entry ``mf-gp``).

    Parameters
    ----------
    kernel : str
        The architecture kernel (registered name).
    eta : float, optional
        Reduction factor of the initial successive-halving bracket (default: the ladder's).
    pool_size : int
        New cells scored per step.
    min_noise : float
        Lower bound of the GP's noise variance (standardised units; the default strategy's floor).
    n_restarts : int
        L-BFGS-B starts of each GP fit (the previous fit is the first).
    """

    def __init__(self, space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None, *,
                 kernel: str = "tw2g-hamming", eta: float | None = None, pool_size: int = 300,
                 min_noise: float = 1e-3, n_restarts: int = 2, name: str = "mf-gp") -> None:
        if int(pool_size) < 1:
            raise ConfigError(f"pool_size must be at least 1, got {pool_size}")
        self.space, self.seed, self.name = space, int(seed), name
        self.domain = list(domain) if domain is not None else None
        self.rng = np.random.default_rng(seed)
        self.kernel = FidelityProductKernel(make_kernel(kernel, space=space))
        self.kernel_name = kernel
        self.gp = GaussianProcess(self.kernel, transform="standardize", n_restarts=int(n_restarts), seed=seed,
                                  noise_bounds=(float(min_noise), 2.0))
        self.eta_option, self.pool_size = eta, int(pool_size)
        self.initial: BracketSearch | None = None
        self.observations: list[tuple[Architecture, float, float]] = []  # (cell, budget, value)
        self.reached: dict[Architecture, float] = {}
        self.seen: set[Architecture] = set()
        self.failed: set[Architecture] = set()
        self._neighbourhood: TableNeighbourhood | None = None
        if space.provides(PARAMETERS) and is_strict_subset(space, self.domain):
            self._neighbourhood = TableNeighbourhood(space, self.domain)
        self._state = StepState(strategy=name, phase="init")

    def attached(self, objective) -> None:
        self.eta = default_eta(self.ladder, self.eta_option)
        self.initial = BracketSearch(self.space, self.seed, self.domain, mode="successive-halving", eta=self.eta,
                                     max_brackets=1, name=f"{self.name} (initial bracket)")
        self.initial.attach(objective)

    # ------------------------------------------------------------------ protocol
    def ask(self, n: int) -> list[FidelityRequest]:
        if n < 1:
            raise ValueError(f"ask needs n >= 1, got {n}")
        if self.initial is None:
            self.ladder  # raises: not attached
        if not self.initial.finished:
            requests = self.initial.ask(n)
            if requests:
                self.seen.update(r.arch for r in requests)
                self._state = self.initial.state()
                return requests
        requests = self._ask_gp(n)
        self.seen.update(r.arch for r in requests)
        return requests

    def tell(self, evaluations: Sequence[Evaluation]) -> None:
        if self.initial is not None and not self.initial.finished:
            self.initial.tell(evaluations)
            self._state = self.initial.state()
        for ev in evaluations:
            self.seen.add(ev.arch)
            budget = ev.fidelity.fidelity if ev.fidelity is not None else self.ladder.top
            if ev.ok and ev.value is not None and np.isfinite(ev.value):
                self.observations.append((ev.arch, float(budget), float(ev.value)))
                self.reached[ev.arch] = max(self.reached.get(ev.arch, 0.0), float(budget))
            else:
                self.failed.add(ev.arch)

    def state(self) -> StepState:
        return self._state

    # ------------------------------------------------------------------ one GP step
    def _ask_gp(self, n: int) -> list[FidelityRequest]:
        times: dict[str, float] = {}
        t0 = time.perf_counter()
        points = [FidelityPoint(a, self.ladder.position(f)) for a, f, _ in self.observations]
        y = np.array([v for _, _, v in self.observations])
        fit = self.gp.fit(points, y)
        times["fit"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        scored = self._score(self._candidates())
        times["score"] = time.perf_counter() - t1
        chosen = _choose(scored, n)
        requests = [FidelityRequest(scored.archs[i], float(scored.budgets[i]), scored.previous[i]) for i in chosen]
        self._state = self._step_state(requests, gp_fit_state(fit, self.gp, self.kernel.name), scored, chosen, times)
        return requests

    def _candidates(self) -> list[tuple[Architecture, float, float | None]]:
        """``(cell, budget, continued from)`` pairs: continuations of the cells below the full
        budget, and new cells at every budget (module docstring)."""
        values = self.ladder.values
        pairs = [(a, f, r) for a, r in self.reached.items() if a not in self.failed for f in values if f > r]
        exclude = self.seen | self.failed
        new = self._new_cells(exclude)
        pairs.extend((a, f, None) for a in new for f in values)
        return pairs

    def _new_cells(self, exclude: set[Architecture]) -> list[Architecture]:
        """Neighbours of the ten cells the GP rates best at the full budget, then uniform samples."""
        observed = list(self.reached)
        top = self.ladder.position(self.ladder.top)
        mean, _ = self.gp.predict([FidelityPoint(a, top) for a in observed], full_cov=False)
        parents = [observed[i] for i in np.argsort(-mean, kind="stable")[:10]]
        found: dict[Architecture, None] = {}
        for parent in parents:
            near = self.space.neighbours(parent)
            if self._neighbourhood is not None:
                near = list(near) + self._neighbourhood.nearest(parent)
            for child in near:
                if child not in exclude and (self.domain is None or child in self._domain_set):
                    found.setdefault(child, None)
        children = list(found)
        if len(children) > self.pool_size // 2:
            keep = self.rng.choice(len(children), self.pool_size // 2, replace=False)
            children = [children[i] for i in sorted(keep)]
        rest = random_pool(self.space, self.rng, self.pool_size - len(children), exclude=exclude | set(children),
                           domain=self.domain)
        return children + rest

    @property
    def _domain_set(self) -> set[Architecture]:
        if not hasattr(self, "_domain_cache"):
            self._domain_cache = set(self.domain or ())
        return self._domain_cache

    def _score(self, pairs: list[tuple[Architecture, float, float | None]]) -> _Scored:
        """The augmented EI of every pair (Huang et al. 2006, Eq. (12))."""
        archs = [a for a, _, _ in pairs]
        budgets = np.array([f for _, f, _ in pairs], dtype=float)
        u = np.array([self.ladder.position(f) for f in budgets])
        mean_z, var_z, var_top, cov = _pair_moments(self.gp, self.kernel, archs, u)
        u_mean, u_std = self.gp.target_scale
        mean_top = u_mean + u_std * mean_z[1]
        std_top = u_std * np.sqrt(var_top)
        best = max(v for _, f, v in self.observations if f >= self.ladder.top) if any(
            f >= self.ladder.top for _, f, _ in self.observations) else float(np.max(mean_top))
        ei = expected_improvement(mean_top, std_top, best)
        correlation = cov / np.sqrt(np.maximum(var_z * var_top, 1e-300))
        cost = np.array([self.relative_cost(f, p) for _, f, p in pairs])
        aei = augmented_ei(ei, correlation, var_z, self.gp.posterior.noise, cost)
        return _Scored(archs, budgets, [p for _, _, p in pairs], aei, ei, mean_top, std_top, correlation)

    def _step_state(self, requests: list[FidelityRequest], gp: GPFit, scored: _Scored, chosen: list[int],
                    times: dict[str, float]) -> StepState:
        """The pool view shows each candidate cell once, at the budget that scored best for it."""
        best_of: dict[Architecture, int] = {}
        for i, arch in enumerate(scored.archs):
            if arch not in best_of or scored.aei[i] > scored.aei[best_of[arch]]:
                best_of[arch] = i
        rows = list(best_of.values())[: self.pool_size + len(self.reached)]
        fmt = self.space.format
        pool = PoolState(candidates=tuple(fmt(scored.archs[i]) for i in rows),
                         mean=tuple(float(scored.mean_top[i]) for i in rows),
                         std=tuple(float(scored.std_top[i]) for i in rows),
                         acquisition=tuple(float(scored.aei[i]) for i in rows), acquisition_name="aei",
                         origin=tuple(f"{'continue' if scored.previous[i] is not None else 'new'} at "
                                      f"{scored.budgets[i]:g}" for i in rows))
        notes = {"requests": [{"arch": fmt(r.arch), "fidelity": r.fidelity, "previous": r.previous} for r in requests],
                 "chosen": [{"ei_top": float(scored.ei_top[i]), "correlation": float(scored.correlation[i]),
                             "aei": float(scored.aei[i])} for i in chosen],
                 "n_observations": len(self.observations), "ladder": list(self.ladder.values)}
        return StepState(strategy=self.name, phase="mf-gp", proposals=tuple(fmt(r.arch) for r in requests), gp=gp,
                         pool=pool, timings=times, notes=notes)


def _choose(scored: _Scored, n: int) -> list[int]:
    """The ``n`` cells with the highest full-budget EI, each at the budget with its highest
    augmented EI (module docstring, "Two steps"); indices into ``scored``'s pairs."""
    best_pair: dict[Architecture, int] = {}
    for i, arch in enumerate(scored.archs):
        j = best_pair.get(arch)
        if j is None or scored.aei[i] > scored.aei[j]:
            best_pair[arch] = i
    cells = sorted(best_pair, key=lambda a: -scored.ei_top[best_pair[a]])
    return [best_pair[a] for a in cells[:n]]


def _pair_moments(gp: GaussianProcess, kernel: FidelityProductKernel, archs: list[Architecture],
                  u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Posterior (standardised units) of each candidate at its budget ``u`` and at the full budget.

    Returns ``mean_z`` (2, m) (row 0 at ``u``, row 1 at the top), ``var_z`` (m,) at ``u``,
    ``var_top`` (m,) and ``cov`` (m,) between the two: ``a k_prior - v_u . v_top`` with ``v =
    L^{-1} a K(train, x)`` (R&W Algorithm 2.1), the prior covariance between budgets being
    ``k_arch(x, x) exp(-r (1 - u)) + c [u = 1]``.
    """
    post = gp.posterior
    a, theta = post.amplitude, post.theta
    points = [FidelityPoint(x, float(p)) for x, p in zip(archs, u)] + [FidelityPoint(x, 1.0) for x in archs]
    Ks = a * np.asarray(kernel.combine(kernel.components(points, post.train), theta))  # (2m, n)
    mean = (Ks @ post.alpha).reshape(2, -1)
    V = sla.solve_triangular(post.L, Ks.T, lower=True)  # (n, 2m)
    m = len(archs)
    diag = kernel.diagonal_components(points[m:])
    k_top = np.asarray(kernel.combine({k: v[:, None] for k, v in diag.items()}, theta)).reshape(-1)  # (m,)
    rate, offset = theta[-2], theta[-1]
    k_arch = k_top - offset
    same = np.isclose(u, 1.0)
    prior_u = k_arch + offset  # the diagonal at u is the same as at the top
    prior_cov = k_arch * np.exp(-rate * (1.0 - u)) + offset * same
    var_u = np.maximum(a * prior_u - np.einsum("ij,ij->j", V[:, :m], V[:, :m]), 1e-12)
    var_top = np.maximum(a * k_top - np.einsum("ij,ij->j", V[:, m:], V[:, m:]), 1e-12)
    cov = a * prior_cov - np.einsum("ij,ij->j", V[:, :m], V[:, m:])
    return mean, var_u, var_top, cov


__all__ = ["MultiFidelityGP", "augmented_ei"]
