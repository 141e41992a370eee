"""The protocol visitor of ``bench classroom --client protocol`` (nasviz.bench.stream_visitor)
against a real ``streamlit run app.py`` on loopback: no browser, Streamlit's websocket only."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from nasviz.bench.stream_visitor import StreamVisitor, widget_value
from nasviz.store import RunStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))
from browser_helpers import streamlit_server  # noqa: E402 - the browser tests' real server


@pytest.mark.slow
def test_a_protocol_visitor_opens_search_sees_its_start_button_and_clicks_it(tmp_path):
    """One session over ``/_stcore/stream``: the Search page's script runs to its end and its
    deltas hold the Start button (by its widget key); the widget values the visitor sends (a
    budget, no pause, a click on Start) start a search in the store as a click in a tab does,
    and the rerun the page asks for after starting it is waited through to the running status."""
    store = tmp_path / "store.sqlite"

    async def visit(url: str):
        async with StreamVisitor(url) as visitor:
            search = await visitor.open("", done=lambda run: run.widget("start") is not None, timeout_s=120)
            ids = {key: search.widget(key) for key in ("budget", "step_delay", "start")}
            assert search.seconds is not None and search.runs >= 1, visitor.closed_reason
            assert ids["start"] is not None and ids["start"][0] == "button", search.kinds()
            assert "Search" in search.texts(("heading",))
            values = [widget_value(ids["budget"][1], 10), widget_value(ids["step_delay"][1], 0.0),
                      widget_value(ids["start"][1], None, trigger=True)]
            started = await visitor.open("", widgets=values, timeout_s=120,
                                         done=lambda run: any(t.startswith("Status:") for t in run.texts()))
            return search, started

    with streamlit_server(store, tmp_path / "server.log") as url:
        search, started = asyncio.run(visit(url))
        assert started.seconds is not None, started.texts()
        runs = RunStore(store).list_runs()
        assert len(runs) == 1 and runs[0].config["budget"] == 10, runs
        deadline = time.time() + 120
        while RunStore(store).get_run(runs[0].id).status == "running":
            assert time.time() < deadline, "the search started over the protocol did not finish"
            time.sleep(0.2)
    assert RunStore(store).n_evaluations(runs[0].id) == 10
    # The sidebar's texts are not the page's: the main container's heading is the page's title.
    assert search.texts(("heading",))[0] == "Search"
