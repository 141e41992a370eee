"""Bayesian optimisation over architectures: kernel + GP + acquisition + pool + batch selector.

One step (paper 000 Algorithm 1): fit the GP (ML-II hyperparameters) to the evaluations,
generate a candidate pool, compute the posterior on the pool, score it with the acquisition and
choose a batch. Each of the four parts is a registered component
(:data:`nasviz.components.KERNELS`, ``POOLS``, ``ACQUISITIONS``, ``BATCH_SELECTORS``) used through
its uniform interface, so a new pool generator or selector plugs in without touching this file.
With ``batch="topk"`` and one proposal per step this is sequential GP-UCB / GP-EI.

The strategy is composed of five frozen parts (:mod:`nasviz.strategies.bo_parts`: model,
acquisition, pool, batch, run settings), each with its defaults and checks in one place; the
registry's ``bo`` entries build them from flat options (:func:`bayesian_optimisation`), and the
options below are the parts' fields.

A few options say where a search starts and how evaluations become GP data. Their defaults are
the BO presets' behaviour; NASBOT and Auto-Keras are this class with their papers' choices
(:mod:`nasviz.strategies.nasbot`, :mod:`nasviz.strategies.autokeras`):

============  ==================================  =============================================
option        default                             alternative
============  ==================================  =============================================
``init``      ``"random"``: ``n_init`` uniform    ``"pool"``: the space's initial pool first
              samples before the first fit        (up to ``n_init``; paper 001 Sec. 5)
``targets``   ``"raw"``: the observed values      ``"robust"``: clipped from below at the Tukey
                                                  fence (:func:`~.base.robust_targets`)
``failures``  ``"skip"``: failed evaluations      ``"worst"``: they enter the GP at the worst
              are only never proposed again       target (:func:`~.base.with_failures`)
``dedupe``    ``"exact"``: never the same         ``"canonical"``: never two architectures with
              architecture twice                  one :meth:`~.SearchSpace.canonical_key`
``kappa``     ``None``: ``kappa_schedule(beta0,   a fixed UCB weight (Auto-Keras's ``beta``,
              t)``                                paper 003 Eq. (10))
============  ==================================  =============================================

How much a step explores: ``schedule`` picks UCB's weight (``"bowl"``: paper 002 App. E.5;
``"srinivas"``: GP-UCB's ``beta_t`` for a finite decision set, Srinivas et al. 2010 Theorem 1,
scaled by ``beta_scale``; :func:`nasviz.acquisition.exploration_weight`). ``stall_patience``
detects a stalled search: after that many evaluations without a new best, until the best
improves again, steps do what ``stall_action`` says: use UCB with the weight multiplied by
``stall_boost`` (``"ucb"``), or choose among the best cell's one-edit neighbours that were never
evaluated (``"neighbours"``: a search should not end next to an unevaluated neighbour of its best
cell, which on NB201 is where its trapped runs ended); the step's notes say so. ``min_noise``
bounds the GP's noise variance from below (standardised units): benchmark tables are noisy (one
or two training runs per cell), and a GP that interpolates them is overconfident next to its
observations.

What the step did is returned by :meth:`BayesianOptimisation.state` as a typed
:class:`~nasviz.state.StepState` (:mod:`nasviz.strategies.bo_step`).

Determinism: every random choice comes from one generator seeded by ``seed`` (and the GP's own
seeded restarts), so the same seed and the same sequence of ``tell`` calls give the same
proposals -- what the run store relies on to resume a run by replay.
"""

from __future__ import annotations

import time
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from nasviz import candidates
from nasviz.acquisition import exploration_weight
from nasviz.arch import Architecture
from nasviz.batch import SelectRequest
from nasviz.candidates.dedupe import SeenKeys, first_of_each_key
from nasviz.components import ACQUISITIONS, BATCH_SELECTORS, POOLS
from nasviz.gp import GaussianProcess
from nasviz.gp.prior import box_named, prior_named
from nasviz.kernels import make_kernel
from nasviz.objectives.base import Evaluation
from nasviz.state import StepState, gp_fit_state
from nasviz.strategies.base import initial_architectures, robust_targets, take_initial, with_failures
from nasviz.strategies.bo_parts import (CHOICES, AcquisitionPart, BatchPart, BOParts, ModelPart, PoolPart, RunSettings,
                                        options_signature, parts_from_options)
from nasviz.strategies.bo_step import ChosenBatch, StepScorer, model_step_state, operation_gradients

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace

__all__ = ["CHOICES", "AcquisitionPart", "BatchPart", "BayesianOptimisation", "BOParts", "ModelPart", "PoolPart",
           "RunSettings", "bayesian_optimisation"]


class BayesianOptimisation:
    """GP-based BO with the ask/tell protocol, composed of five parts (:mod:`nasviz.strategies.bo_parts`).

    Parameters
    ----------
    space : SearchSpace
        The space searched (sampling, mutation, strings, representations for the kernel).
    seed : int
        Seeds every random choice.
    domain : sequence of Architecture, optional
        Only these architectures are proposed (a table's rows).
    model : ModelPart
        The GP (kernel, transform, restarts, noise floor, hyperparameter prior and box) and how
        evaluations become its data (``targets``, ``failures``, ``stopped``; module docstring).
    acquisition : AcquisitionPart
        The acquisition and how much a step explores (``beta0`` or a fixed ``kappa``, the
        schedule, what a stalled search does; module docstring).
    pool : PoolPart
        The candidate-pool generator and its options, size and parents, table neighbourhoods and
        the local search of the acquisition; one that needs a representation ``space`` lacks is
        refused.
    batch : BatchPart
        The batch selector, the batch it is designed for and the k-DPP quality.
    run : RunSettings
        ``n_init``, ``init``, ``dedupe`` (module docstring) and the name in runs and tables
        (default ``bo-<kernel>-<acquisition>-<pool>-<batch><batch_size>``).

    The registry builds the parts from its flat options (:func:`bayesian_optimisation`); each
    part's defaults and checks are its own.
    """

    def __init__(
        self,
        space: "SearchSpace",
        seed: int = 0,
        domain: Sequence[Architecture] | None = None,
        *,
        model: ModelPart = ModelPart(),
        acquisition: AcquisitionPart = AcquisitionPart(),
        pool: PoolPart = PoolPart(),
        batch: BatchPart = BatchPart(),
        run: RunSettings = RunSettings(),
    ) -> None:
        pool.check(space)
        #: The parts this strategy was built from (frozen, validated when they were created).
        self.parts = BOParts(model, acquisition, pool, batch, run)
        self.space = space
        self.kernel = make_kernel(model.kernel, space=space, **model.kernel_options) if isinstance(model.kernel, str) \
            else model.kernel
        self._acquisition_fn = ACQUISITIONS.create(acquisition.acquisition)
        # the registry reads None as "not given"; an option that may be None is written "none"
        self.pool_generator = POOLS.create(pool.pool, **{k: "none" if v is None else v for k, v in pool.pool_options.items()})
        self._selector = BATCH_SELECTORS.create(batch.batch)
        self._needs_cov = bool(BATCH_SELECTORS.get(batch.batch).capabilities.get("covariance"))
        self.seed = int(seed)
        self.name = run.name or f"bo-{model.kernel_name}-{acquisition.acquisition}-{pool.pool}-{batch.batch}{batch.batch_size}"
        self.rng = np.random.default_rng(seed)
        box = box_named(model.hyper_bounds)
        self.gp = GaussianProcess(self.kernel, transform=model.transform, n_restarts=model.n_restarts, seed=seed,
                                  noise_bounds=(model.min_noise, 2.0), prior=prior_named(model.hyper_prior),
                                  rate_bounds=box.rates if box else None,
                                  **({"amplitude_bounds": box.amplitude} if box and box.amplitude else {}))
        self.domain = list(domain) if domain is not None else None
        self._domain_set = set(self.domain) if self.domain is not None else None
        # One instance per distinct architecture: Architecture caches its reduced graph per
        # instance, so re-using instances across steps saves the kernels recomputing it.
        self._instances: dict[Architecture, Architecture] = {a: a for a in self.domain} if self.domain is not None else {}
        self._table_neighbourhood: candidates.TableNeighbourhood | None = None
        if pool.table_neighbours == "nearest" and candidates.is_strict_subset(space, self.domain):
            self._table_neighbourhood = candidates.TableNeighbourhood(space, self.domain)
        #: The architectures the search starts from (``init="pool"``), in order.
        self.initial = tuple(initial_architectures(space, run.init)[: run.n_init])
        self._initial_queue = list(self.initial)
        self.observed: list[tuple[Architecture, float]] = []
        self.failed: list[Architecture] = []
        #: Trainings an early-stopping rule ended, not modelled (``stopped="skip"``).
        self.stopped: list[Architecture] = []
        self.seen: set[Architecture] = set()
        self._seen_keys: set[str] = set()
        # what pools must avoid: the seen set itself (exact), or anything equivalent to it
        self._exclude = self.seen if run.dedupe == "exact" else SeenKeys(space.canonical_key, self._seen_keys)
        self._costs: list[float] = []  # measured seconds of every evaluation told
        self._pending: set[Architecture] = set()
        self._n_bo_steps = 0
        self._best = -np.inf
        self._since_best = 0  # evaluations told since the best value last improved
        self._state = StepState(strategy=self.name, phase="init")

    @property
    def batch_size(self) -> int:
        """The batch this strategy is designed for: what a caller that holds any strategy (the
        benchmark's runs) asks per step; other settings are read from :attr:`parts`."""
        return self.parts.batch.batch_size

    # ------------------------------------------------------------------ protocol
    def ask(self, n: int) -> list[Architecture]:
        if n < 1:
            raise ValueError(f"ask needs n >= 1, got {n}")
        # failures="worst" makes failed evaluations GP data, so they count as initial data too
        gp_failures = len(self.failed) if self.parts.model.failures == "worst" else 0
        data = len(self.observed) + len(self._pending) + gp_failures + len(self.stopped)
        proposals = self._ask_initial(n) if data < self.parts.run.n_init or len(self.observed) < 2 else self._ask_bo(n)
        self._remember(proposals)
        self._pending.update(proposals)
        return proposals

    def tell(self, evaluations: Sequence[Evaluation]) -> None:
        for ev in evaluations:
            self._remember([ev.arch])
            self._pending.discard(ev.arch)
            if ev.cost is not None and np.isfinite(ev.cost) and ev.cost > 0:
                self._costs.append(float(ev.cost))
            if ev.ok and not ev.full and self.parts.model.stopped == "skip":
                self.stopped.append(ev.arch)  # seen, so never proposed again; not GP data
            elif ev.ok and ev.value is not None and np.isfinite(ev.value):
                self.observed.append((ev.arch, float(ev.value)))
                improved = float(ev.value) > self._best
                self._best = max(self._best, float(ev.value))
                self._since_best = 0 if improved else self._since_best + 1
            else:
                self._since_best += 1
                self.failed.append(ev.arch)

    def state(self) -> StepState:
        return self._state

    def exclude(self, archs: Sequence[Architecture]) -> None:
        """Never propose ``archs``: evaluated elsewhere (at another budget of a multi-fidelity
        search, :mod:`nasviz.strategies.multi_fidelity.bohb`) though not told here."""
        self._remember(archs)

    # ------------------------------------------------------------------ bookkeeping
    def _remember(self, archs: Sequence[Architecture]) -> None:
        self.seen.update(archs)
        if self.parts.run.dedupe == "canonical":
            self._seen_keys.update(self.space.canonical_key(a) for a in archs)

    def _distinct(self, archs: Sequence[Architecture]) -> list[int]:
        """Indices of ``archs`` that are new under canonical dedupe: key unseen, first of its key."""
        return first_of_each_key(archs, self.space.canonical_key, self._seen_keys)

    def _kappa(self, t: int) -> float:
        """The UCB weight at BO step ``t`` (0-based): the fixed ``kappa`` or the schedule."""
        settings = self.parts.acquisition
        if settings.kappa is not None:
            return settings.kappa
        size = len(self.domain) if self.domain is not None else (self.space.size or self.parts.pool.pool_size)
        return exploration_weight(settings.schedule, step=t, t=len(self.observed) + len(self._pending) + 1,
                                  n_candidates=size, beta0=settings.beta0, beta_scale=settings.beta_scale,
                                  delta=settings.delta)

    def _stalled(self) -> bool:
        """``stall_patience`` evaluations have passed without a new best (module docstring)."""
        patience = self.parts.acquisition.stall_patience
        return patience > 0 and self._since_best >= patience

    def _mutate(self, arch: Architecture, rng: np.random.Generator) -> Architecture:
        child = self.space.mutate(arch, rng)
        return self._instances.setdefault(child, child)

    def _neighbours(self, arch: Architecture) -> list[Architecture]:
        """The space's neighbours of ``arch``, as the instances the strategy already holds; with
        ``table_neighbours="nearest"`` on a sparse table, also its nearest table members."""
        found = [self._instances.setdefault(c, c) for c in self.space.neighbours(arch)]
        if self._table_neighbourhood is not None:
            found = list(dict.fromkeys(found + self._table_neighbourhood.nearest(arch)))
        return found

    def _parents(self) -> list[Architecture]:
        order = sorted(range(len(self.observed)), key=lambda i: -self.observed[i][1])
        return [self.observed[i][0] for i in order[: self.parts.pool.top_parents]]

    # ------------------------------------------------------------------ initial steps
    def _ask_initial(self, n: int) -> list[Architecture]:
        """Up to ``n`` proposals before the first fit: the initial queue first, then samples."""
        first = take_initial(self._initial_queue, n, lambda a: a not in self._exclude)
        rest: list[Architecture] = []
        if len(first) < n:
            # ``first`` is not in the seen set yet; under canonical dedupe _distinct drops repeats
            exclude = self._exclude if not first or self.parts.run.dedupe == "canonical" else self.seen | set(first)
            rest = candidates.random_pool(self.space, self.rng, n - len(first), exclude=exclude, domain=self.domain)
            if self.parts.run.dedupe == "canonical":
                keep = set(self._distinct(first + rest))
                rest = [a for i, a in enumerate(rest, start=len(first)) if i in keep]
        proposals = first + rest
        self._state = StepState(strategy=self.name, phase="init",
                                proposals=tuple(self.space.format(a) for a in proposals),
                                notes={"from_initial_pool": len(first)} if self.parts.run.init == "pool" else {})
        return proposals

    # ------------------------------------------------------------------ model-based steps
    def _gp_data(self) -> tuple[list[Architecture], np.ndarray, np.ndarray, np.ndarray]:
        """``(archs, y_gp, y, targets)``: the GP's training data (failures included when
        ``failures="worst"``), the observed values ``(n,)`` and their targets ``(n,)``."""
        archs = [a for a, _ in self.observed]
        y = np.array([v for _, v in self.observed])
        targets = robust_targets(y) if self.parts.model.targets == "robust" else y
        if self.parts.model.failures == "worst" and self.failed:
            gp_archs, y_gp = with_failures(archs, targets, self.failed)
            return gp_archs, y_gp, y, targets
        return archs, targets, y, targets

    def _ask_bo(self, n: int) -> list[Architecture]:
        times: dict[str, float] = {}
        t0 = time.perf_counter()
        gp_archs, y_gp, y, targets = self._gp_data()
        fit = self.gp.fit(gp_archs, y_gp)
        times["fit"] = time.perf_counter() - t0
        best = float(y.max())
        stalled, explore = self._stalled(), self.parts.acquisition
        boost = stalled and explore.stall_action == "ucb"
        acquisition = "ucb" if boost else self.parts.acquisition.acquisition
        kappa = self._kappa(self._n_bo_steps) * (explore.stall_boost if boost else 1.0) if acquisition == "ucb" else 0.0
        acq_fn = ACQUISITIONS.create(acquisition) if boost else self._acquisition_fn
        self._n_bo_steps += 1

        t1 = time.perf_counter()
        around = self._unevaluated_neighbours_of_best(n) if stalled and explore.stall_action == "neighbours" else None
        if around:
            pool = candidates.Pool(around, ["neighbour of the best"] * len(around), {}, {})
        else:
            pool = self._make_pool(n, best, kappa, targets, times["fit"], acq_fn)
        if stalled:
            what = {"kappa": kappa} if boost else {"neighbours": len(around or ())}
            pool.notes["stalled"] = {"since_best": self._since_best, "action": explore.stall_action, **what}
        times["pool"] = time.perf_counter() - t1
        box = "" if self.parts.model.hyper_bounds == "wide" else self.parts.model.hyper_bounds
        gp_state = gp_fit_state(fit, self.gp, self.parts.model.kernel_name, box=box)
        if not pool.archs:
            self._state = StepState(strategy=self.name, phase="exhausted", gp=gp_state, timings=times, notes=dict(pool.notes))
            return []

        t2 = time.perf_counter()
        if self._needs_cov:
            mean, cov = self.gp.predict(pool.archs, full_cov=True)
            std = np.sqrt(np.maximum(np.diag(cov), 0.0))
        else:
            mean, std = self.gp.predict(pool.archs, full_cov=False)
            cov = None
        acq = acq_fn(mean, std, best, kappa)
        times["predict"] = time.perf_counter() - t2

        t3, settings = time.perf_counter(), self.parts.batch
        selection = self._selector(SelectRequest(
            mean=mean, cov=cov, acquisition=acq, k=min(n, len(pool.archs)), rng=self.rng,
            kappa=self._kappa(max(self._n_bo_steps - 1, 0)), noise_variance=self.gp.noise_variance_y,
            quality_values=acq if settings.quality == "acquisition" else mean, temperature=settings.quality_temperature,
            anchor=int(np.argmax(acq)) if settings.kdpp_anchor else None))
        times["select"] = time.perf_counter() - t3
        proposals = [pool.archs[i] for i in selection.indices]
        self._chosen(pool, proposals)
        chosen = ChosenBatch(proposals, pool, mean, std, acq, acquisition, selection, kappa)
        self._state = model_step_state(self, chosen, gp_state, times, len(y), self._n_bo_steps)
        return proposals

    def _unevaluated_neighbours_of_best(self, n: int) -> list[Architecture]:
        """The best cell's neighbours (:meth:`_neighbours`) that were never evaluated and are in
        the domain, canonical duplicates removed; empty when fewer than ``n`` are left."""
        parents = self._parents()
        if not parents:
            return []
        accept = candidates.PoolFilter(self._exclude, self._domain_set).accept
        around = [c for c in self._neighbours(parents[0]) if accept(c)]
        if self.parts.run.dedupe == "canonical":
            around = [around[i] for i in self._distinct(around)]
        return around if len(around) >= n else []

    def _make_pool(self, n: int, best: float, kappa: float, targets: np.ndarray, fit_seconds: float,
                   acq_fn: Callable[..., np.ndarray]) -> candidates.Pool:
        """The registered generator's pool for a batch of ``n`` (canonical duplicates removed)."""
        score = StepScorer(self.gp, acq_fn, best, kappa)
        request = candidates.PoolRequest(
            space=self.space, rng=self.rng, n=self.parts.pool.pool_size, parents=self._parents(), exclude=self._exclude,
            domain=self.domain, domain_set=self._domain_set, score=score, mutate=self._mutate,
            neighbours=self._neighbours, op_gradients=partial(operation_gradients, self.gp, self.observed),
            step=self._n_bo_steps, batch=n,
            observed=[a for a, _ in self.observed], targets=targets, initial=self.initial, costs=tuple(self._costs),
            fit_seconds=fit_seconds, score_set=score.of_set)
        pool = self.pool_generator(request)
        if self.parts.pool.local_search:
            # the climbs ask about each cell once (a cell they accept is scored and remembered),
            # so the pools' own one-pass filter is the right test
            pool = candidates.extend_pool(pool, self.parts.pool.pool_size, self.parts.pool.local_search,
                                          request.parents[0] if request.parents else None, score, self._neighbours,
                                          candidates.fresh_filter(request))
        if self.parts.run.dedupe == "canonical":
            keep = self._distinct(pool.archs)
            pool = candidates.Pool([pool.archs[i] for i in keep], [pool.origin[i] for i in keep], pool.info, pool.notes)
        return pool

    def _chosen(self, pool: candidates.Pool, proposals: list[Architecture]) -> None:
        """Called with each model-based step's pool and the proposals chosen from it; a subclass
        that must remember how a candidate was made (Auto-Keras's lineage) overrides it."""


def bayesian_optimisation(space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None,
                          **options: Any) -> BayesianOptimisation:
    """:class:`BayesianOptimisation` from flat options named as its parts' fields: what the
    registry's ``bo`` entries load (``make_strategy("bo-wl-ei", ..., n_init=5)``). Options not
    given keep the parts' defaults; an unknown one raises :class:`TypeError`."""
    return BayesianOptimisation(space, seed, domain, **parts_from_options(options).keywords())


# Entry.defaults() reads a factory's keyword defaults from its signature: show the parts' own.
bayesian_optimisation.__signature__ = options_signature()  # type: ignore[attr-defined]
