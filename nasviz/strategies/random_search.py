"""Uniform random search without replacement."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.objectives.base import Evaluation
from nasviz.state import StepState
from nasviz.strategies.base import initial_architectures, take_initial

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace


class RandomSearch:
    """Sample architectures uniformly without replacement.

    With a finite ``domain`` (a table's rows) it draws from a random permutation of the
    domain, which is exactly sampling without replacement; otherwise it samples the space and
    rejects architectures it has seen. With ``init="pool"`` (the default where the space has an
    initial pool) the space's initial architectures are proposed first (the same bootstrap as
    the model-based methods, paper 001 Sec. 5); ``init="random"`` skips them.
    """

    name = "random"

    def __init__(
        self,
        space: "SearchSpace",
        seed: int = 0,
        domain: Sequence[Architecture] | None = None,
        *,
        init: str | None = None,
    ) -> None:
        self.space = space
        self.rng = np.random.default_rng(seed)
        self.domain = list(domain) if domain is not None else None
        self._order = self.rng.permutation(len(self.domain)) if self.domain is not None else None
        self._cursor = 0
        self.seen: set[Architecture] = set()
        self._last: list[Architecture] = []
        self._domain_set = set(self.domain) if self.domain is not None else None
        self._initial = initial_architectures(space, init)

    def _allowed(self, arch: Architecture) -> bool:
        return arch not in self.seen and (self._domain_set is None or arch in self._domain_set)

    def ask(self, n: int) -> list[Architecture]:
        proposals = take_initial(self._initial, n, self._allowed)
        self.seen.update(proposals)
        if self.domain is not None:
            while len(proposals) < n and self._cursor < len(self._order):
                arch = self.domain[self._order[self._cursor]]
                self._cursor += 1
                if arch not in self.seen:
                    proposals.append(arch)
                    self.seen.add(arch)
        else:
            tries = 0
            while len(proposals) < n and tries < 1000 * max(n, 1):
                tries += 1
                arch = self.space.sample(self.rng, 1)[0]
                if arch not in self.seen:
                    proposals.append(arch)
                    self.seen.add(arch)
        self._last = proposals
        return proposals

    def tell(self, evaluations: Sequence[Evaluation]) -> None:
        for ev in evaluations:
            self.seen.add(ev.arch)

    def state(self) -> StepState:
        return StepState(strategy=self.name, phase="random", proposals=tuple(self.space.format(a) for a in self._last))
