"""Start, stop and resume searches from the dashboard, each in its own worker process.

The run configuration is built here once, as a validated :class:`~nasviz.config.SearchConfig`
(:func:`search_config`), and stored with the run; the worker (:mod:`nasviz.workers.search`)
rebuilds the search from it. What a browser may start is bounded by the operator's
:class:`~nasviz.settings.Limits`: each budget, the searches running per browser session and in
total, and the size of a study.

>>> config = search_config(source, metric="acc", strategy="bo-tw2g-kdpp5", budget=50)
>>> run_id = start_run(store_path, config, source=source)   # returns at once; the worker runs on
>>> request_stop(store_path, run_id)                        # cooperative: stops after its step
>>> resume_run(store_path, run_id)                          # continues from its last evaluation

``background=False`` (or ``$NASVIZ_SYNC_RUNS=1``) runs the worker function in the calling
thread instead (tests, AppTest).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from nasviz import defaults
from nasviz.components import STRATEGIES, IncompatibleError
from nasviz.config import TABLE, TRAIN, SearchConfig
from nasviz.dashboard.locations import REPO_ROOT, sync_runs
from nasviz.dashboard.sources import DataSource, default_table_path, table_from_path
from nasviz.workers.search import run_worker
from nasviz.errors import ConfigError, InputError
from nasviz.settings import Limits, ServeSettings
from nasviz.store import FINISHED, RUNNING, RunStore, StoreError

#: Worker processes started by this server process, by run id (reaped as they finish).
_CHILDREN: dict[int, subprocess.Popen] = {}


# ----------------------------------------------------------------------------- configuration


def search_config(
    source: DataSource,
    *,
    metric: str | None = None,
    space: str | None = None,
    strategy: str | None = None,
    options: Mapping[str, Any] | None = None,
    budget: int = defaults.DEFAULT_BUDGET,
    batch_size: int | None = None,
    seed: int = 0,
    step_delay: float = 0.0,
    training: Mapping[str, Any] | None = None,
    model_options: Mapping[str, Any] | None = None,
    fidelity: str | None = None,
    cost_budget: float | None = None,
) -> SearchConfig:
    """The validated configuration of a search on ``source`` (the only place the dashboard builds one).

    ``space`` defaults to the source's; ``strategy`` to the page's and the command line's default
    for that space (:func:`nasviz.components.default_strategy`); ``batch_size`` to what the strategy was designed for
    (5 for ``bo-tw2g-kdpp5``); ``metric`` to the source's first. ``step_delay`` (seconds) makes
    the worker pause after each step: a table search at a pace a class can follow. ``fidelity``
    and ``cost_budget`` make a table search multi-fidelity (:class:`~nasviz.config.SearchConfig`).

    Raises :class:`~nasviz.errors.ConfigError` (a ``ValueError``) naming the offending setting:
    a budget below 1, a batch larger than the budget, a metric the source does not measure, an
    unknown strategy, a combination that cannot run (:func:`nasviz.components.problems`), and
    :class:`~nasviz.objectives.TableError` if the table's rows are not of the space.
    """
    space = space or source.space
    metric = metric or (source.metrics[0] if source.metrics else None)
    if metric not in source.metrics:
        raise ConfigError(f"metric {metric!r} is not measured by {source.label}; metrics: {', '.join(source.metrics)}")
    if source.kind == TABLE:
        table_from_path(source.path, space)  # TableError if the table's architectures are not of this space
        where: dict[str, Any] = {"objective": TABLE, "table": source.path}
    elif source.kind == TRAIN:
        where = {"objective": TRAIN, "dataset": source.dataset, "training": training, "model_options": model_options,
                 "data_folder": source.data_folder}
    else:
        raise ConfigError(f"unknown data source kind {source.kind!r}")
    return SearchConfig.create(**where, space=space, metric=metric, strategy=strategy,
                               strategy_options=dict(options or {}), budget=budget, batch_size=batch_size,
                               seed=seed, step_delay=step_delay, fidelity=fidelity, cost_budget=cost_budget)


@dataclass(frozen=True)
class FormCheck:
    """The Search form's settings validated once (:func:`search_config`): the config that Start
    launches, or why it cannot.

    ``cannot_run`` names a combination of strategy, options, space and batch size that cannot run
    (:class:`~nasviz.components.IncompatibleError`): the page shows it at once and disables Start.
    ``error`` is any other fault (a budget of 0, a table that no longer reads): shown when Start
    is pressed, as before.
    """

    config: SearchConfig | None = None
    cannot_run: str | None = None
    error: Exception | None = None


def check_form(source: DataSource, **settings: Any) -> FormCheck:
    """:func:`search_config` of the form's ``settings``, its errors kept for the page to show
    (the form's one check: the page calls nothing else to validate them)."""
    try:
        return FormCheck(config=search_config(source, **settings))
    except IncompatibleError as err:
        return FormCheck(cannot_run=str(err))
    except (ValueError, OSError) as err:  # ConfigError, TableError (ValueErrors), an unreadable file
        return FormCheck(error=err)


def stored_config(config: SearchConfig | Mapping[str, Any], source: DataSource | None = None) -> dict[str, Any]:
    """What the store keeps for a run: :meth:`SearchConfig.to_dict` with the metric filled in,
    plus the table rows the search will skip (``skipped_rows``), redacted unless the source is
    the visitor's own."""
    config = config if isinstance(config, SearchConfig) else SearchConfig.from_dict(config)
    if config.objective.kind != TABLE:
        return config.to_dict()
    try:  # not known to be the visitor's own file: its rows are named by line, never quoted
        table = table_from_path(config.objective.table, config.space)
    except InputError:
        return config.to_dict()  # unreadable now: the worker fails the run with the (redacted) reason
    config = config if config.objective.metric else config.with_metric(table.metrics[0])
    metric = config.objective.metric
    direction = table.direction(metric)  # values are stored as scores; displays turn them back
    extra = {"direction": direction, "value_decimals": table.decimals.get(metric)}  # nasviz.rounding
    if source is not None and source.kind == TABLE and source.path == config.objective.table:
        return {**config.to_dict(), "skipped_rows": source.skipped_rows(), **extra}
    return {**config.to_dict(), "skipped_rows": table.skipped_rows(redact=True), **extra}


# ----------------------------------------------------------------------------- run management


def _reap() -> None:
    """Collect finished worker processes so they do not linger as zombies."""
    for run_id, proc in list(_CHILDREN.items()):
        if proc.poll() is not None:
            del _CHILDREN[run_id]


#: One warm worker per run store (:func:`prewarm`), waiting for its run id on stdin.
_WARM: dict[Path, subprocess.Popen] = {}


def _worker_env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}


def prewarm(store_path: str | os.PathLike) -> subprocess.Popen | None:
    """Keep one *warm* worker ready for ``store_path``: a process that has already imported the
    engine and parsed the embedded table, so the next search started from the page skips those
    seconds before its first evaluation (``python -m nasviz.workers.search --wait``). Returns
    it, or ``None`` when searches run in the page's own process (``NASVIZ_SYNC_RUNS``).

    The warm process reads its run id from a pipe held by this server process; if the server
    stops first, the pipe closes and the process ends without touching the store.
    """
    if sync_runs():
        return None
    store = Path(store_path)
    warm = _WARM.get(store)
    if warm is not None and warm.poll() is None:
        return warm
    table = default_table_path()
    command = [sys.executable, "-m", "nasviz.workers.search", "--store", str(store), "--wait"]
    if table is not None:
        command += ["--table", str(table), "--space", defaults.DEFAULT_SPACE]
    _WARM[store] = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, start_new_session=True, cwd=str(REPO_ROOT),
                                    env=_worker_env())
    return _WARM[store]


def _launch(store_path: Path, run_id: int) -> subprocess.Popen:
    """Hand ``run_id`` to the store's warm worker if one is ready, else start a worker for it;
    either way start a new warm one for the next search."""
    warm = _WARM.pop(Path(store_path), None)
    proc = None
    if warm is not None and warm.poll() is None:
        try:
            warm.stdin.write(f"{run_id}\n".encode())
            warm.stdin.close()
            proc = warm
        except OSError:  # it died between the check and the write: start a cold one
            proc = None
    if proc is None:
        log_dir = Path(store_path).parent / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        with open(log_dir / f"run-{run_id}.log", "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "nasviz.workers.search", "--store", str(store_path), "--run-id", str(run_id)],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,  # a closed tab or a restarted server does not end the search
                cwd=str(REPO_ROOT), env=_worker_env(),
            )
    _CHILDREN[run_id] = proc
    prewarm(store_path)
    return proc


def _run(store_path: Path, run_id: int, background: bool | None) -> None:
    if background if background is not None else not sync_runs():
        _launch(store_path, run_id)
    else:
        run_worker(store_path, run_id)


def start_run(store_path: str | os.PathLike, config: SearchConfig | Mapping[str, Any], *,
              source: DataSource | None = None, background: bool | None = None, name: str | None = None,
              session: str | None = None, limits: Limits | None = None) -> int:
    """Create a run from ``config`` and start its worker; return its id (see :func:`start_runs`)."""
    return start_runs(store_path, [config], source=source, names=[name], background=background, session=session,
                      limits=limits)[0]


def start_runs(store_path: str | os.PathLike, configs: Sequence[SearchConfig | Mapping[str, Any]], *,
               source: DataSource | None = None, names: Sequence[str | None] | None = None,
               background: bool | None = None, session: str | None = None, limits: Limits | None = None) -> list[int]:
    """Create runs from ``configs`` (:class:`SearchConfig`, or its dictionary: read back as it
    is when complete, validated when it lacks settings, :meth:`SearchConfig.from_dict`) and start
    a worker for each; return their ids.

    What a browser starts is bounded by ``limits`` (default: the server's,
    :meth:`ServeSettings.from_env`): each budget at most ``max_budget``, and the new searches
    together with those already running at most ``max_running_per_session`` for ``session`` (the
    browser session starting them) and ``max_running_total``. All are created or none
    (:class:`~nasviz.errors.LimitError` says which limit refused them).
    """
    _reap()
    limits = limits or ServeSettings.from_env().limits
    searches = [c if isinstance(c, SearchConfig) else SearchConfig.from_dict(c) for c in configs]
    stored = [stored_config(c, source) for c in searches]
    for search in searches:
        limits.check_budget(search.run.budget)
        limits.check_pause(search.run.step_delay, search.run.budget)
        STRATEGIES.get(search.strategy.name).check_page_options(search.strategy.options,
                                                                owner=f"strategy {search.strategy.name!r}")
    ids = RunStore(store_path).create_runs(stored, names=names, session=session, limits=limits)
    for run_id in ids:
        _run(Path(store_path), run_id, background)
    return ids


def resume_run(store_path: str | os.PathLike, run_id: int, *, background: bool | None = None,
               session: str | None = None, limits: Limits | None = None) -> None:
    """Continue a stopped or interrupted run from its last stored evaluation (counted against the
    running-search ``limits`` of ``session``, as a new search is)."""
    _reap()
    limits = limits or ServeSettings.from_env().limits
    store = RunStore(store_path)
    run = store.get_run(run_id)
    if run.status == RUNNING:
        raise StoreError(f"run {run_id} is still running")
    if run.status == FINISHED:
        raise StoreError(f"run {run_id} has finished: all {run.budget} evaluations are done")
    # claimed by the server (a new lease) until the worker claims it: an old worker stops writing now;
    # the status is checked again inside the claim's transaction (two visitors resuming at once)
    store.set_status(run_id, RUNNING, claim=True, session=session, limits=limits, resume=True)
    _run(Path(store_path), run_id, background)


#: How long the page waits, after Start, for a new search's first evaluation before it redraws
#: (:func:`wait_for_first_evaluation`).
FIRST_EVALUATION_WAIT = 1.0


def wait_for_first_evaluation(store_path: str | os.PathLike, run_id: int, timeout: float = FIRST_EVALUATION_WAIT,
                              poll: float = 0.02) -> bool:
    """Wait up to ``timeout`` seconds until run ``run_id`` has an evaluation or is no longer
    running; ``True`` if it has one.

    Why: the page redraws once after Start and then every :data:`~nasviz.dashboard.ui.REFRESH_SECONDS`;
    a warm worker has the first evaluation in the store tens of milliseconds after Start, so
    without this wait the first redraw shows "0 evaluations" and the first one appears only at the
    next refresh, a second or more later. The wait is bounded and only sleeps between two cheap
    reads (a cold worker that needs seconds of imports is not waited for).
    """
    store = RunStore(store_path)
    deadline = time.monotonic() + max(0.0, float(timeout))
    while True:
        if store.n_evaluations(run_id) > 0:
            return True
        if store.get_run(run_id).status != RUNNING or time.monotonic() >= deadline:
            return False
        time.sleep(poll)


def request_stop(store_path: str | os.PathLike, run_id: int) -> None:
    """Ask a running search to stop after its current step."""
    RunStore(store_path).request_stop(run_id)


def start_study(store_path: str | os.PathLike, source: DataSource, metric: str, strategies: Sequence[str],
                seeds: Sequence[int], budget: int, *, step_delay: float = 0.0, background: bool | None = None,
                session: str | None = None, limits: Limits | None = None) -> list[int]:
    """Launch one run per (strategy, seed), each with the batch its strategy was designed for
    (``step_delay``: seconds each pauses after a step, see :func:`search_config`).

    Every configuration is validated (:func:`search_config`) and the study checked against
    ``limits`` (its size, each budget, the running searches of ``session``) before any starts.
    Returns the run ids, strategy by strategy.
    """
    if not strategies:
        raise ConfigError("choose at least one strategy")
    if not seeds:
        raise ConfigError("choose at least one seed")
    limits = limits or ServeSettings.from_env().limits
    limits.check_study(len(strategies) * len(seeds))
    pairs = [(s, int(seed)) for s in strategies for seed in seeds]
    configs = [search_config(source, metric=metric, strategy=s, budget=budget, seed=seed, step_delay=step_delay)
               for s, seed in pairs]
    return start_runs(store_path, configs, source=source, names=[f"study {s} seed {seed}" for s, seed in pairs],
                      background=background, session=session, limits=limits)
