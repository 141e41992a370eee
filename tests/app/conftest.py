"""Fixtures for the dashboard tests: a small synthetic table and a private run store."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import app_test

from nasviz.spaces import nb201

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests_app_helpers


def write_synthetic_table(path: Path, n: int = 300, seed: int = 0) -> Path:
    """``n`` distinct NB201 cells whose value grows with their convolutions (a test table)."""
    rng = np.random.default_rng(seed)
    seen, lines = set(), ["arch,acc,other"]
    while len(seen) < n:
        arch = nb201.sample(rng, 1)[0]
        s = nb201.format(arch)
        if s in seen:
            continue
        seen.add(s)
        ops = nb201.operations(arch)
        value = 50 + 5 * sum(op.startswith("nor_conv") for op in ops) + rng.normal()
        lines.append(f"{s},{value:.3f},{rng.uniform():.3f}")
    path.write_text("\n".join(lines) + "\n")
    return path


class _NavigationPagesManager(PagesManager):
    """AppTest resets ``PagesManager.uses_pages_directory`` before every run, so with a folder
    named ``pages/`` every rerun after the first executes the page file alone (Streamlit's
    pre-``st.navigation`` mode) and skips app.py. A real server clears the flag for good the
    first time app.py calls ``st.navigation``; do the same here so reruns behave as in a browser."""

    def __init__(self, *args, **kwargs):
        PagesManager.uses_pages_directory = False
        super().__init__(*args, **kwargs)


@pytest.fixture(autouse=True)
def _apptest_runs_app_py_every_time(monkeypatch):
    monkeypatch.setattr(app_test, "PagesManager", _NavigationPagesManager)


@pytest.fixture()
def synthetic_table(tmp_path) -> Path:
    return write_synthetic_table(tmp_path / "synthetic.csv")


@pytest.fixture()
def store_path(tmp_path, monkeypatch) -> Path:
    """A fresh store file used by the app (``NASVIZ_STORE``), searches run synchronously; the
    test's folder is the operator's data folder (``NASVIZ_DATA_DIR``), so server paths are on."""
    path = tmp_path / "runs" / "store.sqlite"
    monkeypatch.setenv("NASVIZ_STORE", str(path))
    monkeypatch.setenv("NASVIZ_SYNC_RUNS", "1")
    monkeypatch.setenv("NASVIZ_DATA_DIR", str(tmp_path))
    return path
