"""Where the dashboard keeps its files: the run store, uploaded tables and worker logs.

Everything lives beside the run store file (``$NASVIZ_STORE``, else ``runs/nasviz.sqlite`` in
the project folder), so one volume holds a deployment's state (see the Dockerfile).
"""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the run store file the dashboard uses.
STORE_ENV = "NASVIZ_STORE"
#: Set to 1 to run searches started from the dashboard synchronously (tests).
SYNC_ENV = "NASVIZ_SYNC_RUNS"

REPO_ROOT = Path(__file__).resolve().parents[2]


def default_store_path() -> Path:
    """``$NASVIZ_STORE`` if set, else ``runs/nasviz.sqlite`` in the project folder."""
    env = os.environ.get(STORE_ENV)
    return Path(env) if env else REPO_ROOT / "runs" / "nasviz.sqlite"


def runs_dir() -> Path:
    """Folder for the store, uploaded tables and worker logs: beside the store file."""
    return default_store_path().parent


def uploads_dir() -> Path:
    """Where uploads are kept: ``uploads/`` beside the run store."""
    return runs_dir() / "uploads"


def sync_runs() -> bool:
    """Whether searches started from the dashboard run in the calling thread (``$NASVIZ_SYNC_RUNS``)."""
    return os.environ.get(SYNC_ENV, "") not in ("", "0", "false")
