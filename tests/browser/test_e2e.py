"""End to end in a real browser: Chromium drives ``streamlit run app.py``.

Starts a search on the default data, watches the step counter advance and the history plot
fill, stops the search, reloads the tab (the run is found again from the URL), finds the run on
the Runs page, and saves screenshots to ``test-artifacts/``.
"""

from __future__ import annotations

import os
import re
import time

import pytest

from nasviz.dashboard.sources import default_table_path

from browser_helpers import ARTIFACTS, BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, streamlit_server, wait_until

pytestmark = BROWSER_MARKS


@pytest.fixture()
def server(tmp_path):
    if default_table_path() is None:
        pytest.skip("no default data: data/nb201_cifar.csv and the shared NAS-Bench-201 table are both absent")
    store = tmp_path / "store.sqlite"
    try:
        with streamlit_server(store, tmp_path / "server.log") as url:
            yield url
    finally:
        # the search worker runs in its own session: stop any left behind
        from nasviz.store import RunStore

        for run in RunStore(store).list_runs():
            if run.status == "running" and run.pid:
                try:
                    os.kill(run.pid, 15)
                except ProcessLookupError:
                    pass


@pytest.mark.slow
def test_start_watch_stop_reload_and_find_the_run(server):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 2000})
        page.set_default_timeout(60_000)
        page.goto(server)
        budget = page.locator(".st-key-budget input")
        budget.fill("500")  # more than the test will wait for: it stops the search itself
        budget.press("Enter")
        wait_until(lambda: budget.input_value() == "500", 30, "the budget to be set")
        time.sleep(1.0)
        page.locator(".st-key-start button").click()

        def metric(label: str) -> str | None:
            box = page.locator('[data-testid="stMetric"]').filter(has_text=label)
            return box.first.locator('[data-testid="stMetricValue"]').inner_text().strip() if box.count() else None

        def step() -> int | None:
            text = metric("Step")
            return int(text) if text and text.isdigit() else None

        first = wait_until(step, 90, "the step counter to appear")
        wait_until(lambda: (step() or 0) >= first + 2, 90, "the step counter to advance twice")
        points = page.locator(".st-key-chart_history .scatterlayer .point")
        wait_until(lambda: points.count() > 0, 60, "the history plot to show points")
        status = page.locator('[data-testid="stCaptionContainer"]').filter(has_text="Status:")
        page.locator(".st-key-paused").click()  # pause: the view holds still while the search goes on
        wait_until(lambda: "view paused" in status.first.inner_text(), 60, "the view to pause")
        held = step()
        time.sleep(3.0)
        assert step() == held
        page.screenshot(path=str(ARTIFACTS / "1-search-running.png"))
        page.locator(".st-key-paused").click()  # live again
        wait_until(lambda: "view paused" not in status.first.inner_text(), 60, "the view to resume")
        assert re.search(r"[?&]run=(\d+)", page.url), page.url
        run_id = re.search(r"[?&]run=(\d+)", page.url).group(1)

        page.locator(".st-key-stop button").click()
        wait_until(lambda: "stopped" in status.first.inner_text(), 60, "the run to stop")
        stopped_at = step()
        evaluations = metric("Evaluations")  # "n / 500"
        page.screenshot(path=str(ARTIFACTS / "2-search-stopped.png"))

        page.reload()
        heading = page.get_by_text(f"Run {run_id}:")
        wait_until(lambda: heading.count() > 0, 60, "the reloaded tab to find the run")
        wait_until(lambda: step() == stopped_at, 60, "the reloaded page to show the stopped run")
        for tab in ("Candidate pool", "Hyperparameters", "Distances", "Selected architectures"):
            page.get_by_role("tab", name=tab).click()
            time.sleep(1.0)
            page.screenshot(path=str(ARTIFACTS / f"3-tab-{tab.split()[0].lower()}.png"))

        page.get_by_role("link", name="Runs").click()
        heading = page.get_by_text(f"Run {run_id}:")
        wait_until(lambda: page.get_by_role("heading", name="Runs").count() > 0 and heading.count() > 0, 60,
                   "the run on the Runs page")
        status = page.locator('[data-testid="stCaptionContainer"]').filter(has_text="Status:")
        assert status.first.inner_text().startswith(f"Status: stopped · {evaluations.replace(' ', '')} evaluations")
        wait_until(lambda: page.locator(".st-key-export_json button").count() > 0, 60, "the Runs page to render")
        time.sleep(1.0)
        page.screenshot(path=str(ARTIFACTS / "4-runs.png"))
        browser.close()
