"""Breadth-first search over network morphisms: paper 003's "BFS" variant (Sec. 5.1, 5.3).

"BFS replaces the Bayesian optimization in AK with the breadth-first search": no model, no
acquisition. The search starts from the space's initial networks (``n_init``, the same networks
Auto-Keras and NASBOT start from); every network that trains successfully is *expanded*: all its
one-morphism children (:meth:`~nasviz.spaces.base.SearchSpace.possible_morphs`: deep, wide, add,
concat within the domain) join the back of a FIFO queue, so the tree of morphisms is searched
level by level from the initial networks. Proposals are popped from the front; a child
equivalent to something already proposed (canonical key) is skipped. Children are warm-started
from their parent's trained weights ("BFS uses network morphism", Fig. 4) through
:class:`~nasviz.strategies.warm_start.WarmStarts`.

Choices the paper leaves open: the order of one parent's children (shuffled with the strategy's
seed: breadth-first fixes only the order of the levels), and what to propose while the queue is
empty but networks are still training (possible when steps overlap, or before the first network
has been told): random networks of the space, marked ``"random"`` in the state.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.errors import ConfigError
from nasviz.objectives.base import Evaluation
from nasviz.spaces.base import MORPHISMS
from nasviz.spaces.morphs import Morph
from nasviz.state import StepState
from nasviz.strategies.base import initial_architectures
from nasviz.strategies.warm_start import DEFAULT_NETWORK_MB, WarmStarts

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace


#: More children than any network of the domain has (App. B.1: 60 layers, 200 edges).
MAX_CHILDREN = 100_000


class MorphismBFS(WarmStarts):
    """BFS over morphisms (module docstring); registry entry ``bfs-morph``.

    Parameters
    ----------
    space : a space with the ``morphisms`` representation
    n_init : initial networks (level 0), from the space's initial pool
    warm_start : children start from their parent's trained weights
    network_mb : bound of the on-disk store of trained networks, in megabytes
    """

    def __init__(self, space: "SearchSpace", seed: int = 0, domain: Sequence[Architecture] | None = None, *,
                 n_init: int = 10, warm_start: bool = True, network_mb: float | None = DEFAULT_NETWORK_MB,
                 name: str = "bfs-morph") -> None:
        if not space.provides(MORPHISMS):
            raise ConfigError(f"BFS over morphisms needs the morphisms representation, which {space.name!r} lacks")
        if domain is not None:
            raise ConfigError("BFS over morphisms trains networks; it does not search a table's rows")
        if int(n_init) < 1:
            raise ConfigError(f"n_init must be at least 1, got {n_init}")
        self.space, self.seed, self.name = space, int(seed), name
        self.rng = np.random.default_rng(seed)
        initial = initial_architectures(space, "pool")[: int(n_init)]
        #: (network, depth in the morphism tree) waiting to be proposed
        self.queue: deque[tuple[Architecture, int]] = deque((a, 0) for a in initial)
        self.depth: dict[Architecture, int] = {}
        self._keys: set[str] = set()
        self._init_warm_starts(warm_start, network_mb)
        self._state = StepState(strategy=name, phase="init")

    def ask(self, n: int) -> list[Architecture]:
        if n < 1:
            raise ValueError(f"ask needs n >= 1, got {n}")
        out: list[Architecture] = []
        origin: list[str] = []
        while self.queue and len(out) < n:
            arch, depth = self.queue.popleft()
            if self._take(arch):
                out.append(arch)
                origin.append(f"depth-{depth}")
                self.depth[arch] = depth
        for _ in range(100 * n):
            if len(out) >= n:
                break
            arch = self.space.sample(self.rng, 1)[0]  # the queue ran dry (module docstring)
            if self._take(arch):
                out.append(arch)
                origin.append("random")
                self.depth[arch] = 0
        phase = "init" if all(o == "depth-0" for o in origin) else "bfs"
        self._state = StepState(strategy=self.name, phase=phase, proposals=tuple(self.space.format(a) for a in out),
                                notes={"queue": len(self.queue), "origin": origin, **self.warm_start_notes()})
        return out

    def _take(self, arch: Architecture) -> bool:
        key = self.space.canonical_key(arch)
        if key in self._keys:
            return False
        self._keys.add(key)
        return True

    def tell(self, evaluations: Sequence[Evaluation]) -> None:
        self._told(evaluations)
        for ev in evaluations:
            self._keys.add(self.space.canonical_key(ev.arch))
            if not (ev.ok and ev.value is not None and np.isfinite(ev.value)):
                continue
            depth = self.depth.get(ev.arch, 0) + 1
            # every distinct child, in the random order of paper 003 App. B's sampling
            for result in self.space.sample_morphs(ev.arch, self.rng, MAX_CHILDREN):
                self._expand(ev.arch, result.child, result.morph, depth)

    def _expand(self, parent: Architecture, child: Architecture, morph: Morph, depth: int) -> None:
        if self.space.canonical_key(child) in self._keys or child in self.lineage:
            return
        self.lineage[child] = (parent, (morph,))
        self.queue.append((child, depth))

    def state(self) -> StepState:
        return self._state
