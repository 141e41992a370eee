"""Background searches for the dashboard, and the data helpers its pages call.

A search started from the browser runs in a separate process, ``python -m nasviz.live worker
--store FILE --run-id ID``, which never imports Streamlit. It reads its configuration from the run
store, writes every step (evaluations and snapshot) there as it happens, and polls the store for a
stop request between steps. Because the process is started in its own session it keeps running
when the browser tab closes or the page reloads; a reloaded page finds it again in the store.

>>> store_path = default_store_path()
>>> config = make_config(source, metric="cifar10", strategy="random", budget=50, seed=0)
>>> run_id = start_run(store_path, config)            # returns at once; the worker runs on
>>> request_stop(store_path, run_id)                   # cooperative: stops after its step
>>> resume_run(store_path, run_id)                     # continues from its last evaluation

``background=False`` runs the same worker function in the calling thread (tests, AppTest).

The rest of this module turns stored runs into what the views draw: table loading with caching,
upload validation, the kernel's distances on the candidate pool and on the evaluated
architectures. The pages call these; they compute no kernel themselves.

What a browser may do is bounded here (:class:`~nasviz.settings.ServeSettings`): server-side
tables come only from the operator's data folder (:func:`server_table`), uploads are capped and
kept under unguessable names (:func:`save_upload`, :mod:`nasviz.uploads`), and starting or
resuming searches checks the budget and running-search limits. Nothing here unpickles.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import subprocess
import sys
import threading
import time
import traceback
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from nasviz import uploads
from nasviz.errors import InputError, LeaseLostError
from nasviz.objectives import Table, TableError, load_table, shared_nb201_table_path
from nasviz.server_paths import resolve_server_path
from nasviz.settings import Limits, ServeSettings
from nasviz.store import FAILED, FINISHED, RUNNING, STOPPED, RunStore, StoreError

#: Environment variable naming the run store file the dashboard uses.
STORE_ENV = "NASVIZ_STORE"
#: Set to 1 to run searches started from the dashboard synchronously (tests).
SYNC_ENV = "NASVIZ_SYNC_RUNS"

REPO_ROOT = Path(__file__).resolve().parent.parent
EMBEDDED_TABLE = REPO_ROOT / "data" / "nb201_digits.csv"


# ----------------------------------------------------------------------------- data sources


def runs_dir() -> Path:
    """Folder for the store, uploaded tables and worker logs: beside the store file."""
    return default_store_path().parent


def default_store_path() -> Path:
    """``$NASVIZ_STORE`` if set, else ``runs/nasviz.sqlite`` in the project folder."""
    env = os.environ.get(STORE_ENV)
    return Path(env) if env else REPO_ROOT / "runs" / "nasviz.sqlite"


def default_table_path() -> Path | None:
    """The embedded NB201-on-digits table, else the shared NB201 table, else ``None``."""
    if EMBEDDED_TABLE.is_file():
        return EMBEDDED_TABLE
    return shared_nb201_table_path()


class _TableCache:
    """Loaded tables by ``(resolved path, mtime, size, space)``: a table is parsed once until its
    file changes, and an upload parsed from its bytes is put here under its stored path."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self._tables: "OrderedDict[tuple, Table]" = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(path: Path, space: str) -> tuple:
        info = path.stat()
        return (str(path), info.st_mtime_ns, info.st_size, space)

    def get(self, key: tuple) -> Table | None:
        with self._lock:
            if key in self._tables:
                self._tables.move_to_end(key)
            return self._tables.get(key)

    def put(self, key: tuple, table: Table) -> None:
        with self._lock:
            self._tables[key] = table
            while len(self._tables) > self.size:
                self._tables.popitem(last=False)


_TABLES = _TableCache()


def table_from_path(path: str | os.PathLike, space: str = "nb201", *, max_bytes: int | None = None) -> Table:
    """Load a table CSV that the app itself chose (the embedded table, a stored upload, a run's
    table), cached until the file changes. Visitors' paths go through :func:`server_table`.

    Raises :class:`~nasviz.objectives.TableError` (a ``ValueError``) naming the problem.
    """
    if not str(path).strip():
        raise TableError("no table path given")
    p = Path(path).expanduser().resolve()
    if p.suffix.lower() not in (".csv", ".txt"):
        raise TableError("expected a CSV file (.csv)", source=p.name)
    try:
        key = _TABLES.key(p, space)
    except FileNotFoundError:
        raise TableError("file does not exist", source=str(path)) from None
    except OSError as err:
        raise TableError(f"cannot be read: {err.strerror or err}", source=str(path)) from None
    table = _TABLES.get(key)
    if table is None:
        table = load_table(p, space=space, max_bytes=max_bytes)
        _TABLES.put(key, table)
    return table


def server_table(text: str, space: str = "nb201", settings: ServeSettings | None = None) -> tuple[Path, Table]:
    """A table from a path a visitor typed: only inside the operator's data folder.

    The path is resolved (symlinks, ``..``) and refused unless it lies in
    ``settings.data_dir`` (server-side paths are off when that is ``None``) and outside the run
    folder; the file may be at most ``limits.max_table_mb``. Errors never quote the file: the
    visitor may not read it (:meth:`~nasviz.errors.InputError.redacted`).
    """
    settings = settings or ServeSettings.from_env()
    path = resolve_server_path(text, settings.data_dir, forbidden=[runs_dir()])
    try:
        return path, table_from_path(path, space, max_bytes=settings.limits.max_table_bytes)
    except InputError as err:
        raise type(err)(err.redacted()) from None


def save_upload(data: bytes, filename: str, space: str = "nb201", folder: Path | None = None,
                limits: Limits | None = None) -> tuple[Path, Table]:
    """Validate an uploaded CSV and keep a copy the background worker can read.

    The bytes are parsed as UTF-8 text by :func:`~nasviz.objectives.load_table` (never
    unpickled), once per content (:func:`nasviz.uploads.parse_upload`). Bad rows are reported in
    ``table.bad_rows`` with their line numbers; a file with no usable row raises ``TableError``,
    one over ``limits.max_upload_mb`` a ``LimitError``. The copy gets a new unguessable name
    (:func:`nasviz.uploads.store_upload`); old uploads no running search reads are pruned.
    """
    limits = limits or ServeSettings.from_env().limits
    uploads.check_upload(data, filename, limits)
    table = uploads.parse_upload(data, filename, space)
    folder = folder or uploads_dir()
    in_use = uploads_in_use(default_store_path(), limits.upload_max_age_hours * 3600)
    path = uploads.store_upload(data, folder, limits, in_use=in_use)
    _TABLES.put(_TABLES.key(path.resolve(), space), table)  # the worker and the pages find it parsed
    return path, table


def uploads_dir() -> Path:
    """Where uploads are kept: ``uploads/`` beside the run store."""
    return runs_dir() / "uploads"


def uploads_in_use(store_path: str | os.PathLike, recent_seconds: float = 0.0) -> set[Path]:
    """Tables of the store's runs that are running or were updated in the last
    ``recent_seconds``: an upload's age counts from its last use by a search, so these are kept."""
    if not Path(store_path).is_file():
        return set()
    since = time.time() - recent_seconds
    return {Path(r["table"]).resolve() for r in RunStore(store_path).list_runs()
            if r.get("table") and (r["status"] == RUNNING or r["updated"] >= since)}


def trainer_available() -> bool:
    """Whether live training (``nasviz.objectives.trainer``) is part of this installation."""
    return importlib.util.find_spec("nasviz.objectives.trainer") is not None


def training_datasets() -> list[str]:
    """Bundled datasets live training can use (empty when the trainer is absent)."""
    if importlib.util.find_spec("nasviz.objectives.datasets") is None:
        return []
    module = importlib.import_module("nasviz.objectives.datasets")
    names = getattr(module, "DATASETS", None) or getattr(module, "dataset_names", lambda: [])()
    return [n for n in names if n == "digits"] or list(names)[:1]


# ----------------------------------------------------------------------------- configuration


@dataclass
class DataSource:
    """Where evaluations come from: a table CSV (``path``) or live training (``dataset``)."""

    kind: str  # "table" or "train"
    label: str
    path: str | None = None
    dataset: str | None = None
    metrics: list[str] = field(default_factory=list)
    optimum: dict[str, float] = field(default_factory=dict)
    rows: int = 0
    bad_rows: list[str] = field(default_factory=list)
    #: Whether messages about the table may quote it (``False`` for a server file: the visitor
    #: may use it but not read it).
    disclose: bool = True

    @classmethod
    def from_table(cls, path: Path, table: Table, label: str | None = None, *, disclose: bool = True) -> "DataSource":
        """The source of a loaded table. ``disclose=False`` (a server file: not the visitor's
        own) keeps the bad rows as line, column number and reason, without the cells' text."""
        return cls("table", label or table.source, path=str(path), metrics=table.metrics,
                   optimum={m: table.optimum(m) for m in table.metrics}, rows=len(table),
                   bad_rows=[str(b) if disclose else b.redacted() for b in table.bad_rows], disclose=disclose)

    def table(self, space: str = "nb201") -> Table:
        """The source's table (cached; :func:`table_from_path`). If it cannot be read any more
        (the file changed), the error quotes nothing from it unless :attr:`disclose`."""
        if self.kind != "table" or not self.path:
            raise TableError(f"{self.label} is not a table")
        try:
            return table_from_path(self.path, space)
        except InputError as err:
            if self.disclose:
                raise
            raise type(err)(err.redacted()) from None


def make_config(
    source: DataSource,
    *,
    metric: str | None = None,
    space: str = "nb201",
    strategy: str = "random",
    options: Mapping[str, Any] | None = None,
    budget: int = 50,
    batch_size: int = 1,
    seed: int = 0,
    step_delay: float = 0.0,
) -> dict[str, Any]:
    """The run configuration stored with a run (plain data), validated.

    ``step_delay`` (seconds) makes the worker pause after each step: slows a table search down
    to a pace a class can follow, and lets tests stop a run mid-way.

    Raises ``ValueError`` naming the offending field: a budget below 1, a batch larger than the
    budget, a metric the table does not have, an unknown strategy.
    """
    try:
        budget, batch_size, seed = int(budget), int(batch_size), int(seed)
    except (TypeError, ValueError):
        raise ValueError(f"budget, batch size and seed must be integers, got {budget!r}, {batch_size!r}, {seed!r}") from None
    if budget < 1:
        raise ValueError(f"budget must be at least 1 evaluation, got {budget}")
    if batch_size < 1:
        raise ValueError(f"batch size must be at least 1, got {batch_size}")
    if batch_size > budget:
        raise ValueError(f"batch size {batch_size} is larger than the budget {budget}")
    from nasviz.strategies.factory import strategy_names

    if strategy not in strategy_names():
        raise ValueError(f"unknown strategy {strategy!r}; known: {', '.join(strategy_names())}")
    config: dict[str, Any] = {
        "space": space, "strategy": strategy, "strategy_options": dict(options or {}),
        "budget": budget, "batch_size": batch_size, "seed": seed,
    }
    if step_delay:
        if not 0 < float(step_delay) <= 60:
            raise ValueError(f"step delay must be between 0 and 60 seconds, got {step_delay}")
        config["step_delay"] = float(step_delay)
    if source.kind == "table":
        source.table(space)  # TableError if the table's architectures are not of this space
        metric = metric or (source.metrics[0] if source.metrics else None)
        if metric not in source.metrics:
            raise ValueError(f"metric {metric!r} is not a numeric column of {source.label}; metrics: {', '.join(source.metrics)}")
        config.update(objective="table", table=source.path, metric=metric,
                      skipped_rows={"count": len(source.bad_rows), "first": source.bad_rows[:5]})
    elif source.kind == "train":
        metric = metric or "valid_accuracy"
        if metric not in source.metrics:
            raise ValueError(f"metric {metric!r} cannot be measured by training; metrics: {', '.join(source.metrics)}")
        config.update(objective="train", dataset=source.dataset, metric=metric)
    else:
        raise ValueError(f"unknown data source kind {source.kind!r}")
    return config


# ----------------------------------------------------------------------------- run management

_CHILDREN: dict[int, subprocess.Popen] = {}


def _reap() -> None:
    """Collect finished worker processes so they do not linger as zombies."""
    for run_id, proc in list(_CHILDREN.items()):
        if proc.poll() is not None:
            del _CHILDREN[run_id]


def _launch(store_path: Path, run_id: int) -> subprocess.Popen:
    log_dir = Path(store_path).parent / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    with open(log_dir / f"run-{run_id}.log", "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nasviz.live", "worker", "--store", str(store_path), "--run-id", str(run_id)],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,  # a closed tab or a restarted server does not end the search
            cwd=str(REPO_ROOT), env={**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")},
        )
    _CHILDREN[run_id] = proc
    return proc


def _sync_default() -> bool:
    return os.environ.get(SYNC_ENV, "") not in ("", "0", "false")


def start_run(store_path: str | os.PathLike, config: Mapping[str, Any], *, background: bool | None = None,
              name: str | None = None, session: str | None = None, limits: Limits | None = None) -> int:
    """Create a run from ``config`` (see :func:`make_config`) and start its worker; return its id.

    See :func:`start_runs` for ``session`` and ``limits``."""
    return start_runs(store_path, [config], names=[name], background=background, session=session, limits=limits)[0]


def start_runs(store_path: str | os.PathLike, configs: Sequence[Mapping[str, Any]], *,
               names: Sequence[str | None] | None = None, background: bool | None = None,
               session: str | None = None, limits: Limits | None = None) -> list[int]:
    """Create runs from ``configs`` and start a worker for each; return their ids.

    What a browser starts is bounded by ``limits`` (default: the server's,
    :meth:`ServeSettings.from_env`): each budget at most ``max_budget``, and the new searches
    together with those already running at most ``max_running_per_session`` for ``session`` (the
    browser session starting them) and ``max_running_total``. All are created or none
    (:class:`~nasviz.errors.LimitError` says which limit refused them).
    """
    _reap()
    limits = limits or ServeSettings.from_env().limits
    for config in configs:
        limits.check_budget(int(config.get("budget", 0)))
    store = RunStore(store_path)
    ids = store.create_runs([dict(c) for c in configs], names=names, session=session, limits=limits)
    for run_id in ids:
        if background if background is not None else not _sync_default():
            _launch(Path(store_path), run_id)
        else:
            run_worker(store_path, run_id)
    return ids


def resume_run(store_path: str | os.PathLike, run_id: int, *, background: bool | None = None,
               session: str | None = None, limits: Limits | None = None) -> None:
    """Continue a stopped or interrupted run from its last stored evaluation (counted against the
    running-search ``limits`` of ``session``, as a new search is)."""
    _reap()
    limits = limits or ServeSettings.from_env().limits
    store = RunStore(store_path)
    run = store.get_run(run_id)
    if run["status"] == RUNNING:
        raise StoreError(f"run {run_id} is still running")
    if run["status"] == FINISHED:
        raise StoreError(f"run {run_id} has finished: all {run['budget']} evaluations are done")
    # claimed by the server (a new lease) until the worker claims it: an old worker stops writing now
    store.set_status(run_id, RUNNING, claim=True, session=session, limits=limits)
    if background if background is not None else not _sync_default():
        _launch(Path(store_path), run_id)
    else:
        run_worker(store_path, run_id)


def request_stop(store_path: str | os.PathLike, run_id: int) -> None:
    """Ask a running search to stop after its current step."""
    RunStore(store_path).request_stop(run_id)


#: What :func:`run_worker` returns when another process took the run over while this one was
#: paused: it wrote nothing and the run's status is the other process's.
LOST = "lost"


def run_worker(store_path: str | os.PathLike, run_id: int) -> str:
    """Run (or continue) search ``run_id`` to its end, writing every step to the store.

    This is what the background process executes; it never touches Streamlit. Returns the final
    status. Failures are recorded in the store by the runner (status ``failed`` with the
    message), not raised. If the run's lease is lost (another worker resumed it after this one
    was paused), nothing is written and :data:`LOST` is returned.
    """
    store = RunStore(store_path)
    try:
        from nasviz import runner

        config = store.get_run(run_id)["config"]
        delay = float(config.get("step_delay") or 0.0)
        on_step = (lambda snapshot: time.sleep(delay)) if delay > 0 else None
        # The runner rebuilds the search from the stored config (table lookup or training),
        # replays stored steps deterministically, then continues live, writing each step under
        # its lease and honouring stop requests. force=True: this process was launched to own
        # the run, which the server marked running on its behalf.
        result = runner.resume_run(store, run_id, force=True, on_step=on_step)
        return STOPPED if result.stopped else FINISHED
    except LeaseLostError as err:
        print(f"run {run_id}: {err}", flush=True)
        return LOST
    except Exception:  # already recorded under this worker's lease by the runner; the log keeps the traceback
        traceback.print_exc()
        return FAILED


# ----------------------------------------------------------------------------- view data


#: Kernels the dashboard offers, in menu order; ``tw2g`` etc. are TW with that n-gram order.
KERNEL_SPECS: tuple[str, ...] = ("tw2g", "tw1g", "tw3g", "wl", "otmann", "edit", "path", "ot", "gw")


def resolve_kernel(spec: str) -> tuple[str, dict[str, Any]]:
    """``"tw2g" -> ("tw", {"ngram": 2})``; registry names pass through with no options."""
    from nasviz.strategies.factory import KERNEL_ALIASES

    name, options = KERNEL_ALIASES.get(spec, (spec, {}))
    return name, dict(options)


@lru_cache(maxsize=16)
def get_kernel(spec: str):
    """A kernel instance per spec, kept so its per-architecture cache survives refreshes."""
    from nasviz.kernels import make_kernel

    name, options = resolve_kernel(spec)
    return make_kernel(name, **options)


def kernel_available(spec: str) -> bool:
    """Whether the kernel's module exists in this installation."""
    from nasviz.kernels import _REGISTRY  # lists modules that may not be built in every version

    entry = _REGISTRY.get(resolve_kernel(spec)[0])
    return entry is not None and importlib.util.find_spec(entry[0]) is not None


def available_kernels() -> list[str]:
    return [k for k in KERNEL_SPECS if kernel_available(k)]


def parse_archs(strings: Sequence[str], space: str = "nb201") -> list:
    """Architectures from their strings; ``ValueError`` names the first bad one and its position."""
    from nasviz.spaces import get_space

    sp = get_space(space)
    out = []
    for i, s in enumerate(strings):
        try:
            out.append(sp.parse(s))
        except ValueError as err:
            raise ValueError(f"architecture {i + 1} ({s!r}) is invalid: {err}") from None
    return out


def distance_components(kernel: str, strings: Sequence[str], space: str = "nb201") -> dict[str, np.ndarray]:
    """The kernel's distance components between the given architectures, each ``(n, n)``."""
    archs = parse_archs(strings, space)
    return get_kernel(kernel).distances(archs, archs)


def kernel_distance(kernel: str, strings: Sequence[str], theta: Mapping[str, float] | None = None,
                    space: str = "nb201") -> np.ndarray:
    """One distance matrix ``(n, n)`` for embedding: the distance the kernel itself induces,
    ``d(a, b) = sqrt(k(a,a) + k(b,b) - 2 k(a,b))`` with the GP's learned ``theta`` (names as
    in ``kernel.hyperparameters``; missing ones take their defaults). For kernels that are not
    positive definite negative squared distances are clipped to zero."""
    archs = parse_archs(strings, space)
    k = get_kernel(kernel)
    values = k.default_theta()
    if theta:
        for i, h in enumerate(k.hyperparameters):
            if h.name in theta and theta[h.name] is not None:
                values[i] = float(theta[h.name])
    K = k.combine(k.components(archs, archs), values)
    d = np.diag(K)
    return np.sqrt(np.maximum(d[:, None] + d[None, :] - 2.0 * K, 0.0))


def pool_view(strategy_state: Mapping[str, Any]) -> dict[str, Any] | None:
    """The candidate-pool part of a BO snapshot (``nasviz.strategies.bo`` state), normalised;
    ``None`` if the step had no pool (random search, the initial design).

    Returns ``pool`` (arch strings), ``mean``/``std`` (GP posterior on the pool), ``selected``
    (indices into the pool), ``qualities`` (quality k-DPP, else ``None``), ``acquisition``,
    ``batch_method`` and ``theta`` (the kernel's learned hyperparameters).
    """
    pool = strategy_state.get("pool")
    if not pool:
        return None
    batch = strategy_state.get("batch") or {}
    hp = strategy_state.get("hyperparameters") or {}
    return {
        "pool": list(pool),
        "mean": strategy_state.get("mean"),
        "std": strategy_state.get("std"),
        "selected": list(strategy_state.get("selected") or batch.get("indices") or []),
        "qualities": batch.get("qualities"),
        "acquisition": strategy_state.get("acquisition"),
        "batch_method": batch.get("method"),
        "theta": hp.get("theta") or {},
    }


def run_kernel(config: Mapping[str, Any]) -> str | None:
    """The kernel spec a run's strategy uses (``None`` for strategies without one, e.g. random)."""
    from nasviz.strategies.factory import BO_PRESETS

    name = str(config.get("strategy", ""))
    if name in ("nasbot", "autokeras"):  # their GPs: OTMANN (paper 001), edit distance (paper 003)
        return "otmann" if name == "nasbot" else "edit"
    if name != "bo" and name not in BO_PRESETS:
        return None
    options = config.get("strategy_options") or {}
    return str(options.get("kernel") or BO_PRESETS.get(name, {}).get("kernel") or "tw2g")


def preset_batch_size(strategy: str) -> int:
    """The batch a named strategy was designed for (5 for ``bo-tw2g-kdpp5``), else 1."""
    from nasviz.strategies.factory import BO_PRESETS

    return int(BO_PRESETS.get(strategy, {}).get("batch_size", 1))


def strategy_options(strategy: str, *, kernel: str | None = None, acquisition: str | None = None,
                     pool: str | None = None, batch: str | None = None, batch_size: int | None = None) -> dict[str, Any]:
    """Options for :func:`~nasviz.strategies.factory.make_strategy`: the generic ``bo`` strategy
    takes the page's kernel / acquisition / pool / batch choices; named strategies (``random``,
    ``bo-tw2g-ucb``, ...) fix their own and take none."""
    if strategy != "bo":
        return {}
    options = {"kernel": kernel, "acquisition": acquisition, "pool": pool, "batch": batch, "batch_size": batch_size}
    return {k: v for k, v in options.items() if v}


def lookup_value(source: DataSource | None, arch: str, metric: str | None) -> float | None:
    """The table's value of ``arch`` for ``metric`` (``None`` if not a table or not in it)."""
    if source is None or source.kind != "table" or not metric:
        return None
    try:
        table = source.table()
        return table.lookup(table.space.parse(arch), metric)
    except (KeyError, ValueError):
        return None


def pool_figure(watcher: "RunWatcher", view: Mapping[str, Any], kernel: str):
    """The latest step's pool embedded by classical MDS of the GP kernel's own distance (with
    the learned theta), coloured by GP mean, sized by GP std, the chosen batch starred."""
    from nasviz import viz

    step = (watcher.latest or {}).get("step")
    D = watcher.memo(("pool", step, kernel), lambda: kernel_distance(kernel, view["pool"], view["theta"]))
    return viz.plot_pool(view["pool"], D, view["mean"], view["std"], view["selected"], view["qualities"], step,
                         f"the {kernel} kernel's distance")


def distance_figure(watcher: "RunWatcher", kernel: str, order: str = "evaluation",
                    max_size: int | None = None):
    """Heatmaps of the kernel's distance components between the evaluated architectures
    (at most ``max_size`` of them, chosen by :func:`nasviz.viz.heatmap_indices`)."""
    from nasviz import viz

    evals = watcher.evaluations
    values = [e["value"] if e["status"] == "ok" else None for e in evals]
    idx = viz.heatmap_indices(values, order, max_size or viz.MAX_HEATMAP_SIZE)
    strings = [evals[i]["arch"] for i in idx]
    comps = watcher.memo(("dist", kernel, order, len(evals)), lambda: distance_components(kernel, strings))
    return viz.plot_distance_matrices(comps, strings, [values[i] for i in idx], order, n_total=len(evals))


def selection_figures(watcher: "RunWatcher", limit: int = 5) -> list:
    """Graphs of the architectures the latest step chose (at most ``limit``)."""
    from nasviz import viz
    from nasviz.spaces import get_space

    latest = watcher.latest or {}
    space = get_space(watcher.config.get("space", "nb201"))
    values = {r["arch"]: r.get("value") for r in latest.get("results") or []}
    figs = []
    for s in (latest.get("proposals") or [])[:limit]:
        v = values.get(s)
        title = f"value {v:.4g}" if isinstance(v, (int, float)) else "failed"
        figs.append(viz.plot_architecture(space.parse(s), title))
    return figs


def wl_feature_gradients_for_run(watcher: "RunWatcher", max_observations: int = 200) -> dict[str, Any] | None:
    """WL feature gradients (paper 002 Eq. 3.2) of a GP fitted to the run's evaluations.

    The strategy's snapshots do not carry the gradients, so a WL GP (ML-II, one restart) is
    fitted here to the latest ``max_observations`` successful evaluations and
    :func:`nasviz.interpret.wl_feature_gradients` is averaged over them. Returns
    ``{"features": [...], "gradients": [...], "h": int}`` or ``None`` with fewer than 3
    observations. Memoised per number of evaluations.
    """
    ok = [e for e in watcher.evaluations if e["status"] == "ok" and e["value"] is not None][-max_observations:]
    if len(ok) < 3:
        return None

    def compute() -> dict[str, Any]:
        from nasviz.gp import GaussianProcess
        from nasviz.interpret import wl_feature_gradients

        archs = parse_archs([e["arch"] for e in ok], watcher.config.get("space", "nb201"))
        gp = GaussianProcess(get_kernel("wl"), n_restarts=1, seed=0)
        gp.fit(archs, np.array([e["value"] for e in ok], dtype=float))
        fg = wl_feature_gradients(gp, archs)
        return {"features": fg.names, "gradients": fg.mean_gradient.tolist(), "h": fg.h}

    return watcher.memo(("wl-gradients", len(watcher.evaluations)), compute)


def feature_gradient_figure(watcher: "RunWatcher", top: int = 10):
    """Top positive and negative WL feature gradients of the run (``None`` if too few data)."""
    from nasviz import viz

    fg = ((watcher.latest or {}).get("strategy") or {}).get("feature_gradients") or wl_feature_gradients_for_run(watcher)
    if not fg or not fg.get("features"):
        return None
    return viz.plot_feature_gradients(fg["features"], fg["gradients"], top)


def export_bytes(store_path: str | os.PathLike, run_id: int, fmt: str) -> bytes:
    """A run exported as CSV (evaluations) or JSON (run, evaluations, snapshots), as bytes."""
    import tempfile

    from nasviz.store import to_json

    store = RunStore(store_path)
    if fmt == "json":
        return to_json(store.export_json(run_id)).encode("utf-8")
    if fmt != "csv":
        raise ValueError(f"export format must be 'csv' or 'json', got {fmt!r}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.csv"
        store.export_csv(run_id, path)
        return path.read_bytes()


# ----------------------------------------------------------------------------- CLI


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nasviz.live", description="Background search worker.")
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("worker", help="run one stored search to its end")
    w.add_argument("--store", type=Path, required=True)
    w.add_argument("--run-id", type=int, required=True)
    args = parser.parse_args(argv)
    start = time.time()
    status = run_worker(args.store, args.run_id)
    print(f"run {args.run_id}: {status} after {time.time() - start:.1f} s", flush=True)
    return 0 if status != FAILED else 1


if __name__ == "__main__":
    sys.exit(main())


# ----------------------------------------------------------------------------- watching a run

#: Snapshot fields kept for every step (the full snapshot is kept for the latest step only, so a
#: long run's history costs little memory and a refresh parses only the new steps).
_LIGHT_KEYS = ("step", "n_evaluations", "budget", "elapsed", "step_seconds", "best_value", "best_arch")


class RunWatcher:
    """Incremental reader of one stored run for live views.

    :meth:`refresh` fetches only evaluations and snapshots added since the last call, so a page
    polling every second stays cheap however long the run is. ``steps`` holds light snapshots
    (progress fields and the strategy's ``hyperparameters``), ``latest`` the newest full one.
    ``cache`` memoises derived views (distances, embeddings) keyed by what they depend on.
    """

    def __init__(self, store_path: str | os.PathLike, run_id: int) -> None:
        self.store_path = Path(store_path)
        self.run_id = int(run_id)
        self.store = RunStore(self.store_path)
        self.run: dict[str, Any] = {}
        self.evaluations: list[dict[str, Any]] = []
        self.steps: list[dict[str, Any]] = []
        self.latest: dict[str, Any] | None = None
        self.cache: dict[Any, Any] = {}

    def refresh(self) -> "RunWatcher":
        from nasviz.viz._hyperparameters import flatten_hyperparameters  # viz is heavy to import; only here

        self.run = self.store.get_run(self.run_id)
        new_evals = self.store.evaluations(self.run_id, since_index=len(self.evaluations))
        for ev in new_evals:
            ev.pop("info", None)  # curves etc. are not drawn here; keep memory flat
        self.evaluations.extend(new_evals)
        last_step = self.steps[-1]["step"] if self.steps else None
        for snap in self.store.snapshots(self.run_id, since_step=last_step):
            light = {k: snap.get(k) for k in _LIGHT_KEYS}
            state = snap.get("strategy") or {}
            light["strategy"] = {"hyperparameters": flatten_hyperparameters(state.get("hyperparameters") or {})}
            self.steps.append(light)
            self.latest = snap
        return self

    @property
    def config(self) -> dict[str, Any]:
        return self.run.get("config") or {}

    @property
    def status(self) -> str:
        return str(self.run.get("status", "unknown"))

    def optimum(self) -> float | None:
        """The table's optimum for the run's metric (``None`` for live training)."""
        cfg = self.config
        if cfg.get("objective", "table") != "table" or not cfg.get("table"):
            return None
        try:
            return table_from_path(cfg["table"], cfg.get("space", "nb201")).optimum(cfg["metric"])
        except (TableError, KeyError, ValueError):
            return None

    def memo(self, key: Any, compute):
        """``compute()`` once per ``key`` (kept for the latest few keys only)."""
        if key not in self.cache:
            if len(self.cache) > 32:
                self.cache.pop(next(iter(self.cache)))
            self.cache[key] = compute()
        return self.cache[key]
