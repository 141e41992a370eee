"""Stop and Resume a paced search in real Chromium; every label then says it runs (issue 46: the
run picker said "(stopped)" after Resume)."""

from __future__ import annotations

import re
import time

import pytest

from browser_helpers import (ARTIFACTS, BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, fill_inputs, streamlit_server,
                             wait_until)

pytestmark = [*BROWSER_MARKS, pytest.mark.slow]


def _metric(page, label: str) -> str | None:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label)
    return box.first.locator('[data-testid="stMetricValue"]').inner_text().strip() if box.count() else None


def _evaluations(page) -> int:
    shown = _metric(page, "Evaluations") or "0 /"
    return int(shown.split("/")[0])


def test_after_resume_the_search_and_runs_pages_say_running(tmp_path):
    from playwright.sync_api import sync_playwright

    from nasviz.dashboard.sources import default_table_path
    from nasviz.store import RunStore

    if default_table_path() is None:
        pytest.skip("no default data: data/nb201_cifar.csv and the shared NAS-Bench-201 table are both absent")
    store = tmp_path / "store.sqlite"
    ARTIFACTS.mkdir(exist_ok=True)
    with streamlit_server(store, tmp_path / "server.log") as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1400})
        page.set_default_timeout(60_000)
        try:
            page.goto(server)
            fill_inputs(page, {"budget": "40"})
            page.locator(".st-key-start button").first.click()  # paced: a second after each step
            wait_until(lambda: _evaluations(page) >= 3, 120, "three evaluations")
            run_id = int(re.search(r"[?&]run=(\d+)", page.url).group(1))
            page.locator(".st-key-stop button").first.click()
            wait_until(lambda: RunStore(store).get_run(run_id).status == "stopped", 60, "the run to stop")
            page.goto(f"{server}/runs?run={run_id}")  # the Runs page: its picker, then Resume there
            picker = page.locator(".st-key-selected_run input")
            wait_until(lambda: picker.count() > 0, 60, "the run picker")
            resume = page.locator(".st-key-resume_run button")
            wait_until(lambda: resume.count() and resume.first.is_enabled(), 30, "Resume to be enabled")
            resume.first.click()
            wait_until(lambda: RunStore(store).get_run(run_id).status == "running", 30, "the run to resume")
            wait_until(lambda: "Status: running" in page.locator('[data-testid="stMain"]').inner_text(), 30,
                       "the page to say the run is running")
            time.sleep(1.0)
            shown = picker.first.input_value()  # what the visitor reads in the box
            assert shown.startswith(f"{run_id}:") and "stopped" not in shown, shown
            page.screenshot(path=str(ARTIFACTS / "resume-runs-page.png"))
        finally:
            for run in RunStore(store).list_runs() if store.exists() else []:
                if run.status == "running":
                    RunStore(store).request_stop(run.id)
            browser.close()
