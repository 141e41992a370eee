"""The :class:`~nasviz.spaces.base.SearchSpace` plumbing the layer spaces share.

:class:`LayerSpace` forwards the interface to a space's modules, with the space's domain
``constraints`` (paper 001 App. B.1): strings and validity to its rules module (``parse``,
``format``, ``is_valid``, ``initial_pool``), search moves to its modifiers (NASBOT's compound
mutation, App. B.2), and morphisms to its morphisms module (Auto-Keras, paper 003 Sec. 3.3),
which a subclass imports lazily (it imports torch). :func:`sample` is both spaces' sampling
distribution.
"""

from __future__ import annotations

from abc import abstractmethod
from types import ModuleType
from typing import Any, Callable, ClassVar, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.errors import ConfigError
from nasviz.spaces.base import LABELLED_DAG, LAYERS, MODIFIERS, MORPHISMS, OPERATION_TREE, PATHS, SearchSpace
from nasviz.spaces.layered.graph import DEFAULT_CONSTRAINTS, Constraints


def sample(pool: Sequence[Architecture], rng: np.random.Generator, n: int, constraints: Constraints,
           mutate: Callable[[Architecture, np.random.Generator, Constraints], Architecture]) -> list[Architecture]:
    """``n`` random networks: a random member of ``pool`` after 1-4 compound mutations (``mutate``).

    A layer space is unbounded, so there is no uniform distribution over it; this draws from the
    neighbourhood NASBOT's EA explores around its initial pool.
    """
    out = []
    for _ in range(n):
        arch = pool[int(rng.integers(len(pool)))]
        for _ in range(int(rng.integers(1, 5))):
            arch = mutate(arch, rng, constraints)
        out.append(arch)
    return out


class LayerSpace(SearchSpace):
    """A layer space: a subclass sets :attr:`rules` and :attr:`moves` to its graph and modifiers
    modules and returns its morphisms module from :meth:`_morphisms`."""

    representations = frozenset({LABELLED_DAG, OPERATION_TREE, LAYERS, PATHS, MODIFIERS, MORPHISMS})
    #: The space's rules: ``parse``, ``format``, ``is_valid`` and ``initial_pool``.
    rules: ClassVar[ModuleType]
    #: The space's modifiers: ``mutate`` and ``one_step_neighbours``.
    moves: ClassVar[ModuleType]

    def __init__(self, constraints: Constraints = DEFAULT_CONSTRAINTS) -> None:
        self.constraints = constraints

    @abstractmethod
    def _morphisms(self) -> ModuleType:
        """The space's morphisms module (``possible_morphs``, ``sample_morphs``, ``apply_sequence``,
        ``morph_network``), imported when first needed: it imports torch."""

    # ------------------------------------------------------------------ strings and moves
    def parse(self, text: str) -> Architecture:
        return self.rules.parse(text, self.constraints)

    def format(self, arch: Architecture) -> str:
        return self.rules.format(arch)

    def mutate(self, arch: Architecture, rng: np.random.Generator) -> Architecture:
        return self.moves.mutate(arch, rng, self.constraints)

    def neighbours(self, arch: Architecture) -> list[Architecture]:
        return self.moves.one_step_neighbours(arch, self.constraints)

    def initial_pool(self) -> list[Architecture]:
        return [a for a in self.rules.initial_pool() if self.rules.is_valid(a, self.constraints)]

    def contains(self, arch: Architecture) -> bool:
        return self.rules.is_valid(arch, self.constraints)

    # ------------------------------------------------------------------ morphisms
    def possible_morphs(self, arch: Architecture) -> dict:
        return self._morphisms().possible_morphs(arch, self.constraints)

    def sample_morphs(self, arch: Architecture, rng: np.random.Generator, n: int) -> list:
        return self._morphisms().sample_morphs(arch, rng, n, self.constraints)

    def apply_morphs(self, arch: Architecture, morphs: Sequence) -> list:
        return self._morphisms().apply_sequence(arch, morphs, self.constraints)

    def morph_network(self, network: Any, morphs: Sequence, seed: int | None = None) -> Any:
        return self._morphisms().morph_network(network, morphs, self.constraints, seed=seed)

    # ------------------------------------------------------------------ training
    def _refuse_options(self, options: dict[str, Any]) -> None:
        """``build_network`` of a layer space takes no model options: the architecture says it all."""
        if options:
            raise ConfigError(f"the {self.name!r} space's networks take no model options, got {sorted(options)}")
