"""The served configuration (``.streamlit/config.toml``) that keeps one server fast for a class."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_no_full_garbage_collection_after_every_script_run():
    """Issue 47: Streamlit's default ``runner.postScriptGC`` ran ``gc.collect(2)`` after every run
    and fragment rerun: a third of the server's time with ten watched searches."""
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False
    # and no file watcher polling the source tree while it serves
    assert config["server"]["fileWatcherType"] == "none" and config["server"]["runOnSave"] is False
