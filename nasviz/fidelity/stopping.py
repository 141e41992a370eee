"""Early stopping of live training, usable with every strategy: the median rule and asynchronous
successive halving (Hyperband-style).

A training reports its validation score after every epoch; the rule compares it with what the
earlier trainings of the same search reported (:class:`CurveRecords`, their validation curves) and
may stop it there. The stopped network's evaluation keeps the value it had (the trainer's estimate
over its last epochs), is marked as below the full budget (it never becomes the search's best) and
carries the decision (:class:`~nasviz.fidelity.RungDecision`): its rank, what it had to reach, the
rule.

* ``median`` (Golovin et al. 2017, Google Vizier, Sec. 3.2.2): "a pending trial is stopped at step
  ``s`` if its best objective value by step ``s`` is strictly worse than the median value of the
  running averages of all completed trials' objectives reported up to step ``s``". Completed trials
  are the earlier trainings that were not stopped by the rule and reached epoch ``s``; the rule
  waits for ``min_trials`` of them (Optuna's MedianPruner waits for five, ``n_startup_trials``) and
  never stops before ``min_epochs``.
* ``asha`` (Li et al. 2020, "A system for massively parallel hyperparameter tuning", Alg. 2: the
  asynchronous successive halving behind Hyperband-style early stopping, and Optuna's
  ``SuccessiveHalvingPruner``): rungs at ``min_epochs * eta^k`` epochs below the last; at a rung a
  training goes on only while its score there is among the best ``max(1, floor(n / eta))`` of the
  ``n`` trainings that reached the rung, itself included (with fewer than ``eta`` only the best
  goes on, as Optuna's pruner does). Like ASHA it never waits for a rung to fill: each training is
  judged against those that came before it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from nasviz.fidelity.decisions import PROMOTE, STOP, RungDecision

RULES = ("median", "asha")


@dataclass(frozen=True)
class CurveRecords:
    """The validation curves (one value per epoch) of a search's earlier trainings, and whether
    each ran to its end (``completed``: not stopped by the rule). Plain data: sent to the worker
    that trains the next network."""

    curves: tuple[tuple[float, ...], ...] = ()
    completed: tuple[bool, ...] = ()

    def with_curve(self, curve: Sequence[float], completed: bool) -> "CurveRecords":
        return CurveRecords(self.curves + (tuple(float(v) for v in curve),), self.completed + (bool(completed),))

    def __len__(self) -> int:
        return len(self.curves)


@dataclass(frozen=True)
class StoppingRule:
    """One of :data:`RULES` with its settings (module docstring)."""

    kind: str = "asha"
    eta: float = 3.0
    min_epochs: int = 1
    min_trials: int = 5

    def __post_init__(self) -> None:
        if self.kind not in RULES:
            raise ValueError(f"the early-stopping rule is one of {', '.join(RULES)}, got {self.kind!r}")
        if not self.eta > 1 or int(self.min_epochs) < 1 or int(self.min_trials) < 1:
            raise ValueError(f"need eta > 1, min_epochs >= 1 and min_trials >= 1, got {self.eta}, {self.min_epochs}, "
                             f"{self.min_trials}")

    def rungs(self, max_epochs: int) -> tuple[int, ...]:
        """ASHA's rungs below ``max_epochs``: ``min_epochs * eta^k``."""
        out, r = [], float(self.min_epochs)
        while round(r) < max_epochs:
            if not out or round(r) > out[-1]:
                out.append(int(round(r)))
            r *= self.eta
        return tuple(out)

    def decide(self, records: CurveRecords, arch: str, curve: Sequence[float],
               max_epochs: int) -> RungDecision | None:
        """The decision after epoch ``len(curve)`` of a training whose curve so far is ``curve``:
        a promotion past a rung, a stop, or ``None`` (no rung here, or not enough to compare)."""
        epoch = len(curve)
        if epoch < self.min_epochs or epoch >= max_epochs:
            return None
        return self._median(records, arch, curve) if self.kind == "median" else self._asha(records, arch, curve,
                                                                                              max_epochs)

    def _median(self, records: CurveRecords, arch: str, curve: Sequence[float]) -> RungDecision | None:
        s = len(curve)
        averages = [float(np.mean(c[:s])) for c, done in zip(records.curves, records.completed) if done and len(c) >= s]
        if len(averages) < self.min_trials:
            return None
        median = float(np.median(averages))
        best = float(max(curve))
        rank = 1 + sum(a > best for a in averages)
        return RungDecision(arch=arch, fidelity=float(s), action=STOP if best < median else PROMOTE, rule="median",
                            rank=rank, of=len(averages) + 1, value=best, threshold=median, name="median")

    def _asha(self, records: CurveRecords, arch: str, curve: Sequence[float], max_epochs: int) -> RungDecision | None:
        r = len(curve)
        if r not in self.rungs(max_epochs):
            return None
        value = float(curve[-1])
        values = sorted([float(c[r - 1]) for c in records.curves if len(c) >= r] + [value], reverse=True)
        keep = max(1, math.floor(len(values) / self.eta + 1e-9))
        rank = values.index(value) + 1
        return RungDecision(arch=arch, fidelity=float(r), action=PROMOTE if rank <= keep else STOP, rule="asha",
                            rank=rank, of=len(values), value=value, threshold=values[keep - 1], keep=keep, eta=self.eta,
                            name="asha")


def parse_rule(text: str | None) -> StoppingRule | None:
    """``"median"``, ``"asha"`` or ``"asha:eta=4:min_epochs=2"`` (``None``/``"none"``: no rule)."""
    if text is None or str(text).strip().lower() in ("", "none", "off"):
        return None
    kind, *parts = [p.strip() for p in str(text).split(":")]
    options: dict[str, float] = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep or key not in ("eta", "min_epochs", "min_trials"):
            raise ValueError(f"early stopping {text!r}: {part!r} is not eta=, min_epochs= or min_trials=")
        options[key] = float(value) if key == "eta" else int(value)
    return StoppingRule(kind, **options)


__all__ = ["CurveRecords", "RULES", "StoppingRule", "parse_rule"]
