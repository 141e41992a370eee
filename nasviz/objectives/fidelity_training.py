"""Live training at a budget: stop a training early, or continue it later from its checkpoint.

:class:`~nasviz.objectives.training.TrainingObjective` hands an architecture to :func:`train_at`
with a :class:`FidelityPlan` when the search asks for a budget (a multi-fidelity strategy's
:class:`~nasviz.fidelity.FidelityRequest`) or an early-stopping rule is set
(:mod:`nasviz.fidelity.stopping`, usable with every strategy). The plan is plain data, made in the
searching process and sent with the architecture to whichever process trains it:

* ``budget``: train until this epoch, then keep a checkpoint (the trainer's
  :meth:`~nasviz.objectives.training_loop.TrainingRun.checkpoint`: weights, optimiser state,
  batch-order generator, counters) in ``folder``; ``previous``: continue from the checkpoint kept at
  that epoch, paying only the epochs added (the learning-rate schedule runs over the full budget,
  so a continued training is the one that was never interrupted). A checkpoint that is gone (the
  folder of a search resumed in a new process) means training again from scratch; the notes say so
  and the cost is what it took.
* ``stopping`` with ``records`` (the earlier trainings' validation curves): the rule is asked after
  every epoch, and a stop ends the training there.

The evaluation's :class:`~nasviz.fidelity.FidelityOutcome` says which epoch it reached, whether that
is the architecture's full result (its last epoch, or an early stop by the trainer's own patience
rule) and, after a stop, the rule's decision. Its ``info`` keeps the curves of the epochs it trained
(a continuation's curves start after ``previous``: the run store keeps each epoch once) and, for
ASHA, the rungs the training was promoted past (``rung_decisions``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from nasviz.arch import Architecture
from nasviz.fidelity.decisions import STOP, RungDecision
from nasviz.fidelity.ladder import FidelityOutcome
from nasviz.fidelity.stopping import CurveRecords, StoppingRule
from nasviz.objectives.base import Evaluation
from nasviz.objectives.network_store import NetworkPlan
from nasviz.objectives.trainer import train_model

if TYPE_CHECKING:
    from nasviz.objectives.training import TrainingObjective

#: Curves a continued training's ``info`` keeps only from ``previous`` on.
_CURVES = ("valid_curve", "valid_loss_curve", "train_loss_curve")


@dataclass(frozen=True)
class FidelityPlan:
    """What travels with an architecture to the process that trains it (module docstring)."""

    network: NetworkPlan | None = None
    budget: float | None = None
    previous: float | None = None
    stopping: StoppingRule | None = None
    records: CurveRecords = CurveRecords()
    folder: str | None = None


class LiveFidelity:
    """What a training objective adds for budgets and early stopping (mixed into
    :class:`~nasviz.objectives.training.TrainingObjective`): its ladder (whole epochs ``epochs *
    3^-k``, continuing resumes), the early-stopping rule and the curves it compares with, and the
    :class:`FidelityPlan` of each architecture. ``observe`` is called by the runner with every
    step's results, replayed ones included, so the rule sees the same earlier trainings whether a
    run was resumed or not."""

    stopping: StoppingRule | None = None

    def setup_fidelity(self, stopping: StoppingRule | None) -> None:
        self.stopping = stopping
        self._curves: dict[str, list[float]] = {}
        self._completed: dict[str, bool] = {}
        self._folder: Any = None

    @property
    def ladder(self):
        from nasviz.fidelity.ladder import Ladder

        return Ladder.geometric(int(self.training["epochs"]))

    @property
    def cost_model(self):
        from nasviz.fidelity.ladder import RESUME, CostModel

        return CostModel(RESUME)

    def records(self) -> CurveRecords:
        return CurveRecords(tuple(tuple(c) for c in self._curves.values()), tuple(self._completed.values()))

    def fidelity_plan(self, item: Any, network: NetworkPlan | None) -> Any:
        """The plan for ``item`` (an architecture or a FidelityRequest): a :class:`FidelityPlan`
        when it asks for a budget or a rule is set, else ``network`` as it is."""
        from nasviz.fidelity.ladder import FidelityRequest

        request = item if isinstance(item, FidelityRequest) else None
        if isinstance(network, FidelityPlan) or (request is None and self.stopping is None):
            return network
        if request is not None and self._folder is None:
            import tempfile

            self._folder = tempfile.TemporaryDirectory(prefix="nasviz-checkpoints-")
        return FidelityPlan(network=network, budget=None if request is None else request.fidelity,
                            previous=None if request is None else request.previous, stopping=self.stopping,
                            records=self.records() if self.stopping is not None else CurveRecords(),
                            folder=self._folder.name if self._folder is not None else None)

    def observe(self, evaluations: Any) -> None:
        """Keep the validation curves of trained architectures (a continuation extends its own)."""
        for ev in evaluations:
            curve = (ev.info or {}).get("valid_curve")
            if not ev.ok or not curve:
                continue
            key = self.space.format(ev.arch)
            previous = ev.fidelity.previous if ev.fidelity is not None and ev.fidelity.previous else 0
            self._curves[key] = self._curves.get(key, [])[: int(previous)] + [float(v) for v in curve]
            self._completed[key] = ev.fidelity is None or ev.fidelity.stop is None


def checkpoint_path(folder: str, arch: str, seed: int, epoch: float) -> Path:
    """Where the checkpoint of ``arch`` (trained with ``seed``) after ``epoch`` epochs is kept."""
    key = hashlib.sha256(f"{arch}|{seed}".encode("utf-8")).hexdigest()[:24]
    return Path(folder) / f"{key}-{int(round(epoch))}.pt"


def train_at(objective: "TrainingObjective", arch: Architecture, plan: FidelityPlan) -> Evaluation:
    """Train ``arch`` as ``plan`` says (module docstring); never raises for a bad architecture."""
    start = time.perf_counter()
    text = objective.space.format(arch)
    max_epochs = int(objective.training["epochs"])
    try:
        seed, model, warm_from, notes = objective.prepared(arch, plan.network)
        resume = _load(plan, text, seed, notes)
        curve = list(resume["valid_curve"]) if resume is not None else []
        passed: list[RungDecision] = []
        stopped: list[RungDecision] = []

        def on_epoch(report) -> bool:
            curve.append(report.valid_score)
            if plan.stopping is not None:
                decision = plan.stopping.decide(plan.records, text, curve, max_epochs)
                if decision is not None and decision.action == STOP:
                    stopped.append(decision)
                    return True
                if decision is not None and decision.rule == "asha":
                    passed.append(decision)
            return plan.budget is not None and report.epoch >= plan.budget

        keep = None
        if plan.folder is not None and plan.budget is not None and plan.budget < max_epochs:
            keep = lambda state: torch.save(state, checkpoint_path(plan.folder, text, seed, len(state["valid_curve"])))
        result = train_model(model, objective.dataset, seed=seed, device=objective.device,
                             memory_guard=objective.memory_guard, speed=objective.speed, on_epoch=on_epoch,
                             resume=resume, keep=keep, **objective.training)
        model, result = objective.concluded(arch, plan.network, seed, model, warm_from, notes, result)
    except Exception as err:  # noqa: BLE001 - one bad architecture must not stop the search
        return objective.evaluation(arch, err, start)
    evaluation = objective.evaluation(arch, result, start)
    previous = plan.previous if resume is not None else None
    reached = float(result.epochs_run)
    full = not stopped and (plan.budget is None or reached >= max_epochs or reached < plan.budget)
    outcome = FidelityOutcome(reached, float(max_epochs), "epochs", previous, full, stopped[0] if stopped else None)
    info = dict(evaluation.info)
    if previous is not None:
        for name in _CURVES:
            info[name] = list(info.get(name) or [])[int(previous):]
    if passed:
        info["rung_decisions"] = [d.to_dict() for d in passed]
    return dataclasses.replace(evaluation, info=info, fidelity=outcome)


def _load(plan: FidelityPlan, arch: str, seed: int, notes: list[str]) -> dict[str, Any] | None:
    """The checkpoint to continue from, or ``None`` (from scratch; a missing one is noted)."""
    if plan.previous is None or plan.folder is None:
        return None
    path = checkpoint_path(plan.folder, arch, seed, plan.previous)
    if not path.is_file():
        notes.append(f"no checkpoint after {plan.previous:g} epochs was kept (a resumed search, or another "
                     "process's folder): trained from scratch")
        return None
    return torch.load(path, weights_only=True)


__all__ = ["FidelityPlan", "LiveFidelity", "checkpoint_path", "train_at"]
