"""Warm starts from trained ancestors: what Auto-Keras (paper 003) and BFS over morphisms share.

A strategy that proposes a network as ``M(ancestor, morphs)`` (an observed network and the
morphisms from it) can have the child start from the ancestor's *trained* weights morphed by
the space's function-preserving :meth:`~nasviz.spaces.base.SearchSpace.morph_network` instead of
a fresh initialisation: network morphism (Sec. 3). :class:`WarmStarts` does the bookkeeping:

* :meth:`attach` gives a training objective (in process, or on worker processes through an
  :class:`~nasviz.executors.ExecutorObjective`) a ``planner``: for each proposed architecture a
  :class:`~nasviz.objectives.network_store.NetworkPlan` naming the ancestor, the morphisms, the
  seed of new units and the network store every trained network is kept in;
* the store is a bounded temporary folder (:class:`~nasviz.objectives.network_store.NetworkStore`):
  trained networks live on disk, not in memory (paper 003 Sec. 4.1's model storage);
* :meth:`tell` reads back which children were warm-started and which had to be retrained from
  scratch (the trainer's ``info``), for the strategy's notes;
* :meth:`network_state` / :meth:`restore_network` let the runner keep the weights in a run
  store and give them back when a stopped run is resumed, so that the resumed run warm-starts
  exactly as an uninterrupted one.

The seed of each child's new units is a hash of the child's string and the strategy's seed, so
it does not depend on the order networks are trained in (workers, overlapped steps).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.objectives.base import Evaluation
from nasviz.objectives.network_store import NetworkPlan, NetworkStore
from nasviz.objectives.training import arch_seed
from nasviz.spaces.morphs import Morph

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace

#: Default bound of the network store (megabytes).
DEFAULT_NETWORK_MB = 1000.0


class WarmStarts:
    """Mixin: warm starts for a strategy with ``space``, ``seed`` and a ``lineage`` it fills.

    Call :meth:`_init_warm_starts` from ``__init__``; record each proposal's ancestor and
    morphisms in :attr:`lineage`; call :meth:`_told` from ``tell``.
    """

    space: "SearchSpace"
    seed: int
    #: Whether trainings an early-stopping rule ended are dropped as ancestors: ``False`` here;
    #: Auto-Keras reads it from its ``stopped`` option.
    _skips_stopped: bool = False

    def _init_warm_starts(self, enabled: bool, network_mb: float | None) -> None:
        if network_mb is not None and not float(network_mb) > 0:
            raise ValueError(f"network_mb must be positive or None, got {network_mb}")
        self.warm_start = bool(enabled)
        self.network_mb = network_mb
        #: child -> (nearest observed ancestor, morphisms) for every proposal with one.
        self.lineage: dict[Architecture, tuple[Architecture, tuple[Morph, ...]]] = {}
        #: where trained networks are kept once attached (a temporary folder).
        self.networks: NetworkStore | None = None
        #: child string -> ancestor string, for every child trained from its ancestor's weights.
        self.warm_started: dict[str, str] = {}
        #: children whose warm start diverged (or whose ancestor was evicted): trained from scratch.
        self.scratch_retries: list[str] = []
        self._unavailable: str | None = None

    # ------------------------------------------------------------------ objective side
    def attach(self, objective: Any) -> None:
        """Give ``objective`` warm starts: its ``planner`` becomes :meth:`training_plan`.

        Objectives without a ``planner`` attribute (a table lookup) get none, and the state says
        why (``warm_start_unavailable``)."""
        if not self.warm_start:
            return
        if not hasattr(objective, "planner"):
            self._unavailable = f"{type(objective).__name__} trains no networks to start from"
            return
        if self.networks is None:
            max_bytes = None if self.network_mb is None else int(float(self.network_mb) * 1e6)
            self.networks = NetworkStore.temporary(max_bytes)
        objective.planner = self.training_plan

    def training_plan(self, arch: Architecture) -> NetworkPlan | None:
        """The plan of one proposal: start from its ancestor (if it has one) and keep the result."""
        if self.networks is None:
            return None
        fmt = self.space.format
        ancestor, morphs = self.lineage.get(arch, (None, ()))
        return NetworkPlan(folder=str(self.networks.folder), max_bytes=self.networks.max_bytes,
                           ancestor=None if ancestor is None else fmt(ancestor),
                           morphs=tuple(m.to_dict() for m in morphs), seed=arch_seed(fmt(arch), self.seed))

    def _told(self, evaluations: Sequence[Evaluation]) -> None:
        fmt = self.space.format
        for ev in evaluations:
            info = ev.info or {}
            if info.get("warm_start"):
                self.warm_started[fmt(ev.arch)] = str(info["warm_start"])
            elif ev.arch in self.lineage and self.networks is not None and any(
                    "trained from scratch" in note for note in info.get("notes", ())):
                self.scratch_retries.append(fmt(ev.arch))
            if self.networks is not None and (not ev.ok or (not ev.full and self._skips_stopped)):
                self.networks.discard(fmt(ev.arch))  # a failed network, or a stopped one not modelled, is no ancestor

    def warm_start_notes(self) -> dict[str, Any]:
        """What the strategy's state reports about warm starts."""
        notes: dict[str, Any] = {"warm_started": dict(self.warm_started), "scratch_retries": list(self.scratch_retries)}
        if self._unavailable:
            notes["warm_start_unavailable"] = self._unavailable
        if self.networks is not None:
            notes["network_store"] = self.networks.summary()
        return notes

    # ------------------------------------------------------------------ resume
    def network_state(self, arch: Architecture) -> dict[str, np.ndarray] | None:
        """The trained weights of ``arch`` (parameter name -> array) for the run store, or ``None``."""
        return None if self.networks is None else self.networks.load(self.space.format(arch))

    def restore_network(self, arch: Architecture, arrays: dict[str, np.ndarray]) -> None:
        """Give back the trained weights of an evaluation being replayed on resume (a no-op when
        not attached)."""
        if self.networks is not None:
            self.networks.save(self.space.format(arch), arrays)
