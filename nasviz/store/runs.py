"""Runs: creating them (within a server's limits), leases and claims, heartbeats, stop
requests, interrupted-run detection, listing with summaries, deletion."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import sqlite3
import time
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from nasviz.errors import LeaseLostError, LimitError, StoreError
from nasviz.rounding import counted
from nasviz.store.database import SQLiteFile
from nasviz.store.records import (FINISHED, INTERRUPTED, MAX_NOTES_CHARS, RUNNING, UnknownRunError, check_status,
                                  default_name, to_json)
from nasviz.store.stored import StoredRun

if TYPE_CHECKING:
    from nasviz.settings import Limits


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



class Runs(SQLiteFile):
    """Run rows: their lifecycle and their summaries."""

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
        check_status(status)
        names = list(names) if names is not None else [None] * len(configs)
        rows = []
        for config, name in zip(configs, names):
            if not isinstance(config, Mapping):
                raise StoreError(f"config must be a dict of plain data, got {type(config).__name__}")
            label = name if name is not None else str(config.get("name") or default_name(config))
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
            raise LimitError(f"this server already runs {counted(total, 'search', 'searches')} started from browsers and allows "
                             f"{limits.max_running_total} at once (NASVIZ_MAX_RUNNING): wait for one to finish",
                             field="running searches")
        if session is not None:
            mine = conn.execute("SELECT COUNT(*) FROM runs WHERE status=? AND session=?", (RUNNING, session)).fetchone()[0]
            if mine + n_new > limits.max_running_per_session:
                raise LimitError(f"this browser session already runs {counted(mine, 'search', 'searches')} and may run "
                                 f"{limits.max_running_per_session} at once (NASVIZ_MAX_RUNNING_PER_SESSION): stop "
                                 "one or wait for one to finish", field="running searches")

    @staticmethod
    def _check_lease(conn: sqlite3.Connection, run_id: int, lease: int | None) -> sqlite3.Row:
        """The run's row if ``lease`` is its current lease (or ``lease`` is ``None``: an
        administrative write); else :class:`LeaseLostError`. Call inside the write transaction."""
        row = conn.execute("SELECT * FROM runs WHERE id=?", (SQLiteFile._check_id(run_id),)).fetchone()
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
                   limits: "Limits | None" = None, resume: bool = False) -> int | None:
        """Set a run's status (one of :data:`STATUSES`).

        ``lease``: only if it is the run's current lease (:class:`LeaseLostError` otherwise);
        ``None`` for administrative changes. ``claim=True`` (used when a process starts or
        resumes a run) also records this process as the owner, refreshes the heartbeat, clears a
        pending stop request, increments the lease and returns the new one; with ``limits`` and
        ``session`` the claim counts as a browser starting a search (see :meth:`create_runs`).
        ``resume=True``: the claim of a resumed run, refused (:class:`StoreError`) if the run is
        running or finished *in the same transaction* as the claim and the capacity check, so two
        visitors resuming one run at once start one worker, not two.
        """
        check_status(status)
        if limits is not None:
            self.mark_interrupted()
        now = time.time()

        def update(conn):
            row = self._check_lease(conn, run_id, lease)
            if resume and row["status"] in (RUNNING, FINISHED):
                raise StoreError(f"run {run_id} is {row['status']}: only a stopped, failed or interrupted run resumes")
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

    def set_notes(self, run_id: int, notes: str) -> None:
        """Replace a run's notes (free text a visitor keeps with the run, at most
        :data:`MAX_NOTES_CHARS` characters; longer text is refused, not cut)."""
        text = str(notes)
        if len(text) > MAX_NOTES_CHARS:
            raise StoreError(f"notes of run {run_id} have {len(text):,} characters; at most {MAX_NOTES_CHARS:,} are kept")

        def update(conn):
            self._require(conn, run_id)
            conn.execute("UPDATE runs SET notes=?, updated=? WHERE id=?", (text, time.time(), int(run_id)))

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

    def claim_run(self, run_id: int, *, force: bool = False) -> StoredRun:
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
        # The lease is ours, even if it has moved on since (our writes would then be refused).
        return dataclasses.replace(self.get_run(run_id), lease=lease)

    def get_run(self, run_id: int) -> StoredRun:
        """One run (:class:`~nasviz.store.stored.StoredRun`: its row, config and summaries)."""
        self.mark_interrupted()
        with self._read() as conn:
            self._require(conn, run_id)
            return self._summaries(conn, "WHERE r.id=?", (int(run_id),))[0]

    def list_runs(self) -> list[StoredRun]:
        """Every run, newest first (:class:`~nasviz.store.stored.StoredRun`: fields, meanings, units)."""
        self.mark_interrupted()
        with self._read() as conn:
            return self._summaries(conn, "", ())

    def _summaries(self, conn: sqlite3.Connection, where: str, params: tuple) -> list[StoredRun]:
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
            out.append(StoredRun(
                id=r["id"], name=r["name"], created=r["created"], updated=r["updated"],
                status=r["status"], strategy=config.get("strategy"), metric=config.get("metric"),
                table=config.get("table"), seed=config.get("seed"), budget=config.get("budget"),
                batch_size=config.get("batch_size"),
                n_evaluations=r["n_evaluations"], n_failed=r["n_failed"], last_step=r["last_step"] or 0,
                best_value=r["best_value"], best_arch=r["best_arch"],
                pid=r["pid"], host=r["host"], heartbeat=r["heartbeat"],
                stop_requested=bool(r["stop_requested"]), error=r["error"], config=config,
                lease=r["lease"], session=r["session"], notes=r["notes"],
            ))
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
