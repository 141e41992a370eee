"""Candidate pools: the discrete sets a BO step maximises its acquisition over.

Every generator is registered in :data:`nasviz.components.POOLS` and used through one
interface: a :class:`PoolGenerator` is called with a :class:`PoolRequest` (the space, the
random generator, the size, the parents, what to exclude, the acquisition) and returns a
:class:`Pool`. A strategy with its own acquisition optimiser is a generator like these: NASBOT's
evolutionary algorithm (``nasbot-ea``, :mod:`nasviz.strategies.nasbot`) and Auto-Keras's tree
search over morphisms (``autokeras-tree``, :mod:`nasviz.strategies.tree_search`).

=============  ===============================================================================
``random``     uniform samples from the space (or the finite domain)
``evolution``  paper 000 §3: stochastically select top architectures by acquisition, mutate,
               score the mutants, add them, repeat; keep the best ``n`` by acquisition
``gradient``   NAS-BOWL (paper 002 §3.2, App. C): which operation to mutate and what to change it
               to follow the sigmoid of the (negative) GP feature gradients
``mixed``      paper 002 App. E.2: half mutations of the top 10 observed, half random
=============  ===============================================================================

Every generator returns distinct architectures that are not in ``exclude`` (the strategy
passes everything already evaluated or proposed) and, when a finite ``domain`` is given (a
table's rows), only members of the domain. Exclusion is by *exact* architecture, not by
:meth:`~nasviz.arch.Architecture.canonical_key`: in a benchmark table, cells that compute the same
function were trained separately and have different recorded values, so an equivalent cell is a
genuinely new evaluation there.

Modules: ``pools`` (the pool type and the random, mutation, evolutionary and mixed pools),
``gradient`` (NAS-BOWL's gradient-guided mutation), ``nearest`` (the nearest members of a sparse
table), ``local_search`` (climbing the acquisition from the incumbent, the BO option
``local_search``), ``dedupe`` (canonical dedupe, the BO option ``dedupe``); this package adds
the uniform interface (:class:`PoolRequest` -> :class:`Pool`) the BO loop and the registry use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Collection, Container, Mapping, Protocol, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.candidates.gradient import (gradient_mutate, gradient_mutation_probabilities, gradient_pool,
                                        supports_gradient_mutation)
from nasviz.candidates.local_search import climb_acquisition, extend_pool
from nasviz.candidates.nearest import TableNeighbourhood
from nasviz.candidates.pools import (POOL_METHODS, PoolFilter, Pool, ScoreFn, evolutionary_pool, is_strict_subset, mixed_pool,
                                     mutation_pool, random_pool)

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace

__all__ = ["POOL_METHODS", "Pool", "PoolGenerator", "PoolRequest", "ScoreFn", "climb_acquisition", "evolution_generator",
           "evolutionary_pool", "extend_pool", "fresh_filter", "is_strict_subset", "gradient_generator", "gradient_mutate",
           "gradient_mutation_probabilities", "gradient_pool", "mixed_generator", "mixed_pool", "mutation_pool",
           "random_generator", "random_pool", "supports_gradient_mutation", "TableNeighbourhood"]


# ------------------------------------------------------------------------ the uniform interface
@dataclass(frozen=True)
class PoolRequest:
    """What a :class:`PoolGenerator` gets for one step.

    ``parents`` are the best observed architectures, best first; ``exclude`` everything evaluated
    or proposed (a container: with the strategy's ``dedupe="canonical"`` it also holds every
    architecture equivalent to one of them); ``domain`` / ``domain_set`` the finite set of
    allowed architectures (a table's rows) or ``None``; ``score(archs) -> (len(archs),)`` the
    acquisition; ``mutate`` the space's mutation and ``neighbours`` the space's neighbours it draws
    from (the strategy may cache instances; mutation pools use ``neighbours`` on a table that holds
    part of the space, :func:`mutation_pool`);
    ``op_gradients()`` the WL operation gradients when the kernel has them (computed on
    demand), else ``None``; ``step`` the model-based step (1 for the first fit).

    What acquisition optimisers with their own state need (NASBOT's EA, Auto-Keras's tree
    search): ``batch`` how many the strategy will choose (a generator returns at least that many
    when it can); ``observed`` the successful evaluations in the order told and ``targets``
    ``(len(observed),)`` the values the GP was fitted to for them (Tukey-clipped with the
    strategy's ``targets="robust"``); ``initial`` the architectures the strategy started from
    (``initial="pool"``); ``costs`` the measured seconds of every evaluation told and
    ``fit_seconds`` this step's GP fit, for caps on acquisition time
    (:func:`nasviz.strategies.base.affordable_items`).

    ``score_set(archs)``: like ``score``, for a *fixed* sequence scored at every step (a table's
    domain, a finite space listed once): pass the same sequence object each step and the
    strategy keeps its kernel components against the training set between steps
    (:class:`nasviz.gp.cross.CandidateSet`); ``None`` when the strategy has no such cache.
    """

    space: SearchSpace
    rng: np.random.Generator
    n: int
    parents: Sequence[Architecture]
    exclude: Container[Architecture]
    domain: Sequence[Architecture] | None
    domain_set: Collection[Architecture] | None
    score: ScoreFn
    mutate: Callable[[Architecture, np.random.Generator], Architecture]
    neighbours: Callable[[Architecture], list[Architecture]] | None = None
    op_gradients: Callable[[], Mapping[str, float] | None] = lambda: None
    step: int = 1
    batch: int = 1
    observed: Sequence[Architecture] = ()
    targets: np.ndarray = field(default_factory=lambda: np.zeros(0))
    initial: Sequence[Architecture] = ()
    costs: Sequence[float] = ()
    fit_seconds: float = 0.0
    score_set: ScoreFn | None = None


def fresh_filter(request: PoolRequest) -> Callable[[Architecture], bool]:
    """``accept(arch)``: true the first time it is given an architecture that ``request``
    allows (not excluded, in the domain); for generators that build their own pools."""
    return PoolFilter(request.exclude, request.domain_set).accept


class PoolGenerator(Protocol):
    """Makes one step's candidate pool: ``generator(request) -> Pool``."""

    def __call__(self, request: PoolRequest) -> Pool: ...


def evolution_generator() -> PoolGenerator:
    """:func:`evolutionary_pool` behind the uniform interface (registry entry ``evolution``)."""

    def generate(r: PoolRequest) -> Pool:
        pool, _ = evolutionary_pool(r.space, r.rng, r.score, r.parents, r.n, exclude=r.exclude, domain=r.domain,
                                    domain_set=r.domain_set, mutate=r.mutate, neighbours=r.neighbours)
        return pool

    return generate


def random_generator() -> PoolGenerator:
    """:func:`random_pool` behind the uniform interface (registry entry ``random``)."""

    def generate(r: PoolRequest) -> Pool:
        fresh = random_pool(r.space, r.rng, r.n, exclude=r.exclude, domain=r.domain)
        return Pool(fresh, ["random"] * len(fresh), {})

    return generate


def mixed_generator() -> PoolGenerator:
    """:func:`mixed_pool` behind the uniform interface (registry entry ``mixed``)."""

    def generate(r: PoolRequest) -> Pool:
        return mixed_pool(r.space, r.rng, r.parents, r.n, exclude=r.exclude, domain=r.domain,
                          domain_set=r.domain_set, mutate=r.mutate, neighbours=r.neighbours)

    return generate


def gradient_generator() -> PoolGenerator:
    """:func:`gradient_pool` behind the uniform interface (registry entry ``gradient``)."""

    def generate(r: PoolRequest) -> Pool:
        return gradient_pool(r.space, r.rng, r.parents, r.n, op_gradients=r.op_gradients(), exclude=r.exclude,
                             domain=r.domain, domain_set=r.domain_set)

    return generate
