"""Train real networks: a generic trainer with early stopping and memory adaptation.

:func:`train_model` trains any ``torch.nn.Module`` on a :class:`~nasviz.objectives.datasets.Dataset`;
:func:`train_models` trains several at once in this process (interleaved, each on its own CUDA
stream on a GPU). The loop itself is :mod:`nasviz.objectives.training_loop`; how fast it runs is
:class:`~nasviz.objectives.speed.SpeedOptions` (the defaults train exactly as before on a CPU).

* **Early stopping** (paper 003, App. D, following scikit-learn's MLP): training stops when the
  validation *loss* has not decreased for ``patience`` (tau) consecutive epochs, or after
  ``epochs``. The performance **estimate** is the mean of the validation scores of the last tau
  epochs run ("more accurate than the final metric value on the validation set", App. D).
  Scores are higher-is-better: accuracy in percent for classification, R^2 for regression.
* **Per-epoch callback** ``on_epoch(EpochReport) -> stop?`` after every epoch
  (:mod:`nasviz.objectives.train_result`): live curves and early-stopping rules build on it.
* **Device**: CUDA when available, else CPU (``device=None``); or a name such as ``"cpu"``. The
  dataset is copied to the device once per process (:func:`~nasviz.objectives.accelerator.placed`).
* **Divergence**: a non-finite loss (NaN/inf, e.g. a huge learning rate) stops training and is
  reported as ``status="failed"`` with the epoch and step; the search goes on.
* **GPU memory adaptation** (paper 003 §4.4): a :class:`MemoryGuard` holds an upper bound on the
  estimated size of a network (parameters, gradients, optimiser state and the activations of one
  batch, in float32 scalars). A network whose estimate exceeds the bound is discarded (a failed
  evaluation, no training). When training runs out of memory anyway (``torch.cuda.
  OutOfMemoryError`` or a ``RuntimeError`` saying "out of memory"), the bound is lowered below the
  estimate of the network that crashed and the evaluation is retried with half the batch size
  (smaller activations), until it fits or the batch cannot shrink further.

The objective that trains architectures with it is :class:`nasviz.objectives.training.TrainingObjective`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import torch
from torch import nn

from nasviz.objectives.accelerator import resolve_device
from nasviz.objectives.base import FAILED
from nasviz.objectives.datasets import CLASSIFICATION, Dataset
from nasviz.network_size import count_parameters
from nasviz.objectives.speed import SpeedOptions
from nasviz.objectives.train_result import BatchHook, EpochCallback, EpochReport, TrainResult
from nasviz.objectives.training_loop import LoopSettings, TrainingRun, run_together

__all__ = ["BatchHook", "EpochCallback", "EpochReport", "MemoryGuard", "TrainResult", "estimate_size",
           "is_out_of_memory", "resolve_device", "train_model", "train_models"]


def is_out_of_memory(err: BaseException) -> bool:
    """Whether ``err`` is an accelerator out-of-memory error."""
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None)
    if oom_type is not None and isinstance(err, oom_type):
        return True
    return isinstance(err, RuntimeError) and "out of memory" in str(err).lower()


def estimate_size(model: nn.Module, input_shape: Sequence[int], batch_size: int) -> int:
    """Estimated training memory of ``model`` in float32 scalars.

    ``4 * parameters`` (weights, gradients and two optimiser moments at most) plus
    ``2 * batch_size * activations`` (forward outputs of every leaf module for one sample,
    measured by one forward pass on a single zero sample on the CPU, kept for the backward pass,
    times two for their gradients). Like Auto-Keras's estimate it is an approximation: the
    :class:`MemoryGuard` corrects for its errors by lowering the bound after a real OOM.
    """
    activations = 0

    def hook(_module, _inputs, output):
        nonlocal activations
        if isinstance(output, torch.Tensor):
            activations += output.numel()

    handles = [m.register_forward_hook(hook) for m in model.modules() if not list(m.children())]
    was_training = model.training
    try:
        model.eval()
        device = next((p.device for p in model.parameters()), torch.device("cpu"))
        with torch.no_grad():
            model(torch.zeros((1, *input_shape), device=device))
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)
    return 4 * count_parameters(model) + 2 * batch_size * activations


@dataclass
class MemoryGuard:
    """Paper 003 §4.4: an upper bound on network size, lowered after an out-of-memory error.

    ``cap`` is in float32 scalars (see :func:`estimate_size`); ``None`` means no bound until the
    first out-of-memory error sets one. On an OOM the bound becomes ``shrink * estimate`` of the
    network that crashed, so that network (at the batch size that crashed) and every larger one
    are refused from then on; the trainer retries with a smaller batch.
    """

    cap: float | None = None
    shrink: float = 0.8
    max_retries: int = 4
    events: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not 0 < self.shrink < 1:
            raise ValueError(f"shrink must be in (0, 1), got {self.shrink}")
        if self.cap is not None and self.cap <= 0:
            raise ValueError(f"cap must be positive, got {self.cap}")

    def allows(self, size: float) -> bool:
        return self.cap is None or size <= self.cap

    def lower(self, size: float) -> None:
        new = self.shrink * size
        self.cap = new if self.cap is None else min(self.cap, new)
        self.events.append({"size": float(size), "cap": float(self.cap)})


def _settings(epochs: int, patience: int, lr: float, batch_size: int, seed: int, optimizer: str,
              weight_decay: float, estimate_epochs: int | None, speed: SpeedOptions | None) -> LoopSettings:
    for name, value in (("epochs", epochs), ("patience", patience), ("batch_size", batch_size)):
        if int(value) < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    if not (lr > 0 and math.isfinite(lr)):
        raise ValueError(f"lr must be a positive finite number, got {lr}")
    if optimizer not in ("sgd", "adam"):
        raise ValueError(f"optimizer must be 'sgd' or 'adam', got {optimizer!r}")
    return LoopSettings(epochs=int(epochs), patience=int(patience), lr=float(lr), batch_size=int(batch_size),
                        seed=int(seed), optimizer=optimizer, weight_decay=float(weight_decay),
                        window=int(estimate_epochs or patience), speed=speed or SpeedOptions())


def train_model(
    model: nn.Module,
    dataset: Dataset,
    *,
    epochs: int = 12,
    patience: int = 3,
    lr: float = 0.05,
    batch_size: int = 128,
    seed: int = 0,
    device: str | torch.device | None = None,
    optimizer: str = "sgd",
    weight_decay: float = 5e-4,
    memory_guard: MemoryGuard | None = None,
    on_batch: BatchHook | None = None,
    estimate_epochs: int | None = None,
    on_epoch: EpochCallback | None = None,
    speed: SpeedOptions | None = None,
    resume: dict | None = None,
    keep: Callable[[dict], None] | None = None,
) -> TrainResult:
    """Train ``model`` on ``dataset`` with early stopping; never raises for a bad run.

    Parameters
    ----------
    model : nn.Module mapping (B, *dataset.input_shape) -> (B, dataset.n_outputs)
        Trained in place (moved to ``device``); its initial weights are the caller's (seed
        ``torch.manual_seed`` before building it for reproducible runs).
    epochs : maximum number of epochs.
    patience : tau of paper 003 App. D (stop after tau epochs without a lower validation loss;
        the estimate is the mean of the last tau validation scores). Must be >= 1.
    estimate_epochs : average the last this many epochs' validation scores for the estimate
        instead of ``patience`` (the tabulated benchmarks train without early stopping,
        ``patience = epochs``, and average the last two epochs).
    lr, weight_decay, optimizer : ``"sgd"`` (Nesterov momentum 0.9, cosine-annealed learning rate
        over ``epochs`` as in NAS-Bench-201) or ``"adam"``.
    batch_size : mini-batch size; halved on each out-of-memory retry.
    seed : seeds the mini-batch order (a private generator: the global RNG is not touched).
    memory_guard : the size bound of paper 003 §4.4, shared across calls to learn from OOMs.
    on_batch : ``hook(epoch, step)`` called before each step (test hook for failure injection).
    on_epoch : ``callback(EpochReport) -> stop?`` after each epoch (module docstring).
    speed : :class:`~nasviz.objectives.speed.SpeedOptions` (default: train as always).
    resume : a :meth:`TrainingRun.checkpoint` to continue from (its epochs count towards ``epochs``;
        the result's curves and seconds cover the whole run and this part respectively).
    keep : ``keep(checkpoint)`` called with the run's state when it ends successfully (to continue
        it later).

    Returns
    -------
    TrainResult with ``status="ok"``, or ``"failed"`` and ``error`` (diverged, too large, OOM).
    """
    settings = _settings(epochs, patience, lr, batch_size, seed, optimizer, weight_decay, estimate_epochs, speed)
    guard = memory_guard if memory_guard is not None else MemoryGuard()
    attempts = _Attempts(model, dataset, settings, resolve_device(device), guard, on_batch, on_epoch)
    attempts.resume, attempts.keep = resume, keep
    return attempts.run()


def train_models(
    models: Sequence[nn.Module],
    dataset: Dataset,
    seeds: Sequence[int],
    *,
    epochs: int = 12,
    patience: int = 3,
    lr: float = 0.05,
    batch_size: int = 128,
    device: str | torch.device | None = None,
    optimizer: str = "sgd",
    weight_decay: float = 5e-4,
    memory_guard: MemoryGuard | None = None,
    estimate_epochs: int | None = None,
    on_epoch: Sequence[EpochCallback | None] | None = None,
    speed: SpeedOptions | None = None,
) -> list[TrainResult | BaseException]:
    """Train several networks at once in this process (:func:`~nasviz.objectives.training_loop.run_together`).

    Each network gets what :func:`train_model` would give it with its seed: the same per-network
    loop, only interleaved with the others (on a CPU the results are identical to training them
    one after another). A network over the memory guard's cap fails without training; one that
    runs out of memory is trained again alone under :func:`train_model`'s retry rule; any other
    exception is returned in that network's place (the caller decides), never raised.
    """
    if len(seeds) != len(models) or (on_epoch is not None and len(on_epoch) != len(models)):
        raise ValueError("train_models needs one seed (and one callback, if any) per model")
    callbacks = list(on_epoch) if on_epoch is not None else [None] * len(models)
    dev = resolve_device(device)
    guard = memory_guard if memory_guard is not None else MemoryGuard()
    attempts = [_Attempts(m, dataset, _settings(epochs, patience, lr, batch_size, s, optimizer, weight_decay,
                                               estimate_epochs, speed), dev, guard, None, cb)
                for m, s, cb in zip(models, seeds, callbacks)]
    out: list[TrainResult | BaseException | None] = [a.refused() for a in attempts]
    runs: dict[int, TrainingRun] = {}
    for i in (i for i, r in enumerate(out) if r is None):
        try:
            runs[i] = attempts[i].new_run()
        except Exception as err:  # noqa: BLE001 - classified below like an error while training
            out[i] = err
    for i, err in zip(runs, run_together(list(runs.values()))):
        out[i] = err if err is not None else attempts[i].finished(runs[i].result())
    for i, value in enumerate(out):
        if isinstance(value, BaseException) and is_out_of_memory(value):
            out[i] = attempts[i].after_oom(value) or attempts[i].run()
    return out  # type: ignore[return-value]


class _Attempts:
    """One network's attempts under the memory guard (paper 003 §4.4, module docstring): refuse it
    if its estimate is over the cap, retry from its initial weights with half the batch after an
    out-of-memory error, give up after ``max_retries`` or at a batch of one."""

    def __init__(self, model: nn.Module, dataset: Dataset, settings: LoopSettings, device: torch.device,
                 guard: MemoryGuard, on_batch: BatchHook | None, on_epoch: EpochCallback | None) -> None:
        self.model, self.dataset, self.settings, self.device, self.guard = model, dataset, settings, device, guard
        self.on_batch, self.on_epoch = on_batch, on_epoch
        self.start = time.perf_counter()
        self.n_params = count_parameters(model)
        self.initial_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        self.batch_size, self.retries, self.size = settings.batch_size, 0, 0.0
        #: a checkpoint to continue from, and where to hand the final state (train_model's resume / keep)
        self.resume: dict | None = None
        self.keep: Callable[[dict], None] | None = None

    def _failed(self, reason: str) -> TrainResult:
        metric = "accuracy" if self.dataset.task == CLASSIFICATION else "r2"
        return TrainResult(status=FAILED, valid_score=None, test_score=None, valid_curve=[], valid_loss_curve=[],
                           train_loss_curve=[], n_parameters=self.n_params, seconds=time.perf_counter() - self.start,
                           epochs_run=0, device=str(self.device), metric=metric, error=reason,
                           batch_size=self.batch_size, retries=self.retries)

    def refused(self) -> TrainResult | None:
        """A failed result if no batch size fits under the cap, else ``None`` (train at :attr:`batch_size`)."""
        while True:
            self.size = estimate_size(self.model, self.dataset.input_shape, self.batch_size)
            if self.guard.allows(self.size):
                return None
            if self.retries > 0 and self.batch_size > 1:  # after an OOM, first try smaller batches
                self.batch_size = max(1, self.batch_size // 2)
                continue
            return self._failed(f"estimated size {self.size} exceeds the memory cap {self.guard.cap:.0f} (paper 003 §4.4)")

    def new_run(self) -> TrainingRun:
        settings = replace(self.settings, batch_size=self.batch_size)
        return TrainingRun(self.model, self.dataset, settings, self.device, self.on_batch, self.on_epoch)

    def finished(self, result: TrainResult) -> TrainResult:
        result.seconds = time.perf_counter() - self.start
        result.retries, result.n_parameters = self.retries, self.n_params
        result.batch_size = self.batch_size * self.settings.speed.batch_scale  # the batch it trained with
        return result

    def after_oom(self, err: BaseException) -> TrainResult | None:
        """Lower the cap, restore the initial weights, halve the batch; a failed result when out of tries."""
        self.guard.lower(self.size)
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        self.retries += 1
        self.model.load_state_dict(self.initial_state)  # retry from the same initial weights
        if self.retries > self.guard.max_retries or self.batch_size == 1:
            return self._failed(f"out of memory after {self.retries} attempt(s): {err}")
        self.batch_size = max(1, self.batch_size // 2)
        return None

    def run(self) -> TrainResult:
        """Train alone until it succeeds, fails, or the guard gives up."""
        while True:
            refusal = self.refused()
            if refusal is not None:
                return refusal
            try:
                run = self.new_run()
                if self.resume is not None:
                    run.restore(self.resume)
                error = None if run.done else run_together([run])[0]
            except Exception as err:  # noqa: BLE001 - an OOM while moving the network is retried too
                error = err
            if error is None:
                result = self.finished(run.result())
                if self.keep is not None and result.ok:
                    self.keep(run.checkpoint())
                return result
            if not is_out_of_memory(error):
                raise error
            failed = self.after_oom(error)
            if failed is not None:
                return failed
