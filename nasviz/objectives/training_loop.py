"""The training loop of one network, an epoch at a time, and several networks interleaved.

A :class:`TrainingRun` is one network's training as a small state machine:
``launch_epoch()`` queues an epoch's steps and its validation pass (on an accelerator they run
asynchronously, on the run's own CUDA stream), ``finish_epoch()`` reads the epoch's metrics in one
host read, applies early stopping and calls the per-epoch callback; ``result()`` scores the test
split. :func:`run_together` drives several runs: while the device works on one network's epoch,
the host queues the others', so small networks fill the device together ("several networks per
process"). One run driven alone is exactly the classic loop.

Per epoch (the data flow): a private ``torch.Generator`` seeded with the run's seed draws the
permutation of the training split (the global RNG is never touched); the split already lives on
the device (:func:`~nasviz.objectives.accelerator.placed`, copied once per worker) and is gathered
in that order once per epoch (per batch for a training split over :data:`GATHER_EPOCH_BYTES`);
each batch of ``batch_size`` (times the speed options' ``batch_scale``) is one optimisation step
with the learning rate of :class:`~nasviz.objectives.speed.LearningRate`; a batch of one sample is
skipped (BatchNorm cannot train on it).
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import torch
from torch import nn

from nasviz.objectives.accelerator import placed
from nasviz.objectives.base import FAILED, OK
from nasviz.objectives.datasets import CLASSIFICATION, Dataset
from nasviz.objectives.speed import LearningRate, SpeedOptions, layout, prepare_model
from nasviz.objectives.train_result import BatchHook, EpochCallback, EpochReport, TrainResult
from nasviz.objectives.train_steps import (
    DeviceMetrics, EagerStep, GraphedStep, HostMetrics, evaluate, loss_function, make_optimizer, scores,
)

#: A training split up to this size is gathered in the epoch's order once per epoch (one copy, then
#: contiguous slices); a larger one batch by batch (no second copy of a large split).
GATHER_EPOCH_BYTES = 64 * 2**20


@dataclass(frozen=True)
class LoopSettings:
    """What one run trains with (:func:`~nasviz.objectives.trainer.train_model` documents each)."""

    epochs: int
    patience: int
    lr: float
    batch_size: int
    seed: int
    optimizer: str = "sgd"
    weight_decay: float = 5e-4
    #: the estimate averages the last this many validation scores
    window: int = 3
    speed: SpeedOptions = field(default_factory=SpeedOptions)


class TrainingRun:
    """One network's training (module docstring). ``model`` is trained in place on ``device``."""

    def __init__(self, model: nn.Module, dataset: Dataset, settings: LoopSettings, device: torch.device,
                 on_batch: BatchHook | None = None, on_epoch: EpochCallback | None = None) -> None:
        self.start = time.perf_counter()
        self.model, self.settings, self.device, self.task = model, settings, device, dataset.task
        self.on_batch, self.on_epoch = on_batch, on_epoch
        speed = settings.speed
        self.data = placed(dataset, device)
        self.stream = torch.cuda.Stream(device) if device.type == "cuda" else None
        if self.stream is not None:
            self.stream.wait_stream(torch.cuda.current_stream(device))  # the data were copied on the default stream
        graphed = device.type == "cuda" and speed.cuda_graphs and speed.compile is None
        with self.on_stream():
            model.to(device).train()
            self.forward = prepare_model(model, speed, len(dataset.input_shape))
            params = [p for p in model.parameters() if p.requires_grad]
            self.opt = make_optimizer(params, settings.optimizer, settings.lr, settings.weight_decay, graphed)
            self.metrics = HostMetrics() if speed.host_reads_each_step(device) else DeviceMetrics(device)
        self.batch_size = int(settings.batch_size) * speed.batch_scale
        eager = EagerStep(self.forward, self.opt, loss_function(self.task), self.metrics, device, speed)
        self.step = GraphedStep(eager, self.batch_size, self.stream) if graphed and self.stream is not None else eager
        self.n = len(self.data.y_train)
        self.steps_per_epoch = max(1, math.ceil(self.n / self.batch_size))
        self.schedule = LearningRate(settings.lr, settings.epochs * self.steps_per_epoch, settings.optimizer,
                                     speed.batch_scale, round(speed.warmup() * self.steps_per_epoch))
        self.generator = torch.Generator().manual_seed(int(settings.seed))
        self.valid_curve: list[float] = []
        self.valid_loss_curve: list[float] = []
        self.train_loss_curve: list[float] = []
        self.best_loss, self.since_best, self.global_step, self.epoch = math.inf, 0, 0, 0
        self.done, self.failure, self.stopped_by = False, None, None
        self._pending: tuple[object, object, int] | None = None

    def on_stream(self):
        """The run's CUDA stream as the current one (nothing on a CPU)."""
        return torch.cuda.stream(self.stream) if self.stream is not None else contextlib.nullcontext()

    # ------------------------------------------------------------------ one epoch
    def _batches(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        """The epoch's batches in a fresh random order (module docstring)."""
        order = torch.randperm(self.n, generator=self.generator).to(self.device)
        x, y, b = self.data.x_train, self.data.y_train, self.batch_size
        if x.element_size() * x.numel() <= GATHER_EPOCH_BYTES:
            x_epoch, y_epoch = x.index_select(0, order), y.index_select(0, order)
            for s in range(self.steps_per_epoch):
                yield x_epoch[s * b : (s + 1) * b], y_epoch[s * b : (s + 1) * b]
        else:
            for s in range(self.steps_per_epoch):
                idx = order[s * b : (s + 1) * b]
                yield x[idx], y[idx]

    def launch_epoch(self) -> None:
        """Queue one epoch's steps and its validation pass (asynchronous on an accelerator)."""
        speed, seen, diverged = self.settings.speed, 0, False
        with self.on_stream():
            self.metrics.start_epoch()
            for s, (xb, yb) in enumerate(self._batches()):
                if self.on_batch is not None:
                    self.on_batch(self.epoch, s)
                lr = self.schedule(self.global_step)
                if len(xb) < 2 and self.n >= 2:  # BatchNorm cannot train on a batch of one sample
                    continue
                if not self.step(layout(xb, speed), yb, lr, s):
                    diverged = True
                    break
                seen += len(xb)
                self.global_step += 1
            valid = None if diverged else evaluate(self.forward, self.model, layout(self.data.x_valid, speed),
                                                   self.data.y_valid, self.task, self.device, speed)
        self._pending = (self.metrics.packed(), valid, seen)

    def finish_epoch(self) -> None:
        """Read the launched epoch's metrics (one host read), then early stopping and the callback."""
        assert self._pending is not None, "finish_epoch() without launch_epoch()"
        packed, valid, seen = self._pending
        self._pending = None
        with self.on_stream():
            values = _read(packed, valid)
        self.epoch += 1
        loss_sum, bad_step, bad_value = values[:3]
        if bad_step >= 0:
            return self._fail(f"diverged: the training loss is {bad_value} at epoch {self.epoch}, step {int(bad_step) + 1}")
        train_loss = loss_sum / max(seen, 1)
        self.train_loss_curve.append(train_loss)
        v_loss, v_score = scores(self.task, values[3:])
        if not math.isfinite(v_loss) or not math.isfinite(v_score):
            return self._fail(f"diverged: the validation loss is {v_loss} after epoch {self.epoch}")
        self.valid_curve.append(v_score)
        self.valid_loss_curve.append(v_loss)
        if v_loss < self.best_loss:
            self.best_loss, self.since_best = v_loss, 0
        else:
            self.since_best += 1
            if self.since_best >= self.settings.patience:
                self.done, self.stopped_by = True, "patience"
        if self.epoch >= self.settings.epochs:
            self.done = True
        if self.on_epoch is not None:
            report = EpochReport(self.epoch, train_loss, v_loss, v_score, time.perf_counter() - self.start)
            if self.on_epoch(report) and not self.done:
                self.done, self.stopped_by = True, "callback"

    def _fail(self, reason: str) -> None:
        self.done, self.failure = True, reason

    # ------------------------------------------------------------------ continuing later
    def checkpoint(self) -> dict:
        """What continuing this run later needs (a multi-fidelity search resumes a training at a
        higher budget, :mod:`nasviz.objectives.fidelity_training`): the weights, the optimiser's
        state, the batch-order generator, the counters and the curves, as tensors and plain numbers
        (``torch.save`` / ``torch.load(weights_only=True)``). The learning-rate schedule is a
        function of the step over ``settings.epochs``, so a run continued from its checkpoint
        trains exactly as one that was never interrupted."""
        return {"model": {k: v.detach().cpu() for k, v in self.model.state_dict().items()},
                "optimizer": self.opt.state_dict(), "generator": self.generator.get_state(),
                "epoch": self.epoch, "global_step": self.global_step, "best_loss": self.best_loss,
                "since_best": self.since_best, "valid_curve": list(self.valid_curve),
                "valid_loss_curve": list(self.valid_loss_curve), "train_loss_curve": list(self.train_loss_curve)}

    def restore(self, state: dict) -> None:
        """Continue from :meth:`checkpoint`'s state (before the first :meth:`launch_epoch`)."""
        with self.on_stream():
            self.model.load_state_dict({k: v.to(self.device) for k, v in state["model"].items()})
            self.opt.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        self.epoch, self.global_step = int(state["epoch"]), int(state["global_step"])
        self.best_loss, self.since_best = float(state["best_loss"]), int(state["since_best"])
        self.valid_curve = list(state["valid_curve"])
        self.valid_loss_curve = list(state["valid_loss_curve"])
        self.train_loss_curve = list(state["train_loss_curve"])
        self.done = self.epoch >= self.settings.epochs

    # ------------------------------------------------------------------ the end
    def notes(self) -> list[str]:
        failed = getattr(self.step, "failed", None)
        return [failed] if failed else []

    def result(self) -> TrainResult:
        """The finished run: the estimate (mean of the last ``window`` validation scores) and the
        test score; or a failed result with the reason and the curves up to the failure."""
        metric = "accuracy" if self.task == CLASSIFICATION else "r2"
        common = dict(valid_curve=self.valid_curve, valid_loss_curve=self.valid_loss_curve,
                      train_loss_curve=self.train_loss_curve, n_parameters=0, epochs_run=len(self.valid_curve),
                      device=str(self.device), metric=metric, notes=self.notes())
        if self.failure is not None:
            return TrainResult(status=FAILED, valid_score=None, test_score=None, error=self.failure,
                               seconds=time.perf_counter() - self.start, **common)
        estimate = float(np.mean(self.valid_curve[-self.settings.window :]))
        with self.on_stream():
            test = evaluate(self.forward, self.model, layout(self.data.x_test, self.settings.speed), self.data.y_test,
                            self.task, self.device, self.settings.speed)
            _, test_score = scores(self.task, test.tolist())
        return TrainResult(status=OK, valid_score=estimate, test_score=test_score, stopped_by=self.stopped_by,
                           seconds=time.perf_counter() - self.start, **common)


def _read(packed: object, valid: object) -> list[float]:
    """The epoch's numbers on the host in one read: ``[loss sum, bad step, bad loss, valid loss, a, b]``."""
    tensors = [t for t in (packed, valid) if isinstance(t, torch.Tensor)]
    device_values = torch.cat([t.reshape(-1) for t in tensors]).tolist() if tensors else []
    head = device_values[:3] if isinstance(packed, torch.Tensor) else list(packed)  # type: ignore[arg-type]
    tail = device_values[-3:] if valid is not None else [math.nan] * 3
    return [float(v) for v in head] + [float(v) for v in tail]


def run_together(runs: list[TrainingRun]) -> list[BaseException | None]:
    """Train ``runs`` interleaved epoch by epoch until each is done (module docstring).

    As soon as one run's epoch is read, its next epoch is queued, so the device always has work
    from the others while the host reads one. An exception in one run (an out-of-memory error)
    ends that run only; the list says which run raised what (``None``: it finished)."""
    errors: list[BaseException | None] = [None] * len(runs)

    def attempt(i: int, action) -> bool:
        try:
            action()
            return True
        except Exception as err:  # noqa: BLE001 - the caller classifies (OOM retried, others raised)
            errors[i] = err
            return False

    active = [i for i, run in enumerate(runs) if attempt(i, run.launch_epoch)]
    while active:
        for i in list(active):
            run = runs[i]
            if not attempt(i, run.finish_epoch) or run.done or not attempt(i, run.launch_epoch):
                active.remove(i)
    return errors
