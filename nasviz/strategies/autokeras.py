"""Auto-Keras (paper 003) as Bayesian optimisation guiding network morphism, with warm-started children.

Auto-Keras is :class:`~nasviz.strategies.bo.BayesianOptimisation` composed of the parts
:class:`AutoKeras` builds, plus warm starts (:class:`AutoKeras`, registry entry ``autokeras``). One step (Sec. 3):

1. The first ``n_init`` proposals are feed-forward networks of the initial pool (``init="pool"``;
   Auto-Keras starts from default architectures, App. A). The default is the whole pool of 10:
   the same networks NASBOT starts from, as paper 001's comparisons bootstrap every method with
   the same 10 networks (Sec. 5). Morphisms cannot change an existing layer's activation, so
   starting from 3 networks confines the search to their labels (on friedman1 the best initial
   network is the 4th, an elu network).
2. Afterwards a GP with the edit-distance kernel (Bourgain embedding, kernel ``edit``) is fitted
   to the observed networks, and the candidate pool ``autokeras-tree``
   (:class:`~nasviz.strategies.tree_search.TreeSearchPool`: Alg. 1, A* over morphism sequences
   from observed networks with simulated-annealing acceptance) minimises the UCB cost
   ``alpha(f) = mu(y_f) - beta sigma(y_f)`` (Eq. (10), ``beta = 2.5`` as in Sec. 5.1: a fixed
   ``kappa``) of the cost ``y_f = -value``. Each candidate comes with its nearest observed
   ancestor and the morphisms from it; the proposal is the lowest-cost one (``batch="topk"``).
3. **Warm starts** (:mod:`nasviz.strategies.warm_start`): :meth:`AutoKeras.attach` gives a
   training objective (in this process or on worker processes) a plan per proposal, so that a
   child starts from its ancestor's *trained* network morphed by the space's function-preserving
   :meth:`~nasviz.spaces.base.SearchSpace.morph_network`. Trained networks are kept in a bounded
   temporary folder on disk (``network_mb``), not in memory. With a run store the runner keeps
   those weights (:meth:`AutoKeras.network_state`) and gives them back when a stopped or crashed
   run is resumed (:meth:`AutoKeras.restore_network`), so the resumed run warm-starts its
   children exactly as an uninterrupted one would. ``warm_start=False`` is paper 003's "BO"
   variant: the same search, every network trained from scratch.

Choices the paper leaves open (the cooling schedule, the cost scale) and the deviations for
small, fast objectives (the acquisition-time cap, exhausted neighbourhoods) are the tree
search's: :mod:`nasviz.strategies.tree_search`. The others, and why:

* Failed trainings enter the GP at the worst observed score (``failures="worst"``,
  :func:`nasviz.strategies.base.with_failures`) but are never ancestors in the tree search.
* Outlying scores (``targets="robust"``): as in NASBOT, the GP is fitted to the scores clipped
  from below at the Tukey fence (:func:`nasviz.strategies.base.robust_targets`), and the
  simulated-annealing temperatures are scaled by the spread of those. On friedman1 a softplus
  stack of the initial pool trains to R^2 ~ 0 while the other networks reach 0.92-0.95;
  unclipped, that one value sets the GP's scale and the UCB exploration term swamps the
  differences that matter.
* Diverged warm starts: a warm-started child restarts the learning-rate schedule at its peak
  from its ancestor's trained weights, and on friedman1 10-19 of ~160 children per 180 s run
  diverged in the first epoch although 7 of 8 of them trained from scratch reach R^2 0.93-0.95.
  Such a child is trained again from scratch (by
  :meth:`nasviz.objectives.training.TrainingObjective.train`; listed in ``scratch_retries``)
  instead of entering the GP as a failure.

Measured against NASBOT, evolution and random search (``docs/benchmarks.md``, section "Layer
space"): on friedman1 Auto-Keras ends just above random search and below evolution at 180 s per
run and below both at 600 s. The measurements point at the search space the method defines
rather than at its optimiser: it only reaches networks *morphable* from the initial ones
(Sec. 3), and a morphism never changes an activation and inserts only ``relu`` / ``leaky-relu``
/ ``elu`` layers (the function-preserving ones, :mod:`nasviz.spaces.mlp.morphisms`), so none
of its best networks has the softplus, logistic or tanh layers every best network of NASBOT and
evolution has.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Sequence

from nasviz.arch import Architecture
from nasviz.candidates import Pool
from nasviz.objectives.base import Evaluation
from nasviz.spaces.morphs import Morph
from nasviz.state import StepState
from nasviz.strategies.bo import AcquisitionPart, BatchPart, BayesianOptimisation, ModelPart, PoolPart, RunSettings
from nasviz.strategies.warm_start import DEFAULT_NETWORK_MB, WarmStarts

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace

class AutoKeras(BayesianOptimisation, WarmStarts):
    """Auto-Keras: the edit-distance GP on robust targets with failures at the worst, UCB with a
    fixed weight, the ``autokeras-tree`` pool, the best by UCB, the initial pool first and
    canonical dedupe, with these options; plus warm starts from trained ancestors.

    Parameters
    ----------
    space : a space that provides the ``morphisms`` representation (layers, cnn)
    seed : seeds the tree search, the GP restarts and the symmetry-breaking noise
    n_init : initial networks evaluated first
    beta : UCB trade-off of Eq. (10) (paper: 2.5), a fixed ``kappa``
    r, t_low, n_children, acq_fraction : the tree search's settings
        (:class:`~nasviz.strategies.tree_search.TreeSearchPool`)
    warm_start : inherit weights when :meth:`attach`-ed to a training objective (``False``: paper
        003's "BO" variant, trained from scratch)
    network_mb : bound of the on-disk store of trained networks, in megabytes
    n_restarts : GP ML-II restarts
    stopped : ``"observe"`` (default) or ``"skip"``: whether a training an early-stopping rule
        ended is GP data at its rung's value and a possible ancestor, or neither
        (:class:`~nasviz.strategies.bo_parts.ModelPart`; its weights are then dropped from the
        store at once)
    """

    def __init__(
        self,
        space: "SearchSpace",
        seed: int = 0,
        domain: Sequence[Architecture] | None = None,
        *,
        n_init: int = 10,
        beta: float = 2.5,
        r: float = 0.85,
        t_low: float = 0.01,
        n_children: int = 8,
        warm_start: bool = True,
        network_mb: float | None = DEFAULT_NETWORK_MB,
        n_restarts: int = 2,
        acq_fraction: float | None = 0.25,
        stopped: str = "observe",
        name: str = "autokeras",
    ) -> None:
        pool_options = {"r": r, "t_low": t_low, "n_children": n_children, "acq_fraction": acq_fraction}
        super().__init__(
            space, seed, domain,
            model=ModelPart(kernel="edit", n_restarts=n_restarts, targets="robust", failures="worst",
                            stopped=stopped),
            acquisition=AcquisitionPart(acquisition="ucb", kappa=beta),  # Eq. (10)'s beta: a fixed UCB weight
            pool=PoolPart(pool="autokeras-tree", pool_options=pool_options),
            batch=BatchPart(batch="topk"),
            run=RunSettings(n_init=n_init, init="pool", dedupe="canonical", name=name))
        self._init_warm_starts(warm_start, network_mb)

    @property
    def _skips_stopped(self) -> bool:  # WarmStarts asks: a stopped training not modelled is no ancestor
        return self.parts.model.stopped == "skip"

    def _chosen(self, pool: Pool, proposals: list[Architecture]) -> None:
        """Remember each proposal's ancestor and morphisms (the pool's ``info["lineage"]``)."""
        lineage = pool.info.get("lineage", {})
        observed = {self.space.format(a): a for a, _ in self.observed}
        for arch in proposals:
            entry = lineage.get(self.space.format(arch))
            if entry is not None and entry["ancestor"] in observed:
                self.lineage[arch] = (observed[entry["ancestor"]], tuple(Morph.from_dict(m) for m in entry["morphs"]))

    def tell(self, evaluations: Sequence[Evaluation]) -> None:
        self._told(evaluations)
        super().tell(evaluations)

    def state(self) -> StepState:
        return dataclasses.replace(self._state, notes={**self._state.notes, **self.warm_start_notes()})
