"""The objective that trains: architectures in, :class:`~nasviz.objectives.base.Evaluation` out.

:class:`TrainingObjective` implements the objective protocol of :mod:`nasviz.objectives.base`: it
builds the network of each architecture with its space's
:meth:`~nasviz.spaces.base.SearchSpace.build_network`, seeds it, trains it and returns
an :class:`~nasviz.objectives.base.Evaluation` whose ``info`` carries the curves, the parameter
count, the training seconds and the test score.
Training itself is :func:`nasviz.objectives.trainer.train_model`; with
``SpeedOptions(networks_together=k)`` :meth:`TrainingObjective.evaluate` trains its architectures
``k`` at a time in this process (:func:`~nasviz.objectives.trainer.train_models`).
"""

from __future__ import annotations

import os
import time
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import torch
from torch import nn

from nasviz.arch import Architecture
from nasviz.objectives.base import FAILED, OK, Evaluation
from nasviz.objectives.datasets import Dataset, load_dataset
from nasviz.fidelity.ladder import FidelityRequest, arch_of
from nasviz.fidelity.stopping import StoppingRule
from nasviz.objectives.fidelity_training import FidelityPlan, LiveFidelity, train_at
from nasviz.objectives.network_store import NetworkPlan, open_store
from nasviz.objectives.accelerator import setup_counts
from nasviz.objectives.speed import SpeedOptions
from nasviz.objectives.trainer import MemoryGuard, TrainResult, train_model, train_models
from nasviz.defaults import DEFAULT_SPACE

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace


def arch_seed(key: str, base_seed: int = 0) -> int:
    """A stable 31-bit seed for an architecture key (crc32, identical across processes)."""
    return (zlib.crc32(key.encode("utf-8")) + 1_000_003 * int(base_seed)) % (2**31 - 1)


def default_builder(space: "SearchSpace | str") -> Callable[..., nn.Module]:
    """``builder(arch, dataset, **model_options)``: the space's own network builder
    (:meth:`~nasviz.spaces.base.SearchSpace.build_network`) for the dataset's input shape and outputs."""
    from nasviz.spaces import get_space

    space = get_space(space)

    def build(arch: Architecture, data: Dataset, **model_options: Any) -> nn.Module:
        return space.build_network(arch, tuple(data.input_shape), data.n_outputs, **model_options)

    return build


#: The training options :func:`train_model` takes (a space's ``training_defaults`` and a caller's
#: ``training`` override them).
TRAINING_OPTIONS = frozenset({"epochs", "patience", "lr", "batch_size", "optimizer", "weight_decay", "estimate_epochs"})


@dataclass(frozen=True)
class TrainingSpec:
    """Plain, picklable settings that rebuild a :class:`TrainingObjective` in another process.

    Executors send a spec (not the objective, which holds a module and a builder function) to
    their workers; :meth:`build` is called once per worker and the objective is cached there.
    ``model_options`` and ``training`` are stored as sorted tuples of items so the spec hashes.
    """

    space: str = DEFAULT_SPACE
    dataset: str = "digits"
    dataset_seed: int = 0
    metric: str = "valid_accuracy"
    seed: int = 0
    device: str | None = None
    model_options: tuple[tuple[str, Any], ...] = ()
    training: tuple[tuple[str, Any], ...] = ()
    #: the folder of a dataset read from disk (MNIST, CIFAR-10: torchvision's layout)
    data_folder: str | None = None
    #: how fast to train (:class:`~nasviz.objectives.speed.SpeedOptions`; frozen, so the spec hashes)
    speed: SpeedOptions = SpeedOptions()

    def build(self) -> "TrainingObjective":
        from nasviz.spaces import get_space

        data = load_dataset(self.dataset, seed=self.dataset_seed, folder=self.data_folder)
        objective = TrainingObjective(
            get_space(self.space), data, self.metric, seed=self.seed,
            device=self.device, model_options=dict(self.model_options) or None, training=dict(self.training),
            speed=self.speed,
        )
        objective.data_folder = self.data_folder
        return objective


class TrainingObjective(LiveFidelity):
    """Evaluate architectures by training them (the objective protocol of :mod:`.base`).

    Parameters
    ----------
    space : a :class:`~nasviz.spaces.base.SearchSpace` or its registered name
    dataset : a :class:`Dataset` or the name of a bundled one
    metric : ``"valid_accuracy"`` (the early-stopping estimate; ``"valid_score"`` for regression
        sets, whose score is R^2) or ``"test_accuracy"`` / ``"test_score"``.
    seed : base seed; each architecture is trained with ``arch_seed(arch.canonical_key(), seed)``
        so equivalent cells get the same initialisation and batch order.
    builder : ``builder(arch, dataset, **model_options) -> nn.Module``; default: the space's
        :meth:`~nasviz.spaces.base.SearchSpace.build_network`.
    model_options : e.g. ``{"channels": 8, "n_cells": 1}`` for NB201 (default: the space's
        ``network_defaults()``).
    training : overrides of the space's ``training_defaults()``, passed to :func:`train_model`.
    speed : :class:`~nasviz.objectives.speed.SpeedOptions` (default: train as always, one network
        at a time).
    stopping : an early-stopping rule (:class:`~nasviz.fidelity.stopping.StoppingRule`: the median
        rule or ASHA) that may stop any training after an epoch (:mod:`.fidelity_training`).

    Evaluating a :class:`~nasviz.fidelity.FidelityRequest` trains to its budget and keeps a
    checkpoint, or continues from the one kept at ``previous`` (:mod:`.fidelity_training`).
    """

    def __init__(
        self,
        space,
        dataset: Dataset | str = "digits",
        metric: str = "valid_accuracy",
        *,
        seed: int = 0,
        device: str | None = None,
        builder: Callable[..., nn.Module] | None = None,
        model_options: dict[str, Any] | None = None,
        training: dict[str, Any] | None = None,
        memory_guard: MemoryGuard | None = None,
        speed: SpeedOptions | None = None,
        stopping: StoppingRule | None = None,
    ) -> None:
        if metric not in ("valid_accuracy", "valid_score", "test_accuracy", "test_score"):
            raise ValueError(f"metric must be valid_accuracy, valid_score, test_accuracy or test_score, got {metric!r}")
        self.dataset = load_dataset(dataset, seed=0) if isinstance(dataset, str) else dataset
        self.metric = metric
        self.seed = int(seed)
        self.device = device
        from nasviz.spaces import get_space

        self.space = space = get_space(space)
        self.data_folder: str | None = None
        self._custom_builder = builder is not None
        self.builder = builder or default_builder(space)
        if model_options is None and not self._custom_builder:
            model_options = space.network_defaults()
        self.model_options = dict(model_options or {})
        unknown = set(training or {}) - TRAINING_OPTIONS
        if unknown:
            raise ValueError(f"unknown training option(s): {', '.join(sorted(unknown))}")
        self.training = {**space.training_defaults(), **(training or {})}
        self.memory_guard = memory_guard or MemoryGuard()
        self.speed = speed or SpeedOptions()
        self.name = f"train:{self.dataset.name}:{metric}"
        self.setup_fidelity(stopping)
        #: ``planner(arch) -> NetworkPlan | None``: set by a strategy that warm-starts (``attach``).
        self.planner: Callable[[Architecture], NetworkPlan | None] | None = None

    def settings(self) -> dict[str, Any]:
        """Plain data that, with the space, determines every result."""
        out = {"dataset": self.dataset.name, "dataset_seed": self.dataset.seed, "metric": self.metric,
               "seed": self.seed, "model_options": self.model_options, "training": self.training}
        if self.speed != SpeedOptions():
            out["speed"] = self.speed.to_dict()
        return out

    def spec(self) -> TrainingSpec:
        """A picklable :class:`TrainingSpec` that rebuilds this objective (default builders only)."""
        if self._custom_builder:
            raise ValueError("an objective with a custom builder cannot be rebuilt in another process; use the default builder")
        return TrainingSpec(
            space=self.space.name, dataset=self.dataset.name,
            dataset_seed=self.dataset.seed, metric=self.metric, seed=self.seed, device=self.device,
            model_options=tuple(sorted(self.model_options.items())), training=tuple(sorted(self.training.items())),
            data_folder=self.data_folder, speed=self.speed,
        )

    def train(self, arch: Architecture, plan: NetworkPlan | None = None) -> TrainResult:
        """Build, seed and train the network of one architecture (:meth:`train_network`)."""
        return self.train_network(arch, plan)[1]

    def train_network(self, arch: Architecture, plan: NetworkPlan | None = None) -> tuple[nn.Module, TrainResult]:
        """Build, seed and train the network of one architecture; ``(trained network, result)``.

        With a ``plan`` (:class:`~nasviz.objectives.network_store.NetworkPlan`, made by a strategy
        that warm-starts, such as Auto-Keras) the network starts from the stored trained network
        ``plan.ancestor`` morphed by ``plan.morphs`` (the space's function-preserving
        :meth:`~nasviz.spaces.base.SearchSpace.morph_network`), and the trained network is kept in
        the plan's store for its own descendants. If the ancestor is no longer stored (evicted),
        the network is trained from scratch and ``notes`` say so.

        A warm start that diverges is trained once more from a freshly initialised network, and
        the result says so in ``notes``. Why: a child that inherits an ancestor's trained weights
        restarts the learning-rate schedule at its peak, and on friedman1 10-19 of ~160
        warm-started children per 180 s run diverged in their first epoch although 7 of 8 such
        networks trained from scratch reached R^2 0.93-0.95 (a diverged attempt takes a few steps,
        so the retry is cheap; its seconds are counted).
        """
        seed, model, warm_from, notes = self.prepared(arch, plan)
        result = train_model(model, self.dataset, seed=seed, device=self.device, memory_guard=self.memory_guard,
                             speed=self.speed, **self.training)
        return self.concluded(arch, plan, seed, model, warm_from, notes, result)

    def train_networks(self, archs: Sequence[Architecture], plans: Sequence[NetworkPlan | None]
                       ) -> list[tuple[nn.Module, TrainResult] | BaseException]:
        """:meth:`train_network` for several architectures trained at once in this process
        (:func:`~nasviz.objectives.trainer.train_models`); an architecture whose building or
        training raised gets the exception in its place."""
        prepared: list[tuple[int, nn.Module, str | None, list[str]] | BaseException] = []
        for arch, plan in zip(archs, plans):
            try:
                prepared.append(self.prepared(arch, plan))
            except Exception as err:  # noqa: BLE001 - reported for this architecture only
                prepared.append(err)
        ready = [i for i, p in enumerate(prepared) if not isinstance(p, BaseException)]
        trained = train_models([prepared[i][1] for i in ready], self.dataset, [prepared[i][0] for i in ready],
                               device=self.device, memory_guard=self.memory_guard, speed=self.speed, **self.training)
        out: list[tuple[nn.Module, TrainResult] | BaseException] = list(prepared)  # type: ignore[arg-type]
        for i, result in zip(ready, trained):
            if isinstance(result, BaseException):
                out[i] = result
                continue
            seed, model, warm_from, notes = prepared[i]  # type: ignore[misc]
            try:
                out[i] = self.concluded(archs[i], plans[i], seed, model, warm_from, notes, result)
            except Exception as err:  # noqa: BLE001
                out[i] = err
        return out

    def prepared(self, arch: Architecture, plan: NetworkPlan | None) -> tuple[int, nn.Module, str | None, list[str]]:
        """``(seed, initial network, warm-start ancestor or None, notes)``; seeds the global RNG
        with the architecture's seed before building (so equivalent cells start alike)."""
        seed = arch_seed(arch.canonical_key(), self.seed)
        torch.manual_seed(seed)
        model, warm_from, notes = self._initial_network(arch, plan)
        return seed, model, warm_from, notes

    def concluded(self, arch: Architecture, plan: NetworkPlan | None, seed: int, model: nn.Module,
                   warm_from: str | None, notes: list[str], result: TrainResult) -> tuple[nn.Module, TrainResult]:
        """A diverged warm start trained again from scratch (:meth:`train_network`), notes, and the
        trained network kept in the plan's store."""
        if warm_from is not None and not result.ok and (result.error or "").startswith("diverged"):
            torch.manual_seed(seed)
            model = self.builder(arch, self.dataset, **self.model_options)
            retry = train_model(model, self.dataset, seed=seed, device=self.device, memory_guard=self.memory_guard,
                                speed=self.speed, **self.training)
            retry.seconds += result.seconds
            notes.append(f"the warm start from {warm_from} {result.error}; trained from scratch instead")
            result, warm_from = retry, None
        result.notes.extend(notes)
        result.warm_start = warm_from
        if plan is not None and result.ok:
            open_store(plan.folder, plan.max_bytes).save(self.space.format(arch), model.state_dict())
        return model, result

    def _initial_network(self, arch: Architecture, plan: NetworkPlan | None) -> tuple[nn.Module, str | None, list[str]]:
        """``(network, ancestor it was morphed from or None, notes)`` before training."""
        if plan is None or plan.ancestor is None:
            return self.builder(arch, self.dataset, **self.model_options), None, []
        arrays = open_store(plan.folder, plan.max_bytes).load(plan.ancestor)
        if arrays is None:
            note = f"the trained weights of {plan.ancestor} were evicted from the network store; trained from scratch"
            return self.builder(arch, self.dataset, **self.model_options), None, [note]
        from nasviz.spaces.morphs import Morph

        parent = self.builder(self.space.parse(plan.ancestor), self.dataset, **self.model_options)
        parent.load_state_dict({name: torch.as_tensor(a) for name, a in arrays.items()})
        model = self.space.morph_network(parent, [Morph.from_dict(m) for m in plan.morphs], seed=plan.seed)
        if model.__class__ is not parent.__class__ or getattr(model, "arch", arch) != arch:
            raise ValueError(f"morphing {plan.ancestor} by {list(plan.morphs)} does not give {self.space.format(arch)}")
        return model, plan.ancestor, []

    def evaluate_one(self, arch: Architecture | FidelityRequest, plan: NetworkPlan | FidelityPlan | None = None
                     ) -> Evaluation:
        if isinstance(plan, FidelityPlan):
            return train_at(self, arch_of(arch), plan)
        start = time.perf_counter()
        try:
            res: TrainResult | BaseException = self.train(arch, plan)
        except Exception as err:  # noqa: BLE001 - one bad architecture must not stop the search
            res = err
        return self.evaluation(arch, res, start)

    def evaluation(self, arch: Architecture, res: TrainResult | BaseException, start: float) -> Evaluation:
        """The :class:`Evaluation` of one training (or of the exception that stopped it)."""
        if isinstance(res, BaseException):
            return Evaluation(arch, None, time.perf_counter() - start, FAILED, f"{type(res).__name__}: {res}")
        info = {
            "valid_curve": res.valid_curve, "valid_loss_curve": res.valid_loss_curve,
            "train_loss_curve": res.train_loss_curve, "n_parameters": res.n_parameters,
            "train_seconds": res.seconds, "epochs_run": res.epochs_run, "device": res.device,
            "test_score": res.test_score, "valid_score": res.valid_score, "score_metric": res.metric,
            "batch_size": res.batch_size, "oom_retries": res.retries,
            # which process trained it, and what that process set up (once per worker)
            "worker": {"pid": os.getpid(), "setups": setup_counts()},
        }
        if res.notes:
            info["notes"] = list(res.notes)
        if res.warm_start is not None:
            info["warm_start"] = res.warm_start
        if not res.ok:
            return Evaluation(arch, None, res.seconds, FAILED, res.error, info)
        value = res.valid_score if self.metric.startswith("valid") else res.test_score
        return Evaluation(arch, float(value), res.seconds, OK, None, info)

    def evaluate(self, archs: Sequence[Architecture], plans: Sequence[NetworkPlan | None] | None = None) -> list[Evaluation]:
        """Train each architecture; ``plans`` (one per architecture) default to the
        :attr:`planner`'s (a warm-starting strategy sets it in ``attach``), else none. With
        ``speed.networks_together = k > 1``, ``k`` at a time train together in this process."""
        if plans is None:
            plans = [self.planner(arch_of(a)) if self.planner is not None else None for a in archs]
        plans = [self.fidelity_plan(a, p) for a, p in zip(archs, plans)]
        k = self.speed.networks_together
        if k <= 1 or len(archs) <= 1 or any(isinstance(p, FidelityPlan) for p in plans):
            return [self.evaluate_one(a, p) for a, p in zip(archs, plans)]
        out: list[Evaluation] = []
        for i in range(0, len(archs), k):
            start = time.perf_counter()
            group = self.train_networks(archs[i : i + k], plans[i : i + k])
            out.extend(self.evaluation(a, r if isinstance(r, BaseException) else r[1], start)
                       for a, r in zip(archs[i : i + k], group))
        return out

    def optimum(self) -> None:
        return None

    def domain(self) -> None:
        return None
