"""The pool type and the random, mutation, evolutionary (paper 000 Sec. 3) and mixed (paper 002
App. E.2) pools. Exclusion is by exact architecture (see the package docstring)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Collection, Container, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.errors import ConfigError

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


class AnyOf:
    """Membership in any of several collections (without copying them)."""

    def __init__(self, *parts: Container[Architecture]) -> None:
        self.parts = parts

    def __contains__(self, item: object) -> bool:
        return any(item in part for part in self.parts)


class PoolFilter:
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
    if n == 0:
        return []
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
    neighbours: Callable[[Architecture], list[Architecture]] | None = None,
    max_tries: int = 20,
    _filter: PoolFilter | None = None,
) -> list[Architecture]:
    """Up to ``n`` distinct one-step mutations of ``parents`` (cycled in order).

    Each child is an *independent* mutation of a parent (NASLib's loop overwrote the parent, so
    its "mutations" were a random walk). ``mutate`` defaults to ``space.mutate``.

    With a domain that is a strict part of a finite space (a table holding some of the cells, such
    as NAS-Bench-101's 20,001 of 423,624), the space's own mutation (``mutate`` not given, or
    ``neighbours`` given: the ``space.neighbours`` that ``mutate`` draws from, e.g. with the
    strategy's cached instances) draws among the parent's neighbours that are in the domain
    (:func:`_mutations_in_domain`) instead of mutating blindly:
    on a 4.7 % table 19 of 20 blind mutants have no value, and NB101's ``mutate`` enumerates the
    neighbours anyway, so ``max_tries`` blind mutations per child cost seconds per step.
    """
    if not parents or n <= 0:
        return []
    flt = _filter or PoolFilter(exclude, domain)
    if (mutate is None or neighbours is not None) and is_strict_subset(space, flt.domain):
        found = _mutations_in_domain(neighbours or space.neighbours, rng, parents, n, flt)
        if found is not None:
            return found
    mutate = space.mutate if mutate is None else mutate
    out: list[Architecture] = []
    tries = 0
    while len(out) < n and tries < max_tries * n:
        parent = parents[tries % len(parents)]
        tries += 1
        child = mutate(parent, rng)
        if flt.accept(child):
            out.append(child)
    return out


def is_strict_subset(space: SearchSpace, domain: Collection[Architecture] | None) -> bool:
    """Whether ``domain`` holds fewer architectures than the finite ``space`` (``False`` without a
    domain or for a space of unknown size)."""
    if domain is None:
        return False
    size = space.size
    return size is not None and len(domain) < int(size)


def _mutations_in_domain(neighbours_of: Callable[[Architecture], list[Architecture]], rng: np.random.Generator,
                         parents: Sequence[Architecture], n: int, flt: PoolFilter) -> list[Architecture] | None:
    """Up to ``n`` children, each drawn uniformly among its parent's unused neighbours that the
    filter accepts (parents cycled in order, as the blind loop does).

    For spaces whose ``mutate`` picks a neighbour uniformly (NB101, NB201) this is that mutation
    conditioned on landing in the domain. A parent without such a neighbour gives nothing, so the
    result may be short (callers fill up with random domain members). ``None`` if the space cannot
    list neighbours (then the blind loop runs).
    """
    options: dict[Architecture, list[Architecture]] = {}
    for parent in parents:
        if parent not in options:
            try:
                neighbours = neighbours_of(parent)
            except (NotImplementedError, ConfigError):
                return None
            assert flt.domain is not None
            options[parent] = [c for c in neighbours if c in flt.domain and c not in flt.taken and c not in flt.exclude]
    out: list[Architecture] = []
    i = 0
    while len(out) < n and any(options.values()):
        choices = options[parents[i % len(parents)]]
        i += 1
        if choices:
            child = choices.pop(int(rng.integers(len(choices))))
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
    neighbours: Callable[[Architecture], list[Architecture]] | None = None,
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
    flt = PoolFilter(exclude, domain_set)
    n_mut = int(round(n * (1.0 - random_fraction))) if parents else 0
    archs = mutation_pool(space, rng, list(parents), n_mut, mutate=mutate, neighbours=neighbours, _filter=flt)
    origin = ["mutation"] * len(archs)
    fresh = [a for a in random_pool(space, rng, n - len(archs), exclude=AnyOf(exclude, flt.taken), domain=domain) if flt.accept(a)]
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
        children = mutation_pool(space, rng, [archs[i] for i in picks], max(1, n // 2), mutate=mutate,
                                 neighbours=neighbours, _filter=flt)
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
    neighbours: Callable[[Architecture], list[Architecture]] | None = None,
) -> Pool:
    """Paper 002 App. E.2: half mutations of ``parents`` (the top 10 observed), half random."""
    flt = PoolFilter(exclude, domain_set if domain_set is not None else (set(domain) if domain is not None else None))
    archs = mutation_pool(space, rng, list(parents), n // 2, mutate=mutate, neighbours=neighbours, _filter=flt)
    origin = ["mutation"] * len(archs)
    fresh = [a for a in random_pool(space, rng, n - len(archs), exclude=AnyOf(exclude, flt.taken), domain=domain) if flt.accept(a)]
    return Pool(archs + fresh, origin + ["random"] * len(fresh), {"mutations": len(archs), "random": len(fresh)})
