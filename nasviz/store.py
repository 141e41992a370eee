"""Persistent run store: one SQLite file holding runs, their evaluations and their snapshots.

Everything a search produces is written here as it happens, so a run survives a closed browser
tab, a crashed server or ``kill -9``, and can be listed, watched, stopped, resumed and exported
from another process.

Layout (plain data only: JSON text, numbers and numeric arrays, never pickle)
--------------------------------------------------------------
``runs``
    ``id`` (integer, from 1), ``created``/``updated`` (Unix seconds), ``name``, ``config`` (JSON:
    everything needed to rebuild the objective and the strategy: table path, metric, space,
    strategy name and options, seed, budget, batch size), ``status`` (one of :data:`STATUSES`),
    ``pid``/``host``/``heartbeat`` of the process running it, ``stop_requested`` (0/1),
    ``error`` (why it failed), ``lease`` (schema 3: the generation of the current owner, see
    "Leases") and ``session`` (schema 3: the browser session that started it; NULL from the CLI).
``evaluations``
    ``(run_id, idx)`` unique: ``idx`` counts evaluations from 0 in the order the search made
    them; ``step`` (1-based step that made it), ``arch`` (the space's string), ``value``
    (NULL when failed), ``cost`` (seconds), ``status``, ``error``, ``info`` (JSON), ``created``.
``snapshots``
    ``(run_id, step)`` unique: the runner's :class:`~nasviz.runner.Snapshot` as JSON. Its
    ``strategy`` field is the step's typed state, :meth:`nasviz.state.StepState.to_dict`
    (schema 4; tagged ``"version": 3`` inside, :data:`nasviz.state.STATE_VERSION`).
``networks`` (schema 2)
    ``(run_id, arch)`` unique: the trained weights a strategy needs after a resume (Auto-Keras
    warm-starts children from them), as an ``.npz`` archive of float arrays read back with
    ``allow_pickle=False``; 4 bytes per parameter. Kept while the run may be resumed and
    dropped when it finishes. A version-1 file gains the table on open.

Older files are migrated when opened, in one transaction: the missing tables are created and
the missing ``runs`` columns added (version 1 or 2 -> 3), and every snapshot's untyped strategy
dictionary is rewritten in the typed layout (-> 4: :meth:`StepState.from_legacy`, see
:func:`typed_snapshot`). A snapshot written in the typed layout already is left as it is.

Leases
------
Whoever starts or resumes a run *claims* it, which increments its ``lease``; the claimer keeps the
new value and passes it to every write it makes for the run (evaluations, snapshots, weights,
heartbeats, its final status). Each write checks the lease inside its own transaction and is
refused with :class:`~nasviz.errors.LeaseLostError` if the run has been claimed since, or was
declared ``interrupted`` (which also increments the lease). So a worker that was paused (SIGSTOP,
a suspended laptop) past the heartbeat timeout and then wakes up finds that another process owns
the run, writes nothing (no ``failed`` over the resumed run's status) and exits quietly.

Concurrency
-----------
The file is in WAL mode, so readers (the dashboard) never block the writer and several
processes or threads may write different runs at once. Each thread (and each process after a
``fork``) gets its own connection; writes take the write lock up front (``BEGIN IMMEDIATE``)
and are retried on ``SQLITE_BUSY`` beyond SQLite's own busy timeout. ``synchronous=FULL`` makes
every committed step durable, even against power loss.

Using it (what the dashboard needs)
-----------------------------------
>>> store = RunStore("runs.sqlite")                            # creates the file if missing
>>> run_id = store.create_run({"strategy": "random", "budget": 10, ...})
>>> store.add_step(run_id, step=1, evaluations=[...], start_index=0, snapshot={...})
>>> store.list_runs()        # [{id, name, status, strategy, metric, best_value, n_evaluations, ...}]
>>> store.evaluations(run_id, since_index=0)      # list of dicts in evaluation order
>>> store.snapshots(run_id, since_step=3)         # snapshots with step > 3, for live polling
>>> store.latest_snapshot(run_id)
>>> store.request_stop(run_id)                    # cooperative: the runner stops between steps
>>> store.claim_run(run_id)      # before resuming elsewhere: refused while a live process runs it
>>> store.export_csv(run_id, "run.csv"); store.export_json(run_id, "run.json")
>>> store.import_json("run.json")                 # a copy as a new run; read_csv_export reads CSV back
>>> store.delete_run(run_id)                      # refused while running: stop it first
>>> store.add_network(run_id, arch, {"w": array}); store.network(run_id, arch)   # trained weights

Runs are started with :func:`nasviz.runner.start_run` and resumed with
:func:`nasviz.runner.resume_run` (or ``python -m nasviz run --store FILE [--resume RUN_ID]``;
``python -m nasviz runs list|export|stop|delete``). A run whose status says ``running`` but whose
process is gone (dead pid on this host, or no heartbeat for ``stale_after`` seconds) is marked
``interrupted`` whenever runs are read. Runs that several callers poll (the dashboard) cost a
few indexed queries: ``list_runs`` on a store of a handful of runs takes well under a
millisecond, ``evaluations(run_id, since_index=k)`` reads only the new rows.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import socket
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

import numpy as np

from nasviz.errors import LeaseLostError, LimitError, StoreError
from nasviz.state import STATE_VERSION, StepState

if TYPE_CHECKING:
    from nasviz.settings import Limits

RUNNING = "running"
STOPPED = "stopped"
FINISHED = "finished"
FAILED = "failed"
INTERRUPTED = "interrupted"
#: Every status a run can have.
STATUSES = (RUNNING, STOPPED, FINISHED, FAILED, INTERRUPTED)

#: Columns of :meth:`RunStore.export_csv`, in order.
CSV_COLUMNS = ("index", "step", "arch", "value", "cost", "status", "error", "info", "created")

SCHEMA_VERSION = 4

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    config TEXT NOT NULL,
    status TEXT NOT NULL,
    pid INTEGER,
    host TEXT,
    heartbeat REAL,
    stop_requested INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    lease INTEGER NOT NULL DEFAULT 0,
    session TEXT
);
CREATE TABLE IF NOT EXISTS evaluations (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    step INTEGER NOT NULL,
    arch TEXT NOT NULL,
    value REAL,
    cost REAL,
    status TEXT NOT NULL,
    error TEXT,
    info TEXT NOT NULL DEFAULT '{}',
    created REAL NOT NULL,
    PRIMARY KEY (run_id, idx)
);
CREATE TABLE IF NOT EXISTS snapshots (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step INTEGER NOT NULL,
    data TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (run_id, step)
);
CREATE TABLE IF NOT EXISTS networks (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    arch TEXT NOT NULL,
    data BLOB NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (run_id, arch)
);
"""


#: Columns added to ``runs`` after schema 1, with their definitions (added on open by the migration).
_ADDED_RUN_COLUMNS = {"lease": "INTEGER NOT NULL DEFAULT 0", "session": "TEXT"}


class UnknownRunError(StoreError, KeyError):
    """No run with that id in this store."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown run"


# ---------------------------------------------------------------------------------------------
# JSON helpers: plain data only; numpy scalars/arrays become numbers/lists, NaN/inf become null
# (strict JSON, so a browser can read an export).


def _default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):  # numpy arrays and scalars
        return obj.tolist()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"{type(obj).__name__} is not plain data and cannot be stored as JSON")


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def to_json(obj: Any) -> str:
    """``obj`` as strict JSON text (numpy converted; NaN and infinities written as ``null``)."""
    try:
        try:
            return json.dumps(obj, allow_nan=False, default=_default, separators=(",", ":"))
        except ValueError:  # a NaN/inf somewhere: rare, so only then walk the structure
            return json.dumps(_finite(json.loads(json.dumps(obj, default=_default))), allow_nan=False,
                              separators=(",", ":"))
    except TypeError as err:
        raise StoreError(str(err)) from None


def _optional_float(x: Any, what: str) -> float | None:
    if x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise StoreError(f"{what} must be a number or None, got {x!r}") from None
    return v if math.isfinite(v) else None


#: Environment variable: seconds without a heartbeat after which a running run is interrupted.
STALE_AFTER_ENV = "NASVIZ_STALE_AFTER"


def default_stale_after() -> float:
    """``$NASVIZ_STALE_AFTER`` seconds if set (a positive number), else 90."""
    text = os.environ.get(STALE_AFTER_ENV, "").strip()
    if not text:
        return 90.0
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise StoreError(f"{STALE_AFTER_ENV} must be a positive number of seconds, got {text!r}")
    return value


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except OSError:
        return False
    try:  # a SIGKILLed child not yet reaped by its parent is a zombie: dead for our purposes
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except (OSError, IndexError):
        return True


class RunStore:
    """A SQLite run store in one file (see the module docstring for layout and usage).

    Parameters
    ----------
    path : str or PathLike
        The database file; created (with its folder) if missing.
    busy_timeout : float
        Seconds SQLite waits for a lock before reporting ``SQLITE_BUSY``; the store then
        retries a write up to ``retries`` more times.
    stale_after : float, optional
        A ``running`` run whose heartbeat is older than this many seconds is ``interrupted``
        (default: ``$NASVIZ_STALE_AFTER``, else 90). Runners beat every third of it (at most 10 s).
    durable : bool
        Fsync every commit of evaluations and new runs (``synchronous=FULL``), so they survive
        power loss, not only a killed process. ``False`` trades that for speed everywhere.
    """

    def __init__(self, path: str | os.PathLike, *, busy_timeout: float = 30.0, retries: int = 20,
                 stale_after: float | None = None, durable: bool = True) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise StoreError(f"run store path {self.path} is a folder; give a file such as runs.sqlite")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.busy_timeout = float(busy_timeout)
        self.retries = int(retries)
        self.stale_after = float(stale_after) if stale_after is not None else default_stale_after()
        self.durable = bool(durable)
        self._local = threading.local()
        # Only a new (or older) file needs the write lock; opening a current one just reads.
        if self._connection().execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            self._write(self._init_schema)

    # -- connections and transactions ------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None or self._local.pid != os.getpid():  # one per thread, new after fork
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None,
                                   check_same_thread=True)
            conn.row_factory = sqlite3.Row
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(f"PRAGMA synchronous={'FULL' if self.durable else 'NORMAL'}")
                conn.execute("PRAGMA foreign_keys=ON")
            except sqlite3.DatabaseError as err:
                conn.close()
                raise StoreError(f"{self.path} is not a nasviz run store (SQLite says: {err})") from None
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def close(self) -> None:
        """Close this thread's connection (others close when their thread ends)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid():
            conn.close()
        self._local.conn = None

    def _write(self, fn, *args, durable: bool = True):
        """Run ``fn(conn, *args)`` in one write transaction, retrying while the file is busy.

        ``durable=False`` commits without an fsync (``synchronous=NORMAL``): the transaction
        survives a killed process but may be lost, whole, on power loss; the next durable commit
        syncs it too. Used for what can be regenerated (snapshots, heartbeats, status changes:
        a resume replays the stored evaluations and rewrites them), while evaluations and new
        runs are always durable. An fsync costs several ms per commit on a busy disk.
        """
        lazy = not durable and self.durable
        for attempt in range(self.retries + 1):
            conn = self._connection()
            if lazy:
                conn.execute("PRAGMA synchronous=NORMAL")
            try:
                return self._transaction(conn, fn, args)
            except sqlite3.OperationalError as err:
                if _is_busy(err) and attempt < self.retries:
                    time.sleep(min(0.05 * 2 ** attempt, 1.0))
                    continue
                raise
            finally:
                if lazy:
                    conn.execute("PRAGMA synchronous=FULL")  # back to durable for evaluations
        raise AssertionError("unreachable")

    @staticmethod
    def _transaction(conn: sqlite3.Connection, fn, args):
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = fn(conn, *args)
            conn.execute("COMMIT")
            return result
        except BaseException:
            if conn.in_transaction:  # SQLite may have rolled back already (e.g. disk full)
                conn.execute("ROLLBACK")
            raise

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A consistent read snapshot (WAL readers never block and are never blocked)."""
        conn = self._connection()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    @staticmethod
    def _init_schema(conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(f"run store schema version {version} is newer than this nasviz ({SCHEMA_VERSION})")
        for statement in _SCHEMA.split(";"):  # IF NOT EXISTS: an older file gains the new tables
            if statement.strip():
                conn.execute(statement)
        have = {row["name"] for row in conn.execute("PRAGMA table_info(runs)")}
        for column, definition in _ADDED_RUN_COLUMNS.items():  # ... and its runs the new columns
            if column not in have:
                conn.execute(f"ALTER TABLE runs ADD COLUMN {column} {definition}")
        if version < 4:
            RunStore._type_snapshot_states(conn)
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @staticmethod
    def _type_snapshot_states(conn: sqlite3.Connection) -> int:
        """Schema 3 -> 4: rewrite every snapshot whose strategy state is an untyped dictionary in
        the typed layout (:func:`typed_snapshot`); return how many were rewritten. Runs inside
        the migration's transaction, so a file is either wholly migrated or untouched."""
        kernels = {row["id"]: _legacy_kernel(json.loads(row["config"])) for row in conn.execute("SELECT id, config FROM runs")}
        changed = []
        for row in conn.execute("SELECT run_id, step, data FROM snapshots"):
            data = json.loads(row["data"])
            typed = typed_snapshot(data, kernels.get(row["run_id"]))
            if typed is not data:
                changed.append((to_json(typed), row["run_id"], row["step"]))
        conn.executemany("UPDATE snapshots SET data=? WHERE run_id=? AND step=?", changed)
        return len(changed)

    def _require(self, conn: sqlite3.Connection, run_id: int) -> sqlite3.Row:
        row = conn.execute("SELECT * FROM runs WHERE id=?", (self._check_id(run_id),)).fetchone()
        if row is None:
            raise UnknownRunError(f"no run {run_id} in {self.path}")
        return row

    @staticmethod
    def _check_id(run_id: Any) -> int:
        try:
            value = int(run_id)
        except (TypeError, ValueError):
            raise StoreError(f"run id must be an integer, got {run_id!r}") from None
        if isinstance(run_id, float) and run_id != value:
            raise StoreError(f"run id must be an integer, got {run_id!r}")
        return value

    # -- runs ---------------------------------------------------------------------------------

    def create_run(self, config: Mapping[str, Any], *, name: str | None = None, status: str = RUNNING,
                   pid: int | None = None, session: str | None = None, limits: "Limits | None" = None) -> int:
        """Insert a new run and return its id.

        ``config`` (plain data, stored as JSON) should hold everything needed to rebuild the
        search (see :func:`nasviz.runner.build_search`). The run starts ``running``, owned by
        this process (``pid``) unless told otherwise, with lease 1. ``session`` and ``limits``:
        see :meth:`create_runs`.
        """
        return self.create_runs([config], names=[name], status=status, pid=pid, session=session, limits=limits)[0]

    def create_runs(self, configs: Sequence[Mapping[str, Any]], *, names: Sequence[str | None] | None = None,
                    status: str = RUNNING, pid: int | None = None, session: str | None = None,
                    limits: "Limits | None" = None) -> list[int]:
        """Insert several runs in one transaction (all or none) and return their ids.

        ``session`` names the browser session that starts them (``None`` from the command line).
        With ``limits`` (a :class:`~nasviz.settings.Limits`), the runs are refused with
        :class:`~nasviz.errors.LimitError` if, added to the searches browsers already run, they
        would exceed ``max_running_per_session`` for ``session`` or ``max_running_total``; the
        count and the insert are one transaction, so two clicks at once cannot both pass.
        """
        _check_status(status)
        names = list(names) if names is not None else [None] * len(configs)
        rows = []
        for config, name in zip(configs, names):
            if not isinstance(config, Mapping):
                raise StoreError(f"config must be a dict of plain data, got {type(config).__name__}")
            label = name if name is not None else str(config.get("name") or _default_name(config))
            rows.append((label, to_json(dict(config))))
        if limits is not None:
            self.mark_interrupted()  # dead workers do not hold a place
        now = time.time()

        def insert(conn):
            if limits is not None and status == RUNNING:
                self._check_capacity(conn, len(rows), session, limits)
            return [int(conn.execute(
                "INSERT INTO runs (created, updated, name, config, status, pid, host, heartbeat, lease, session) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?)",
                (now, now, label, text, status, pid if pid is not None else os.getpid(), socket.gethostname(), now,
                 session)).lastrowid) for label, text in rows]

        return self._write(insert)

    @staticmethod
    def _check_capacity(conn: sqlite3.Connection, n_new: int, session: str | None, limits: "Limits") -> None:
        """:class:`LimitError` if ``n_new`` more searches started from browsers would be too many.

        Only runs started from a browser (``session`` set) count: the command line is not limited.
        """
        total = conn.execute("SELECT COUNT(*) FROM runs WHERE status=? AND session IS NOT NULL",
                             (RUNNING,)).fetchone()[0]
        if total + n_new > limits.max_running_total:
            raise LimitError(f"this server already runs {total} search(es) started from browsers and allows "
                             f"{limits.max_running_total} at once (NASVIZ_MAX_RUNNING): wait for one to finish",
                             field="running searches")
        if session is not None:
            mine = conn.execute("SELECT COUNT(*) FROM runs WHERE status=? AND session=?", (RUNNING, session)).fetchone()[0]
            if mine + n_new > limits.max_running_per_session:
                raise LimitError(f"this browser session already runs {mine} search(es) and may run "
                                 f"{limits.max_running_per_session} at once (NASVIZ_MAX_RUNNING_PER_SESSION): stop "
                                 "one or wait for one to finish", field="running searches")

    @staticmethod
    def _check_lease(conn: sqlite3.Connection, run_id: int, lease: int | None) -> sqlite3.Row:
        """The run's row if ``lease`` is its current lease (or ``lease`` is ``None``: an
        administrative write); else :class:`LeaseLostError`. Call inside the write transaction."""
        row = conn.execute("SELECT * FROM runs WHERE id=?", (RunStore._check_id(run_id),)).fetchone()
        if lease is None:
            if row is None:
                raise UnknownRunError(f"no run {run_id} in this store")
            return row
        if row is None:
            raise LeaseLostError(f"run {run_id} no longer exists (deleted): this process stops without writing")
        if row["lease"] != lease:
            raise LeaseLostError(f"run {run_id} was taken over (lease {row['lease']}, this process holds {lease}; "
                                 f"status {row['status']}): this process stops without writing")
        return row

    def check_lease(self, run_id: int, lease: int | None) -> None:
        """:class:`LeaseLostError` unless ``lease`` is the run's current lease (read only)."""
        if lease is None:
            return
        with self._read() as conn:
            self._check_lease(conn, run_id, lease)

    def set_status(self, run_id: int, status: str, *, error: str | None = None,
                   claim: bool = False, lease: int | None = None, session: str | None = None,
                   limits: "Limits | None" = None) -> int | None:
        """Set a run's status (one of :data:`STATUSES`).

        ``lease``: only if it is the run's current lease (:class:`LeaseLostError` otherwise);
        ``None`` for administrative changes. ``claim=True`` (used when a process starts or
        resumes a run) also records this process as the owner, refreshes the heartbeat, clears a
        pending stop request, increments the lease and returns the new one; with ``limits`` and
        ``session`` the claim counts as a browser starting a search (see :meth:`create_runs`).
        """
        _check_status(status)
        if limits is not None:
            self.mark_interrupted()
        now = time.time()

        def update(conn):
            row = self._check_lease(conn, run_id, lease)
            if claim:
                if limits is not None and status == RUNNING and row["status"] != RUNNING:
                    self._check_capacity(conn, 1, session, limits)
                conn.execute(
                    "UPDATE runs SET status=?, error=?, updated=?, pid=?, host=?, heartbeat=?, "
                    "stop_requested=0, lease=lease+1, session=COALESCE(?, session) WHERE id=?",
                    (status, error, now, os.getpid(), socket.gethostname(), now, session, int(run_id)))
                return row["lease"] + 1
            conn.execute("UPDATE runs SET status=?, error=?, updated=? WHERE id=?", (status, error, now, int(run_id)))
            return None

        return self._write(update, durable=False)

    def heartbeat(self, run_id: int, lease: int | None = None) -> None:
        """Record that the process running ``run_id`` is alive (the runner calls this); with
        ``lease``, only while that is still the run's lease (a stale process refreshes nothing)."""
        now = time.time()
        self._write(lambda conn: conn.execute(
            "UPDATE runs SET heartbeat=? WHERE id=? AND status=? AND (? IS NULL OR lease=?)",
            (now, int(run_id), RUNNING, lease, lease)), durable=False)

    def request_stop(self, run_id: int) -> None:
        """Ask the process running ``run_id`` to stop after its current step (cooperative)."""
        def update(conn):
            self._require(conn, run_id)
            conn.execute("UPDATE runs SET stop_requested=1, updated=? WHERE id=?", (time.time(), int(run_id)))

        self._write(update, durable=False)

    def stop_requested(self, run_id: int) -> bool:
        with self._read() as conn:
            return bool(self._require(conn, run_id)["stop_requested"])

    def rename_run(self, run_id: int, name: str) -> None:
        def update(conn):
            self._require(conn, run_id)
            conn.execute("UPDATE runs SET name=?, updated=? WHERE id=?", (str(name), time.time(), int(run_id)))

        self._write(update)

    def _owner_gone(self, row: Mapping[str, Any], now: float, host: str) -> bool:
        """Whether the process recorded as running ``row`` is gone (dead pid here, or stale)."""
        if row["host"] == host and row["pid"] is not None and not _pid_alive(row["pid"]):
            return True
        return row["heartbeat"] is None or now - row["heartbeat"] > self.stale_after

    def mark_interrupted(self) -> list[int]:
        """Mark ``running`` runs whose process is gone as ``interrupted``; return their ids.

        Gone means: the pid is dead (or a zombie) on this host, or, for any host, no heartbeat
        for ``stale_after`` seconds. The lease is incremented too, so a process that was only
        paused finds, when it wakes, that it no longer owns the run. Called by :meth:`list_runs`
        and :meth:`get_run`.
        """
        now, host = time.time(), socket.gethostname()
        with self._read() as conn:
            rows = conn.execute("SELECT id, pid, host, heartbeat, lease FROM runs WHERE status=?", (RUNNING,)).fetchall()
        gone = [(r["id"], r["lease"]) for r in rows if self._owner_gone(r, now, host)]
        if not gone:
            return []

        def update(conn):
            # Only if nothing changed meanwhile: the run may have finished, or been claimed by a
            # resuming process (a new lease).
            return [run_id for run_id, lease in gone if conn.execute(
                "UPDATE runs SET status=?, updated=?, lease=lease+1 WHERE id=? AND status=? AND lease=?",
                (INTERRUPTED, now, run_id, RUNNING, lease)).rowcount]

        return self._write(update, durable=False)

    def claim_run(self, run_id: int, *, force: bool = False) -> dict[str, Any]:
        """Atomically make this process the owner of ``run_id`` (status ``running``, a new lease);
        return the run, whose ``lease`` the caller passes to its writes.

        Refused (``StoreError``) while another live process runs it, unless ``force=True`` (for a
        worker launched on behalf of a server that already marked the run running). Two
        processes resuming the same run at once: exactly one wins.
        """
        host = socket.gethostname()

        def claim(conn):
            row = self._require(conn, run_id)
            # Our own pid is no exemption: a server may run several searches in threads.
            if not force and row["status"] == RUNNING and not self._owner_gone(row, time.time(), host):
                raise StoreError(f"run {run_id} is still running (pid {row['pid']} on {row['host']}); stop it first")
            now = time.time()
            conn.execute("UPDATE runs SET status=?, error=NULL, updated=?, pid=?, host=?, heartbeat=?, "
                         "stop_requested=0, lease=lease+1 WHERE id=?", (RUNNING, now, os.getpid(), host, now, int(run_id)))
            return row["lease"] + 1

        lease = self._write(claim)
        run = self.get_run(run_id)
        run["lease"] = lease  # ours, even if it has moved on since (our writes would then be refused)
        return run

    def get_run(self, run_id: int) -> dict[str, Any]:
        """One run as a dict: the :meth:`list_runs` fields plus ``config`` (a dict)."""
        self.mark_interrupted()
        with self._read() as conn:
            self._require(conn, run_id)
            return self._summaries(conn, "WHERE r.id=?", (int(run_id),))[0]

    def list_runs(self) -> list[dict[str, Any]]:
        """Every run, newest first, as dicts.

        Keys: ``id, name, created, updated, status, strategy, metric, table, seed, budget,
        batch_size, n_evaluations, n_failed, best_value, best_arch, last_step, pid, host,
        heartbeat, stop_requested, error, config``.
        """
        self.mark_interrupted()
        with self._read() as conn:
            return self._summaries(conn, "", ())

    def _summaries(self, conn: sqlite3.Connection, where: str, params: tuple) -> list[dict[str, Any]]:
        rows = conn.execute(
            f"""
            SELECT r.*,
                   (SELECT COUNT(*) FROM evaluations e WHERE e.run_id=r.id) AS n_evaluations,
                   (SELECT COUNT(*) FROM evaluations e WHERE e.run_id=r.id AND e.status!='ok') AS n_failed,
                   (SELECT MAX(step) FROM evaluations e WHERE e.run_id=r.id) AS last_step,
                   (SELECT e.value FROM evaluations e WHERE e.run_id=r.id AND e.status='ok'
                      AND e.value IS NOT NULL ORDER BY e.value DESC, e.idx LIMIT 1) AS best_value,
                   (SELECT e.arch FROM evaluations e WHERE e.run_id=r.id AND e.status='ok'
                      AND e.value IS NOT NULL ORDER BY e.value DESC, e.idx LIMIT 1) AS best_arch
            FROM runs r {where} ORDER BY r.id DESC
            """,
            params,
        ).fetchall()
        out = []
        for r in rows:
            config = json.loads(r["config"])
            out.append({
                "id": r["id"], "name": r["name"], "created": r["created"], "updated": r["updated"],
                "status": r["status"], "strategy": config.get("strategy"), "metric": config.get("metric"),
                "table": config.get("table"), "seed": config.get("seed"), "budget": config.get("budget"),
                "batch_size": config.get("batch_size"),
                "n_evaluations": r["n_evaluations"], "n_failed": r["n_failed"], "last_step": r["last_step"] or 0,
                "best_value": r["best_value"], "best_arch": r["best_arch"],
                "pid": r["pid"], "host": r["host"], "heartbeat": r["heartbeat"],
                "stop_requested": bool(r["stop_requested"]), "error": r["error"], "config": config,
                "lease": r["lease"], "session": r["session"],
            })
        return out

    def delete_run(self, run_id: int) -> None:
        """Delete a run with its evaluations and snapshots. Refuses a run still ``running``
        (stop it first: its process would keep writing)."""
        self.mark_interrupted()

        def delete(conn):
            row = self._require(conn, run_id)
            if row["status"] == RUNNING:
                raise StoreError(f"run {run_id} is still running (pid {row['pid']}); stop it before deleting it")
            conn.execute("DELETE FROM runs WHERE id=?", (int(run_id),))

        self._write(delete)

    # -- evaluations and snapshots ------------------------------------------------------------

    def add_evaluations(self, run_id: int, evaluations: Sequence[Mapping[str, Any]], start_index: int,
                        *, step: int | None = None, lease: int | None = None) -> None:
        """Append evaluations ``start_index, start_index + 1, ...`` of a run, in one commit.

        Each evaluation is a dict with ``arch`` (str) and ``value``, and optionally ``cost``,
        ``status`` (default ``"ok"``), ``error``, ``info`` (plain data), ``step``; or an
        :class:`~nasviz.objectives.base.Evaluation` whose ``arch`` is already a string. Writing
        an index that already exists is refused (nothing is written twice), as is a gap. With
        ``lease``, refused (:class:`LeaseLostError`, nothing written) unless it is the run's lease.
        """

        def write(conn):
            self._check_lease(conn, run_id, lease)
            self._insert_evaluations(conn, run_id, evaluations, start_index, step)

        self._write(write)

    def add_snapshot(self, run_id: int, snapshot: Mapping[str, Any] | Any, *, lease: int | None = None) -> None:
        """Store a snapshot (a dict or an object with ``to_dict()``) under its ``step`` (only
        while ``lease`` is the run's lease, if given)."""

        def write(conn):
            self._check_lease(conn, run_id, lease)
            self._insert_snapshot(conn, run_id, snapshot)

        self._write(write, durable=False)

    def add_step(self, run_id: int, step: int, evaluations: Sequence[Mapping[str, Any]], start_index: int,
                 snapshot: Mapping[str, Any] | Any | None = None, *, lease: int | None = None) -> None:
        """One search step atomically: its evaluations, its snapshot and a heartbeat."""

        def write(conn):
            self._check_lease(conn, run_id, lease)
            self._insert_evaluations(conn, run_id, evaluations, start_index, step)
            if snapshot is not None:
                self._insert_snapshot(conn, run_id, snapshot)

        self._write(write)

    def _insert_evaluations(self, conn, run_id, evaluations, start_index, step) -> None:
        row = self._require(conn, run_id)
        start = int(start_index)
        have = conn.execute("SELECT COUNT(*), MAX(idx) FROM evaluations WHERE run_id=?", (int(run_id),)).fetchone()
        expected = 0 if have[1] is None else have[1] + 1
        if start != expected:
            raise StoreError(
                f"run {run_id} has evaluations 0..{expected - 1}; the next must start at index {expected}, "
                f"got start_index {start}")
        now = time.time()
        records = []
        for offset, ev in enumerate(evaluations):
            d = _evaluation_dict(ev, f"evaluation {start + offset} of run {run_id}")
            ev_step = d.get("step", step)
            if ev_step is None:
                raise StoreError(f"evaluation {start + offset} of run {run_id} has no step")
            records.append((int(run_id), start + offset, int(ev_step), d["arch"], d["value"], d["cost"],
                            d["status"], d["error"], to_json(d["info"]), now))
        conn.executemany(
            "INSERT INTO evaluations (run_id, idx, step, arch, value, cost, status, error, info, created) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", records)
        conn.execute("UPDATE runs SET updated=?, heartbeat=CASE WHEN status=? THEN ? ELSE heartbeat END WHERE id=?",
                     (now, RUNNING, now, row["id"]))

    def _insert_snapshot(self, conn, run_id, snapshot) -> None:
        run = self._require(conn, run_id)
        data = snapshot.to_dict() if hasattr(snapshot, "to_dict") else snapshot
        if not isinstance(data, Mapping) or "step" not in data:
            raise StoreError("a snapshot must be a dict with a 'step' key")
        try:
            step = int(data["step"])
        except (TypeError, ValueError):
            raise StoreError(f"snapshot step must be an integer, got {data['step']!r}") from None
        state = data.get("strategy")
        if isinstance(state, Mapping) and not _is_typed(state):  # an old export or writer: stored typed all the same
            data = typed_snapshot(data, _legacy_kernel(json.loads(run["config"])))
        now = time.time()
        # A replayed step may rewrite its snapshot: keep the latest.
        conn.execute("INSERT OR REPLACE INTO snapshots (run_id, step, data, created) VALUES (?, ?, ?, ?)",
                     (int(run_id), step, to_json(dict(data)), now))
        conn.execute("UPDATE runs SET updated=? WHERE id=?", (now, int(run_id)))

    def add_network(self, run_id: int, arch: str, arrays: Mapping[str, Any], *, lease: int | None = None) -> None:
        """Keep the trained weights ``arrays`` (name -> numeric array) of network ``arch`` of a run.

        Written without an fsync (like snapshots): weights lost to a power cut only mean that a
        resumed search trains those networks' children from scratch. Replaces earlier weights.
        """
        named = {str(k): np.asarray(v) for k, v in arrays.items()}
        odd = [k for k, v in named.items() if v.dtype.kind not in "biuf"]
        if odd:
            raise StoreError(f"weights of {arch!r} in run {run_id} are not numeric arrays: {', '.join(odd)}")
        buffer = io.BytesIO()
        np.savez(buffer, **named)
        data = buffer.getvalue()

        def write(conn):
            self._check_lease(conn, run_id, lease)
            conn.execute("INSERT OR REPLACE INTO networks (run_id, arch, data, created) VALUES (?, ?, ?, ?)",
                         (int(run_id), str(arch), sqlite3.Binary(data), time.time()))

        self._write(write, durable=False)

    def network(self, run_id: int, arch: str) -> dict[str, np.ndarray] | None:
        """The weights kept by :meth:`add_network` for ``arch`` in a run, or ``None``.

        Read with ``allow_pickle=False``: an archive holding Python objects is refused
        (:class:`StoreError`), whoever wrote it.
        """
        with self._read() as conn:
            self._require(conn, run_id)
            row = conn.execute("SELECT data FROM networks WHERE run_id=? AND arch=?",
                               (int(run_id), str(arch))).fetchone()
        if row is None:
            return None
        try:
            with np.load(io.BytesIO(row["data"]), allow_pickle=False) as archive:
                return {name: archive[name] for name in archive.files}
        except (ValueError, OSError) as err:
            raise StoreError(f"stored weights of {arch!r} in run {run_id} are unreadable: {err}") from None

    def drop_networks(self, run_id: int, *, lease: int | None = None, keep: str | None = None) -> None:
        """Forget a run's stored weights but those of network ``keep`` (the runner does so when the
        run finishes, keeping its best network for ``nasviz export``: only a run that may be
        resumed needs the others)."""

        def delete(conn):
            self._check_lease(conn, run_id, lease)
            conn.execute("DELETE FROM networks WHERE run_id=? AND arch IS NOT ?", (int(run_id), keep))

        self._write(delete, durable=False)

    def network_bytes(self, run_id: int) -> int:
        """Bytes of weights kept for a run (what :meth:`add_network` costs on disk)."""
        with self._read() as conn:
            self._require(conn, run_id)
            return int(conn.execute("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM networks WHERE run_id=?",
                                    (int(run_id),)).fetchone()[0])

    def evaluations(self, run_id: int, *, since_index: int = 0) -> list[dict[str, Any]]:
        """A run's evaluations with ``index >= since_index``, in evaluation order.

        Each is ``{index, step, arch, value, cost, status, error, info, created}``.
        """
        with self._read() as conn:
            self._require(conn, run_id)
            rows = conn.execute(
                "SELECT idx, step, arch, value, cost, status, error, info, created FROM evaluations "
                "WHERE run_id=? AND idx>=? ORDER BY idx", (int(run_id), int(since_index))).fetchall()
        return [
            {"index": r["idx"], "step": r["step"], "arch": r["arch"], "value": r["value"], "cost": r["cost"],
             "status": r["status"], "error": r["error"], "info": json.loads(r["info"]), "created": r["created"]}
            for r in rows
        ]

    def n_evaluations(self, run_id: int) -> int:
        with self._read() as conn:
            self._require(conn, run_id)
            return conn.execute("SELECT COUNT(*) FROM evaluations WHERE run_id=?", (int(run_id),)).fetchone()[0]

    def snapshots(self, run_id: int, since_step: int | None = None) -> list[dict[str, Any]]:
        """A run's snapshots (dicts), by step; only those with ``step > since_step`` if given."""
        with self._read() as conn:
            self._require(conn, run_id)
            rows = conn.execute(
                "SELECT data FROM snapshots WHERE run_id=? AND step>? ORDER BY step",
                (int(run_id), -1 if since_step is None else int(since_step))).fetchall()
        return [json.loads(r["data"]) for r in rows]

    def snapshot_steps(self, run_id: int) -> list[int]:
        """The steps that have a stored snapshot, ascending (cheap: no JSON is read)."""
        with self._read() as conn:
            self._require(conn, run_id)
            return [r[0] for r in conn.execute("SELECT step FROM snapshots WHERE run_id=? ORDER BY step",
                                               (int(run_id),))]

    def latest_snapshot(self, run_id: int) -> dict[str, Any] | None:
        """The snapshot with the highest step, or ``None`` before the first step."""
        with self._read() as conn:
            self._require(conn, run_id)
            row = conn.execute("SELECT data FROM snapshots WHERE run_id=? ORDER BY step DESC LIMIT 1",
                               (int(run_id),)).fetchone()
        return None if row is None else json.loads(row["data"])

    # -- export / import ----------------------------------------------------------------------

    def export_csv(self, run_id: int, path: str | os.PathLike) -> int:
        """Write a run's evaluations as CSV (columns :data:`CSV_COLUMNS`); return the row count.

        ``value``/``cost`` are written with ``repr`` so they read back bit for bit; empty cells
        mean ``None``; ``info`` is a JSON object.
        """
        rows = self.evaluations(run_id)
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(CSV_COLUMNS)
            for r in rows:
                writer.writerow([
                    r["index"], r["step"], r["arch"], _cell(r["value"]), _cell(r["cost"]), r["status"],
                    r["error"] or "", to_json(r["info"]), repr(r["created"]),
                ])
        return len(rows)

    def export_json(self, run_id: int, path: str | os.PathLike | None = None, *,
                    snapshots: bool = True) -> dict[str, Any]:
        """A run as one JSON document ``{format, run, evaluations, snapshots}``; written to
        ``path`` if given, and returned as a dict either way. :meth:`import_json` reads it back."""
        run = self.get_run(run_id)
        doc = {
            "format": "nasviz-run",
            "version": SCHEMA_VERSION,
            "run": {k: run[k] for k in ("id", "name", "created", "updated", "status", "error", "config")},
            "evaluations": self.evaluations(run_id),
            "snapshots": self.snapshots(run_id) if snapshots else [],
        }
        if path is not None:
            Path(path).write_text(to_json(doc), encoding="utf-8")
        return doc

    def import_json(self, source: str | os.PathLike | Mapping[str, Any]) -> int:
        """Add a run exported by :meth:`export_json` (a path or the dict) as a new run; return its id.

        The imported run keeps its config, name, evaluations and snapshots; a run that was
        ``running`` when exported is imported as ``interrupted`` (no process owns it here).
        """
        if isinstance(source, Mapping):
            doc = source
        else:
            try:
                doc = json.loads(Path(source).read_text(encoding="utf-8"))
            except json.JSONDecodeError as err:
                raise StoreError(f"{source} is not JSON: {err}") from None
        if not isinstance(doc, Mapping) or doc.get("format") != "nasviz-run":
            raise StoreError("not a nasviz run export: expected an object with format 'nasviz-run'")
        for key in ("run", "evaluations", "snapshots"):
            if key not in doc:
                raise StoreError(f"nasviz run export has no {key!r} field")
        run = doc["run"]
        status = run.get("status", STOPPED)
        status = INTERRUPTED if status == RUNNING else status
        _check_status(status)
        evaluations = list(doc["evaluations"])
        for i, ev in enumerate(evaluations):
            if not isinstance(ev, Mapping) or ev.get("index") != i:
                raise StoreError(f"evaluation {i} of the export is malformed or out of order")

        def insert(conn):
            now = time.time()
            cur = conn.execute(
                "INSERT INTO runs (created, updated, name, config, status, error) VALUES (?, ?, ?, ?, ?, ?)",
                (run.get("created", now), now, str(run.get("name", "")), to_json(run.get("config", {})),
                 status, run.get("error")))
            new_id = int(cur.lastrowid)
            self._insert_evaluations(conn, new_id, evaluations, 0, None)
            for snap in doc["snapshots"]:
                self._insert_snapshot(conn, new_id, snap)
            return new_id

        return self._write(insert)


# ---------------------------------------------------------------------------------------------


def _is_typed(state: Mapping[str, Any]) -> bool:
    """Whether a stored strategy state is in the typed layout (:meth:`StepState.to_dict`)."""
    try:
        return int(state.get("version") or 0) >= STATE_VERSION
    except (TypeError, ValueError):
        return False


def _legacy_kernel(config: Mapping[str, Any]) -> str | None:
    """The GP kernel of a stored run's strategy by its registry entry (old states did not name it)."""
    from nasviz.components import STRATEGIES, strategy_kernel

    strategy = config.get("strategy") if isinstance(config, Mapping) else None
    if strategy not in STRATEGIES:
        return None
    try:
        return strategy_kernel(str(strategy), config.get("strategy_options") or {})
    except (TypeError, ValueError, AttributeError):
        return None


def typed_snapshot(data: Mapping[str, Any], kernel: str | None = None) -> Mapping[str, Any]:
    """``data`` (a stored snapshot) with its ``strategy`` state in the typed layout.

    Snapshots of schema 3 and older hold each strategy's own dictionary (BO's ``pool`` /
    ``mean`` / ``hyperparameters``, NASBOT's ``gp`` and ``pool_top``, ...); these are read by
    :meth:`StepState.from_legacy` and replaced by :meth:`StepState.to_dict`; ``kernel`` names the
    GP's kernel where the old state did not (the run's strategy knows it). A snapshot without a
    strategy state, or with a typed one (``version`` >= :data:`STATE_VERSION`), is returned
    unchanged (the same object).
    """
    state = data.get("strategy")
    if not isinstance(state, Mapping) or _is_typed(state):
        return data
    try:
        typed = StepState.from_legacy({"kernel": kernel or "", **state})
    except (TypeError, ValueError, KeyError, AttributeError):
        # A state no reader understands must not keep the store from opening: keep it, untyped, in notes.
        typed = StepState(strategy=str(state.get("strategy", "")), phase=str(state.get("phase", "")),
                          notes={"unreadable_state": dict(state)})
    return {**data, "strategy": typed.to_dict()}


def _is_busy(err: sqlite3.OperationalError) -> bool:
    text = str(err).lower()
    return "locked" in text or "busy" in text


def _check_status(status: str) -> None:
    if status not in STATUSES:
        raise StoreError(f"unknown run status {status!r}; expected one of {', '.join(STATUSES)}")


def _default_name(config: Mapping[str, Any]) -> str:
    parts = [str(config[k]) for k in ("strategy", "metric") if config.get(k)]
    if config.get("seed") is not None:
        parts.append(f"seed {config['seed']}")
    return " ".join(parts)


def _cell(x: float | None) -> str:
    return "" if x is None else repr(float(x))


def _evaluation_dict(ev: Any, what: str) -> dict[str, Any]:
    """Normalise a dict or an Evaluation-like object into the stored fields, validating them."""
    if not isinstance(ev, Mapping):
        ev = {k: getattr(ev, k) for k in ("arch", "value", "cost", "status", "error", "info") if hasattr(ev, k)}
    arch = ev.get("arch")
    if not isinstance(arch, str) or not arch:
        raise StoreError(f"{what}: 'arch' must be the architecture's string, got {arch!r}")
    status = ev.get("status") or "ok"
    info = ev.get("info") or {}
    if not isinstance(info, Mapping):
        raise StoreError(f"{what}: 'info' must be a dict, got {type(info).__name__}")
    out = {
        "arch": arch,
        "value": _optional_float(ev.get("value"), f"{what}: value"),
        "cost": _optional_float(ev.get("cost"), f"{what}: cost"),
        "status": str(status),
        "error": None if ev.get("error") in (None, "") else str(ev.get("error")),
        "info": dict(info),
    }
    if ev.get("step") is not None:
        out["step"] = int(ev["step"])
    return out


def read_csv_export(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read a file written by :meth:`RunStore.export_csv` back into evaluation dicts."""
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != CSV_COLUMNS:
            raise StoreError(f"{path} is not a nasviz run export: columns {reader.fieldnames}, expected {CSV_COLUMNS}")
        return [
            {"index": int(r["index"]), "step": int(r["step"]), "arch": r["arch"],
             "value": float(r["value"]) if r["value"] else None, "cost": float(r["cost"]) if r["cost"] else None,
             "status": r["status"], "error": r["error"] or None, "info": json.loads(r["info"]),
             "created": float(r["created"])}
            for r in reader
        ]
