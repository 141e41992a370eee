"""Auto-Keras's acquisition optimiser (paper 003 Alg. 1): A* + simulated annealing over morphisms.

:func:`tree_search` searches the tree of network morphisms rooted at the observed networks;
:class:`TreeSearchPool` puts it behind the candidate-pool interface (registry entry
``autokeras-tree``), so :class:`~nasviz.strategies.bo.BayesianOptimisation` uses it like any
pool and reports every child it scored. Each candidate's nearest observed ancestor and the
morphisms from it travel in the pool's ``info["lineage"]``: Auto-Keras's warm starts
(:class:`~nasviz.strategies.autokeras.AutoKeras`) inherit the ancestor's trained weights
through them.

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
* Exhausted neighbourhoods: when every child the search samples has been evaluated already
  (small widths-only neighbourhoods of tanh networks, which admit no function-preserving deep
  morph, run dry after ~60 steps), the pool falls back to unseen one-morph children of the
  observed networks, best first, and then to random networks of the space, so that the search
  never stops early.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from nasviz import candidates
from nasviz.arch import Architecture
from nasviz.candidates import Pool, PoolRequest
from nasviz.errors import ConfigError
from nasviz.spaces.base import SearchSpace
from nasviz.spaces.morphs import Morph
from nasviz.strategies.base import affordable_items

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
    space: SearchSpace | None = None,
    r: float = 0.85,
    t_low: float = 0.01,
    n_children: int = 8,
    exclude: Callable[[Architecture], bool] | None = None,
    scale: float = 1.0,
    max_scored: int | None = None,
) -> TreeSearchResult:
    """Alg. 1 of paper 003: optimise the acquisition over the tree of morphisms.

    Parameters
    ----------
    history : ``(f_i, c_i)`` observed networks and their costs (lower is better), length n >= 1
    alpha : acquisition cost of new networks, comparable with ``c_i`` (UCB of the cost)
    space : whose morphisms make the children (:meth:`~nasviz.spaces.base.SearchSpace.sample_morphs`;
        default: the layer space)
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
    space = _checked(history, space, r, t_low, scale)
    tie = itertools.count()
    queue, visited = _roots(history, tie)
    c_min = min(float(c) for _, c in history)
    f_min: Candidate | None = None
    scored: list[Candidate] = []
    T, expanded = 1.0, 0
    while queue and T > t_low and (max_scored is None or len(scored) < max_scored):
        T *= r
        _, _, node = heapq.heappop(queue)
        expanded += 1
        children = _children(node, space, rng, n_children, visited, exclude)
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


def _checked(history: Sequence[tuple[Architecture, float]], space: SearchSpace | None, r: float, t_low: float,
             scale: float) -> SearchSpace:
    """The space :func:`tree_search` expands (default: the layer space), once its settings are
    checked (:class:`ValueError` naming the one that cannot run)."""
    if not history:
        raise ValueError("the tree search needs at least one observed network")
    if space is None:
        from nasviz.spaces import get_space

        space = get_space("layers")
    if not (0 < r < 1) or not (0 < t_low < 1):
        raise ValueError(f"need 0 < r < 1 and 0 < t_low < 1, got r={r}, t_low={t_low}")
    if scale <= 0 or not math.isfinite(scale):
        raise ValueError(f"scale must be positive and finite, got {scale}")
    return space


def _roots(history: Sequence[tuple[Architecture, float]],
           tie: Iterator[int]) -> tuple[list[tuple[float, int, Candidate]], set[Architecture]]:
    """The A* queue holding every observed network at its cost (each its own ancestor, no morphs),
    and the visited set: the observed networks. ``tie`` breaks equal costs in insertion order."""
    queue: list[tuple[float, int, Candidate]] = []
    visited: set[Architecture] = set()
    for f, c in history:
        heapq.heappush(queue, (float(c), next(tie), Candidate(f, f, (), float(c))))
        visited.add(f)
    return queue, visited


def _children(node: Candidate, space: SearchSpace, rng: np.random.Generator, n_children: int,
              visited: set[Architecture], exclude: Callable[[Architecture], bool] | None) -> list[Candidate]:
    """``node``'s sampled one-morph children never visited nor excluded (added to ``visited``),
    each carrying ``node``'s ancestor and morphs plus its own; costs not yet scored (NaN)."""
    children = []
    for res in space.sample_morphs(node.arch, rng, n_children):
        if res.child in visited or (exclude is not None and exclude(res.child)):
            continue
        visited.add(res.child)
        children.append(Candidate(res.child, node.ancestor, node.morphs + (res.morph,), math.nan))
    return children


class TreeSearchPool:
    """Alg. 1 as a candidate pool (registry entry ``autokeras-tree``; needs ``morphisms``).

    Each step runs :func:`tree_search` from the request's observed networks with costs
    ``-targets`` (the GP's targets), minimising the acquisition cost ``-score`` (with UCB this is
    Eq. (10)'s ``mu(-y) - beta sigma``, on the scale of the observed costs; an acquisition on
    another scale, such as EI, makes the comparison with ``c_min`` meaningless), with
    temperatures scaled by ``std(targets)``. Returns the scored children, lowest cost first, at
    most ``request.n``; when fewer than the batch are new, unseen one-morph children of the
    observed networks (best first) and then random networks (module docstring). Origins:
    ``"morph"`` (tree search), ``"fallback-morph"``, ``"random"``. ``info["lineage"]`` maps each
    candidate with an ancestor (its string) to ``{"ancestor": str, "morphs": [Morph.to_dict()]}``;
    ``notes``: ``expanded``, ``scored``, ``final_temperature``, ``max_scored``, ``best_cost``,
    ``fallback``.

    Parameters
    ----------
    r, t_low, n_children : :func:`tree_search` settings
    acq_fraction : cap one step's tree search at this fraction of the mean training time
        (module docstring); ``None`` for the uncapped Alg. 1
    """

    def __init__(self, r: float = 0.85, t_low: float = 0.01, n_children: int = 8,
                 acq_fraction: float | None = 0.25) -> None:
        if not (0 < r < 1) or not (0 < t_low < 1):
            raise ConfigError(f"need 0 < r < 1 and 0 < t_low < 1, got r={r}, t_low={t_low}")
        if int(n_children) < 1:
            raise ConfigError(f"n_children must be >= 1, got {n_children}")
        if acq_fraction is not None and not acq_fraction > 0:
            raise ConfigError(f"acq_fraction must be positive or None, got {acq_fraction}")
        self.r, self.t_low, self.n_children = float(r), float(t_low), int(n_children)
        self.acq_fraction = acq_fraction
        self._sec_per_scored: float | None = None  # measured tree-search seconds per scored child

    def max_scored(self, costs: Sequence[float]) -> int | None:
        """Children one tree search may score: ``acq_fraction`` of the mean of ``costs``
        (training seconds) over the measured seconds per scored child, at least
        ``n_children``; ``None`` = uncapped."""
        affordable = affordable_items(self.acq_fraction, costs, self._sec_per_scored)
        return None if affordable is None else int(max(self.n_children, affordable))

    def __call__(self, request: PoolRequest) -> Pool:
        y = np.asarray(request.targets, dtype=float)
        max_scored = self.max_scored(request.costs)
        started = time.perf_counter()
        result = tree_search(
            list(zip(request.observed, -y)), lambda archs: -np.asarray(request.score(archs), dtype=float), request.rng,
            space=request.space, r=self.r, t_low=self.t_low, n_children=self.n_children,
            exclude=lambda a: a in request.exclude or (request.domain_set is not None and a not in request.domain_set),
            scale=float(np.std(y)) or 1.0, max_scored=max_scored)
        if result.candidates:
            self._sec_per_scored = (time.perf_counter() - started) / len(result.candidates)
        accept = candidates.fresh_filter(request)
        # result.best is the lowest-cost child, i.e. result.candidates[0]
        chosen = [(c.arch, c.ancestor, c.morphs, "morph") for c in result.candidates if accept(c.arch)][: request.n]
        fallback = len(chosen) < min(request.batch, request.n)
        if fallback:
            chosen += self._fallback(request, accept, min(request.batch, request.n) - len(chosen))
        fmt = request.space.format
        lineage = {fmt(a): {"ancestor": fmt(anc), "morphs": [m.to_dict() for m in morphs]}
                   for a, anc, morphs, _ in chosen if anc is not None}
        notes = {"expanded": result.n_expanded, "scored": len(result.candidates),
                 "final_temperature": result.final_temperature, "max_scored": max_scored,
                 "best_cost": None if result.best is None else result.best.cost, "fallback": fallback}
        return Pool([c[0] for c in chosen], [c[3] for c in chosen], {"lineage": lineage}, notes)

    def _fallback(self, request: PoolRequest, accept: Callable[[Architecture], bool],
                  n: int) -> list[tuple[Architecture, Any, tuple[Morph, ...], str]]:
        """``n`` new networks when the tree search found too few: one-morph children of the
        observed networks (best target first, lineage kept for warm starts), else random ones."""
        out: list[tuple[Architecture, Any, tuple[Morph, ...], str]] = []
        for i in np.argsort(-np.asarray(request.targets, dtype=float), kind="stable"):
            base = request.observed[int(i)]
            for res in request.space.sample_morphs(base, request.rng, 4 * self.n_children):
                if len(out) == n:
                    return out
                if accept(res.child):
                    out.append((res.child, base, (res.morph,), "fallback-morph"))
        for _ in range(100 * n):
            if len(out) == n:
                break
            arch = request.space.sample(request.rng, 1)[0]
            if accept(arch):
                out.append((arch, None, (), "random"))
        return out
