"""A run out of and into a store: CSV of its evaluations, one JSON document with everything."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any, Mapping

from nasviz.errors import StoreError
from nasviz.rounding import round_value, run_decimals
from nasviz.store.database import SQLiteFile
from nasviz.store.records import (CSV_COLUMNS, INTERRUPTED, MAX_NOTES_CHARS, RUNNING, STOPPED, check_status, csv_cell,
                                  to_json)
from nasviz.store.schema import SCHEMA_VERSION
from nasviz.store.stored import StoredEvaluation


class Exchange(SQLiteFile):
    """Export and import; relies on the run and result methods of :class:`~nasviz.store.RunStore`."""

    def export_csv(self, run_id: int, path: str | os.PathLike) -> int:
        """Write a run's evaluations as CSV (columns :data:`CSV_COLUMNS`); return the row count.

        ``value`` is written at the run's resolution (:func:`nasviz.rounding.run_decimals`: a
        table's values as the table writes them, a trained score without its float32 noise), with
        ``repr`` so it reads back bit for bit; ``cost`` with ``repr``; empty cells mean ``None``;
        ``info`` is a JSON object.
        """
        rows = self._at_resolution(run_id, self.evaluations(run_id))
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(CSV_COLUMNS)
            for r in rows:
                writer.writerow([
                    r.index, r.step, r.arch, csv_cell(r.value), csv_cell(r.cost), r.status,
                    r.error or "", to_json(r.info), repr(r.created),
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
            # Spelled out, in this order: the export's bytes do not follow StoredRun's fields.
            "run": {"id": run.id, "name": run.name, "created": run.created, "updated": run.updated,
                    "status": run.status, "error": run.error, "config": run.config, "notes": run.notes},
            "evaluations": [ev.to_dict() for ev in self._at_resolution(run_id, self.evaluations(run_id))],
            # The stored objects as written, not StoredSnapshot records: every key (older releases' and
            # hand-written ones the record does not read) is exported, and the bytes stay the same.
            "snapshots": self._snapshot_documents(run_id) if snapshots else [],
        }
        if path is not None:
            Path(path).write_text(to_json(doc), encoding="utf-8")
        return doc

    def _at_resolution(self, run_id: int, rows: list[StoredEvaluation]) -> list[StoredEvaluation]:
        """``rows`` with each ``value`` rounded to the run's resolution (unchanged when unknown)."""
        decimals = run_decimals(self.get_run(run_id).config)
        if decimals is None:
            return rows
        return [dataclasses.replace(r, value=round_value(r.value, decimals) if r.value is not None else None)
                for r in rows]

    def import_json(self, source: str | os.PathLike | Mapping[str, Any]) -> int:
        """Add a run exported by :meth:`export_json` (a path or the dict) as a new run; return its id.

        The imported run keeps its config, name, notes, evaluations and snapshots; a run that was
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
        check_status(status)
        evaluations = list(doc["evaluations"])
        for i, ev in enumerate(evaluations):
            if not isinstance(ev, Mapping) or ev.get("index") != i:
                raise StoreError(f"evaluation {i} of the export is malformed or out of order")

        def insert(conn):
            now = time.time()
            cur = conn.execute(
                "INSERT INTO runs (created, updated, name, config, status, error, notes) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run.get("created", now), now, str(run.get("name", "")), to_json(run.get("config", {})),
                 status, run.get("error"), str(run.get("notes") or "")[:MAX_NOTES_CHARS]))
            new_id = int(cur.lastrowid)
            self._insert_evaluations(conn, new_id, evaluations, 0, None)
            for snap in doc["snapshots"]:
                self._insert_snapshot(conn, new_id, snap)
            return new_id

        return self._write(insert)



def read_csv_export(path: str | os.PathLike) -> list[StoredEvaluation]:
    """Read a file written by :meth:`RunStore.export_csv` back into the evaluations it holds."""
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != CSV_COLUMNS:
            raise StoreError(f"{path} is not a nasviz run export: columns {reader.fieldnames}, expected {CSV_COLUMNS}")
        return [
            StoredEvaluation(index=int(r["index"]), step=int(r["step"]), arch=r["arch"],
                             value=float(r["value"]) if r["value"] else None,
                             cost=float(r["cost"]) if r["cost"] else None, status=r["status"],
                             error=r["error"] or None, info=json.loads(r["info"]), created=float(r["created"]))
            for r in reader
        ]
