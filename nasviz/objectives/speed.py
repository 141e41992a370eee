"""How a network is trained fast: the options, the learning-rate rule, and the model's preparation.

:class:`SpeedOptions` gathers every choice that changes *how* training runs rather than *what* it
trains. Most leave the result alone; two change it on purpose and say so in their names:

==========================  ==================================================================
``metrics``                 ``"step"``: the host reads each step's loss (a diverged network
                            stops at once; free on a CPU, where reading costs nothing);
                            ``"epoch"``: losses and the divergence flag are accumulated on the
                            device and read once per epoch with the validation metrics (no
                            host synchronisation per batch); ``"auto"``: step on CPU, epoch on
                            accelerators. Same results either way.
``cuda_graphs``             capture the whole training step (forward, backward, optimiser,
                            metric accumulation) once per network as a CUDA graph and replay it:
                            one launch per step instead of hundreds (CUDA only; falls back to
                            plain steps, with a note, where capture fails).
``networks_together``       networks one process trains at once, interleaved epoch by epoch,
                            each on its own CUDA stream (on a CPU they simply take turns: the
                            same results as one after another).
``compile``                 ``torch.compile`` mode for the network (``None``: not compiled);
                            paid per architecture, so it is measured, never assumed.
``channels_last``           NHWC memory layout for images (4-d inputs only).
``bf16``                    bfloat16 autocast: **changes results** (lower precision).
``batch_scale``             the batch is ``batch_scale`` times larger and the learning rate
                            follows :func:`learning_rate`'s scaling rule: **changes results**.
==========================  ==================================================================

The defaults train exactly as before on a CPU (tested: the same seed gives the same network).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

#: ``torch.compile`` modes accepted by :attr:`SpeedOptions.compile`.
COMPILE_MODES: tuple[str, ...] = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
METRICS_MODES: tuple[str, ...] = ("auto", "step", "epoch")


@dataclass(frozen=True)
class SpeedOptions:
    """How to train fast (module docstring); frozen and hashable so a worker can key on it."""

    metrics: str = "auto"
    cuda_graphs: bool = True
    networks_together: int = 1
    compile: str | None = None
    channels_last: bool = False
    bf16: bool = False
    batch_scale: int = 1
    #: linear warm-up of the learning rate over this many epochs (default: 1 when ``batch_scale > 1``)
    warmup_epochs: float | None = None

    def __post_init__(self) -> None:
        if self.metrics not in METRICS_MODES:
            raise ValueError(f"metrics must be one of {', '.join(METRICS_MODES)}, got {self.metrics!r}")
        if self.compile is not None and self.compile not in COMPILE_MODES:
            raise ValueError(f"compile must be None or one of {', '.join(COMPILE_MODES)}, got {self.compile!r}")
        for name in ("networks_together", "batch_scale"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.warmup_epochs is not None and not (self.warmup_epochs >= 0 and math.isfinite(self.warmup_epochs)):
            raise ValueError(f"warmup_epochs must be a non-negative number, got {self.warmup_epochs}")

    @classmethod
    def from_dict(cls, values: dict[str, Any] | None) -> "SpeedOptions":
        """From plain data (a spec, a JSON file); unknown names are a ``ValueError`` naming them."""
        values = dict(values or {})
        unknown = set(values) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown speed option(s): {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(cls.__dataclass_fields__)}")
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def parse(cls, items: list[str] | tuple[str, ...] | None) -> "SpeedOptions":
        """From ``name=value`` strings (the command line's ``--speed bf16=true``); values read as
        JSON where they parse (``true``, ``4``, ``null``), else as text (``reduce-overhead``)."""
        import json

        values: dict[str, Any] = {}
        for item in items or ():
            name, sep, text = str(item).partition("=")
            if not sep or not name.strip():
                raise ValueError(f"--speed takes name=value, got {item!r}")
            try:
                values[name.strip()] = json.loads(text)
            except ValueError:
                values[name.strip()] = text.strip()
        return cls.from_dict(values)

    def host_reads_each_step(self, device: torch.device) -> bool:
        """Whether the loss is read on the host every step (``metrics``, resolved for ``device``)."""
        return self.metrics == "step" or (self.metrics == "auto" and device.type == "cpu")

    def changes_results(self) -> bool:
        """Whether these options train a different network than the defaults would (``bf16``,
        ``batch_scale``); the others only change the speed (up to floating-point order on a GPU)."""
        return self.bf16 or self.batch_scale != 1

    def warmup(self) -> float:
        """Warm-up epochs in effect."""
        if self.warmup_epochs is not None:
            return float(self.warmup_epochs)
        return 1.0 if self.batch_scale > 1 else 0.0


@dataclass(frozen=True)
class LearningRate:
    """The per-step learning rate: cosine annealing to zero (NAS-Bench-201's schedule) for SGD, a
    constant for Adam, with the **scaling rule** for a batch ``scale`` times larger and a gradual
    warm-up.

    * Linear scaling for SGD (Goyal et al. 2017, "Accurate, large minibatch SGD", Sec. 2.1: "when the
      minibatch size is multiplied by k, multiply the learning rate by k"); square-root scaling for
      Adam (Malladi et al. 2022, "On the SDEs and scaling rules for adaptive gradient algorithms").
    * Gradual warm-up (Goyal et al. Sec. 2.2): over the first ``warmup_steps`` the peak rises linearly
      from the unscaled ``base`` to the scaled one, then the schedule continues from there.

    With ``scale = 1`` and no warm-up the rate is exactly the trainer's historical one,
    ``0.5 * lr * (1 + cos(pi * step / total_steps))``.
    """

    base: float
    total_steps: int
    optimizer: str = "sgd"
    scale: int = 1
    warmup_steps: int = 0

    def peak(self, step: int) -> float:
        scaled = self.base * (self.scale if self.optimizer == "sgd" else math.sqrt(self.scale))
        if self.warmup_steps <= 0 or step >= self.warmup_steps or scaled == self.base:
            return scaled
        return self.base + (scaled - self.base) * step / self.warmup_steps

    def __call__(self, step: int) -> float:
        peak = self.peak(step)
        if self.optimizer != "sgd":
            return peak
        return 0.5 * peak * (1.0 + math.cos(math.pi * step / self.total_steps))


def prepare_model(model: nn.Module, options: SpeedOptions, input_dims: int) -> nn.Module:
    """The module the training loop calls: ``model`` itself, in NHWC layout when ``channels_last``
    applies (4-d inputs: ``input_dims == 3`` per sample), compiled when ``compile`` is set. The
    returned module shares ``model``'s parameters (state dicts, morphisms and stores keep using
    ``model``)."""
    if options.channels_last and input_dims == 3:
        model.to(memory_format=torch.channels_last)
    if options.compile is None:
        return model
    return torch.compile(model, mode=options.compile, dynamic=False)


def layout(x: torch.Tensor, options: SpeedOptions) -> torch.Tensor:
    """``x`` in the memory layout the model expects (NHWC for 4-d inputs under ``channels_last``)."""
    if options.channels_last and x.dim() == 4:
        return x.contiguous(memory_format=torch.channels_last)
    return x


def autocast(device: torch.device, options: SpeedOptions, cache: bool = True):
    """bfloat16 autocast when ``bf16`` is on, else a context that does nothing. ``cache=False``
    inside CUDA graph capture (autocast's cast cache must not outlive a captured step)."""
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=bool(options.bf16),
                          cache_enabled=cache)
