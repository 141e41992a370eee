"""Budgets, their cost, and what a multi-fidelity strategy asks for and gets back.

A **fidelity** is the budget an architecture is evaluated at: epochs of training, or the epochs a
table's column was trained for (NAS-Bench-101's ``valid_accuracy_4`` .. ``_108``, the 12- and
200-epoch NAS-Bench-201 tables, the embedded digits table's per-epoch columns). A
:class:`Ladder` lists the budgets a search may ask for, lowest first; its last value is the
**full** fidelity, the one regret is measured at and the best architecture is chosen at.

What a budget costs (:class:`CostModel`): a table's cost column holds the seconds of a full
evaluation (NAS-Bench-101's ``train_seconds_108``, the digits table's ``train_seconds``); a
budget ``f`` costs ``full_cost * f / top`` (training time grows linearly with epochs). Tables
without a cost column (NAS-Bench-201) count cost in epochs, ``f`` itself. Going from ``f1`` to
``f2`` costs

* ``cost(f2) - cost(f1)`` under ``"resume"``: training continues from the checkpoint at ``f1``
  (live training does exactly this; a table whose fidelities are one training run's per-epoch
  values, such as ``<metric>_epoch_<E>`` columns, is read the same way), or
* ``cost(f2)`` under ``"restart"``: the higher budget is a training run of its own. This is what
  NAS-Bench-101's columns are (it trains a separate run per budget, each with its own cosine
  schedule) and what the 12- and 200-epoch NAS-Bench-201 tables are, so a lower budget's result
  cannot be continued: the search pays for each rung in full.

Every strategy (nasviz's and the peers') is charged by the objective with the same model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from nasviz.fidelity.decisions import RungDecision

if TYPE_CHECKING:
    from nasviz.arch import Architecture

RESUME = "resume"
RESTART = "restart"
#: How a higher budget is reached from a lower one (module docstring).
CONTINUATIONS = (RESUME, RESTART)


@dataclass(frozen=True)
class Ladder:
    """The budgets ``values`` (increasing, positive; at least one) a search may evaluate at, in
    ``unit``; ``values[-1]`` is the full fidelity."""

    values: tuple[float, ...]
    unit: str = "epochs"

    def __post_init__(self) -> None:
        values = tuple(float(v) for v in self.values)
        if not values:
            raise ValueError("a fidelity ladder needs at least one budget")
        if any(not math.isfinite(v) or v <= 0 for v in values):
            raise ValueError(f"fidelity budgets must be positive and finite, got {values}")
        if any(b <= a for a, b in zip(values, values[1:])):
            raise ValueError(f"fidelity budgets must increase, got {values}")
        object.__setattr__(self, "values", values)

    def __len__(self) -> int:
        return len(self.values)

    @property
    def top(self) -> float:
        return self.values[-1]

    @property
    def bottom(self) -> float:
        return self.values[0]

    def index(self, fidelity: float) -> int:
        """The rung of ``fidelity`` (0 = lowest); ``ValueError`` for a budget not on the ladder."""
        for i, v in enumerate(self.values):
            if math.isclose(v, float(fidelity), rel_tol=1e-9):
                return i
        raise ValueError(f"budget {fidelity:g} is not on the ladder {self.describe()}")

    def above(self, fidelity: float) -> float | None:
        """The next budget above ``fidelity`` (``None`` at the top)."""
        i = self.index(fidelity)
        return self.values[i + 1] if i + 1 < len(self.values) else None

    def position(self, fidelity: float) -> float:
        """Where ``fidelity`` lies between the bottom (0) and the top (1) on a log scale: what the
        multi-fidelity GP's fidelity kernel compares (a ladder of one budget: 1)."""
        if len(self.values) == 1:
            return 1.0
        low, high = math.log(self.bottom), math.log(self.top)
        return (math.log(float(fidelity)) - low) / (high - low)

    def ratio(self) -> float:
        """The geometric mean ratio of consecutive budgets: Hyperband's natural ``eta`` for this
        ladder (1 for a ladder of one budget)."""
        if len(self.values) == 1:
            return 1.0
        return (self.top / self.bottom) ** (1.0 / (len(self.values) - 1))

    def describe(self) -> str:
        return " -> ".join(f"{v:g}" for v in self.values) + f" {self.unit}"

    @classmethod
    def geometric(cls, top: int, eta: float = 3.0, bottom: int = 1, unit: str = "epochs") -> "Ladder":
        """Whole budgets ``top * eta^-k`` down to ``bottom`` (Hyperband's ``r_i``, Li et al. 2018):
        12 epochs with eta 3 gives 1, 4, 12 (a live training's ladder)."""
        values, r = set(), float(top)
        while round(r) >= bottom:
            values.add(int(round(r)))
            r /= eta
        return cls(tuple(sorted(values)), unit)

    def to_dict(self) -> dict[str, Any]:
        return {"values": list(self.values), "unit": self.unit}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Ladder":
        return cls(tuple(float(v) for v in data["values"]), str(data.get("unit", "epochs")))


@dataclass(frozen=True)
class CostModel:
    """What reaching a budget costs (module docstring): linear in the budget, from a full
    evaluation's cost; ``continuation`` is ``"resume"`` or ``"restart"``."""

    continuation: str = RESTART

    def __post_init__(self) -> None:
        if self.continuation not in CONTINUATIONS:
            raise ValueError(f"continuation must be one of {', '.join(CONTINUATIONS)}, got {self.continuation!r}")

    def cost(self, full_cost: float, fidelity: float, top: float, previous: float | None = None) -> float:
        """The cost of evaluating at ``fidelity`` (a full evaluation costs ``full_cost`` at
        budget ``top``), continuing from ``previous`` when given and resuming."""
        at = float(full_cost) * float(fidelity) / float(top)
        if previous is None or self.continuation == RESTART:
            return at
        return max(at - float(full_cost) * float(previous) / float(top), 0.0)


@dataclass(frozen=True)
class FidelityRequest:
    """Evaluate ``arch`` at budget ``fidelity``; ``previous`` is the budget this architecture was
    evaluated at before, which the evaluation continues from (``None``: from scratch)."""

    arch: "Architecture"
    fidelity: float
    previous: float | None = None


def arch_of(item: Any) -> "Architecture":
    """The architecture of a proposal: a :class:`FidelityRequest`'s, or the architecture itself."""
    return item.arch if isinstance(item, FidelityRequest) else item


@dataclass(frozen=True)
class FidelityOutcome:
    """The budget an evaluation reached, on its ladder.

    ``fidelity`` is the budget reached (epochs run), ``top`` the ladder's full budget, ``previous``
    the budget it continued from (``None``: from scratch). ``full`` says whether the value is the
    architecture's full-fidelity result: the best architecture, the regret and the incumbent are
    taken over full results only. ``stop`` is the decision of an early-stopping rule that ended
    the training (live training; the value is then the last one measured).
    """

    fidelity: float
    top: float
    unit: str = "epochs"
    previous: float | None = None
    full: bool = False
    stop: RungDecision | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"fidelity": self.fidelity, "top": self.top, "unit": self.unit, "full": self.full}
        if self.previous is not None:
            out["previous"] = self.previous
        if self.stop is not None:
            out["stop"] = self.stop.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> "FidelityOutcome | None":
        if not data:
            return None
        stop = data.get("stop")
        return cls(fidelity=float(data["fidelity"]), top=float(data["top"]), unit=str(data.get("unit", "epochs")),
                   previous=None if data.get("previous") is None else float(data["previous"]),
                   full=bool(data.get("full", False)), stop=RungDecision.from_dict(stop) if stop else None)


def is_full(evaluation: Any) -> bool:
    """Whether an evaluation (an :class:`~nasviz.objectives.base.Evaluation`) is a full-fidelity
    result: one without a fidelity (single-fidelity searches), or one that reached its top."""
    outcome = getattr(evaluation, "fidelity", None)
    return outcome is None or bool(outcome.full)


__all__ = ["CONTINUATIONS", "CostModel", "FidelityOutcome", "FidelityRequest", "Ladder", "RESTART", "RESUME", "arch_of",
           "is_full"]
