"""The run store's tables and the migration of older files (see the package docstring)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Mapping

from nasviz.errors import StoreError
from nasviz.state import STATE_VERSION, StepState
from nasviz.store.records import to_json

SCHEMA_VERSION = 5

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
    session TEXT,
    notes TEXT NOT NULL DEFAULT ''
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
_ADDED_RUN_COLUMNS = {"lease": "INTEGER NOT NULL DEFAULT 0", "session": "TEXT", "notes": "TEXT NOT NULL DEFAULT ''"}


def init_schema(conn: sqlite3.Connection) -> None:
    """Create the tables of a new file, or migrate an older one to :data:`SCHEMA_VERSION`
    (inside the caller's write transaction: a file is wholly migrated or untouched)."""
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
        type_snapshot_states(conn)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")



def type_snapshot_states(conn: sqlite3.Connection) -> int:
    """Schema 3 -> 4: rewrite every snapshot whose strategy state is an untyped dictionary in
    the typed layout (:func:`typed_snapshot`); return how many were rewritten. Runs inside
    the migration's transaction, so a file is either wholly migrated or untouched."""
    kernels = {row["id"]: legacy_kernel(json.loads(row["config"])) for row in conn.execute("SELECT id, config FROM runs")}
    changed = []
    for row in conn.execute("SELECT run_id, step, data FROM snapshots"):
        data = json.loads(row["data"])
        typed = typed_snapshot(data, kernels.get(row["run_id"]))
        if typed is not data:
            changed.append((to_json(typed), row["run_id"], row["step"]))
    conn.executemany("UPDATE snapshots SET data=? WHERE run_id=? AND step=?", changed)
    return len(changed)


def is_typed(state: Mapping[str, Any]) -> bool:
    """Whether a stored strategy state is in the typed layout (:meth:`StepState.to_dict`)."""
    try:
        return int(state.get("version") or 0) >= STATE_VERSION
    except (TypeError, ValueError):
        return False


def legacy_kernel(config: Mapping[str, Any]) -> str | None:
    """The GP kernel of a stored run's strategy (old states did not name it): the config's
    ``kernel``, worked out once by :meth:`nasviz.config.SearchConfig.create` and stored with the
    run; configs stored before it was (the runs this migration is for, mostly) by the strategy's
    registry entry."""
    if isinstance(config, Mapping) and "kernel" in config:
        return None if config["kernel"] is None else str(config["kernel"])
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
    if not isinstance(state, Mapping) or is_typed(state):
        return data
    try:
        typed = StepState.from_legacy({"kernel": kernel or "", **state})
    except (TypeError, ValueError, KeyError, AttributeError):
        # A state no reader understands must not keep the store from opening: keep it, untyped, in notes.
        typed = StepState(strategy=str(state.get("strategy", "")), phase=str(state.get("phase", "")),
                          notes={"unreadable_state": dict(state)})
    return {**data, "strategy": typed.to_dict()}

