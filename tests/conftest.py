"""Shared fixtures: the shared NAS-Bench-201 table (skipped with a reason when absent), and
AppTest running app.py on every rerun as a real server does."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import app_test

from nasviz.objectives import load_table, shared_nb201_table_path

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def nb201_table_path() -> Path:
    path = shared_nb201_table_path()
    if path is None:
        pytest.skip(
            "the shared NAS-Bench-201 table is absent: set NASVIZ_NB201_TABLE or place it at "
            "../shared/data/nb201_test_accuracy.csv"
        )
    return path


@pytest.fixture(scope="session")
def nb201_table(nb201_table_path):
    return load_table(nb201_table_path)


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


@pytest.fixture
def one_torch_thread():
    """Train with one torch thread (as the executors' workers do): on a shared two-core machine,
    two intra-op threads made a small CNN's training step 60 times slower."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


#: A test that takes this long (setup, call and teardown together) belongs in the slow tier.
SLOW_SECONDS = 1.0
_durations: dict[str, float] = {}
_marked_slow: set[str] = set()


def pytest_collection_modifyitems(config, items):
    _marked_slow.update(item.nodeid for item in items if item.get_closest_marker("slow"))


def pytest_runtest_logreport(report):
    _durations[report.nodeid] = _durations.get(report.nodeid, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    """Name the tests that took a second or more without the ``slow`` marker, so the fast tier
    (``make test-fast``) stays fast; a warning, not a failure, since one run's times vary."""
    unmarked = sorted(((s, n) for n, s in _durations.items() if s >= SLOW_SECONDS and n not in _marked_slow), reverse=True)
    if unmarked:
        terminalreporter.section(f"unmarked tests over {SLOW_SECONDS:g} s: mark them @pytest.mark.slow")
        for seconds, nodeid in unmarked:
            terminalreporter.write_line(f"{seconds:6.2f}s {nodeid}")
