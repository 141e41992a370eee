"""Trained weights a run keeps while it may be resumed (Auto-Keras warm starts), as ``.npz``
archives of numeric arrays read back without pickle."""

from __future__ import annotations

import io
import sqlite3
import time
from typing import Any, Mapping

import numpy as np

from nasviz.errors import StoreError
from nasviz.store.database import SQLiteFile


class Networks(SQLiteFile):
    """The ``networks`` table."""

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

    def has_network(self, run_id: int, arch: str) -> bool:
        """Whether weights of ``arch`` are kept for a run (without reading them)."""
        with self._read() as conn:
            self._require(conn, run_id)
            return conn.execute("SELECT 1 FROM networks WHERE run_id=? AND arch=?",
                                (int(run_id), str(arch))).fetchone() is not None

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
