"""Regularised evolution (Real et al., AAAI 2019): tournament selection with aging.

The baseline the tree-Wasserstein (000) and NAS-BOWL (002) papers compare against. The first
``population_size`` proposals are the space's initial architectures, if it has them (``init``),
then random ones;
after that each child is a one-step mutation (``space.mutate``) of the best of ``sample_size``
members drawn uniformly without replacement from the population, and the oldest member dies
when a child joins ("aging": the population is a FIFO queue, so good architectures are not kept
forever).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.candidates import random_pool
from nasviz.objectives.base import Evaluation
from nasviz.errors import ConfigError
from nasviz.state import StepState
from nasviz.strategies.base import initial_architectures, take_initial

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace


class RegularizedEvolution:
    """Aging-tournament evolution with the ask/tell protocol.

    Parameters
    ----------
    space : SearchSpace
        The space searched (``sample``, ``mutate``, ``format``).
    population_size : int
        Members kept alive (default 10: with budgets of about 100 evaluations a small
        population leaves most of the budget to evolution rather than to random sampling).
    sample_size : int
        Tournament size (default 3).
    domain : sequence of Architecture, optional
        Only architectures in this finite set are proposed (a table's rows).
    max_mutation_tries : int
        Mutations tried per child before falling back to a random unseen architecture (the
        neighbourhood of a parent can be exhausted late in a run).
    init : {"pool", "random"}, optional
        ``"pool"`` (the default where the space has one) proposes the space's initial
        architectures first (paper 001 Sec. 5 bootstraps NASBOT "and other methods" with the same
        10 feed-forward networks); ``"random"`` starts from random architectures.
    """

    name = "evolution"

    def __init__(
        self,
        space: "SearchSpace",
        seed: int = 0,
        domain: Sequence[Architecture] | None = None,
        *,
        population_size: int = 10,
        sample_size: int = 3,
        max_mutation_tries: int = 50,
        init: str | None = None,
    ) -> None:
        if population_size < 2:
            raise ConfigError(f"population_size must be at least 2, got {population_size}")
        if not 1 <= sample_size <= population_size:
            raise ConfigError(f"sample_size must be in 1..population_size={population_size}, got {sample_size}")
        self.space = space
        self.rng = np.random.default_rng(seed)
        self.domain = list(domain) if domain is not None else None
        self._domain_set = set(self.domain) if self.domain is not None else None
        self.population_size = population_size
        self.sample_size = sample_size
        self.max_mutation_tries = max_mutation_tries
        self.population: deque[tuple[Architecture, float]] = deque()
        self.seen: set[Architecture] = set()
        self._last: list[Architecture] = []
        self._parents: list[str | None] = []
        self._n_told = 0
        self._pending: set[Architecture] = set()  # proposed, not yet told
        self._initial = initial_architectures(space, init)

    def _allowed(self, arch: Architecture) -> bool:
        return arch not in self.seen and (self._domain_set is None or arch in self._domain_set)

    def _child(self) -> tuple[Architecture | None, Architecture | None]:
        members = list(self.population)
        picks = self.rng.choice(len(members), size=min(self.sample_size, len(members)), replace=False)
        parent = max((members[i] for i in picks), key=lambda m: m[1])[0]
        for _ in range(self.max_mutation_tries):
            child = self.space.mutate(parent, self.rng)
            if self._allowed(child):
                return child, parent
        return None, parent

    def ask(self, n: int) -> list[Architecture]:
        proposals: list[Architecture] = []
        parents: list[str | None] = []
        # Random phase until the population is full (counting proposals not yet told).
        n_random = max(0, min(n, self.population_size - self._n_told - len(self._pending)))
        if len(self.population) == 0:
            n_random = n
        for arch in take_initial(self._initial, n_random, self._allowed):
            proposals.append(arch)
            parents.append(None)
            self.seen.add(arch)
            n_random -= 1
        if n_random:
            for arch in random_pool(self.space, self.rng, n_random, exclude=self.seen, domain=self.domain):
                proposals.append(arch)
                parents.append(None)
                self.seen.add(arch)
        while len(proposals) < n:
            child, parent = self._child()
            if child is None:  # neighbourhood exhausted: a random unseen architecture instead
                extra = random_pool(self.space, self.rng, 1, exclude=self.seen, domain=self.domain)
                if not extra:
                    break  # the domain is exhausted
                child, parent = extra[0], None
            proposals.append(child)
            parents.append(None if parent is None else self.space.format(parent))
            self.seen.add(child)
        self._last, self._parents = proposals, parents
        self._pending |= set(proposals)
        return proposals

    def tell(self, evaluations: Sequence[Evaluation]) -> None:
        for ev in evaluations:
            self.seen.add(ev.arch)
            self._pending.discard(ev.arch)
            self._n_told += 1
            if ev.ok and ev.value is not None:
                self.population.append((ev.arch, float(ev.value)))
                if len(self.population) > self.population_size:
                    self.population.popleft()  # aging: the oldest dies, not the worst

    def state(self) -> StepState:
        return StepState(
            strategy=self.name, phase="evolution", proposals=tuple(self.space.format(a) for a in self._last),
            notes={"parents": list(self._parents),
                   "population": [{"arch": self.space.format(a), "value": v} for a, v in self.population]},
        )
