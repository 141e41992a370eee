"""The search loop: ask, evaluate, tell, and emit a plain-data snapshot after every step.

With a :class:`~nasviz.store.RunStore` every step is persisted as it happens: the step's
evaluations are committed right after they are evaluated (before the strategy is told and before
the next step starts), then the step's snapshot. A run killed at any moment (even by SIGKILL)
is resumed by :func:`resume_run` (or ``run_search(..., resume=True)``) by *deterministic
replay*: the strategy is rebuilt from the stored config and seed, and for each stored step it is
asked for proposals as before and told the stored results instead of evaluating them again.
Strategies are deterministic given their seed and what they were told, so replay restores their
state exactly without pickling anything, and the resumed run finishes with the same evaluations
as an uninterrupted one. Trained weights that a strategy keeps (Auto-Keras's warm-start
ancestors: ``network_state`` / ``restore_network``) are stored as they arrive and given back
during replay. If a replayed step proposes something other than what was stored (a strategy
that is not deterministic), the stored results are told anyway and a
:class:`ReplayMismatchWarning` is issued.

Every write to the store carries the lease this process got when it claimed the run (see
"Leases" in :mod:`nasviz.store`). If another process has claimed the run since (or it was declared
interrupted while this one was paused), the write is refused with
:class:`~nasviz.errors.LeaseLostError` and the search stops at once without writing anything more,
not even its status: the run belongs to the other process.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Callable, Mapping, NamedTuple, Sequence

from nasviz.config import TABLE, SearchConfig
from nasviz.errors import InputError
from nasviz.fidelity.ladder import arch_of
from nasviz.objectives.base import Evaluation, Objective
from nasviz.overlap import Evaluator
from nasviz.run_record import ReplayMismatchWarning, RunRecord  # ReplayMismatchWarning: re-exported
from nasviz.spaces.base import SearchSpace
from nasviz.strategies.base import Strategy

if TYPE_CHECKING:
    from nasviz.store import RunStore, StoredEvaluation

__all__ = ["ReplayMismatchWarning", "RunResult", "SearchSetup", "Snapshot", "build_search", "resume_run",
           "resume_setup", "run_search", "start_run"]

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
    """Run ``strategy`` against ``objective`` for ``budget`` evaluations.

    After each step ``on_step`` receives a :class:`Snapshot`; ``should_stop`` is polled
    between steps so a search can be stopped cooperatively. Failed evaluations count towards
    the budget (they cost time) but never become the best, nor do evaluations below their
    ladder's full budget (multi-fidelity searches: :attr:`Evaluation.full`).

    Proposals may be architectures or :class:`~nasviz.fidelity.FidelityRequest` objects (a
    multi-fidelity strategy's): the objective gets them as they are, and ``budget`` counts each
    evaluation at any budget. ``cost_budget`` (in the objective's cost units: seconds, or epochs
    for a table without a cost column) stops asking once the evaluations so far cost that much;
    the step under way finishes.

    Parameters
    ----------
    store, run_id : RunStore and int, optional
        Persist every step in ``store`` under ``run_id`` (a new run is created when only
        ``store`` is given; prefer :func:`start_run`, which stores a config that
        :func:`resume_run` can rebuild the search from). The run's status ends ``finished``,
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
    if budget < 1:
        raise ValueError(f"budget must be at least 1, got {budget}")
    if batch_size < 1:
        raise ValueError(f"batch size must be at least 1, got {batch_size}")
    if resume and (store is None or run_id is None):
        raise ValueError("resume=True needs the store and the run_id of the run to resume")
    if run_id is not None and store is None:
        raise ValueError("run_id given without a store")
    record = None
    if store is not None:
        record = RunRecord(store, run_id, strategy=strategy, objective=objective, budget=budget,
                           batch_size=batch_size, resume=resume, lease=lease, format_arch=format_arch,
                           parse_arch=parse_arch)
    loop = _SearchLoop(strategy, objective, budget, batch_size, format_arch, record, should_stop, on_step,
                       Evaluator(objective, concurrent=overlap and concurrent), ask_ahead=1 if overlap else 0,
                       cost_budget=cost_budget)
    return loop.run(heartbeat_seconds)


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


# ---------------------------------------------------------------------------------------------
# Rebuilding a search from its config (what the store keeps, what the CLI and the app send).


@dataclass
class SearchSetup:
    """What :func:`build_search` returns: everything :func:`run_search` needs.

    ``config`` is the stored form (:meth:`SearchConfig.to_dict` with every default filled in,
    plus the table's ``skipped_rows``); ``search_config`` the validated config itself. Call
    :meth:`close` when done: it shuts down the executor's workers, if any.
    """

    config: dict[str, Any]
    space: SearchSpace
    objective: Objective
    strategy: Strategy
    table: Any = None
    executor: Any = None
    #: The lease this process holds on the stored run it resumes (:func:`resume_setup`).
    lease: int | None = None
    search_config: SearchConfig | None = None

    def close(self) -> None:
        if self.executor is not None:
            self.executor.close()
            self.executor = None

    def cost_budget(self) -> float | None:
        """The config's ``cost_budget`` (full evaluations) in the objective's cost units, or ``None``."""
        full = self.config.get("cost_budget")
        if full is None:
            return None
        unit = getattr(self.objective, "full_cost_unit", None)
        if unit is None:
            raise ValueError("a cost budget needs an objective that knows the cost of a full evaluation (a table)")
        return float(full) * float(unit())

    def __enter__(self) -> SearchSetup:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def build_search(config: SearchConfig | Mapping[str, Any]) -> SearchSetup:
    """Rebuild the objective and the strategy from a :class:`~nasviz.config.SearchConfig` or its
    stored dictionary (deterministic given it).

    A dictionary is read by :meth:`SearchConfig.from_dict` (a stored one as it was validated,
    one that lacks settings validated now: errors name the field, see
    :class:`~nasviz.errors.ConfigError`); the strategy is built from the config's parsed options
    without parsing or checking them again (:func:`nasviz.strategies.factory.build_strategy`); keys that are not settings (a run's ``skipped_rows``)
    are kept in the returned ``config``. A table objective looks architectures up in the CSV
    ``table`` (``metric`` defaults to its first metric); a training objective trains them on the
    bundled ``dataset`` with :class:`nasviz.objectives.training.TrainingObjective`, on ``workers``
    local processes or a ``dask`` scheduler (:func:`nasviz.executors.make_executor`).

    The returned ``config`` has every default filled in (e.g. the metric), so storing it makes
    the run reproducible.
    """
    from nasviz.spaces import get_space
    from nasviz.strategies.factory import build_strategy

    extras: dict[str, Any] = {}
    if not isinstance(config, SearchConfig):
        known = {f.name for f in fields(SearchConfig)}
        extras = {k: v for k, v in config.items() if k not in known}
        config = SearchConfig.from_dict(config)
    space = get_space(config.space)
    objective, table, executor = _build_objective(config)
    if table is not None:
        config = config.with_metric(objective.metric)
        extras.setdefault("skipped_rows", table.skipped_rows())
        # values are scores; displays turn them back (an objective without a direction maximises its values)
        extras["direction"] = getattr(objective, "direction", "maximise")
        extras.setdefault("value_decimals", table.decimals.get(objective.metric))  # nasviz.rounding
    try:
        # The validated config's options, parsed and checked once by SearchConfig.create: built as they are.
        strategy = build_strategy(config.strategy, space=space, seed=config.seed, domain=objective.domain(),
                                  batch_size=config.batch_size, options=config.strategy_options)
        if hasattr(strategy, "attach"):
            strategy.attach(objective)  # e.g. Auto-Keras: warm starts through the objective's builder
    except BaseException:
        if executor is not None:
            executor.close()
        raise
    return SearchSetup(config={**config.to_dict(), **extras}, space=space, objective=objective, strategy=strategy,
                       table=table, executor=executor, search_config=config)


def _build_objective(config: SearchConfig) -> tuple[Objective, Any, Any]:
    """``(objective, table or None, executor or None)`` of a validated config."""
    if config.objective == TABLE:
        from nasviz.objectives import TableObjective, load_table

        table = load_table(config.table, space=config.space)
        metric = config.metric or table.metrics[0]
        if config.fidelity is not None:
            from nasviz.objectives.fidelity_table import FidelityTableObjective

            return FidelityTableObjective(table, metric, config.fidelity), table, None
        return TableObjective(table, metric), table, None
    from nasviz.objectives.training import TrainingSpec

    spec = TrainingSpec(space=config.space, dataset=config.dataset, dataset_seed=config.dataset_seed,
                        metric=config.metric, seed=config.train_seed,
                        model_options=tuple(sorted(dict(config.model_options).items())),
                        training=tuple(sorted(dict(config.training).items())), data_folder=config.data_folder)
    objective = spec.build()
    if config.early_stopping is not None:
        from nasviz.fidelity.stopping import parse_rule

        objective.setup_fidelity(parse_rule(config.early_stopping))
    if config.dask or config.workers > 1:
        from nasviz.executors import ExecutorObjective, make_executor

        executor = make_executor(spec, workers=config.workers, dask=config.dask)
        return ExecutorObjective(objective, executor), None, executor
    return objective, None, None


def start_run(store: RunStore, config: SearchConfig | Mapping[str, Any], *, name: str | None = None,
              on_step: Callable[[Snapshot], None] | None = None,
              should_stop: Callable[[], bool] | None = None) -> RunResult:
    """Create a run in ``store`` from ``config`` (see :func:`build_search`) and run it to the end.

    The stored config is complete, so :func:`resume_run` can continue the run if this process
    dies. ``result.run_id`` is the new run's id (also visible in ``store.list_runs()`` from the
    first step on).
    """
    setup = build_search(config)
    run_id = store.create_run(setup.config, name=name)
    return _run_setup(setup, store, run_id, resume=False, on_step=on_step, should_stop=should_stop)


def resume_setup(store: RunStore, run_id: int, *, force: bool = False) -> SearchSetup:
    """Claim stored run ``run_id`` for this process and rebuild its search from the stored config.

    Refused (``StoreError``, a ``ValueError``) while another live process runs it, unless
    ``force=True``. If the search cannot be rebuilt (e.g. the table moved), the run is marked
    ``failed`` with the reason and the error is raised.
    """
    run = store.claim_run(run_id, force=force)  # atomic: of two resumers, one wins
    try:
        setup = build_search(run.config)
    except Exception as err:
        # The store's message is shown on the page: no text quoted from a file (InputError.redacted).
        why = err.redacted() if isinstance(err, InputError) else str(err)
        store.set_status(run_id, "failed", error=f"cannot rebuild the search: {why}", lease=run.lease)
        raise
    setup.lease = run.lease
    return setup


def resume_run(store: RunStore, run_id: int, *, on_step: Callable[[Snapshot], None] | None = None,
               should_stop: Callable[[], bool] | None = None, force: bool = False) -> RunResult:
    """Continue stored run ``run_id`` from its last stored evaluation (see the module docstring).

    Works for ``interrupted``, ``stopped`` and ``failed`` runs (a ``finished`` run is replayed
    and finishes again at once). A run still ``running`` in a live process is refused unless
    ``force=True``. With the same seed the result is the evaluation set of an uninterrupted run.
    """
    setup = resume_setup(store, run_id, force=force)
    return _run_setup(setup, store, int(run_id), resume=True, on_step=on_step, should_stop=should_stop)


def _run_setup(setup: SearchSetup, store: RunStore, run_id: int, *, resume: bool, on_step, should_stop) -> RunResult:
    with setup:
        return run_search(
            setup.strategy, setup.objective, setup.config["budget"], format_arch=setup.space.format,
            parse_arch=setup.space.parse, batch_size=setup.config["batch_size"], on_step=on_step,
            should_stop=should_stop, store=store, run_id=run_id, resume=resume, lease=setup.lease,
            overlap=bool(setup.config.get("overlap")), cost_budget=setup.cost_budget())
