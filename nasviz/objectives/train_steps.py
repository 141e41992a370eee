"""One optimisation step, and where its loss goes: the pieces :mod:`.training_loop` is made of.

* :class:`HostMetrics` / :class:`DeviceMetrics`: a step's loss either read on the host at once (a
  diverged network stops before its backward pass; what a CPU does, where reading is free) or
  accumulated on the device with the first non-finite step and its value, read once per epoch
  (no host synchronisation per batch: what an accelerator wants). Same sums, same order, in float64
  either way, so both give the same training-loss curve.
* :class:`EagerStep`: forward, loss, backward and optimiser step, as PyTorch runs them.
* :class:`GraphedStep` (CUDA): after a few real steps, captures the whole step (forward, backward,
  fused optimiser with the learning rate in a device tensor, metric accumulation) as a CUDA graph
  and replays it: one launch a step. Batches of another size (an epoch's last) and any capture
  failure run eagerly.
* :func:`evaluate`: a split's loss and score as one device tensor (read with the epoch's metrics).
"""

from __future__ import annotations

import math
from typing import Callable

import torch
from torch import nn

from nasviz.objectives.datasets import CLASSIFICATION
from nasviz.objectives.speed import SpeedOptions, autocast

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def loss_function(task: str) -> LossFn:
    """Cross-entropy for classification, mean squared error for regression (outputs ``(B, 1)``)."""
    if task == CLASSIFICATION:
        return nn.functional.cross_entropy
    return lambda out, y: nn.functional.mse_loss(out.reshape(-1), y)


def make_optimizer(params: list[nn.Parameter], name: str, lr: float, weight_decay: float,
                   graphed: bool) -> torch.optim.Optimizer:
    """SGD (Nesterov momentum 0.9) or Adam. For a captured CUDA graph the learning rate lives in a
    device tensor (so the schedule can change it between replays) and the optimiser is torch's
    fused one (``capturable`` for Adam); otherwise torch's defaults, exactly as before."""
    if not graphed:
        if name == "sgd":
            return torch.optim.SGD(params, lr=lr, momentum=0.9, nesterov=True, weight_decay=weight_decay)
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    lr_tensor = torch.tensor(float(lr), device=params[0].device)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr_tensor, momentum=0.9, nesterov=True, weight_decay=weight_decay, fused=True)
    return torch.optim.Adam(params, lr=lr_tensor, weight_decay=weight_decay, capturable=True, fused=True)


def set_learning_rate(opt: torch.optim.Optimizer, lr: float) -> None:
    """Set every group's rate: a float as before, or in place in a device tensor (graphs)."""
    for group in opt.param_groups:
        if isinstance(group["lr"], torch.Tensor):
            group["lr"].fill_(lr)
        else:
            group["lr"] = lr


class HostMetrics:
    """The loss read on the host every step (module docstring)."""

    def __init__(self) -> None:
        self.loss_sum = 0.0
        self.bad: tuple[int, float] | None = None

    def start_epoch(self) -> None:
        self.loss_sum, self.bad = 0.0, None

    def add(self, loss: torch.Tensor, n: int, step: int) -> bool:
        """Count one step's loss; ``False`` (and :attr:`bad` set) when it is not finite."""
        value = float(loss.item())
        if not math.isfinite(value):
            self.bad = (step, value)
            return False
        self.loss_sum += value * n
        return True

    def packed(self) -> list[float]:
        """``[loss sum, first bad step or -1, its loss]``."""
        step, value = self.bad if self.bad is not None else (-1, 0.0)
        return [self.loss_sum, float(step), value]


class DeviceMetrics:
    """The loss accumulated on the device, with the first non-finite step (module docstring).
    Every update is a device operation, so it can be captured in a CUDA graph."""

    def __init__(self, device: torch.device) -> None:
        self.loss_sum = torch.zeros((), dtype=torch.float64, device=device)
        self.bad_step = torch.full((), -1, dtype=torch.int64, device=device)
        self.bad_value = torch.zeros((), dtype=torch.float64, device=device)
        self.counter = torch.zeros((), dtype=torch.int64, device=device)

    def start_epoch(self) -> None:
        self.loss_sum.zero_()
        self.bad_step.fill_(-1)
        self.counter.zero_()

    def add(self, loss: torch.Tensor, n: int, step: int) -> bool:
        """Count one step's loss on the device; always ``True`` (the host learns at the epoch's end)."""
        value = loss.detach().double()
        first = (self.bad_step < 0) & ~torch.isfinite(value)
        self.bad_step.copy_(torch.where(first, self.counter, self.bad_step))
        self.bad_value.copy_(torch.where(first, value, self.bad_value))
        self.loss_sum.add_(value * n)
        self.counter.add_(1)
        return True

    def packed(self) -> torch.Tensor:
        """``[loss sum, first bad step or -1, its loss]`` as one float64 device tensor."""
        return torch.stack([self.loss_sum, self.bad_step.double(), self.bad_value])


Metrics = HostMetrics | DeviceMetrics


class EagerStep:
    """One optimisation step as PyTorch runs it; ``False`` when the host saw a non-finite loss."""

    def __init__(self, forward: nn.Module, opt: torch.optim.Optimizer, loss_fn: LossFn, metrics: Metrics,
                 device: torch.device, options: SpeedOptions) -> None:
        self.forward, self.opt, self.loss_fn, self.metrics = forward, opt, loss_fn, metrics
        self.device, self.options = device, options
        #: gradients are freed between steps, except once a graph owns them (its static buffers)
        self.set_to_none = True

    def compute(self, xb: torch.Tensor, yb: torch.Tensor, step: int) -> bool:
        """Forward, metrics, backward, optimiser step (no learning-rate change: graphs capture this)."""
        with autocast(self.device, self.options, cache=not self.options.cuda_graphs):
            loss = self.loss_fn(self.forward(xb), yb)
        if not self.metrics.add(loss, len(xb), step):
            return False
        self.opt.zero_grad(set_to_none=self.set_to_none)
        loss.backward()
        self.opt.step()
        return True

    def __call__(self, xb: torch.Tensor, yb: torch.Tensor, lr: float, step: int) -> bool:
        set_learning_rate(self.opt, lr)
        return self.compute(xb, yb, step)


class GraphedStep:
    """The step captured as a CUDA graph after :attr:`WARMUP` real eager steps (module docstring).

    ``notes`` records a capture that failed (the network then trains eagerly, with the same
    optimiser). Full-size batches only: another size runs eagerly on the same gradient buffers.
    """

    #: Eager steps before capture: cuDNN picks its algorithms and the optimiser creates its state
    #: (PyTorch's whole-network capture recipe warms up the same way, on a side stream).
    WARMUP = 3

    def __init__(self, eager: EagerStep, batch_size: int, stream: torch.cuda.Stream) -> None:
        self.eager, self.batch_size, self.stream = eager, int(batch_size), stream
        self.graph: torch.cuda.CUDAGraph | None = None
        self.warm_steps = 0
        self.failed: str | None = None
        self.static_x: torch.Tensor | None = None
        self.static_y: torch.Tensor | None = None

    def __call__(self, xb: torch.Tensor, yb: torch.Tensor, lr: float, step: int) -> bool:
        if self.failed is not None or len(xb) != self.batch_size:
            return self.eager(xb, yb, lr, step)
        if self.graph is None and self.warm_steps < self.WARMUP:
            self.warm_steps += 1
            return self.eager(xb, yb, lr, step)
        if self.graph is None and not self._capture(xb, yb, step):
            return self.eager(xb, yb, lr, step)
        assert self.static_x is not None and self.static_y is not None and self.graph is not None
        self.static_x.copy_(xb, non_blocking=True)
        self.static_y.copy_(yb, non_blocking=True)
        set_learning_rate(self.eager.opt, lr)
        self.graph.replay()
        return True

    def _capture(self, xb: torch.Tensor, yb: torch.Tensor, step: int) -> bool:
        """Record (not run) one step into a graph; ``False`` and :attr:`failed` set if capture fails."""
        self.static_x, self.static_y = xb.clone(), yb.clone()
        self.stream.synchronize()  # the warm-up's work is done before this stream starts capturing
        self.eager.opt.zero_grad(set_to_none=True)  # gradients are allocated in the graph's pool
        graph = torch.cuda.CUDAGraph()
        try:
            graph.capture_begin(capture_error_mode="thread_local")
            try:
                self.eager.compute(self.static_x, self.static_y, step)
            finally:
                graph.capture_end()
        except Exception as err:  # noqa: BLE001 - any capture failure falls back to eager steps
            self.failed = f"CUDA graph capture failed ({type(err).__name__}: {err}); trained without graphs"
            self.eager.opt.zero_grad(set_to_none=True)
            return False
        self.graph = graph
        self.eager.set_to_none = False  # from now on the graph's gradient buffers are the gradients
        return True


def evaluate(forward: nn.Module, model: nn.Module, x: torch.Tensor, y: torch.Tensor, task: str,
             device: torch.device, options: SpeedOptions, chunk: int = 1024) -> torch.Tensor:
    """``[loss, a, b]`` (float64, on the device) of ``model`` on a split, in eval mode without
    gradients: classification ``a`` = the fraction correct; regression ``a`` = the residual and
    ``b`` = the total sum of squares. :func:`scores` turns it into ``(loss, score)``."""
    model.eval()
    with torch.no_grad(), autocast(device, options):
        out = torch.cat([forward(x[i : i + chunk]) for i in range(0, len(x), chunk)]).float()
    model.train()
    loss = loss_function(task)(out, y)
    if task == CLASSIFICATION:
        a, b = (out.argmax(1) == y).float().mean(), torch.zeros((), device=out.device)
    else:
        pred = out.reshape(-1)
        a, b = ((pred - y) ** 2).sum(), ((y - y.mean()) ** 2).sum()
    return torch.stack([loss.double(), a.double(), b.double()])


def scores(task: str, values: list[float]) -> tuple[float, float]:
    """``(loss, score)`` from :func:`evaluate`'s values read on the host: accuracy in percent, or
    R^2 (a split with no variance counts its total sum of squares as 1)."""
    loss, a, b = values
    if task == CLASSIFICATION:
        return loss, a * 100.0
    return loss, 1.0 - a / (b or 1.0)
