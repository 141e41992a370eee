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
import threading
import time
import warnings
from collections import deque
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Callable, Mapping, NamedTuple, Sequence

from nasviz.config import TABLE, SearchConfig
from nasviz.errors import InputError, LeaseLostError
from nasviz.objectives.base import Evaluation, Objective
from nasviz.overlap import Evaluator
from nasviz.spaces.base import SearchSpace
from nasviz.strategies.base import Strategy

if TYPE_CHECKING:
    from nasviz.store import RunStore

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
                }
                for ev in self.evaluations
            ],
            "seconds": self.seconds,
            "stopped": self.stopped,
            **({"run_id": self.run_id, "replayed": self.replayed} if self.run_id is not None else {}),
        }


class ReplayMismatchWarning(UserWarning):
    """A resumed strategy proposed something other than what the stored run evaluated."""


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
) -> RunResult:
    """Run ``strategy`` against ``objective`` for ``budget`` evaluations.

    After each step ``on_step`` receives a :class:`Snapshot`; ``should_stop`` is polled
    between steps so a search can be stopped cooperatively. Failed evaluations count towards
    the budget (they cost time) but never become the best.

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
    start = time.perf_counter()

    replay: dict[int, list[dict[str, Any]]] = {}
    snapshot_steps: set[int] = set()
    elapsed_before = 0.0
    if store is not None:
        if run_id is None:
            run_id = store.create_run({
                "strategy": getattr(strategy, "name", type(strategy).__name__),
                "objective": getattr(objective, "name", type(objective).__name__),
                "metric": getattr(objective, "metric", None), "budget": budget, "batch_size": batch_size,
            })
        else:
            if not resume and store.n_evaluations(run_id):
                raise ValueError(f"run {run_id} already has {store.n_evaluations(run_id)} evaluations; "
                                 "pass resume=True to continue it")
        if lease is None:  # callers that must not steal a live run claim first and pass their lease
            lease = store.claim_run(run_id, force=True)["lease"]
        if resume:
            for ev in store.evaluations(run_id):
                replay.setdefault(ev["step"], []).append(ev)
            snapshot_steps = set(store.snapshot_steps(run_id))
            last = store.latest_snapshot(run_id)
            elapsed_before = float(last.get("elapsed") or 0.0) if last else 0.0
        if parse_arch is None:
            space = getattr(strategy, "space", None) or getattr(objective, "space", None)
            parse_arch = getattr(space, "parse", None)

    evaluations: list[Evaluation] = []
    trajectory: list[float] = []
    best_value, best_arch = -math.inf, None
    step, stopped, n_replayed = 0, False, 0

    stop_beating = threading.Event()
    beater = None
    if heartbeat_seconds is None:
        heartbeat_seconds = min(10.0, store.stale_after / 3) if store is not None else 0.0
    if store is not None and heartbeat_seconds > 0:
        beater = threading.Thread(target=_heartbeat, args=(store, run_id, lease, heartbeat_seconds, stop_beating),
                                  name=f"nasviz-heartbeat-{run_id}", daemon=True)
        beater.start()
    evaluator = Evaluator(objective, concurrent=overlap and concurrent)
    queue: deque[_Step] = deque()
    asking = True
    try:
        while True:
            while asking and len(queue) <= (1 if overlap else 0):
                asked = len(evaluations) + sum(len(q.proposals) for q in queue)
                if asked >= budget:
                    break
                number = step + len(queue) + 1
                stored = replay.pop(number, None)
                if stored is None and _stop_now(should_stop, store, run_id, lease):
                    stopped, asking = True, False
                    break
                step_start = time.perf_counter()
                proposals = strategy.ask(min(batch_size, budget - asked))
                if stored is None and not proposals:
                    asking = False  # the domain is exhausted
                    break
                handle = evaluator.start(proposals) if stored is None and overlap else None
                queue.append(_Step(number, proposals, stored, handle, step_start))
            if not queue:
                break
            item = queue.popleft()
            if item.stored is None:
                results = evaluator.wait(item.handle) if overlap else evaluator.evaluate(item.proposals)
                if store is not None:  # committed before the strategy hears of them
                    store.add_evaluations(run_id, [_plain(ev, format_arch) for ev in results],
                                          len(evaluations), step=item.number, lease=lease)
                    _keep_networks(store, run_id, lease, strategy, results, format_arch)
            else:
                results, matched = _replayed_results(item.stored, item.proposals, format_arch, parse_arch, item.number)
                n_replayed += len(results)
                _restore_networks(store, run_id, strategy, results, format_arch)
                missing = item.proposals[len(results):] if matched else []
                if missing:  # killed in the middle of a step: finish the step live
                    fresh = objective.evaluate(missing)
                    store.add_evaluations(run_id, [_plain(ev, format_arch) for ev in fresh],
                                          len(evaluations) + len(results), step=item.number, lease=lease)
                    _keep_networks(store, run_id, lease, strategy, fresh, format_arch)
                    results = results + fresh
            strategy.tell(results)
            for ev in results:
                evaluations.append(ev)
                if ev.ok and ev.value is not None and ev.value > best_value:
                    best_value, best_arch = ev.value, format_arch(ev.arch)
                trajectory.append(best_value if best_arch is not None else math.nan)
            step += 1
            if item.stored is not None and step in snapshot_steps:
                continue  # fully replayed: its snapshot is stored already
            snapshot = Snapshot(
                step=step,
                n_evaluations=len(evaluations),
                budget=budget,
                proposals=[format_arch(a) for a in item.proposals],
                results=[
                    {"arch": format_arch(ev.arch), "value": ev.value, "status": ev.status, "error": ev.error}
                    for ev in results
                ],
                best_value=best_value if best_arch is not None else None,
                best_arch=best_arch,
                elapsed=elapsed_before + time.perf_counter() - start,
                step_seconds=time.perf_counter() - item.started,
                strategy=_as_stored(strategy.state().to_dict()),
            )
            if store is not None:
                store.add_snapshot(run_id, snapshot, lease=lease)
            if on_step is not None:
                on_step(snapshot)
    except BaseException as err:
        if store is not None and not isinstance(err, LeaseLostError):  # a lost run is not ours to mark
            stop_beating.set()
            failed = isinstance(err, Exception)
            store.set_status(run_id, "failed" if failed else "interrupted",
                             error=f"{type(err).__name__}: {err}" if failed else None, lease=lease)
        raise
    finally:
        evaluator.close()
        stop_beating.set()
        if beater is not None:
            beater.join()
    if store is not None:
        store.set_status(run_id, "stopped" if stopped else "finished", lease=lease)
        if not stopped:  # only a run that may be resumed needs its weights; the best one is exported
            store.drop_networks(run_id, lease=lease, keep=best_arch)
    return RunResult(
        evaluations=evaluations,
        trajectory=trajectory,
        best_arch=best_arch,
        best_value=best_value if best_arch is not None else None,
        optimum=objective.optimum(),
        seconds=time.perf_counter() - start,
        stopped=stopped,
        run_id=run_id,
        replayed=n_replayed,
    )


class _Step(NamedTuple):
    """A step asked for and not yet told: its number, proposals, stored results when it is
    replayed, the evaluation under way (overlap) and when its ask started."""

    number: int
    proposals: list
    stored: list[dict[str, Any]] | None
    handle: Any
    started: float


def _stop_now(should_stop: Callable[[], bool] | None, store: RunStore | None, run_id: int | None,
              lease: int | None) -> bool:
    """Whether a live step must not start: the caller or the store asked to stop (a process woken
    from a pause that lost its lease raises here)."""
    if should_stop is not None and should_stop():
        return True
    if store is not None:
        store.check_lease(run_id, lease)
        return store.stop_requested(run_id)
    return False


def _keep_networks(store: RunStore, run_id: int, lease: int | None, strategy: Strategy,
                   results: Sequence[Evaluation], format_arch: Callable[[Any], str]) -> None:
    """Store the trained weights a strategy will need after a resume (``strategy.network_state``).

    Auto-Keras warm-starts children from their trained ancestors; replay restores its choices
    but not weights, so without this a resumed run trains those children from scratch and
    differs from an uninterrupted one. A failure to store is a warning, never a stopped search.
    """
    export = getattr(strategy, "network_state", None)
    if export is None:
        return
    for ev in results:
        if not ev.ok:
            continue
        try:
            arrays = export(ev.arch)
            if arrays is not None:
                store.add_network(run_id, format_arch(ev.arch), arrays, lease=lease)
        except LeaseLostError:
            raise
        except Exception as err:  # noqa: BLE001 - losing a warm start must not lose the run
            warnings.warn(f"could not store the trained weights of {format_arch(ev.arch)}: {err}", stacklevel=2)


def _restore_networks(store: RunStore, run_id: int, strategy: Strategy, results: Sequence[Evaluation],
                      format_arch: Callable[[Any], str]) -> None:
    """Give a replaying strategy the weights :func:`_keep_networks` stored (before it is told)."""
    restore = getattr(strategy, "restore_network", None)
    if restore is None:
        return
    for ev in results:
        if not ev.ok:
            continue
        try:
            arrays = store.network(run_id, format_arch(ev.arch))
            if arrays is not None:
                restore(ev.arch, arrays)
        except Exception as err:  # noqa: BLE001 - the child then trains from scratch
            warnings.warn(f"could not restore the trained weights of {format_arch(ev.arch)}: {err}", stacklevel=2)


def _heartbeat(store: RunStore, run_id: int, lease: int | None, every: float, done: threading.Event) -> None:
    try:
        while not done.wait(every):
            store.heartbeat(run_id, lease)
    except Exception:  # a heartbeat is best effort: a stale one only marks the run interrupted
        pass
    finally:
        store.close()


def _as_stored(data: Any) -> Any:
    """``data`` as the store gives it back (tuples become lists), so a step's snapshot is the same
    object for ``on_step`` callers as for readers of the store."""
    if isinstance(data, dict):
        return {k: _as_stored(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_as_stored(v) for v in data]
    return data


def _plain(ev: Evaluation, format_arch: Callable[[Any], str]) -> dict[str, Any]:
    return {"arch": format_arch(ev.arch), "value": ev.value, "cost": ev.cost, "status": ev.status,
            "error": ev.error, "info": ev.info}


def _replayed_results(stored: list[dict[str, Any]], proposals: Sequence[Any], format_arch: Callable[[Any], str],
                      parse_arch: Callable[[str], Any] | None, step: int) -> tuple[list[Evaluation], bool]:
    """The stored evaluations of one step as :class:`Evaluation` objects, and whether they match.

    When the replayed proposals match the stored architectures (in order; the stored list may
    be a prefix if the process died mid-step), the proposals' own objects are reused; otherwise
    the stored strings are parsed and a :class:`ReplayMismatchWarning` is issued.
    """
    strings = [format_arch(a) for a in proposals]
    stored_strings = [ev["arch"] for ev in stored]
    matched = strings[: len(stored)] == stored_strings
    if matched:
        archs = list(proposals[: len(stored)])
    else:
        warnings.warn(
            f"replaying step {step}: the strategy proposed {strings} but the stored run evaluated "
            f"{stored_strings}; telling it the stored results (is the strategy deterministic given its seed?)",
            ReplayMismatchWarning, stacklevel=3)
        if parse_arch is None:
            raise ValueError("cannot replay a diverging run without parse_arch (the space's parse)")
        archs = [parse_arch(s) for s in stored_strings]
    return [
        Evaluation(arch, ev["value"], ev["cost"] if ev["cost"] is not None else 0.0, ev["status"], ev["error"],
                   ev["info"] or {})
        for arch, ev in zip(archs, stored)
    ], matched


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

    def __enter__(self) -> SearchSetup:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def build_search(config: SearchConfig | Mapping[str, Any]) -> SearchSetup:
    """Rebuild the objective and the strategy from a :class:`~nasviz.config.SearchConfig` or its
    stored dictionary (deterministic given it).

    A dictionary is validated by :meth:`SearchConfig.from_dict` (errors name the field, see
    :class:`~nasviz.errors.ConfigError`); keys that are not settings (a run's ``skipped_rows``)
    are kept in the returned ``config``. A table objective looks architectures up in the CSV
    ``table`` (``metric`` defaults to its first metric); a training objective trains them on the
    bundled ``dataset`` with :class:`nasviz.objectives.trainer.TrainingObjective`, on ``workers``
    local processes or a ``dask`` scheduler (:func:`nasviz.executors.make_executor`).

    The returned ``config`` has every default filled in (e.g. the metric), so storing it makes
    the run reproducible.
    """
    from nasviz.spaces import get_space
    from nasviz.strategies.factory import make_strategy

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
    try:
        strategy = make_strategy(config.strategy, space=space, seed=config.seed, domain=objective.domain(),
                                 batch_size=config.batch_size, **dict(config.strategy_options))
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
        return TableObjective(table, config.metric or table.metrics[0]), table, None
    from nasviz.objectives.trainer import TrainingSpec

    spec = TrainingSpec(space=config.space, dataset=config.dataset, dataset_seed=config.dataset_seed,
                        metric=config.metric, seed=config.train_seed,
                        model_options=tuple(sorted(dict(config.model_options).items())),
                        training=tuple(sorted(dict(config.training).items())), data_folder=config.data_folder)
    objective = spec.build()
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
        setup = build_search(run["config"])
    except Exception as err:
        # The store's message is shown on the page: no text quoted from a file (InputError.redacted).
        why = err.redacted() if isinstance(err, InputError) else str(err)
        store.set_status(run_id, "failed", error=f"cannot rebuild the search: {why}", lease=run["lease"])
        raise
    setup.lease = run["lease"]
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
            overlap=bool(setup.config.get("overlap")))
