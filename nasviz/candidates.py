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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Collection, Container, Mapping, Protocol, Sequence

import numpy as np

from nasviz.arch import Architecture

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace

POOL_METHODS: tuple[str, ...] = ("random", "evolution", "gradient", "mixed")

#: ``score(archs) -> (len(archs),)`` acquisition values (higher is better).
ScoreFn = Callable[[Sequence[Architecture]], np.ndarray]


@dataclass
class Pool:
    """A candidate pool and how it was made.

    ``archs`` (length M) are distinct, unseen and in the domain; ``origin[i]`` says where
    ``archs[i]`` came from (``"random"``, ``"mutation"``, ``"evolution-r"`` for round ``r``,
    ``"gradient"``, ``"ea"``, ``"morph"``); ``info`` holds plain data about the candidates for the
    snapshot's pool (fallbacks, rounds, Auto-Keras's lineage of each candidate); ``notes`` plain
    data about how the generator ran (an acquisition optimiser's schedule and counts), which
    the strategy reports with its step (:attr:`nasviz.state.StepState.notes`).
    """

    archs: list[Architecture]
    origin: list[str]
    info: dict[str, Any] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)


class _Union:
    """Membership in any of several collections (without copying them)."""

    def __init__(self, *parts: Container[Architecture]) -> None:
        self.parts = parts

    def __contains__(self, item: object) -> bool:
        return any(item in part for part in self.parts)


class _Filter:
    """Keeps a pool distinct, unseen and inside the domain."""

    def __init__(self, exclude: Container[Architecture], domain: Collection[Architecture] | None) -> None:
        self.exclude = exclude
        self.domain = domain if (domain is None or isinstance(domain, (set, frozenset))) else set(domain)
        self.taken: set[Architecture] = set()

    def accept(self, arch: Architecture) -> bool:
        if arch in self.taken or arch in self.exclude or (self.domain is not None and arch not in self.domain):
            return False
        self.taken.add(arch)
        return True


def random_pool(
    space: SearchSpace,
    rng: np.random.Generator,
    n: int,
    *,
    exclude: Container[Architecture] = (),
    domain: Sequence[Architecture] | None = None,
    max_tries: int = 100,
) -> list[Architecture]:
    """Up to ``n`` distinct architectures drawn uniformly from ``domain`` (or the space).

    With a domain, draws from a random permutation of it, so the result is uniform over the
    domain minus ``exclude`` and is shorter than ``n`` only when those run out. Without one,
    ``space.sample`` is retried up to ``max_tries * n`` times.
    """
    if n < 0:
        raise ValueError(f"pool size must be non-negative, got {n}")
    out: list[Architecture] = []
    taken: set[Architecture] = set()
    if domain is not None:
        domain = list(domain)
        # Rejection first (cheap when few are excluded), then a full permutation scan.
        for i in rng.integers(0, len(domain), size=min(4 * n, len(domain))) if domain else []:
            arch = domain[int(i)]
            if arch not in exclude and arch not in taken:
                out.append(arch)
                taken.add(arch)
                if len(out) == n:
                    return out
        for i in rng.permutation(len(domain)):
            arch = domain[int(i)]
            if arch not in exclude and arch not in taken:
                out.append(arch)
                taken.add(arch)
                if len(out) == n:
                    break
        return out
    tries = 0
    while len(out) < n and tries < max_tries * max(n, 1):
        batch = space.sample(rng, n - len(out))
        tries += len(batch)
        for arch in batch:
            if arch not in exclude and arch not in taken:
                out.append(arch)
                taken.add(arch)
    return out


def mutation_pool(
    space: SearchSpace,
    rng: np.random.Generator,
    parents: Sequence[Architecture],
    n: int,
    *,
    exclude: Container[Architecture] = (),
    domain: Collection[Architecture] | None = None,
    mutate: Callable[[Architecture, np.random.Generator], Architecture] | None = None,
    max_tries: int = 20,
    _filter: _Filter | None = None,
) -> list[Architecture]:
    """Up to ``n`` distinct one-step mutations of ``parents`` (cycled in order).

    Each child is an *independent* mutation of a parent (NASLib's loop overwrote the parent, so
    its "mutations" were a random walk). ``mutate`` defaults to ``space.mutate``.
    """
    if not parents or n <= 0:
        return []
    mutate = space.mutate if mutate is None else mutate
    flt = _filter or _Filter(exclude, domain)
    out: list[Architecture] = []
    tries = 0
    while len(out) < n and tries < max_tries * n:
        parent = parents[tries % len(parents)]
        tries += 1
        child = mutate(parent, rng)
        if flt.accept(child):
            out.append(child)
    return out


def _standardise(x: np.ndarray) -> np.ndarray:
    sd = float(np.std(x))
    return (x - np.mean(x)) / sd if sd > 0 else np.zeros_like(x)


def evolutionary_pool(
    space: SearchSpace,
    rng: np.random.Generator,
    score: ScoreFn,
    parents: Sequence[Architecture],
    n: int = 100,
    *,
    exclude: Container[Architecture] = (),
    domain: Sequence[Architecture] | None = None,
    domain_set: Collection[Architecture] | None = None,
    n_rounds: int = 3,
    n_select: int = 10,
    temperature: float = 1.0,
    random_fraction: float = 0.5,
    mutate: Callable[[Architecture, np.random.Generator], Architecture] | None = None,
) -> tuple[Pool, np.ndarray]:
    """The evolutionary candidate pool of paper 000 §3 (Algorithm 1, line 3).

    1. Start from ``n`` candidates: a ``1 - random_fraction`` share are mutations of
       ``parents`` (the best observed architectures), the rest uniform samples (they keep the
       pool from collapsing onto one neighbourhood early in a run).
    2. Score every candidate with ``score`` (the acquisition).
    3. For ``n_rounds`` rounds: *stochastically* select ``n_select`` parents among the scored
       candidates with probability ``softmax(z / temperature)``, ``z`` the standardised
       acquisition; make ``n / 2`` mutations of them; score and add them.
    4. Keep the ``n`` best candidates by acquisition.

    Returns the pool and its acquisition values ``(M,)`` (``M <= n``, fewer only if the domain
    runs out). ``score`` is called ``n_rounds + 1`` times on new candidates only.
    """
    if n < 1:
        raise ValueError(f"pool size must be at least 1, got {n}")
    if domain is not None and domain_set is None:
        domain_set = set(domain)
    flt = _Filter(exclude, domain_set)
    n_mut = int(round(n * (1.0 - random_fraction))) if parents else 0
    archs = mutation_pool(space, rng, list(parents), n_mut, mutate=mutate, _filter=flt)
    origin = ["mutation"] * len(archs)
    fresh = [a for a in random_pool(space, rng, n - len(archs), exclude=_Union(exclude, flt.taken), domain=domain) if flt.accept(a)]
    archs += fresh
    origin += ["random"] * len(fresh)
    scores = np.asarray(score(archs), dtype=float) if archs else np.zeros(0)
    for r in range(1, n_rounds + 1):
        if not archs:
            break
        logits = _standardise(scores) / temperature
        p = np.exp(logits - logits.max())
        p /= p.sum()
        picks = rng.choice(len(archs), size=min(n_select, len(archs)), replace=True, p=p)
        children = mutation_pool(space, rng, [archs[i] for i in picks], max(1, n // 2), mutate=mutate, _filter=flt)
        if not children:
            break
        archs += children
        origin += [f"evolution-{r}"] * len(children)
        scores = np.concatenate([scores, np.asarray(score(children), dtype=float)])
    keep = np.argsort(-scores, kind="stable")[:n]
    pool = Pool([archs[i] for i in keep], [origin[i] for i in keep], {"generated": len(archs), "rounds": n_rounds})
    return pool, scores[keep]


def mixed_pool(
    space: SearchSpace,
    rng: np.random.Generator,
    parents: Sequence[Architecture],
    n: int = 100,
    *,
    exclude: Container[Architecture] = (),
    domain: Sequence[Architecture] | None = None,
    domain_set: Collection[Architecture] | None = None,
    mutate: Callable[[Architecture, np.random.Generator], Architecture] | None = None,
) -> Pool:
    """Paper 002 App. E.2: half mutations of ``parents`` (the top 10 observed), half random."""
    flt = _Filter(exclude, domain_set if domain_set is not None else (set(domain) if domain is not None else None))
    archs = mutation_pool(space, rng, list(parents), n // 2, mutate=mutate, _filter=flt)
    origin = ["mutation"] * len(archs)
    fresh = [a for a in random_pool(space, rng, n - len(archs), exclude=_Union(exclude, flt.taken), domain=domain) if flt.accept(a)]
    return Pool(archs + fresh, origin + ["random"] * len(fresh), {"mutations": len(archs), "random": len(fresh)})


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def gradient_mutation_probabilities(
    ops: Sequence[str], operations: Sequence[str], op_gradients: Mapping[str, float]
) -> tuple[np.ndarray, np.ndarray]:
    """NAS-BOWL's pseudo-probabilities (paper 002 App. C) for a cell with operations ``ops``.

    ``op_gradients`` maps an operation label to the mean derivative of the GP posterior mean
    with respect to its ``h = 0`` WL feature (its count). Returns

    * ``where`` ``(len(ops),)``: probability of mutating each position,
      ``sigmoid(-g[op]) / sum`` -- operations that help accuracy are kept;
    * ``to`` ``(len(ops), len(operations))``: for each position, probability of each
      replacement, ``sigmoid(g[new]) / sum`` over the other operations (0 for the current one).

    Operations without a feature (``none`` and ``skip_connect`` vanish from the reduced graph
    the WL kernel reads) get gradient 0, i.e. sigmoid 1/2. Gradients are standardised first
    (App. C: "magnitudes of the gradients do not matter as much"; standardising keeps the
    sigmoid out of saturation whatever the metric's units).
    """
    names = list(operations)
    g = np.array([float(op_gradients.get(op, 0.0)) for op in names])
    known = np.array([op in op_gradients for op in names])
    if known.any():
        sd = float(np.std(g[known]))
        if sd > 0:
            g = np.where(known, g / sd, 0.0)
    index = {op: i for i, op in enumerate(names)}
    current = np.array([index[op] for op in ops])
    where = _sigmoid(-g[current])
    where /= where.sum()
    to = np.tile(_sigmoid(g), (len(ops), 1))
    to[np.arange(len(ops)), current] = 0.0
    to /= to.sum(axis=1, keepdims=True)
    return where, to


def gradient_mutate(
    space: SearchSpace, arch: Architecture, rng: np.random.Generator, op_gradients: Mapping[str, float]
) -> Architecture:
    """One gradient-guided mutation of a cell (paper 002 §3.2 / App. C).

    Needs a space with the ``operation-slots`` representation (NAS-Bench-201's six edges). In that
    space the operations *are* the nodes of the DAG and its edges are fixed, so only node
    mutations apply; App. C's edge probabilities (mean gradient of the
    ``h = 1`` features an edge appears in) would need a space with mutable edges.
    """
    ops = list(space.slots(arch))
    choices = space.slot_choices()
    where, to = gradient_mutation_probabilities(ops, choices, op_gradients)
    k = int(rng.choice(len(ops), p=where))
    ops[k] = choices[int(rng.choice(len(choices), p=to[k]))]
    return space.from_slots(ops)


def supports_gradient_mutation(space: SearchSpace) -> bool:
    """True if ``space`` provides the ``operation-slots`` representation :func:`gradient_mutate` needs."""
    from nasviz.spaces.base import OPERATION_SLOTS

    return space.provides(OPERATION_SLOTS)


def gradient_pool(
    space: SearchSpace,
    rng: np.random.Generator,
    parents: Sequence[Architecture],
    n: int = 100,
    *,
    op_gradients: Mapping[str, float] | None,
    exclude: Container[Architecture] = (),
    domain: Sequence[Architecture] | None = None,
    domain_set: Collection[Architecture] | None = None,
) -> Pool:
    """NAS-BOWL's pool: gradient-guided mutations of ``parents`` (paper 002 App. E.2 on NB201:
    the whole pool comes from mutation), topped up with random samples if the mutations run out.

    Falls back to uniform mutation, and says so in ``info["fallback"]``, when there are no
    gradients (the kernel is not WL) or the space has no per-operation mutation.
    """
    flt = _Filter(exclude, domain_set if domain_set is not None else (set(domain) if domain is not None else None))
    info: dict[str, Any] = {}
    if op_gradients and supports_gradient_mutation(space):
        grads = dict(op_gradients)

        def mutate(a: Architecture, r: np.random.Generator) -> Architecture:
            return gradient_mutate(space, a, r, grads)

        label = "gradient"
        info["op_gradients"] = {k: float(v) for k, v in grads.items()}
    else:
        mutate, label = None, "mutation"
        info["fallback"] = (
            "uniform mutation: no WL feature gradients available"
            if not op_gradients
            else f"uniform mutation: space {space.name!r} has no operation slots to mutate"
        )
    archs = mutation_pool(space, rng, list(parents), n, mutate=mutate, _filter=flt)
    origin = [label] * len(archs)
    if len(archs) < n:
        fresh = [a for a in random_pool(space, rng, n - len(archs), exclude=_Union(exclude, flt.taken), domain=domain) if flt.accept(a)]
        archs += fresh
        origin += ["random"] * len(fresh)
    return Pool(archs, origin, info)


# ------------------------------------------------------------------------ the uniform interface
@dataclass(frozen=True)
class PoolRequest:
    """What a :class:`PoolGenerator` gets for one step.

    ``parents`` are the best observed architectures, best first; ``exclude`` everything evaluated
    or proposed (a container: with the strategy's ``dedupe="canonical"`` it also holds every
    architecture equivalent to one of them); ``domain`` / ``domain_set`` the finite set of
    allowed architectures (a table's rows) or ``None``; ``score(archs) -> (len(archs),)`` the
    acquisition; ``mutate`` the space's mutation (the strategy may cache instances);
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
    return _Filter(request.exclude, request.domain_set).accept


class PoolGenerator(Protocol):
    """Makes one step's candidate pool: ``generator(request) -> Pool``."""

    def __call__(self, request: PoolRequest) -> Pool: ...


def evolution_generator() -> PoolGenerator:
    """:func:`evolutionary_pool` behind the uniform interface (registry entry ``evolution``)."""

    def generate(r: PoolRequest) -> Pool:
        pool, _ = evolutionary_pool(r.space, r.rng, r.score, r.parents, r.n, exclude=r.exclude, domain=r.domain,
                                    domain_set=r.domain_set, mutate=r.mutate)
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
                          domain_set=r.domain_set, mutate=r.mutate)

    return generate


def gradient_generator() -> PoolGenerator:
    """:func:`gradient_pool` behind the uniform interface (registry entry ``gradient``)."""

    def generate(r: PoolRequest) -> Pool:
        return gradient_pool(r.space, r.rng, r.parents, r.n, op_gradients=r.op_gradients(), exclude=r.exclude,
                             domain=r.domain, domain_set=r.domain_set)

    return generate
