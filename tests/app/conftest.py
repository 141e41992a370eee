"""Fixtures for the dashboard tests: a small synthetic table and a private run store."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests_app_helpers import write_synthetic_table

REPO = Path(__file__).resolve().parents[2]


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
    # An explorer request's cost is measured on the machine: under a loaded test run a request near
    # the default limit could flip to refused. Tests of the refusal set their own limit.
    monkeypatch.setenv("NASVIZ_MAX_EXPLORER_SECONDS", "1e9")
    # The page pauses after each step by default (teaching); a synchronous run in a test has
    # nobody watching, so the form starts at 0 here (test_the_step_pause_... checks the default).
    monkeypatch.setattr("nasviz.defaults.PAGE_STEP_DELAY", 0.0)
    return path


@pytest.fixture(autouse=True)
def full_error_details():
    """AppTests run in this process: show them an uncaught error's message (served deployments
    show none, ``.streamlit/config.toml``), so a failing test says what went wrong."""
    from streamlit import config

    config.set_option("client.showErrorDetails", "full")
    yield
