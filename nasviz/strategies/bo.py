"""Bayesian optimisation over architectures: kernel + GP + acquisition + pool + batch selector.

One step (paper 000 Algorithm 1): fit the GP (ML-II hyperparameters) to every successful
evaluation, generate a candidate pool, compute the posterior on the pool, score it with the
acquisition and choose a batch. Each of the four parts is a registered component
(:data:`nasviz.components.KERNELS`, ``POOLS``, ``ACQUISITIONS``, ``BATCH_SELECTORS``) used through
its uniform interface, so a new pool generator or selector plugs in without touching this file.
With ``batch="topk"`` and one proposal per step this is sequential GP-UCB / GP-EI.

What the step did is returned by :meth:`BayesianOptimisation.state` as a typed
:class:`~nasviz.state.StepState` (GP fit, pool with posterior and acquisition, the batch and
why, WL feature gradients when the kernel is WL).

Determinism: every random choice comes from one generator seeded by ``seed`` (and the GP's own
seeded restarts), so the same seed and the same sequence of ``tell`` calls give the same
proposals -- what the run store relies on to resume a run by replay.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from nasviz import candidates
from nasviz.acquisition import kappa_schedule
from nasviz.arch import Architecture
from nasviz.batch import SelectRequest
from nasviz.components import ACQUISITIONS, BATCH_SELECTORS, POOLS
from nasviz.errors import ConfigError
from nasviz.gp import GaussianProcess
from nasviz.kernels import Kernel, make_kernel
from nasviz.objectives.base import Evaluation
from nasviz.state import BatchChoice, FeatureGradients, PoolState, StepState, gp_fit_state

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace

#: WL features kept in a step's state (the largest gradients by magnitude).
MAX_FEATURES = 40


class BayesianOptimisation:
    """GP-based BO with the ask/tell protocol.

    Parameters
    ----------
    space : SearchSpace
        The space searched (sampling, mutation, strings, representations for the kernel).
    seed : int
        Seeds every random choice.
    domain : sequence of Architecture, optional
        Only these architectures are proposed (a table's rows).
    kernel : str or Kernel
        A registered kernel name (``tw2g``, ``wl``, ...; built for ``space``) or an instance.
    kernel_options : mapping, optional
        Options of the named kernel.
    acquisition : str
        A registered acquisition: ``ucb`` (``mu + kappa sigma``, ``kappa = kappa_schedule(beta0,
        t)``, paper 002 App. E.5; ``t`` = BO step) or ``ei`` (expected improvement over the best
        observation).
    pool : str
        A registered candidate-pool generator (:mod:`nasviz.candidates`).
    batch : str
        A registered batch selector (:mod:`nasviz.batch`); with one proposal per step ``topk`` is
        the acquisition's argmax.
    batch_size : int
        Proposals per step the strategy is designed for (the runner's ``batch_size``); ``ask(n)``
        honours any ``n``.
    n_init : int
        Uniformly random proposals before the first GP fit (10 in papers 000 and 002).
    pool_size : int
        Candidates per step (100, paper 000).
    transform : str
        GP target transform (``"standardize"``, ``"log_error"``, ``"none"``).
    beta0 : float
        UCB exploration scale.
    quality_temperature : float
        Temperature of the k-DPP quality ``q = exp(z / T)``, ``z`` the quality values
        standardised over the pool (:func:`nasviz.batch.quality_scores`). Default 0.5.
    quality : {"mean", "acquisition"}
        What the k-DPP quality rewards. ``"mean"`` (default) follows paper 000 Eq. (12): quality
        from the posterior mean, while exploration comes from the posterior covariance in
        ``det(Sigma_A)``. ``"acquisition"`` uses UCB/EI, which counts the variance twice
        (measurements in ``docs/benchmarks.md``).
    kdpp_anchor : bool
        Quality k-DPP only: condition the sample on containing the acquisition's argmax (see
        :func:`nasviz.batch.select_kdpp_quality`).
    top_parents : int
        Parents for mutation pools: the best observed architectures (10, paper 002 App. E.2).
    n_restarts : int
        L-BFGS-B starts of each GP fit.
    name : str, optional
        How the strategy is called in runs and tables (default ``bo-<kernel>-...``).
    """

    def __init__(
        self,
        space: "SearchSpace",
        seed: int = 0,
        domain: Sequence[Architecture] | None = None,
        *,
        kernel: str | Kernel = "tw2g",
        kernel_options: Mapping[str, Any] | None = None,
        acquisition: str = "ucb",
        pool: str = "evolution",
        batch: str = "topk",
        batch_size: int = 1,
        n_init: int = 10,
        pool_size: int = 100,
        transform: str = "standardize",
        beta0: float = 1.5,
        quality_temperature: float = 0.5,
        quality: str = "mean",
        kdpp_anchor: bool = False,
        top_parents: int = 10,
        n_restarts: int = 3,
        name: str | None = None,
    ) -> None:
        for label, value in (("batch_size", batch_size), ("n_init", n_init), ("pool_size", pool_size),
                             ("top_parents", top_parents)):
            if int(value) < 1:
                raise ConfigError(f"{label} must be at least 1, got {value}")
        if quality not in ("acquisition", "mean"):
            raise ConfigError(f"quality must be 'acquisition' or 'mean', got {quality!r}")
        self.space = space
        self.kernel_name = kernel if isinstance(kernel, str) else kernel.name
        self.kernel = make_kernel(kernel, space=space, **dict(kernel_options or {})) if isinstance(kernel, str) else kernel
        self.acquisition = acquisition
        self._acquisition_fn = ACQUISITIONS.create(acquisition)
        self.pool_method = pool
        self._pool_generator = POOLS.create(pool)
        self.batch_method = batch
        self._selector = BATCH_SELECTORS.create(batch)
        self._needs_cov = bool(BATCH_SELECTORS.get(batch).capabilities.get("covariance"))
        self.batch_size = int(batch_size)
        self.n_init = int(n_init)
        self.seed = int(seed)
        self.pool_size = int(pool_size)
        self.beta0 = float(beta0)
        self.quality_temperature = float(quality_temperature)
        self.quality = quality
        self.kdpp_anchor = bool(kdpp_anchor)
        self.top_parents = int(top_parents)
        self.name = name or f"bo-{self.kernel_name}-{acquisition}-{pool}-{batch}{self.batch_size}"
        self.rng = np.random.default_rng(seed)
        self.gp = GaussianProcess(self.kernel, transform=transform, n_restarts=n_restarts, seed=seed)
        self.domain = list(domain) if domain is not None else None
        self._domain_set = set(self.domain) if self.domain is not None else None
        # One instance per distinct architecture: Architecture caches its reduced graph per
        # instance, so re-using instances across steps saves the kernels recomputing it.
        self._instances: dict[Architecture, Architecture] = {a: a for a in self.domain} if self.domain is not None else {}
        self.observed: list[tuple[Architecture, float]] = []
        self.seen: set[Architecture] = set()
        self._pending: set[Architecture] = set()
        self._n_bo_steps = 0
        self._state = StepState(strategy=self.name, phase="init")

    # ------------------------------------------------------------------ protocol
    def ask(self, n: int) -> list[Architecture]:
        if n < 1:
            raise ValueError(f"ask needs n >= 1, got {n}")
        if len(self.observed) + len(self._pending) < self.n_init or len(self.observed) < 2:
            proposals = self._ask_random(n)
        else:
            proposals = self._ask_bo(n)
        self.seen.update(proposals)
        self._pending.update(proposals)
        return proposals

    def tell(self, evaluations: Sequence[Evaluation]) -> None:
        for ev in evaluations:
            self.seen.add(ev.arch)
            self._pending.discard(ev.arch)
            if ev.ok and ev.value is not None and np.isfinite(ev.value):
                self.observed.append((ev.arch, float(ev.value)))

    def state(self) -> StepState:
        return self._state

    # ------------------------------------------------------------------ steps
    def _ask_random(self, n: int) -> list[Architecture]:
        proposals = candidates.random_pool(self.space, self.rng, n, exclude=self.seen, domain=self.domain)
        self._state = StepState(strategy=self.name, phase="init", proposals=tuple(self.space.format(a) for a in proposals))
        return proposals

    def _mutate(self, arch: Architecture, rng: np.random.Generator) -> Architecture:
        child = self.space.mutate(arch, rng)
        return self._instances.setdefault(child, child)

    def _parents(self) -> list[Architecture]:
        order = sorted(range(len(self.observed)), key=lambda i: -self.observed[i][1])
        return [self.observed[i][0] for i in order[: self.top_parents]]

    def _feature_gradients(self) -> FeatureGradients | None:
        """WL feature gradients (paper 002 Eq. 3.2) of the fitted GP over the observations, when
        the kernel is WL (``None`` otherwise or when they cannot be computed)."""
        from nasviz.interpret import supports_feature_gradients, wl_feature_gradients

        if not supports_feature_gradients(self.gp):
            return None
        try:
            fg = wl_feature_gradients(self.gp, [a for a, _ in self.observed])
        except (ValueError, np.linalg.LinAlgError):
            return None
        keep = np.argsort(-np.abs(fg.mean_gradient), kind="stable")[:MAX_FEATURES]
        return FeatureGradients(tuple(fg.names[i] for i in keep), tuple(float(fg.mean_gradient[i]) for i in keep), int(fg.h))

    def _op_gradients(self) -> dict[str, float] | None:
        """Mean derivative of the posterior mean w.r.t. each operation's h=0 WL feature (WL only)."""
        from nasviz.interpret import operation_gradients, supports_feature_gradients

        if not supports_feature_gradients(self.gp):
            return None
        try:
            return operation_gradients(self.gp, [a for a, _ in self.observed])
        except (ValueError, np.linalg.LinAlgError):
            return None  # the pool falls back to uniform mutation and records it

    def _ask_bo(self, n: int) -> list[Architecture]:
        times: dict[str, float] = {}
        t0 = time.perf_counter()
        y = np.array([v for _, v in self.observed])
        fit = self.gp.fit([a for a, _ in self.observed], y)
        times["fit"] = time.perf_counter() - t0
        best = float(y.max())
        kappa = kappa_schedule(self.beta0, self._n_bo_steps) if self.acquisition == "ucb" else 0.0
        self._n_bo_steps += 1

        def score(cands: Sequence[Architecture]) -> np.ndarray:
            mean, std = self.gp.predict(cands, full_cov=False)
            return self._acquisition_fn(mean, std, best, kappa)

        t1 = time.perf_counter()
        pool = self._pool_generator(candidates.PoolRequest(
            space=self.space, rng=self.rng, n=self.pool_size, parents=self._parents(), exclude=self.seen,
            domain=self.domain, domain_set=self._domain_set, score=score, mutate=self._mutate,
            op_gradients=self._op_gradients, step=self._n_bo_steps))
        times["pool"] = time.perf_counter() - t1
        gp_state = gp_fit_state(fit, self.gp, self.kernel_name)
        if not pool.archs:
            self._state = StepState(strategy=self.name, phase="exhausted", gp=gp_state, timings=times)
            return []

        t2 = time.perf_counter()
        if self._needs_cov:
            mean, cov = self.gp.predict(pool.archs, full_cov=True)
            std = np.sqrt(np.maximum(np.diag(cov), 0.0))
        else:
            mean, std = self.gp.predict(pool.archs, full_cov=False)
            cov = None
        acq = self._acquisition_fn(mean, std, best, kappa)
        times["predict"] = time.perf_counter() - t2

        t3 = time.perf_counter()
        selection = self._selector(SelectRequest(
            mean=mean, cov=cov, acquisition=acq, k=min(n, len(pool.archs)), rng=self.rng,
            kappa=kappa_schedule(self.beta0, max(self._n_bo_steps - 1, 0)), noise_variance=self.gp.noise_variance_y,
            quality_values=acq if self.quality == "acquisition" else mean, temperature=self.quality_temperature,
            anchor=int(np.argmax(acq)) if self.kdpp_anchor else None))
        times["select"] = time.perf_counter() - t3
        proposals = [pool.archs[i] for i in selection.indices]
        self._state = StepState(
            strategy=self.name, phase="bo", proposals=tuple(self.space.format(a) for a in proposals), gp=gp_state,
            pool=PoolState(candidates=tuple(self.space.format(a) for a in pool.archs), mean=tuple(map(float, mean)),
                           std=tuple(map(float, std)), acquisition=tuple(map(float, acq)),
                           acquisition_name=self.acquisition, origin=tuple(pool.origin), info=dict(pool.info)),
            batch=BatchChoice.of(selection, kappa=kappa),
            features=self._feature_gradients(),
            timings=times,
            notes={"bo_step": self._n_bo_steps, "n_observations": len(y)},
        )
        return proposals
