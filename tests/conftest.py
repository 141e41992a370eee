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


#: The tests that drive Chromium (marked ``browser``): the browser tests' folder, and the
#: benchmarks of the provenance test that drive it. ``make test`` runs them one after another.
CHROMIUM_FOLDER = "tests/browser/"
CHROMIUM_BENCHMARKS = ("tests/bench/test_provenance.py::test_every_bench_command_prints_its_provenance[browser]",
                       "tests/bench/test_provenance.py::test_every_bench_command_prints_its_provenance[classroom]")


def worker_group(nodeid: str) -> str:
    """A test's group among ``make test``'s worker processes (pytest-xdist): its file, so a
    module's fixtures (networks trained, benchmarks prefetched) are built once; "chromium" for the
    tests that drive Chromium, so they never run beside each other (``bench browser`` failed beside
    ``bench classroom``: a button not yet enabled). Told from the test's id alone: the process
    that hands tests out collects none."""
    if nodeid.startswith(CHROMIUM_FOLDER) or nodeid in CHROMIUM_BENCHMARKS:
        return "chromium"
    return nodeid.split("::")[0]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        """A group's tests on one worker. ``make test`` hands the groups out in the order collected
        (``--no-loadscope-reorder``): the Chromium tests, the longest group, start in the first
        minutes, not after every file with more tests."""

        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid)

    return ByGroup(config, log)


def pytest_collection_modifyitems(config, items):
    """The tests marked ``browser`` are the ones :func:`worker_group` puts in "chromium"."""
    wrong = [item.nodeid for item in items
             if bool(item.get_closest_marker("browser")) != (worker_group(item.nodeid) == "chromium")]
    if wrong:
        raise pytest.UsageError("tests/conftest.py groups the tests that drive Chromium by their ids (CHROMIUM_FOLDER, "
                                "CHROMIUM_BENCHMARKS); marked browser or not, these are in the wrong group: "
                                + ", ".join(wrong))


#: A test that takes this long (setup, call and teardown together) belongs in the slow tier.
SLOW_SECONDS = 1.0
_durations: dict[str, float] = {}
_marked_slow: set[str] = set()


def pytest_runtest_logreport(report):
    """Sum each test's phases; a report carries its test's markers as keywords, also when a
    worker process of ``make test`` sent it (this process then collected nothing)."""
    _durations[report.nodeid] = _durations.get(report.nodeid, 0.0) + report.duration
    if "slow" in report.keywords:
        _marked_slow.add(report.nodeid)


def pytest_terminal_summary(terminalreporter):
    """Name the tests that took a second or more without the ``slow`` marker, so the fast tier
    (``make test-fast``) stays fast; a warning, not a failure, since one run's times vary."""
    unmarked = sorted(((s, n) for n, s in _durations.items() if s >= SLOW_SECONDS and n not in _marked_slow), reverse=True)
    if unmarked:
        terminalreporter.section(f"unmarked tests over {SLOW_SECONDS:g} s: mark them @pytest.mark.slow")
        for seconds, nodeid in unmarked:
            terminalreporter.write_line(f"{seconds:6.2f}s {nodeid}")
