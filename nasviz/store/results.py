"""A run's evaluations (append-only, durable) and snapshots (one per step, typed state), read back
as :class:`~nasviz.store.stored.StoredEvaluation` and :class:`~nasviz.store.stored.StoredSnapshot`."""

from __future__ import annotations

import json
import time
from typing import Any, Mapping, Sequence

from nasviz.errors import StoreError
from nasviz.store.database import SQLiteFile
from nasviz.store.records import RUNNING, evaluation_fields, to_json
from nasviz.store.schema import is_typed, legacy_kernel, typed_snapshot
from nasviz.store.stored import StoredEvaluation, StoredSnapshot


class Results(SQLiteFile):
    """Evaluations and snapshots of runs (writes check the caller's lease, see ``runs``)."""

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
            d = evaluation_fields(ev, f"evaluation {start + offset} of run {run_id}")
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
        if isinstance(state, Mapping) and not is_typed(state):  # an old export or writer: stored typed all the same
            data = typed_snapshot(data, legacy_kernel(json.loads(run["config"])))
        now = time.time()
        # A replayed step may rewrite its snapshot: keep the latest.
        conn.execute("INSERT OR REPLACE INTO snapshots (run_id, step, data, created) VALUES (?, ?, ?, ?)",
                     (int(run_id), step, to_json(dict(data)), now))
        conn.execute("UPDATE runs SET updated=? WHERE id=?", (now, int(run_id)))

    def evaluations(self, run_id: int, *, since_index: int = 0) -> list[StoredEvaluation]:
        """A run's evaluations with ``index >= since_index``, in evaluation order
        (:class:`~nasviz.store.stored.StoredEvaluation`: fields, meanings, units)."""
        with self._read() as conn:
            self._require(conn, run_id)
            rows = conn.execute(
                "SELECT idx, step, arch, value, cost, status, error, info, created FROM evaluations "
                "WHERE run_id=? AND idx>=? ORDER BY idx", (int(run_id), int(since_index))).fetchall()
        return [
            StoredEvaluation(index=r["idx"], step=r["step"], arch=r["arch"], value=r["value"], cost=r["cost"],
                             status=r["status"], error=r["error"], info=json.loads(r["info"]), created=r["created"])
            for r in rows
        ]

    def n_evaluations(self, run_id: int) -> int:
        with self._read() as conn:
            self._require(conn, run_id)
            return conn.execute("SELECT COUNT(*) FROM evaluations WHERE run_id=?", (int(run_id),)).fetchone()[0]

    def snapshots(self, run_id: int, since_step: int | None = None) -> list[StoredSnapshot]:
        """A run's snapshots by step (:class:`~nasviz.store.stored.StoredSnapshot`: fields, meanings,
        units); only those with ``step > since_step`` if given."""
        return [StoredSnapshot.from_stored(data) for data in self._snapshot_documents(run_id, since_step)]

    def _snapshot_documents(self, run_id: int, since_step: int | None = None) -> list[dict[str, Any]]:
        """The stored JSON objects behind :meth:`snapshots`, every key as written: the JSON export
        copies them byte for byte, keys the record does not read included."""
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

    def snapshot(self, run_id: int, step: int) -> StoredSnapshot | None:
        """The snapshot of one step (``None`` if that step has none)."""
        with self._read() as conn:
            self._require(conn, run_id)
            row = conn.execute("SELECT data FROM snapshots WHERE run_id=? AND step=?", (int(run_id), int(step))).fetchone()
        return None if row is None else StoredSnapshot.from_stored(json.loads(row["data"]))

    def latest_snapshot_time(self, run_id: int) -> float | None:
        """When the newest snapshot was written (``time.time()`` seconds), or ``None`` before the first."""
        with self._read() as conn:
            self._require(conn, run_id)
            row = conn.execute("SELECT MAX(created) FROM snapshots WHERE run_id=?", (int(run_id),)).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def latest_snapshot(self, run_id: int) -> StoredSnapshot | None:
        """The snapshot with the highest step, or ``None`` before the first step."""
        with self._read() as conn:
            self._require(conn, run_id)
            row = conn.execute("SELECT data FROM snapshots WHERE run_id=? ORDER BY step DESC LIMIT 1",
                               (int(run_id),)).fetchone()
        return None if row is None else StoredSnapshot.from_stored(json.loads(row["data"]))
