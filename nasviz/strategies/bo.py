"""Bayesian optimisation over architectures: kernel + GP + acquisition + pool + batch selector.

One step (paper 000 Algorithm 1): fit the GP (ML-II hyperparameters) to the evaluations,
generate a candidate pool, compute the posterior on the pool, score it with the acquisition and
choose a batch. Each of the four parts is a registered component
(:data:`nasviz.components.KERNELS`, ``POOLS``, ``ACQUISITIONS``, ``BATCH_SELECTORS``) used through
its uniform interface, so a new pool generator or selector plugs in without touching this file.
With ``batch="topk"`` and one proposal per step this is sequential GP-UCB / GP-EI.

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
:class:`~nasviz.state.StepState` (GP fit, pool with posterior and acquisition, the batch and
why, WL feature gradients when the kernel is WL, the pool generator's own counts in ``notes``).

Determinism: every random choice comes from one generator seeded by ``seed`` (and the GP's own
seeded restarts), so the same seed and the same sequence of ``tell`` calls give the same
proposals -- what the run store relies on to resume a run by replay.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from nasviz import candidates
from nasviz.acquisition import exploration_weight
from nasviz.arch import Architecture
from nasviz.batch import BatchSelection, SelectRequest
from nasviz.components import ACQUISITIONS, BATCH_SELECTORS, POOLS, STRATEGIES
from nasviz.errors import ConfigError
from nasviz.gp import GaussianProcess
from nasviz.gp.prior import box_named, prior_named
from nasviz.kernels import Kernel, make_kernel
from nasviz.objectives.base import Evaluation
from nasviz.spaces.base import PARAMETERS
from nasviz.state import BatchChoice, FeatureGradients, PoolState, StepState, gp_fit_state
from nasviz.strategies.base import initial_architectures, robust_targets, take_initial, with_failures

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace

#: WL features kept in a step's state (the largest gradients by magnitude).
MAX_FEATURES = 40

#: Allowed values of the choice options (the first is the default): the ones ``bo`` is registered
#: with in :mod:`nasviz.components`, so the page offers and the strategy accepts one list.
CHOICES: dict[str, tuple[str, ...]] = {
    option.name: tuple(option.choices) for option in STRATEGIES.get("bo").options
    if option.kind == "choice" and option.choices
}


class _ByKey:
    """``arch in self``: an architecture with the same key was recorded (canonical dedupe)."""

    def __init__(self, key: Callable[[Architecture], str], keys: set[str]) -> None:
        self.key, self.keys = key, keys

    def __contains__(self, arch: object) -> bool:
        return isinstance(arch, Architecture) and self.key(arch) in self.keys


def _check(space: "SearchSpace", pool: str, kappa: float | None, counts: Mapping[str, int],
           choices: Mapping[str, str]) -> None:
    """Refuse settings that cannot run, naming the option (:class:`~nasviz.errors.ConfigError`)."""
    for label, value in counts.items():
        if int(value) < 1:
            raise ConfigError(f"{label} must be at least 1, got {value}")
    for label, value in choices.items():
        if value not in CHOICES[label]:
            raise ConfigError(f"{label} must be one of {', '.join(map(repr, CHOICES[label]))}, got {value!r}")
    if kappa is not None and not kappa >= 0:
        raise ConfigError(f"kappa must be >= 0 or None, got {kappa}")
    missing = sorted(set(POOLS.get(pool).capabilities.get("needs", ())) - space.provided_representations())
    if missing:
        raise ConfigError(f"candidate pool {pool!r} needs the {', '.join(missing)} representation, "
                          f"which the {space.name!r} space lacks")


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
        A registered candidate-pool generator (:mod:`nasviz.candidates`); one that ``needs`` a
        representation ``space`` lacks is refused.
    pool_options : mapping, optional
        Options of the pool generator (``nasbot-ea``'s ``ea_base``, ...), validated by its entry.
    batch : str
        A registered batch selector (:mod:`nasviz.batch`); with one proposal per step ``topk`` is
        the acquisition's argmax.
    batch_size : int
        Proposals per step the strategy is designed for (the runner's ``batch_size``); ``ask(n)``
        honours any ``n``.
    n_init : int
        Proposals before the first GP fit (10 in papers 000, 001, 002).
    init, targets, failures, dedupe, kappa
        Where a search starts and how evaluations become GP data (module docstring). With
        ``init="pool"`` the initial pool is topped up with samples when shorter than
        ``n_init``; with ``failures="worst"`` failed evaluations count towards ``n_init``;
        EI's incumbent stays the best raw value whatever ``targets``; ``kappa`` is also BUCB's
        weight. ``dedupe="exact"`` suits benchmark tables, where equivalent cells were trained
        separately.
    pool_size : int
        Candidates per step (100, paper 000); also how many the state reports.
    transform : str
        GP target transform (``"standardize"``, ``"log_error"``, ``"none"``).
    beta0 : float
        UCB exploration scale of the schedule.
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
    schedule, beta_scale, delta : str, float, float
        UCB's exploration schedule (module docstring): ``"bowl"`` uses ``beta0``; ``"srinivas"``
        uses ``sqrt(beta_scale * beta_t)`` with ``|D|`` the domain (or finite space, else pool)
        size and ``t`` the evaluation being chosen.
    stall_patience, stall_boost : int, float
        After ``stall_patience`` evaluations without a new best (0: never), what ``stall_action``
        says; for ``"ucb"``, UCB with the weight times ``stall_boost``.
    stall_action : {"ucb", "neighbours"}
        What a stalled step does: ``"ucb"`` looks further away (UCB with a raised weight);
        ``"neighbours"`` looks closer: it chooses, by the strategy's own acquisition, among the
        best cell's one-edit neighbours that were never evaluated (the usual pool once fewer
        than a batch of them are left), so that a search ends on a cell none of whose
        neighbours is better, as a local search would.
    min_noise : float
        Lower bound of the GP's noise variance, standardised units.
    table_neighbours : {"edit", "nearest"}
        On a table that holds part of a finite space, what mutation pools draw a parent's
        children from: its one-edit neighbours in the table (default), or also its nearest table
        members in Hamming distance over the categorical parameters
        (:class:`nasviz.candidates.nearest.TableNeighbourhood`), so that a sparse table still has
        a neighbourhood. Needs the ``categorical-parameters`` representation.
    local_search : int
        After the pool generator, climb the acquisition over the neighbour graph from this many
        starts, the best evaluated cell first and then the pool's best, and add what the climbs
        scored to the pool (:mod:`nasviz.candidates.local_search`, after Optuna's GPSampler);
        0 (default) leaves the generator's pool as it is.
    hyper_prior : {"none", "optuna"}
        ``"optuna"``: fit the GP's hyperparameters by MAP under Optuna GPSampler's priors on the
        kernel's rates, the amplitude and the noise (:mod:`nasviz.gp.prior`); ``"none"``
        (default): ML-II within the bounds.
    hyper_bounds : {"wide", "optuna-rates", "optuna"}
        The box the fit searches: ``"wide"`` (default) the kernel's own bounds (rates in
        ``[1e-3, 1e3]``) and amplitude ``[1e-2, 1e2]``; ``"optuna-rates"`` every kernel rate in
        ``[0.0455, 21.95]``, where Optuna's prior density is within ``e^-2`` of its peak, so no
        part of the kernel can be switched off; ``"optuna"`` also the amplitude in
        ``[0.052, 4.51]`` (:data:`nasviz.gp.prior.HYPER_BOXES`).
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
        pool_options: Mapping[str, Any] | None = None,
        batch: str = "topk",
        batch_size: int = 1,
        n_init: int = 10,
        init: str = "random",
        pool_size: int = 100,
        transform: str = "standardize",
        targets: str = "raw",
        failures: str = "skip",
        dedupe: str = "exact",
        beta0: float = 1.5,
        kappa: float | None = None,
        quality_temperature: float = 0.5,
        quality: str = "mean",
        kdpp_anchor: bool = False,
        top_parents: int = 10,
        n_restarts: int = 3,
        schedule: str = "bowl",
        beta_scale: float = 0.2,
        delta: float = 0.1,
        stall_patience: int = 0,
        stall_boost: float = 2.0,
        stall_action: str = "ucb",
        min_noise: float = 1e-6,
        table_neighbours: str = "edit",
        local_search: int = 0,
        hyper_prior: str = "none",
        hyper_bounds: str = "wide",
        name: str | None = None,
    ) -> None:
        _check(space, pool, kappa, counts={"batch_size": batch_size, "n_init": n_init, "pool_size": pool_size,
                                           "top_parents": top_parents},
               choices={"init": init, "targets": targets, "failures": failures, "dedupe": dedupe, "quality": quality,
                        "schedule": schedule, "table_neighbours": table_neighbours, "hyper_prior": hyper_prior,
                        "hyper_bounds": hyper_bounds, "stall_action": stall_action})
        if local_search < 0:
            raise ConfigError(f"local_search must be >= 0 (0: off), got {local_search}")
        if stall_patience < 0 or not stall_boost >= 1 or not 0 < delta < 1 or not beta_scale >= 0 or not 0 < min_noise <= 2:
            raise ConfigError(f"need stall_patience >= 0, stall_boost >= 1, 0 < delta < 1, beta_scale >= 0 and "
                              f"0 < min_noise <= 2; got {stall_patience}, {stall_boost}, {delta}, {beta_scale}, {min_noise}")
        if table_neighbours == "nearest" and not space.provides(PARAMETERS):
            raise ConfigError(f"table_neighbours='nearest' needs the {PARAMETERS!r} representation, "
                              f"which the {space.name!r} space lacks")
        self.space = space
        self.kernel_name = kernel if isinstance(kernel, str) else kernel.name
        self.kernel = make_kernel(kernel, space=space, **dict(kernel_options or {})) if isinstance(kernel, str) else kernel
        self.acquisition = acquisition
        self._acquisition_fn = ACQUISITIONS.create(acquisition)
        self.pool_method = pool
        self.pool_options = dict(pool_options or {})
        # the registry reads None as "not given"; an option that may be None is written "none"
        self.pool_generator = POOLS.create(pool, **{k: "none" if v is None else v for k, v in self.pool_options.items()})
        self.batch_method = batch
        self._selector = BATCH_SELECTORS.create(batch)
        self._needs_cov = bool(BATCH_SELECTORS.get(batch).capabilities.get("covariance"))
        self.batch_size = int(batch_size)
        self.n_init = int(n_init)
        self.init, self.targets, self.failures, self.dedupe = init, targets, failures, dedupe
        self.seed = int(seed)
        self.pool_size = int(pool_size)
        self.beta0 = float(beta0)
        self.kappa = None if kappa is None else float(kappa)
        self.quality_temperature = float(quality_temperature)
        self.quality = quality
        self.kdpp_anchor = bool(kdpp_anchor)
        self.top_parents = int(top_parents)
        self.schedule, self.beta_scale, self.delta = schedule, float(beta_scale), float(delta)
        self.stall_patience, self.stall_boost = int(stall_patience), float(stall_boost)
        self.stall_action = stall_action
        self.name = name or f"bo-{self.kernel_name}-{acquisition}-{pool}-{batch}{self.batch_size}"
        self.rng = np.random.default_rng(seed)
        box = box_named(hyper_bounds)
        self.hyper_bounds = hyper_bounds
        self.gp = GaussianProcess(self.kernel, transform=transform, n_restarts=n_restarts, seed=seed,
                                  noise_bounds=(float(min_noise), 2.0), prior=prior_named(hyper_prior),
                                  rate_bounds=box.rates if box else None,
                                  **({"amplitude_bounds": box.amplitude} if box and box.amplitude else {}))
        self.domain = list(domain) if domain is not None else None
        self._domain_set = set(self.domain) if self.domain is not None else None
        # One instance per distinct architecture: Architecture caches its reduced graph per
        # instance, so re-using instances across steps saves the kernels recomputing it.
        self._instances: dict[Architecture, Architecture] = {a: a for a in self.domain} if self.domain is not None else {}
        self.table_neighbours = table_neighbours
        self.local_search = int(local_search)
        self._table_neighbourhood: candidates.TableNeighbourhood | None = None
        if table_neighbours == "nearest" and candidates.is_strict_subset(space, self.domain):
            self._table_neighbourhood = candidates.TableNeighbourhood(space, self.domain)
        #: The architectures the search starts from (``init="pool"``), in order.
        self.initial = tuple(initial_architectures(space, init)[: self.n_init])
        self._initial_queue = list(self.initial)
        self.observed: list[tuple[Architecture, float]] = []
        self.failed: list[Architecture] = []
        self.seen: set[Architecture] = set()
        self._seen_keys: set[str] = set()
        # what pools must avoid: the seen set itself (exact), or anything equivalent to it
        self._exclude = self.seen if dedupe == "exact" else _ByKey(space.canonical_key, self._seen_keys)
        self._costs: list[float] = []  # measured seconds of every evaluation told
        self._pending: set[Architecture] = set()
        self._n_bo_steps = 0
        self._best = -np.inf
        self._since_best = 0  # evaluations told since the best value last improved
        self._state = StepState(strategy=self.name, phase="init")

    # ------------------------------------------------------------------ protocol
    def ask(self, n: int) -> list[Architecture]:
        if n < 1:
            raise ValueError(f"ask needs n >= 1, got {n}")
        # failures="worst" makes failed evaluations GP data, so they count as initial data too
        data = len(self.observed) + len(self._pending) + (len(self.failed) if self.failures == "worst" else 0)
        proposals = self._ask_initial(n) if data < self.n_init or len(self.observed) < 2 else self._ask_bo(n)
        self._remember(proposals)
        self._pending.update(proposals)
        return proposals

    def tell(self, evaluations: Sequence[Evaluation]) -> None:
        for ev in evaluations:
            self._remember([ev.arch])
            self._pending.discard(ev.arch)
            if ev.cost is not None and np.isfinite(ev.cost) and ev.cost > 0:
                self._costs.append(float(ev.cost))
            if ev.ok and ev.value is not None and np.isfinite(ev.value):
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
        if self.dedupe == "canonical":
            self._seen_keys.update(self.space.canonical_key(a) for a in archs)

    def _distinct(self, archs: Sequence[Architecture]) -> list[int]:
        """Indices of ``archs`` that are new under canonical dedupe: key unseen, first of its key."""
        keys, keep = set(self._seen_keys), []
        for i, arch in enumerate(archs):
            key = self.space.canonical_key(arch)
            if key not in keys:
                keys.add(key)
                keep.append(i)
        return keep

    def _kappa(self, t: int) -> float:
        """The UCB weight at BO step ``t`` (0-based): the fixed ``kappa`` or the schedule."""
        if self.kappa is not None:
            return self.kappa
        size = len(self.domain) if self.domain is not None else (self.space.size or self.pool_size)
        return exploration_weight(self.schedule, step=t, t=len(self.observed) + len(self._pending) + 1,
                                  n_candidates=size, beta0=self.beta0, beta_scale=self.beta_scale, delta=self.delta)

    def _stalled(self) -> bool:
        """``stall_patience`` evaluations have passed without a new best (module docstring)."""
        return self.stall_patience > 0 and self._since_best >= self.stall_patience

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
        return [self.observed[i][0] for i in order[: self.top_parents]]

    # ------------------------------------------------------------------ initial steps
    def _ask_initial(self, n: int) -> list[Architecture]:
        """Up to ``n`` proposals before the first fit: the initial queue first, then samples."""
        first = take_initial(self._initial_queue, n, lambda a: a not in self._exclude)
        rest: list[Architecture] = []
        if len(first) < n:
            # ``first`` is not in the seen set yet; under canonical dedupe _distinct drops repeats
            exclude = self._exclude if not first or self.dedupe == "canonical" else self.seen | set(first)
            rest = candidates.random_pool(self.space, self.rng, n - len(first), exclude=exclude, domain=self.domain)
            if self.dedupe == "canonical":
                keep = set(self._distinct(first + rest))
                rest = [a for i, a in enumerate(rest, start=len(first)) if i in keep]
        proposals = first + rest
        self._state = StepState(strategy=self.name, phase="init",
                                proposals=tuple(self.space.format(a) for a in proposals),
                                notes={"from_initial_pool": len(first)} if self.init == "pool" else {})
        return proposals

    # ------------------------------------------------------------------ model-based steps
    def _gp_data(self) -> tuple[list[Architecture], np.ndarray, np.ndarray, np.ndarray]:
        """``(archs, y_gp, y, targets)``: the GP's training data (failures included when
        ``failures="worst"``), the observed values ``(n,)`` and their targets ``(n,)``."""
        archs = [a for a, _ in self.observed]
        y = np.array([v for _, v in self.observed])
        targets = robust_targets(y) if self.targets == "robust" else y
        if self.failures == "worst" and self.failed:
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
        stalled = self._stalled()
        boost = stalled and self.stall_action == "ucb"
        acquisition = "ucb" if boost else self.acquisition
        kappa = self._kappa(self._n_bo_steps) * (self.stall_boost if boost else 1.0) if acquisition == "ucb" else 0.0
        acq_fn = ACQUISITIONS.create(acquisition) if boost else self._acquisition_fn
        self._n_bo_steps += 1

        t1 = time.perf_counter()
        around = self._unevaluated_neighbours_of_best(n) if stalled and self.stall_action == "neighbours" else None
        if around:
            pool = candidates.Pool(around, ["neighbour of the best"] * len(around), {}, {})
        else:
            pool = self._make_pool(n, best, kappa, targets, times["fit"], acq_fn)
        if stalled:
            what = {"kappa": kappa} if boost else {"neighbours": len(around or ())}
            pool.notes["stalled"] = {"since_best": self._since_best, "action": self.stall_action, **what}
        times["pool"] = time.perf_counter() - t1
        gp_state = gp_fit_state(fit, self.gp, self.kernel_name, box="" if self.hyper_bounds == "wide" else self.hyper_bounds)
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

        t3 = time.perf_counter()
        selection = self._selector(SelectRequest(
            mean=mean, cov=cov, acquisition=acq, k=min(n, len(pool.archs)), rng=self.rng,
            kappa=self._kappa(max(self._n_bo_steps - 1, 0)), noise_variance=self.gp.noise_variance_y,
            quality_values=acq if self.quality == "acquisition" else mean, temperature=self.quality_temperature,
            anchor=int(np.argmax(acq)) if self.kdpp_anchor else None))
        times["select"] = time.perf_counter() - t3
        proposals = [pool.archs[i] for i in selection.indices]
        self._chosen(pool, proposals)
        self._state = self._step_state(proposals, gp_state, pool, (mean, std, acq), acquisition, selection, kappa,
                                       times, len(y))
        return proposals

    def _unevaluated_neighbours_of_best(self, n: int) -> list[Architecture]:
        """The best cell's neighbours (:meth:`_neighbours`) that were never evaluated and are in
        the domain, canonical duplicates removed; empty when fewer than ``n`` are left."""
        parents = self._parents()
        if not parents:
            return []
        accept = candidates.PoolFilter(self._exclude, self._domain_set).accept
        around = [c for c in self._neighbours(parents[0]) if accept(c)]
        if self.dedupe == "canonical":
            around = [around[i] for i in self._distinct(around)]
        return around if len(around) >= n else []

    def _make_pool(self, n: int, best: float, kappa: float, targets: np.ndarray, fit_seconds: float,
                   acq_fn: Callable[..., np.ndarray]) -> candidates.Pool:
        """The registered generator's pool for a batch of ``n`` (canonical duplicates removed)."""
        # One step's acquisition values, remembered: the generator scores its pool, and the local
        # search (``local_search``) scores that pool again to pick its starts and then climbs
        # through cells the generator may have scored; each cell is predicted once per step.
        scored: dict[Architecture, float] = {}

        def score(cands: Sequence[Architecture]) -> np.ndarray:
            missing = [c for c in dict.fromkeys(cands) if c not in scored]
            if missing:
                mean, std = self.gp.predict(missing, full_cov=False)
                scored.update(zip(missing, map(float, acq_fn(mean, std, best, kappa))))
            return np.array([scored[c] for c in cands], dtype=float)

        def score_set(cands: Sequence[Architecture]) -> np.ndarray:
            mean, std = self.gp.predict_set(self.gp.candidate_set(cands))
            return acq_fn(mean, std, best, kappa)

        request = candidates.PoolRequest(
            space=self.space, rng=self.rng, n=self.pool_size, parents=self._parents(), exclude=self._exclude,
            domain=self.domain, domain_set=self._domain_set, score=score, mutate=self._mutate,
            neighbours=self._neighbours, op_gradients=self._op_gradients, step=self._n_bo_steps, batch=n,
            observed=[a for a, _ in self.observed], targets=targets, initial=self.initial, costs=tuple(self._costs),
            fit_seconds=fit_seconds, score_set=score_set)
        pool = self.pool_generator(request)
        if self.local_search:
            # the climbs ask about each cell once (a cell they accept is scored and remembered),
            # so the pools' own one-pass filter is the right test
            pool = candidates.extend_pool(pool, self.pool_size, self.local_search,
                                          request.parents[0] if request.parents else None, score, self._neighbours,
                                          candidates.fresh_filter(request))
        if self.dedupe == "canonical":
            keep = self._distinct(pool.archs)
            pool = candidates.Pool([pool.archs[i] for i in keep], [pool.origin[i] for i in keep], pool.info, pool.notes)
        return pool

    def _chosen(self, pool: candidates.Pool, proposals: list[Architecture]) -> None:
        """Called with each model-based step's pool and the proposals chosen from it; a subclass
        that must remember how a candidate was made (Auto-Keras's lineage) overrides it."""

    def _step_state(self, proposals: list[Architecture], gp_state: Any, pool: candidates.Pool,
                    posterior: tuple[np.ndarray, np.ndarray, np.ndarray], acquisition: str, selection: BatchSelection,
                    kappa: float, times: dict[str, float], n_observations: int) -> StepState:
        """The typed state of a model-based step; ``posterior`` is ``(mean, std, acquisition values)``,
        each ``(M,)`` over ``pool.archs``, and ``acquisition`` the step's acquisition (UCB while a
        stalled search raises its weight, else the strategy's); the generator's ``notes`` join the step's."""
        mean, std, acq = posterior
        fmt = self.space.format
        notes: dict[str, Any] = {"bo_step": self._n_bo_steps, "n_observations": n_observations, **pool.notes}
        if self.failures == "worst":
            notes["failures_in_gp"] = len(self.failed)
        return StepState(
            strategy=self.name, phase="bo", proposals=tuple(fmt(a) for a in proposals), gp=gp_state,
            pool=PoolState(candidates=tuple(fmt(a) for a in pool.archs), mean=tuple(map(float, mean)),
                           std=tuple(map(float, std)), acquisition=tuple(map(float, acq)),
                           acquisition_name=acquisition, origin=tuple(pool.origin), info=dict(pool.info)),
            batch=BatchChoice.of(selection, kappa=kappa), features=self._feature_gradients(), timings=times,
            notes=notes)

    # ------------------------------------------------------------------ WL extras
    def _feature_gradients(self) -> FeatureGradients | None:
        """WL feature gradients of the fitted GP over the observations (WL kernels only)."""
        from nasviz.interpret import step_feature_gradients

        return step_feature_gradients(self.gp, [a for a, _ in self.observed], MAX_FEATURES)

    def _op_gradients(self) -> dict[str, float] | None:
        """Mean derivative of the posterior mean w.r.t. each operation's h=0 WL feature (WL only;
        ``None`` makes the gradient pool fall back to uniform mutation and record it)."""
        from nasviz.interpret import step_operation_gradients

        return step_operation_gradients(self.gp, [a for a, _ in self.observed])
