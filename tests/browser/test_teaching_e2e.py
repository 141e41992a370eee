"""Teaching mode, the evaluations table, a phone-width page and a shared link, in real Chromium.

A short search on the default data runs to its end; the test then turns "Follow the newest step"
off, replays step 1 with the slider (keyboard, as a visitor would) and reads the "What happened in
step 1" panel; opens the Evaluations tab; reopens the run at 390 px wide and checks that nothing
overflows sideways; opens a Kernels link with settings in it. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import re
import time

import pytest
from test_e2e import server  # noqa: F401 - the fixture: a server on the default data

from browser_helpers import ARTIFACTS, BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, fill_inputs, wait_until

pytestmark = BROWSER_MARKS

BUDGET = 12


def _metric(page, label: str) -> str | None:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label)
    return box.first.locator('[data-testid="stMetricValue"]').inner_text().strip() if box.count() else None


@pytest.mark.slow
def test_replay_a_step_read_the_table_on_a_phone_and_share_a_link(server):  # noqa: F811
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1600})
        page.set_default_timeout(60_000)
        page.goto(server)
        fill_inputs(page, {"budget": str(BUDGET)})
        wait_until(lambda: page.locator(".st-key-budget input").input_value() == str(BUDGET), 30, "the budget")
        page.locator(".st-key-start button").click()
        wait_until(lambda: _metric(page, "Evaluations") == f"{BUDGET} / {BUDGET}", 180, "the search to finish")
        run_id = re.search(r"[?&]run=(\d+)", page.url).group(1)

        # teaching: replay the first step
        # the run has ended: the slider is there without a toggle (issue 46)
        # (the last evaluation is stored a moment before the run's status: wait for the page to see it end)
        wait_until(lambda: page.locator(".st-key-follow_latest").count() == 0, 30, "the follow toggle to go")
        slider = page.locator(".st-key-replay_step input[type='range']")
        wait_until(lambda: slider.count() > 0, 30, "the step slider")
        slider.first.focus()
        slider.first.press("Home")
        panel = page.locator('[data-testid="stExpander"]').filter(has_text="What happened in step")
        def shown_step() -> int | None:
            found = re.search(r"What happened in step (\d+)", panel.first.inner_text()) if panel.count() else None
            return int(found.group(1)) if found else None

        wait_until(lambda: shown_step() == 1, 60, "the panel to show step 1")
        assert "initial design" in panel.first.inner_text()
        page.screenshot(path=str(ARTIFACTS / "teach-1-replay-step-1.png"), full_page=True)
        slider.first.press("End")
        wait_until(lambda: (shown_step() or 0) > 1, 60, "the panel to follow the slider")
        page.screenshot(path=str(ARTIFACTS / "teach-2-replay-last-step.png"), full_page=True)

        # the evaluations table
        page.get_by_role("tab", name="Evaluations").click()
        table = page.locator('[data-testid="stDataFrame"]')
        wait_until(lambda: table.count() > 0 and table.first.is_visible(), 60, "the evaluations table")
        time.sleep(1.0)
        table.first.screenshot(path=str(ARTIFACTS / "teach-3-evaluations-table.png"))

        # a phone: the same run, 390 px wide, nothing wider than the screen
        phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
        phone.set_default_timeout(60_000)
        phone.goto(f"{server}/?run={run_id}")
        wait_until(lambda: _metric(phone, "Evaluations") == f"{BUDGET} / {BUDGET}", 90, "the run on the phone")
        time.sleep(2.0)
        overflow = phone.evaluate("""() => {
            const main = document.querySelector('[data-testid="stMain"]') || document.body;
            return [document.documentElement.scrollWidth, main.scrollWidth];
        }""")
        assert max(overflow) <= 390 + 1, overflow
        phone.screenshot(path=str(ARTIFACTS / "teach-4-phone-390px.png"), full_page=True)
        phone.close()

        # a shared link opens the view it names
        page.goto(f"{server}/kernels?kernels=wl&n=30&seed=1")
        caption = page.get_by_text("30 architectures from the table")
        wait_until(lambda: caption.count() > 0, 90, "the Kernels page to take N from the link")
        # the link's kernel only, not the default pair (tw2g, wl)
        wl = page.get_by_text("wl: distance components")
        wait_until(lambda: wl.count() > 0, 90, "the WL distance panels")
        assert page.get_by_text("tw2g: distance components").count() == 0
        browser.close()
