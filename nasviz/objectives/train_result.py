"""What training reports: one :class:`EpochReport` per epoch as it ends, one :class:`TrainResult` at the end.

The per-epoch callback (``on_epoch`` of :func:`~nasviz.objectives.trainer.train_model`) is the
stable hook for everything that watches training as it goes: live learning curves, and early
stopping rules (return ``True`` to stop after this epoch).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from nasviz.objectives.base import OK

#: Hook called before every optimisation step as ``hook(epoch, step)`` (0-based); tests use it to
#: inject failures (an out-of-memory error) without needing a GPU.
BatchHook = Callable[[int, int], None]


@dataclass(frozen=True)
class EpochReport:
    """One finished epoch of one network: ``epoch`` counts from 1; losses are means over the
    epoch's training samples and over the validation split; ``valid_score`` is accuracy in percent
    (classification) or R^2 (regression); ``seconds`` is the training time so far."""

    epoch: int
    train_loss: float
    valid_loss: float
    valid_score: float
    seconds: float


#: ``on_epoch(report) -> stop?``: called after each epoch (after the validation metrics are read);
#: a true return value stops training after this epoch (:attr:`TrainResult.stopped_by` is "callback").
EpochCallback = Callable[[EpochReport], "bool | None"]


@dataclass
class TrainResult:
    """What one training run produced (plain data, JSON-serialisable via :meth:`to_dict`).

    ``valid_score`` is the early-stopping estimate (mean of the last ``patience`` validation
    scores); ``test_score`` is the final network's score on the test split. ``valid_curve`` /
    ``valid_loss_curve`` / ``train_loss_curve`` have one entry per epoch run. ``stopped_by`` is
    ``"patience"`` (early stopping, paper 003 App. D), ``"callback"`` (the ``on_epoch`` hook) or
    ``None`` (every epoch ran, or the run failed).
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
    stopped_by: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == OK

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
