"""The objective protocol: evaluate architectures, return value, cost and status."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

from nasviz.arch import Architecture
from nasviz.fidelity.ladder import FidelityOutcome

OK = "ok"
FAILED = "failed"


@dataclass(frozen=True)
class Evaluation:
    """The result of evaluating one architecture.

    ``value`` is the score (higher is better: the metric, or minus a minimised one) or ``None``
    when ``status`` is ``"failed"``, in which case ``error`` says why. ``cost`` is in seconds (or in
    the cost units of a table without a cost column: epochs). ``info`` holds extra plain data
    (training curves, parameter counts, ...). ``fidelity`` is the budget the evaluation reached
    (multi-fidelity searches, :class:`~nasviz.fidelity.FidelityOutcome`); ``None`` for a full
    evaluation of a single-fidelity search. The run store keeps it in ``info["fidelity"]``.
    """

    arch: Architecture
    value: float | None
    cost: float
    status: str = OK
    error: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    fidelity: FidelityOutcome | None = None

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def full(self) -> bool:
        """Whether this is a full-fidelity result (what the best architecture and the regret are
        taken over): every evaluation of a single-fidelity search, and those that reached their
        ladder's top."""
        return self.fidelity is None or self.fidelity.full


class Objective(Protocol):
    """What the search loop needs from an objective."""

    name: str
    metric: str

    def evaluate(self, archs: Sequence[Architecture]) -> list[Evaluation]:
        """One :class:`Evaluation` per architecture, in order; never raises for one bad arch."""

    def optimum(self) -> float | None:
        """The best achievable value if known (tables), else ``None``."""

    def domain(self) -> list[Architecture] | None:
        """The finite set of architectures that can be evaluated, if there is one."""


class TableObjective:
    """Look architectures up in a :class:`~nasviz.objectives.table.Table`.

    Values are scores, higher is better: a minimised metric (``latency``) is reported as minus
    its value (:meth:`Table.score`), and :meth:`optimum` is the best score, so every strategy
    maximises and regret keeps its meaning. ``direction`` says which it is; :meth:`shown` turns a
    score back into the metric's own value for display.
    """

    def __init__(self, table, metric: str) -> None:
        self.table = table
        self.metric = table.check_metric(metric)
        self.name = f"table:{table.source}:{metric}"
        self.space = table.space
        self.direction = table.direction(self.metric)
        self.sign = table.sign(self.metric)

    def shown(self, score: float | None) -> float | None:
        """The metric's own value of a score (``None`` stays ``None``)."""
        return None if score is None else self.sign * score

    def evaluate(self, archs: Sequence[Architecture]) -> list[Evaluation]:
        results = []
        for arch in archs:
            start = time.perf_counter()
            try:
                value = self.table.score(arch, self.metric)
            except KeyError as err:  # UnknownArchitectureError: a clear, recorded failure
                results.append(Evaluation(arch, None, time.perf_counter() - start, FAILED, str(err)))
                continue
            cost = self.table.cost(arch)
            results.append(Evaluation(arch, value, cost if cost is not None else time.perf_counter() - start))
        return results

    def optimum(self) -> float:
        """The best score of the table (its optimum, or minus a minimised metric's smallest value)."""
        return self.sign * self.table.optimum(self.metric)

    def domain(self) -> list[Architecture]:
        return self.table.archs
