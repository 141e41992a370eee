"""The search loop (:func:`run_search`): ask, evaluate, tell, and emit a plain-data
:class:`Snapshot` after every step; persisted step by step when a store is given (see
:mod:`nasviz.runner`).

The parameters of run_search
----------------------------
Proposals may be architectures or :class:`~nasviz.fidelity.FidelityRequest` objects (a
multi-fidelity strategy's): the objective gets them as they are, and ``budget`` counts each
evaluation at any budget. ``cost_budget`` (in the objective's cost units: seconds, or epochs
for a table without a cost column) stops asking once the evaluations so far cost that much;
the step under way finishes.

store, run_id : RunStore and int, optional
    Persist every step in ``store`` under ``run_id`` (a new run is created when only
    ``store`` is given; prefer :func:`nasviz.runner.start_run`, which stores a config that
    :func:`nasviz.runner.resume_run` can rebuild the search from). The run's status ends ``finished``,
    ``stopped`` (by ``should_stop`` or :meth:`RunStore.request_stop`) or ``failed`` (the
    exception is recorded and re-raised). While it runs, a background thread refreshes the
    run's heartbeat every ``heartbeat_seconds`` (default: a third of the store's
    ``stale_after``, at most 10 s).
resume : bool
    Continue run ``run_id`` of ``store``: ``strategy`` must be freshly built with the same
    seed and options as the stored run; stored steps are replayed (asked, then told the
    stored results), and the search continues live from the first step not stored. Steps
    that were replayed do not call ``on_step`` (their snapshots are already stored).
parse_arch : callable, optional
    Architecture string -> architecture; only needed when replay diverges from the stored
    run (default: ``parse`` of the strategy's or the objective's ``space``).
lease : int, optional
    The lease this process holds on ``run_id`` (from :meth:`RunStore.claim_run`); by default
    the run is claimed here. If the lease is lost, :class:`LeaseLostError` propagates and
    nothing more is written.
overlap : bool
    Ask for step ``t + 1`` while step ``t`` is evaluated (Auto-Keras's CPU / GPU parallelism,
    :mod:`nasviz.overlap`): step ``t + 1`` is proposed knowing steps ``1 .. t - 1``. A stop
    request lets the step under way finish (it is stored and told).
concurrent : bool
    With ``overlap``, actually evaluate beside the ask (default); ``False`` runs the same
    schedule in one thread (same evaluations, no time saved: what the tests compare).
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Sequence

from nasviz.fidelity.ladder import arch_of
from nasviz.objectives.base import Evaluation, Objective
from nasviz.overlap import Evaluator
from nasviz.run_record import RunRecord
from nasviz.strategies.base import Strategy

if TYPE_CHECKING:
    from nasviz.store import RunStore, StoredEvaluation


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
    #: The run's id in the store, when it was persisted.
    run_id: int | None = None
    #: How many of ``evaluations`` were replayed from the store instead of evaluated.
    replayed: int = 0

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
                    **({"fidelity": ev.fidelity.to_dict()} if ev.fidelity is not None else {}),
                }
                for ev in self.evaluations
            ],
            "seconds": self.seconds,
            "stopped": self.stopped,
            **({"run_id": self.run_id, "replayed": self.replayed} if self.run_id is not None else {}),
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
    store: RunStore | None = None,
    run_id: int | None = None,
    resume: bool = False,
    parse_arch: Callable[[str], Any] | None = None,
    heartbeat_seconds: float | None = None,
    lease: int | None = None,
    overlap: bool = False,
    concurrent: bool = True,
    cost_budget: float | None = None,
) -> RunResult:
    """Run ``strategy`` against ``objective`` for ``budget`` evaluations (the parameters are
    described in this module's docstring, "The parameters of run_search").

    After each step ``on_step`` receives a :class:`Snapshot`; ``should_stop`` is polled
    between steps so a search can be stopped cooperatively. Failed evaluations count towards
    the budget (they cost time) but never become the best, nor do evaluations below their
    ladder's full budget (multi-fidelity searches: :attr:`Evaluation.full`). With ``store`` every
    step is persisted (prefer :func:`nasviz.runner.start_run`); ``resume`` continues run ``run_id``
    by replaying its stored steps; ``overlap`` asks for the next step while one is evaluated.
    """
    _check_run_arguments(budget, batch_size, store, run_id, resume)
    record = None
    if store is not None:
        record = RunRecord(store, run_id, strategy=strategy, objective=objective, budget=budget,
                           batch_size=batch_size, resume=resume, lease=lease, format_arch=format_arch,
                           parse_arch=parse_arch)
    loop = _SearchLoop(strategy, objective, budget, batch_size, format_arch, record, should_stop, on_step,
                       Evaluator(objective, concurrent=overlap and concurrent), ask_ahead=1 if overlap else 0,
                       cost_budget=cost_budget)
    return loop.run(heartbeat_seconds)


def _check_run_arguments(budget: int, batch_size: int, store: RunStore | None, run_id: int | None,
                         resume: bool) -> None:
    """Refuse (``ValueError``) a :func:`run_search` call whose arguments cannot make a search."""
    if budget < 1:
        raise ValueError(f"budget must be at least 1, got {budget}")
    if batch_size < 1:
        raise ValueError(f"batch size must be at least 1, got {batch_size}")
    if resume and (store is None or run_id is None):
        raise ValueError("resume=True needs the store and the run_id of the run to resume")
    if run_id is not None and store is None:
        raise ValueError("run_id given without a store")


class _Step(NamedTuple):
    """A step asked for and not yet told: its number, proposals, stored results when it is
    replayed, the evaluation under way (overlap) and when its ask started."""

    number: int
    proposals: list
    stored: list[StoredEvaluation] | None
    handle: Any
    started: float


class _SearchLoop:
    """One search: asks (up to ``ask_ahead`` steps ahead while a step is evaluated), evaluates or
    replays, commits, tells, records the best so far and emits a snapshot per step."""

    def __init__(self, strategy: Strategy, objective: Objective, budget: int, batch_size: int,
                 format_arch: Callable[[Any], str], record: RunRecord | None,
                 should_stop: Callable[[], bool] | None, on_step: Callable[[Snapshot], None] | None,
                 evaluator: Evaluator, ask_ahead: int, cost_budget: float | None = None) -> None:
        self.strategy, self.objective, self.budget, self.batch_size = strategy, objective, budget, batch_size
        self.cost_budget, self.spent = cost_budget, 0.0
        self.format_arch, self.record, self.should_stop, self.on_step = format_arch, record, should_stop, on_step
        self.evaluator, self.ask_ahead = evaluator, ask_ahead
        self.evaluations: list[Evaluation] = []
        self.trajectory: list[float] = []
        self.best_value, self.best_arch = -math.inf, None
        self.step, self.stopped, self.replayed = 0, False, 0
        self.queue: deque[_Step] = deque()
        self.asking = True
        self.start = time.perf_counter()

    def run(self, heartbeat_seconds: float | None) -> RunResult:
        if self.record is not None:
            self.record.start_heartbeat(heartbeat_seconds)
        try:
            while True:
                self._ask_ahead()
                if not self.queue:
                    break
                item = self.queue.popleft()
                results = self._results(item)
                observe = getattr(self.objective, "observe", None)
                if observe is not None:  # e.g. an early-stopping rule's records (replayed steps too)
                    observe(results)
                self.strategy.tell(results)
                self._record_best(results)
                self.step += 1
                if item.stored is None or self.step not in self._stored_snapshots():
                    self._snapshot(item, results)  # a fully replayed step has its snapshot stored already
        except BaseException as err:
            if self.record is not None:
                self.record.fail(err)
            raise
        finally:
            self.evaluator.close()
            if self.record is not None:
                self.record.stop_heartbeat()
        best_value = self.best_value if self.best_arch is not None else None
        if self.record is not None:
            self.record.finish(self.stopped, self.best_arch)
        return RunResult(evaluations=self.evaluations, trajectory=self.trajectory, best_arch=self.best_arch,
                         best_value=best_value, optimum=self.objective.optimum(),
                         seconds=time.perf_counter() - self.start, stopped=self.stopped,
                         run_id=self.record.run_id if self.record is not None else None, replayed=self.replayed)

    def _stored_snapshots(self) -> set[int]:
        return self.record.snapshot_steps if self.record is not None else set()

    def _stop_now(self) -> bool:
        """Whether a live step must not start: the caller or the store asked to stop."""
        if self.should_stop is not None and self.should_stop():
            return True
        return self.record is not None and self.record.stop_requested()

    def _ask_ahead(self) -> None:
        """Queue steps until ``ask_ahead + 1`` are under way, the budget is asked for, a stop is
        requested or the domain is exhausted; with overlap, a live step's evaluation starts now."""
        while self.asking and len(self.queue) <= self.ask_ahead:
            asked = len(self.evaluations) + sum(len(q.proposals) for q in self.queue)
            if asked >= self.budget or (self.cost_budget is not None and self.spent >= self.cost_budget):
                return
            number = self.step + len(self.queue) + 1
            stored = self.record.replay.pop(number, None) if self.record is not None else None
            if stored is None and self._stop_now():
                self.stopped, self.asking = True, False
                return
            started = time.perf_counter()
            proposals = self.strategy.ask(min(self.batch_size, self.budget - asked))
            if stored is None and not proposals:
                self.asking = False  # the domain is exhausted
                return
            handle = self.evaluator.start(proposals) if stored is None and self.ask_ahead else None
            self.queue.append(_Step(number, proposals, stored, handle, started))

    def _results(self, item: _Step) -> list[Evaluation]:
        """The step's results: evaluated (and committed before the strategy hears of them) or
        replayed from the store (a step cut short by a kill is finished live)."""
        index = len(self.evaluations)
        if item.stored is None:
            results = self.evaluator.wait(item.handle) if self.ask_ahead else self.evaluator.evaluate(item.proposals)
            if self.record is not None:
                self.record.commit(results, index, item.number)
            return results
        results, matched = self.record.replayed(item.stored, item.proposals, item.number)
        self.replayed += len(results)
        missing = item.proposals[len(results):] if matched else []
        if missing:
            fresh = self.objective.evaluate(missing)
            self.record.commit(fresh, index + len(results), item.number)
            results = results + fresh
        return results

    def _record_best(self, results: Sequence[Evaluation]) -> None:
        """Failed evaluations count towards the budget but never become the best, nor do
        evaluations below their ladder's full budget."""
        for ev in results:
            self.evaluations.append(ev)
            if ev.cost is not None and math.isfinite(ev.cost):
                self.spent += float(ev.cost)
            if ev.ok and ev.full and ev.value is not None and ev.value > self.best_value:
                self.best_value, self.best_arch = ev.value, self.format_arch(ev.arch)
            self.trajectory.append(self.best_value if self.best_arch is not None else math.nan)

    def _snapshot(self, item: _Step, results: Sequence[Evaluation]) -> None:
        elapsed_before = self.record.elapsed_before if self.record is not None else 0.0
        now = time.perf_counter()
        snapshot = Snapshot(
            step=self.step, n_evaluations=len(self.evaluations), budget=self.budget,
            proposals=[self.format_arch(arch_of(a)) for a in item.proposals],
            results=[{"arch": self.format_arch(ev.arch), "value": ev.value, "status": ev.status, "error": ev.error,
                      **({"fidelity": ev.fidelity.to_dict()} if ev.fidelity is not None else {})}
                     for ev in results],
            best_value=self.best_value if self.best_arch is not None else None, best_arch=self.best_arch,
            elapsed=elapsed_before + now - self.start, step_seconds=now - item.started,
            strategy=_as_stored(self.strategy.state().to_dict()),
        )
        if self.record is not None:
            self.record.snapshot(snapshot)
        if self.on_step is not None:
            self.on_step(snapshot)


def _as_stored(data: Any) -> Any:
    """``data`` as the store gives it back (tuples become lists), so a step's snapshot is the same
    object for ``on_step`` callers as for readers of the store."""
    if isinstance(data, dict):
        return {k: _as_stored(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_as_stored(v) for v in data]
    return data
