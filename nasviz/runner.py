"""The search loop: ask, evaluate, tell, and emit a plain-data snapshot after every step."""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from nasviz.objectives.base import Evaluation, Objective
from nasviz.strategies.base import Strategy


@dataclass
class Snapshot:
    """What one step did, as plain data (the dashboard and the store read only this)."""

    step: int
    n_evaluations: int
    budget: int
    proposals: list[str]
    results: list[dict[str, Any]]
    best_value: float | None
    best_arch: str | None
    elapsed: float
    step_seconds: float
    strategy: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RunResult:
    """A finished (or stopped) search."""

    evaluations: list[Evaluation]
    trajectory: list[float]
    best_arch: str | None
    best_value: float | None
    optimum: float | None
    seconds: float
    stopped: bool = False

    @property
    def regret(self) -> float | None:
        if self.optimum is None or self.best_value is None:
            return None
        return self.optimum - self.best_value

    def to_dict(self, format_arch: Callable[[Any], str]) -> dict[str, Any]:
        return {
            "best_arch": self.best_arch,
            "best_value": self.best_value,
            "optimum": self.optimum,
            "regret": self.regret,
            "trajectory": self.trajectory,
            "evaluations": [
                {
                    "arch": format_arch(ev.arch),
                    "value": ev.value,
                    "cost": ev.cost,
                    "status": ev.status,
                    **({"error": ev.error} if ev.error else {}),
                    **({"info": ev.info} if ev.info else {}),
                }
                for ev in self.evaluations
            ],
            "seconds": self.seconds,
            "stopped": self.stopped,
        }


def run_search(
    strategy: Strategy,
    objective: Objective,
    budget: int,
    *,
    format_arch: Callable[[Any], str],
    batch_size: int = 1,
    on_step: Callable[[Snapshot], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> RunResult:
    """Run ``strategy`` against ``objective`` for ``budget`` evaluations.

    After each step ``on_step`` receives a :class:`Snapshot`; ``should_stop`` is polled
    between steps so a search can be stopped cooperatively. Failed evaluations count towards
    the budget (they cost time) but never become the best.
    """
    if budget < 1:
        raise ValueError(f"budget must be at least 1, got {budget}")
    if batch_size < 1:
        raise ValueError(f"batch size must be at least 1, got {batch_size}")
    start = time.perf_counter()
    evaluations: list[Evaluation] = []
    trajectory: list[float] = []
    best_value, best_arch = -math.inf, None
    step, stopped = 0, False
    while len(evaluations) < budget:
        if should_stop is not None and should_stop():
            stopped = True
            break
        step_start = time.perf_counter()
        proposals = strategy.ask(min(batch_size, budget - len(evaluations)))
        if not proposals:
            break  # the domain is exhausted
        results = objective.evaluate(proposals)
        strategy.tell(results)
        for ev in results:
            evaluations.append(ev)
            if ev.ok and ev.value is not None and ev.value > best_value:
                best_value, best_arch = ev.value, format_arch(ev.arch)
            trajectory.append(best_value if best_arch is not None else math.nan)
        step += 1
        if on_step is not None:
            on_step(
                Snapshot(
                    step=step,
                    n_evaluations=len(evaluations),
                    budget=budget,
                    proposals=[format_arch(a) for a in proposals],
                    results=[
                        {"arch": format_arch(ev.arch), "value": ev.value, "status": ev.status, "error": ev.error}
                        for ev in results
                    ],
                    best_value=best_value if best_arch is not None else None,
                    best_arch=best_arch,
                    elapsed=time.perf_counter() - start,
                    step_seconds=time.perf_counter() - step_start,
                    strategy=strategy.state(),
                )
            )
    return RunResult(
        evaluations=evaluations,
        trajectory=trajectory,
        best_arch=best_arch,
        best_value=best_value if best_arch is not None else None,
        optimum=objective.optimum(),
        seconds=time.perf_counter() - start,
        stopped=stopped,
    )
