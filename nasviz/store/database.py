"""One SQLite file shared by threads and processes: a connection per thread (new after a
fork), write transactions that take the lock up front and retry while the file is busy, and
consistent read snapshots. The store's other parts build on :class:`SQLiteFile`."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from nasviz.errors import StoreError
from nasviz.store.records import UnknownRunError, default_stale_after
from nasviz.store.schema import SCHEMA_VERSION, init_schema


class SQLiteFile:
    """The connection layer of :class:`~nasviz.store.RunStore` (its constructor is this one)."""

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
            self._write(init_schema)

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


def _is_busy(err: sqlite3.OperationalError) -> bool:
    text = str(err).lower()
    return "locked" in text or "busy" in text

