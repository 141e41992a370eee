"""What ``bench trainer`` times: a plain PyTorch loop (the baseline), the project's trainer, and both at scale.

:func:`plain_loop` is the training loop a PyTorch user writes for one network, kept plain on
purpose: the data moved to the device, SGD with Nesterov momentum and weight decay, the cosine
learning rate set every step, a shuffled mini-batch per step (indexing the split), ``loss.item()``
every step for the running loss, the validation split scored (loss and accuracy: what early
stopping needs) after every epoch and the test split at the end. With the same seeds it computes
exactly what :func:`~nasviz.objectives.trainer.train_model` computes on a CPU (the benchmark checks
that the validation curves agree), so the time difference is the trainer's overhead, nothing else.

Every function returns plain data: seconds and the curves to compare.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from nasviz.arch import Architecture
from nasviz.objectives.datasets import Dataset


@dataclass(frozen=True)
class Workload:
    """Networks, data and the training settings every loop uses (early stopping off: equal epochs)."""

    space: Any
    archs: tuple[Architecture, ...]
    dataset: Dataset
    epochs: int
    lr: float
    batch_size: int
    weight_decay: float = 5e-4
    model_options: tuple[tuple[str, Any], ...] = ()

    def seed(self, i: int) -> int:
        from nasviz.objectives.training import arch_seed

        return arch_seed(self.archs[i].canonical_key(), 0)

    def build(self, i: int) -> nn.Module:
        """Network ``i`` with its seeded initial weights (the same for every loop)."""
        torch.manual_seed(self.seed(i))
        return self.space.build_network(self.archs[i], tuple(self.dataset.input_shape), self.dataset.n_outputs,
                                        **dict(self.model_options))

    def training(self) -> dict[str, Any]:
        """The trainer's options for the same work (patience = epochs: no early stopping)."""
        return {"epochs": self.epochs, "patience": self.epochs, "lr": self.lr, "batch_size": self.batch_size,
                "weight_decay": self.weight_decay, "optimizer": "sgd"}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def plain_loop(model: nn.Module, data: Dataset, *, epochs: int, lr: float, batch_size: int, seed: int,
               device: torch.device, weight_decay: float = 5e-4) -> dict[str, Any]:
    """Train one classifier the plain way (module docstring); ``{"valid_curve", "test"}``."""
    model.to(device).train()
    x, y = data.x_train.to(device), data.y_train.to(device)
    xv, yv, xt, yt = (t.to(device) for t in (data.x_valid, data.y_valid, data.x_test, data.y_test))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True, weight_decay=weight_decay)
    gen = torch.Generator().manual_seed(seed)
    n = len(x)
    steps = math.ceil(n / batch_size)
    total, step = epochs * steps, 0
    curve, losses = [], []
    for _ in range(epochs):
        order = torch.randperm(n, generator=gen).to(device)
        running = 0.0
        for s in range(steps):
            for group in opt.param_groups:
                group["lr"] = 0.5 * lr * (1.0 + math.cos(math.pi * step / total))
            idx = order[s * batch_size : (s + 1) * batch_size]
            if len(idx) < 2:
                continue
            loss = F.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            running += loss.item() * len(idx)
            step += 1
        model.eval()
        with torch.no_grad():
            out = model(xv)
            losses.append(F.cross_entropy(out, yv).item())
            curve.append((out.argmax(1) == yv).float().mean().item() * 100.0)
        model.train()
    model.eval()
    with torch.no_grad():
        test = (model(xt).argmax(1) == yt).float().mean().item() * 100.0
    return {"valid_curve": curve, "valid_loss_curve": losses, "test": test}


def time_plain(work: Workload, i: int, device: torch.device) -> tuple[float, dict[str, Any]]:
    """Seconds (wall, device work finished) and result of the plain loop on network ``i``."""
    model = work.build(i)
    _sync(device)
    start = time.perf_counter()
    out = plain_loop(model, work.dataset, epochs=work.epochs, lr=work.lr, batch_size=work.batch_size,
                     seed=work.seed(i), device=device, weight_decay=work.weight_decay)
    _sync(device)
    return time.perf_counter() - start, out


def time_trainer(work: Workload, i: int, device: torch.device, speed=None) -> tuple[float, dict[str, Any]]:
    """Seconds and result of :func:`~nasviz.objectives.trainer.train_model` on network ``i``."""
    from nasviz.objectives.trainer import train_model

    model = work.build(i)
    _sync(device)
    start = time.perf_counter()
    res = train_model(model, work.dataset, seed=work.seed(i), device=device, speed=speed, **work.training())
    _sync(device)
    if not res.ok:
        raise RuntimeError(f"network {i} failed in the trainer: {res.error}")
    return time.perf_counter() - start, {"valid_curve": res.valid_curve, "valid_loss_curve": res.valid_loss_curve,
                                         "test": res.test_score, "notes": res.notes}


def time_together(work: Workload, indices: Sequence[int], device: torch.device, speed) -> tuple[float, list[dict]]:
    """Seconds to train networks ``indices`` at once in this process (:func:`train_models`)."""
    from nasviz.objectives.trainer import train_models

    models = [work.build(i) for i in indices]
    _sync(device)
    start = time.perf_counter()
    results = train_models(models, work.dataset, [work.seed(i) for i in indices], device=device, speed=speed,
                           **work.training())
    _sync(device)
    bad = [r for r in results if isinstance(r, BaseException) or not r.ok]
    if bad:
        raise RuntimeError(f"training together failed: {bad[0] if isinstance(bad[0], BaseException) else bad[0].error}")
    return time.perf_counter() - start, [{"valid_curve": r.valid_curve, "test": r.test_score} for r in results]


def time_processes(spec: Any, archs: Sequence[Architecture], workers: int) -> dict[str, Any]:
    """Wall seconds for ``workers`` worker processes to train ``archs`` (a step at a time: all
    submitted at once), after every worker has started and trained one network untimed."""
    from nasviz.executors import ExecutorObjective, LocalExecutor

    with LocalExecutor(spec, n_workers=workers) as executor:
        objective = ExecutorObjective(spec.build(), executor)
        warm = [executor.submit(a) for a in list(archs)[:workers]]
        [f.result() for f in warm]
        start = time.perf_counter()
        evaluations = [f.result() for f in objective.submit(list(archs))]
        seconds = time.perf_counter() - start
    failed = [e.error for e in evaluations if not e.ok]
    pids = {e.info.get("worker", {}).get("pid") for e in evaluations if e.info}
    return {"workers": workers, "networks": len(archs), "seconds": seconds, "failed": len(failed),
            "first_error": failed[0] if failed else None, "networks_per_minute": 60.0 * len(archs) / seconds,
            "processes_used": len(pids),
            "epochs": sum(int(e.info.get("epochs_run", 0)) for e in evaluations if e.info)}


def alternate(n: int, repeats: int, first: Callable[[int], float], second: Callable[[int], float]) -> tuple[list, list]:
    """Per network, the median of ``repeats`` timings of two loops run back to back, their order
    swapped every repeat (so neither always runs on a warmer machine)."""
    import numpy as np

    a: list[list[float]] = [[] for _ in range(n)]
    b: list[list[float]] = [[] for _ in range(n)]
    for r in range(repeats):
        for i in range(n):
            if r % 2 == 0:
                a[i].append(first(i))
                b[i].append(second(i))
            else:
                b[i].append(second(i))
                a[i].append(first(i))
    return [float(np.median(t)) for t in a], [float(np.median(t)) for t in b]
