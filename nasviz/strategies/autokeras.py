"""Auto-Keras (paper 003): BO guiding network morphism, with warm-started children.

One step (Sec. 3):

1. The first ``n_init`` proposals are feed-forward networks of the initial pool (Auto-Keras
   starts from default architectures, App. A). The default is the whole pool of 10: the same
   networks NASBOT starts from, as paper 001's comparisons bootstrap every method with the same
   10 networks (Sec. 5). Morphisms cannot change an existing layer's activation, so starting
   from 3 networks confines the search to their labels (on friedman1 the best initial network
   is the 4th, an elu network).
2. Afterwards a GP with the edit-distance kernel (Bourgain embedding; ``make_kernel("edit")``)
   is fitted to the observed networks, and :func:`tree_search` (Alg. 1: A* over morphism
   sequences from observed networks with simulated-annealing acceptance) minimises the UCB
   cost ``alpha(f) = mu(y_f) - beta sigma(y_f)`` (Eq. (10), ``beta = 2.5`` as in Sec. 5.1) of
   the cost ``y_f = -value``. It returns the nearest observed ancestor and the morphisms.
3. **Warm starts**: :meth:`AutoKeras.attach` wraps a :class:`~nasviz.objectives.trainer.
   TrainingObjective`'s builder so that a proposed child starts from its ancestor's *trained*
   network morphed by :func:`nasviz.spaces.layers.morphisms.morph_network` (function-preserving), and every
   network it builds is remembered (the trainer trains it in place, so the reference holds the
   trained weights afterwards). With a run store the runner keeps those weights
   (:meth:`AutoKeras.network_state`) and gives them back when a stopped or crashed run is
   resumed (:meth:`AutoKeras.restore_network`), so the resumed run warm-starts its children
   exactly as an uninterrupted one would.

Choices the paper leaves open: the cooling rate ``r = 0.85`` and ``T_low = 0.01`` (Sec. 5.3 calls
them ordinary SA hyperparameters; these give 29 expansions, about 230 scored children, a few
seconds per step with ~50 observations), and costs are divided by the standard deviation of the
observed costs so that temperatures do not depend on the metric's units.

Deviations for small, fast objectives, and why:

* Acquisition budget (``acq_fraction``, default 0.25): the paper's networks train for minutes,
  so the tree search is free in comparison. On the bundled datasets a network trains in
  0.1-2 s while scoring a child costs edit distances to every observation; on digits (seed 0,
  180 s) the uncapped search took 2-3.5 s per step against ~0.5 s of training, i.e. ~70% of the
  budget. The search therefore stops after ``max(n_children, acq_fraction * mean training
  seconds / measured seconds per scored child)`` scored children (the temperature schedule
  still ends it earlier when it gets there first). ``acq_fraction=None`` restores Alg. 1. The
  cap follows measured seconds, so two runs with one seed may propose differently (a resumed
  run then replays with a ``ReplayMismatchWarning``, keeping the stored results); with ``None``
  the proposals depend on the seed and the scores alone.
* Failed trainings enter the GP at the worst observed score
  (:func:`nasviz.strategies.base.with_failures`) but are never ancestors in the tree search.
* Outlying scores: as in NASBOT, the GP is fitted to the scores clipped from below at the
  Tukey fence (:func:`nasviz.strategies.base.robust_targets`), and the simulated-annealing
  temperatures are scaled by the spread of those. On friedman1 a softplus stack of the initial
  pool trains to R^2 ~ 0 while the other networks reach 0.92-0.95; unclipped, that one value
  sets the GP's scale and the UCB exploration term swamps the differences that matter.
* Diverged warm starts: a warm-started child restarts the learning-rate schedule at its peak
  from its ancestor's trained weights, and on friedman1 10-19 of ~160 children per 180 s run
  diverged in the first epoch although 7 of 8 of them trained from scratch reach R^2 0.93-0.95.
  Such a child is trained again from scratch (``rebuild_from_scratch``, honoured by
  :meth:`nasviz.objectives.trainer.TrainingObjective.train`; listed in ``scratch_retries``)
  instead of entering the GP as a failure.
* Exhausted neighbourhoods: when every child the search samples has been evaluated already
  (small widths-only neighbourhoods of tanh networks, which admit no function-preserving deep
  morph, run dry after ~60 steps), the step falls back to unseen one-morph children of the
  observed networks, best first, and then to a random network of the space, so that the search
  never stops early.

Wall-clock comparison with NASBOT, random search and evolution on digits and friedman1: the
table in :mod:`nasviz.strategies.nasbot`. On friedman1 Auto-Keras ends just above random search
and below evolution at 180 s per run (0.9479 against 0.9472 and 0.9502 on the held-out seeds
6-8) and below both at 600 s (0.9490 against 0.9494 and 0.9522, fresh seeds 20-22). The
measurements point at the search space the method defines rather than at its optimiser: it only
reaches networks *morphable* from the initial ones (Sec. 3), and a morphism never changes an
activation and inserts only ``relu`` / ``leaky-relu`` / ``elu`` layers (the function-preserving
ones, :mod:`nasviz.spaces.layers.morphisms`; no combination of tanh or logistic units is the identity; the
Auto-Keras code's deeper operation likewise inserts only dense, dropout or ReLU layers). ``bench layer-retrain`` on those
runs (each run's best network trained again from scratch on seeds 10 and 11) shows it: every
best network of NASBOT and evolution has a softplus, logistic or tanh layer (``smooth_share``
1.0), none of Auto-Keras's has (0.0), and retrained they score nasbot 0.9501, random 0.9479,
evolution 0.9454, autokeras 0.9432 (seeds 0-2: 0.9499 / 0.9401 / 0.9496 / 0.9357). Part of
Auto-Keras's drop on retraining is the warm start itself: a child's score comes after its
ancestors' training as well as its own (at seed 2 the best network scored 0.9474 warm-started
and 0.918-0.922 from scratch), which is what Auto-Keras hands its user but not what the
architecture gives alone. Fine-tuning warm-started children at a tenth of the learning rate
(instead of restarting the schedule at its peak) did not help: 0.9477 against 0.9479 on seeds
0-2 at 180 s, and those children still trained ~16 epochs.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import torch

from nasviz.arch import Architecture
from nasviz.spaces.layers.morphisms import Morph, morph_network, sample_morphs
from nasviz.errors import ConfigError
from nasviz.objectives.base import Evaluation
from nasviz.spaces.base import SearchSpace
from nasviz.state import StepState
from nasviz.spaces import layers as L
from nasviz.spaces.layers import DEFAULT_CONSTRAINTS, Constraints
from nasviz.strategies.base import affordable_items, robust_targets, with_failures

#: ``alpha(archs) -> (len(archs),)`` acquisition *costs* (lower is better), Eq. (10).
CostFn = Callable[[Sequence[Architecture]], np.ndarray]


@dataclass
class Candidate:
    """A network reached by the tree search: ``M(ancestor, morphs)`` and its acquisition cost."""

    arch: Architecture
    ancestor: Architecture
    morphs: tuple[Morph, ...]
    cost: float


@dataclass
class TreeSearchResult:
    """What Alg. 1 returns, plus every network it scored (for batches and the dashboard).

    ``best`` is ``f_min`` (``None`` only if no child could be generated); ``candidates`` holds
    every scored child, best first; ``n_expanded`` counts popped nodes.
    """

    best: Candidate | None
    candidates: list[Candidate] = field(default_factory=list)
    n_expanded: int = 0
    final_temperature: float = 1.0


def tree_search(
    history: Sequence[tuple[Architecture, float]],
    alpha: CostFn,
    rng: np.random.Generator,
    *,
    r: float = 0.85,
    t_low: float = 0.01,
    n_children: int = 8,
    constraints: Constraints = DEFAULT_CONSTRAINTS,
    exclude: Callable[[Architecture], bool] | None = None,
    scale: float = 1.0,
    max_scored: int | None = None,
) -> TreeSearchResult:
    """Alg. 1 of paper 003: optimise the acquisition over the tree of morphisms.

    Parameters
    ----------
    history : ``(f_i, c_i)`` observed networks and their costs (lower is better), length n >= 1
    alpha : acquisition cost of new networks, comparable with ``c_i`` (UCB of the cost)
    r, t_low : cooling rate and minimum temperature (``T`` starts at 1, ``T <- r T`` per pop)
    n_children : children sampled per expanded node (App. B: 8), see :func:`sample_morphs`
    exclude : networks never returned (already evaluated or proposed); they are not scored
    scale : costs are divided by it in the acceptance ``exp((c_min - alpha(f')) / (T scale))``
    max_scored : stop expanding once this many children have been scored (``None``: only the
        temperature stops the search, as in Alg. 1)

    The queue holds ``(cost, f)`` and pops the lowest cost (A*). A child ``f'`` is pushed when
    ``exp((c_min - alpha(f')) / T) > U(0, 1)`` (simulated annealing) and becomes ``f_min`` when
    ``alpha(f') < c_min``; ``c_min`` starts at the lowest observed cost. If no child beats the
    observed costs, ``best`` is the lowest-cost child scored (the search must still propose a
    new network). Every pushed node remembers its nearest observed ancestor and the morphisms
    from it, which is what is returned.
    """
    if not history:
        raise ValueError("the tree search needs at least one observed network")
    if not (0 < r < 1) or not (0 < t_low < 1):
        raise ValueError(f"need 0 < r < 1 and 0 < t_low < 1, got r={r}, t_low={t_low}")
    if scale <= 0 or not math.isfinite(scale):
        raise ValueError(f"scale must be positive and finite, got {scale}")
    tie = itertools.count()
    queue: list[tuple[float, int, Candidate]] = []
    visited: set[Architecture] = set()
    for f, c in history:
        heapq.heappush(queue, (float(c), next(tie), Candidate(f, f, (), float(c))))
        visited.add(f)
    c_min = min(float(c) for _, c in history)
    f_min: Candidate | None = None
    scored: list[Candidate] = []
    T, expanded = 1.0, 0
    while queue and T > t_low and (max_scored is None or len(scored) < max_scored):
        T *= r
        _, _, node = heapq.heappop(queue)
        expanded += 1
        children = []
        for res in sample_morphs(node.arch, rng, n_children, constraints):
            if res.child in visited or (exclude is not None and exclude(res.child)):
                continue
            visited.add(res.child)
            children.append(Candidate(res.child, node.ancestor, node.morphs + (res.morph,), math.nan))
        if not children:
            continue
        costs = np.asarray(alpha([c.arch for c in children]), dtype=float)
        for child, a in zip(children, costs):
            child.cost = float(a)
            scored.append(child)
            if math.exp(min(0.0, (c_min - a) / (T * scale))) > rng.random() or a < c_min:
                heapq.heappush(queue, (float(a), next(tie), child))
            if a < c_min:
                c_min, f_min = float(a), child
    scored.sort(key=lambda c: c.cost)
    best = f_min if f_min is not None else (scored[0] if scored else None)
    return TreeSearchResult(best=best, candidates=scored, n_expanded=expanded, final_temperature=T)


class AutoKeras:
    """Auto-Keras's search (edit-distance GP + UCB + A*/SA over morphisms) with ask/tell.

    Parameters
    ----------
    space : the layer space module
    seed : seeds the tree search, the GP restarts and the symmetry-breaking noise
    kernel : a kernel instance (default ``make_kernel("edit")``)
    beta : UCB trade-off of Eq. (10) (paper: 2.5)
    n_init : initial feed-forward networks evaluated first
    r, t_low, n_children : :func:`tree_search` settings
    warm_start : inherit weights when :meth:`attach`-ed to a training objective
    acq_fraction : cap one step's tree search at this fraction of the mean training time
        (module docstring); ``None`` for the uncapped Alg. 1
    """

    name = "autokeras"

    def __init__(
        self,
        space: SearchSpace,
        seed: int = 0,
        domain: Sequence[Architecture] | None = None,
        *,
        kernel=None,
        beta: float = 2.5,
        n_init: int = 10,
        r: float = 0.85,
        t_low: float = 0.01,
        n_children: int = 8,
        warm_start: bool = True,
        constraints: Constraints = DEFAULT_CONSTRAINTS,
        n_restarts: int = 2,
        acq_fraction: float | None = 0.25,
    ) -> None:
        if space.name != L.NAME:
            raise ConfigError(f"autokeras searches the {L.NAME!r} space, got {space.name!r}")
        if domain is not None:
            raise ValueError("autokeras searches the unbounded layer space; a finite domain is not supported")
        if n_init < 1:
            raise ValueError(f"n_init must be >= 1, got {n_init}")
        if beta < 0:
            raise ValueError(f"beta must be >= 0, got {beta}")
        if acq_fraction is not None and not acq_fraction > 0:
            raise ValueError(f"acq_fraction must be positive or None, got {acq_fraction}")
        from nasviz.gp import GaussianProcess
        from nasviz.kernels import make_kernel

        self.space = space
        self.seed = int(seed)
        self.rng = np.random.default_rng(seed)
        self.kernel = kernel if kernel is not None else make_kernel("edit")
        self.gp = GaussianProcess(self.kernel, n_restarts=n_restarts, seed=seed)
        self.beta = float(beta)
        self.r, self.t_low, self.n_children = float(r), float(t_low), int(n_children)
        self.constraints = constraints
        self.warm_start = bool(warm_start)
        self.initial = [a for a in L.initial_pool() if L.is_valid(a, constraints)][:n_init]
        self.observed: list[Architecture] = []
        self.values: list[float] = []
        self.failed: list[Architecture] = []  # evaluations that failed (diverged, too large)
        self.seen: set[Architecture] = set()
        #: child -> (nearest observed ancestor, morphisms) for every proposal made by the search.
        self.lineage: dict[Architecture, tuple[Architecture, tuple[Morph, ...]]] = {}
        #: networks built through :meth:`attach` (trained in place by the trainer).
        self.models: dict[Architecture, Any] = {}
        #: ``arch -> freshly initialised network`` once attached (rebuilds restored networks).
        self._fresh_network: Callable[[Architecture], Any] | None = None
        self.warm_started: dict[str, str] = {}
        #: warm-started children whose training diverged and that were trained from scratch.
        self.scratch_retries: list[str] = []
        self.acq_fraction = acq_fraction
        self._costs: list[float] = []  # training seconds of every evaluation told
        self._sec_per_scored: float | None = None  # measured tree-search seconds per scored child
        self._state: dict[str, Any] = {"strategy": self.name}

    # ------------------------------------------------------------------ warm starts
    def attach(self, objective) -> None:
        """Give ``objective`` (a ``TrainingObjective``) warm starts from trained ancestors.

        Replaces ``objective.builder`` with one that morphs the ancestor's trained network when
        the proposal came from the tree search and the ancestor was built here; otherwise it
        calls the original builder. Either way it remembers the built network.
        """
        if not self.warm_start:
            return
        base = getattr(objective, "builder", None)
        if base is None:
            # e.g. an objective that trains in worker processes: the trained networks never
            # come back here, so every network is trained from scratch.
            self._state["warm_start_unavailable"] = f"{type(objective).__name__} has no in-process builder"
            return

        def from_scratch(arch: Architecture, data, options: dict) -> Any:
            model = base(arch, data, **options)
            self.models[arch] = model
            return model

        def fresh(arch: Architecture) -> Any:
            with torch.random.fork_rng():  # leaves the global RNG as an uninterrupted run has it
                return base(arch, objective.dataset, **getattr(objective, "model_options", {}))

        self._fresh_network = fresh

        def build(arch: Architecture, data, **options):
            lineage = self.lineage.get(arch)
            parent = None if lineage is None else self.models.get(lineage[0])
            if parent is None:
                return from_scratch(arch, data, options)
            ancestor, morphs = lineage
            model = morph_network(parent, morphs, self.constraints, seed=self.seed + len(self.models))
            self.warm_started[L.format(arch)] = L.format(ancestor)
            self.models[arch] = model

            def rebuild_from_scratch() -> Any:
                # the trainer calls this when the warm start diverged (TrainingObjective.train)
                self.warm_started.pop(L.format(arch), None)
                self.scratch_retries.append(L.format(arch))
                return from_scratch(arch, data, options)

            model.rebuild_from_scratch = rebuild_from_scratch
            return model

        objective.builder = build

    # ------------------------------------------------------------------ ask / tell
    def ask(self, n: int) -> list[Architecture]:
        proposals = [a for a in self.initial if a not in self.seen][:n]
        phase = "init"
        if len(proposals) < n:
            phase = "bo"
            proposals += self._search(n - len(proposals), set(proposals))
        fallback = len(proposals) < n
        if fallback:
            proposals += self._fallback(n - len(proposals), set(proposals))
        self.seen.update(proposals)
        self._state.update({"phase": phase, "proposals": [L.format(a) for a in proposals], "fallback": fallback})
        return proposals

    def _search(self, n: int, taken: set[Architecture]) -> list[Architecture]:
        from nasviz.acquisition import ucb

        if len(self.observed) < 2:
            # Too little data for a GP: morph the best network at random.
            base = max(zip(self.values, self.observed))[1] if self.observed else self.initial[0]
            out = []
            for res in sample_morphs(base, self.rng, 4 * n, self.constraints):
                if res.child not in self.seen and res.child not in taken and len(out) < n:
                    self.lineage[res.child] = (base, (res.morph,))
                    out.append(res.child)
            return out
        y = robust_targets(np.asarray(self.values))
        self.gp.fit(*with_failures(self.observed, y, self.failed))

        def alpha(archs: Sequence[Architecture]) -> np.ndarray:
            mean, std = self.gp.predict(list(archs), full_cov=False)
            return -ucb(mean, std, self.beta)  # cost UCB: mu(-y) - beta sigma

        scale = float(np.std(y)) or 1.0
        max_scored = self._max_scored()
        started = time.perf_counter()
        result = tree_search(
            list(zip(self.observed, -y)), alpha, self.rng, r=self.r, t_low=self.t_low,
            n_children=self.n_children, constraints=self.constraints,
            exclude=lambda a: a in self.seen or a in taken, scale=scale, max_scored=max_scored,
        )
        if result.candidates:
            self._sec_per_scored = (time.perf_counter() - started) / len(result.candidates)
        ranked = ([result.best] if result.best is not None else []) + result.candidates
        out: list[Architecture] = []
        for cand in ranked:
            if len(out) == n:
                break
            if cand.arch not in out:
                out.append(cand.arch)
                self.lineage[cand.arch] = (cand.ancestor, cand.morphs)
        self._state.update(
            {
                "expanded": result.n_expanded,
                "scored": len(result.candidates),
                "final_temperature": result.final_temperature,
                "chosen": [
                    {
                        "arch": L.format(a),
                        "ancestor": L.format(self.lineage[a][0]),
                        "morphs": [str(m) for m in self.lineage[a][1]],
                    }
                    for a in out
                ],
                "best_cost": None if result.best is None else result.best.cost,
                "max_scored": max_scored,
            }
        )
        return out

    def _max_scored(self) -> int | None:
        """Children one tree search may score: ``acq_fraction`` of the mean training seconds over
        the measured seconds per scored child, at least ``n_children``; ``None`` = uncapped."""
        affordable = affordable_items(self.acq_fraction, self._costs, self._sec_per_scored)
        return None if affordable is None else int(max(self.n_children, affordable))

    def _fallback(self, n: int, taken: set[Architecture]) -> list[Architecture]:
        """``n`` unseen networks when the tree search found none: one-morph children of the
        observed networks (best first, lineage kept for warm starts), else random networks."""
        out: list[Architecture] = []
        order = sorted(range(len(self.observed)), key=lambda i: -self.values[i])
        for i in order:
            base = self.observed[i]
            for res in sample_morphs(base, self.rng, 4 * self.n_children, self.constraints):
                if len(out) == n:
                    return out
                if res.child not in self.seen and res.child not in taken and res.child not in out:
                    self.lineage[res.child] = (base, (res.morph,))
                    out.append(res.child)
        for _ in range(100 * n):
            if len(out) == n:
                break
            arch = L.sample(self.rng, 1, self.constraints)[0]
            if arch not in self.seen and arch not in taken and arch not in out:
                out.append(arch)
        return out

    def tell(self, evaluations: Sequence[Evaluation]) -> None:
        for ev in evaluations:
            self.seen.add(ev.arch)
            if ev.cost is not None and math.isfinite(ev.cost) and ev.cost > 0:
                self._costs.append(float(ev.cost))
            if ev.ok and ev.value is not None and math.isfinite(ev.value):
                self.observed.append(ev.arch)
                self.values.append(float(ev.value))
            else:
                self.models.pop(ev.arch, None)  # a failed network is no ancestor ...
                self.failed.append(ev.arch)  # ... but the GP sees it at the worst score

    # ------------------------------------------------------------------ resume
    def network_state(self, arch: Architecture) -> dict[str, np.ndarray] | None:
        """The trained weights of ``arch`` (parameter name -> array), for the run store.

        The runner stores them after each evaluation; ``None`` when no network was built here
        (not attached, or trained in another process).
        """
        model = self.models.get(arch)
        if model is None:
            return None
        return {name: t.detach().cpu().numpy().copy() for name, t in model.state_dict().items()}

    def restore_network(self, arch: Architecture, arrays: dict[str, np.ndarray]) -> None:
        """Give back the trained weights of an evaluation being replayed on resume, so that its
        descendants are warm-started as in the uninterrupted run. A no-op when not attached."""
        if self._fresh_network is None:
            return
        model = self._fresh_network(arch)
        model.load_state_dict({name: torch.as_tensor(np.asarray(a)) for name, a in arrays.items()})
        self.models[arch] = model

    def state(self) -> StepState:
        return StepState.from_legacy({**self._state, "kernel": "edit", "warm_started": dict(self.warm_started),
                                      "scratch_retries": list(self.scratch_retries)})
