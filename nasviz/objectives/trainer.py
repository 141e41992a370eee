"""Train real networks: a generic trainer with early stopping and memory adaptation.

:func:`train_model` trains any ``torch.nn.Module`` on a :class:`~nasviz.objectives.datasets.Dataset`:

* **Early stopping** (paper 003, App. D, following scikit-learn's MLP): training stops when the
  validation *loss* has not decreased for ``patience`` (tau) consecutive epochs, or after
  ``epochs``. The performance **estimate** is the mean of the validation scores of the last tau
  epochs run ("more accurate than the final metric value on the validation set", App. D).
  Scores are higher-is-better: accuracy in percent for classification, R^2 for regression.
* **Device**: CUDA when available, else CPU (``device=None``); or a name such as ``"cpu"``.
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
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import torch
from torch import nn

from nasviz.objectives.base import FAILED, OK
from nasviz.objectives.datasets import CLASSIFICATION, Dataset
from nasviz.objectives.network_cost import count_parameters

#: Hook called before every optimisation step as ``hook(epoch, step)``; tests use it to inject
#: failures (an out-of-memory error) without needing a GPU.
BatchHook = Callable[[int, int], None]


@dataclass
class TrainResult:
    """What one training run produced (plain data, JSON-serialisable via :meth:`to_dict`).

    ``valid_score`` is the early-stopping estimate (mean of the last ``patience`` validation
    scores); ``test_score`` is the final network's score on the test split. ``valid_curve`` /
    ``valid_loss_curve`` / ``train_loss_curve`` have one entry per epoch run.
    """

    status: str
    valid_score: float | None
    test_score: float | None
    valid_curve: list[float]
    valid_loss_curve: list[float]
    train_loss_curve: list[float]
    n_parameters: int
    seconds: float
    epochs_run: int
    device: str
    metric: str
    error: str | None = None
    batch_size: int | None = None
    retries: int = 0
    notes: list[str] = field(default_factory=list)
    #: the stored network this one was morphed from (a warm start), if any
    warm_start: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == OK

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def is_out_of_memory(err: BaseException) -> bool:
    """Whether ``err`` is an accelerator out-of-memory error."""
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None)
    if oom_type is not None and isinstance(err, oom_type):
        return True
    return isinstance(err, RuntimeError) and "out of memory" in str(err).lower()


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None`` or ``"auto"``: CUDA when available, else CPU."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


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


def _score(task: str, out: torch.Tensor, y: torch.Tensor) -> float:
    if task == CLASSIFICATION:
        return float((out.argmax(1) == y).float().mean().item() * 100.0)
    pred = out.reshape(-1)
    ss_res = float(((pred - y) ** 2).sum().item())
    ss_tot = float(((y - y.mean()) ** 2).sum().item()) or 1.0
    return 1.0 - ss_res / ss_tot


def _loss_fn(task: str) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    if task == CLASSIFICATION:
        return nn.functional.cross_entropy
    return lambda out, y: nn.functional.mse_loss(out.reshape(-1), y)


def _evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, task: str, chunk: int = 1024) -> tuple[float, float]:
    """(loss, score) of ``model`` on a split, in eval mode, without gradients."""
    model.eval()
    loss_fn = _loss_fn(task)
    outs = []
    with torch.no_grad():
        for i in range(0, len(x), chunk):
            outs.append(model(x[i : i + chunk]))
    out = torch.cat(outs)
    model.train()
    return float(loss_fn(out, y).item()), _score(task, out, y)


def _failed(reason: str, metric: str, n_params: int, start: float, device: torch.device, **extra) -> TrainResult:
    curves = {k: extra.pop(k, []) for k in ("valid_curve", "valid_loss_curve", "train_loss_curve")}
    return TrainResult(
        status=FAILED, valid_score=None, test_score=None, n_parameters=n_params,
        seconds=time.perf_counter() - start, epochs_run=len(curves["valid_curve"]), device=str(device),
        metric=metric, error=reason, **curves, **extra,
    )


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

    Returns
    -------
    TrainResult with ``status="ok"``, or ``"failed"`` and ``error`` (diverged, too large, OOM).
    """
    for name, value in (("epochs", epochs), ("patience", patience), ("batch_size", batch_size)):
        if int(value) < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    if not (lr > 0 and math.isfinite(lr)):
        raise ValueError(f"lr must be a positive finite number, got {lr}")
    if optimizer not in ("sgd", "adam"):
        raise ValueError(f"optimizer must be 'sgd' or 'adam', got {optimizer!r}")
    dev = resolve_device(device)
    metric = "accuracy" if dataset.task == CLASSIFICATION else "r2"
    guard = memory_guard if memory_guard is not None else MemoryGuard()
    start = time.perf_counter()
    n_params = count_parameters(model)
    initial_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    retries = 0
    bs = int(batch_size)
    while True:
        size = estimate_size(model, dataset.input_shape, bs)
        if not guard.allows(size):
            if retries > 0 and bs > 1:  # after an OOM, first try smaller batches
                bs = max(1, bs // 2)
                continue
            return _failed(
                f"estimated size {size} exceeds the memory cap {guard.cap:.0f} (paper 003 §4.4)",
                metric, n_params, start, dev, batch_size=bs, retries=retries,
            )
        try:
            result = _train_once(model, dataset, epochs, patience, lr, bs, seed, dev, optimizer, weight_decay, on_batch,
                                 estimate_epochs or patience)
        except Exception as err:  # noqa: BLE001 - classify: OOM is retried, the rest re-raised
            if not is_out_of_memory(err):
                raise
            guard.lower(size)
            if dev.type == "cuda":
                torch.cuda.empty_cache()
            retries += 1
            model.load_state_dict(initial_state)  # retry from the same initial weights
            if retries > guard.max_retries or bs == 1:
                return _failed(f"out of memory after {retries} attempt(s): {err}", metric, n_params, start, dev,
                               batch_size=bs, retries=retries)
            bs = max(1, bs // 2)
            continue
        result.seconds = time.perf_counter() - start
        result.retries = retries
        result.batch_size = bs
        result.n_parameters = n_params
        return result


def _train_once(
    model: nn.Module, dataset: Dataset, epochs: int, patience: int, lr: float, batch_size: int, seed: int,
    dev: torch.device, optimizer: str, weight_decay: float, on_batch: BatchHook | None, window: int,
) -> TrainResult:
    task = dataset.task
    metric = "accuracy" if task == CLASSIFICATION else "r2"
    model.to(dev).train()
    x_train, y_train = dataset.x_train.to(dev), dataset.y_train.to(dev)
    x_valid, y_valid = dataset.x_valid.to(dev), dataset.y_valid.to(dev)
    params = [p for p in model.parameters() if p.requires_grad]
    if optimizer == "sgd":
        opt: torch.optim.Optimizer = torch.optim.SGD(params, lr=lr, momentum=0.9, nesterov=True, weight_decay=weight_decay)
    else:
        opt = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    n = len(x_train)
    steps_per_epoch = max(1, math.ceil(n / batch_size))
    total_steps = epochs * steps_per_epoch
    loss_fn = _loss_fn(task)
    gen = torch.Generator().manual_seed(int(seed))
    start = time.perf_counter()
    valid_curve: list[float] = []
    valid_loss_curve: list[float] = []
    train_loss_curve: list[float] = []
    best_loss, since_best, step = math.inf, 0, 0
    for epoch in range(epochs):
        order = torch.randperm(n, generator=gen).to(dev)
        running, seen = 0.0, 0
        for s in range(steps_per_epoch):
            if on_batch is not None:
                on_batch(epoch, s)
            # Cosine annealing per step (NAS-Bench-201 anneals the learning rate to zero).
            for group in opt.param_groups:
                group["lr"] = 0.5 * lr * (1.0 + math.cos(math.pi * step / total_steps)) if optimizer == "sgd" else lr
            idx = order[s * batch_size : (s + 1) * batch_size]
            if len(idx) < 2 and n >= 2:  # BatchNorm cannot train on a batch of one sample
                continue
            out = model(x_train[idx])
            loss = loss_fn(out, y_train[idx])
            if not torch.isfinite(loss):
                return _failed(f"diverged: the training loss is {loss.item()} at epoch {epoch + 1}, step {s + 1}",
                               metric, 0, start, dev, valid_curve=valid_curve, valid_loss_curve=valid_loss_curve,
                               train_loss_curve=train_loss_curve)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            running += float(loss.item()) * len(idx)
            seen += len(idx)
            step += 1
        train_loss_curve.append(running / max(seen, 1))
        v_loss, v_score = _evaluate(model, x_valid, y_valid, task)
        if not math.isfinite(v_loss) or not math.isfinite(v_score):
            return _failed(f"diverged: the validation loss is {v_loss} after epoch {epoch + 1}", metric, 0, start, dev,
                           valid_curve=valid_curve, valid_loss_curve=valid_loss_curve, train_loss_curve=train_loss_curve)
        valid_curve.append(v_score)
        valid_loss_curve.append(v_loss)
        if v_loss < best_loss:
            best_loss, since_best = v_loss, 0
        else:
            since_best += 1
            if since_best >= patience:
                break
    estimate = float(np.mean(valid_curve[-window:]))
    _, test_score = _evaluate(model, dataset.x_test.to(dev), dataset.y_test.to(dev), task)
    return TrainResult(
        status=OK, valid_score=estimate, test_score=test_score, valid_curve=valid_curve,
        valid_loss_curve=valid_loss_curve, train_loss_curve=train_loss_curve, n_parameters=0,
        seconds=time.perf_counter() - start, epochs_run=len(valid_curve), device=str(dev), metric=metric,
    )
