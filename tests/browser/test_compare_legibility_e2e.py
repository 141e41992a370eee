"""The Compare page's labels, in real Chromium (issue 46: colliding parallel-coordinate labels).

Two searches of 100 evaluations on the default table are run from the command line into a fresh
store; the Compare page then draws them, and no two texts of the parallel-coordinates chart may be
drawn over each other, at 1400 px and at 390 px. Screenshots: ``test-artifacts/compare-parallel-*.png``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from browser_helpers import (ARTIFACTS, BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, overlapping_texts, streamlit_server,
                             wait_until)

pytestmark = [*BROWSER_MARKS, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def test_no_parallel_coordinate_labels_collide(tmp_path):
    from playwright.sync_api import sync_playwright

    from nasviz.dashboard.sources import default_table_path

    if default_table_path() is None:
        pytest.skip("no default data: data/nb201_cifar.csv and the shared NAS-Bench-201 table are both absent")
    store = tmp_path / "store.sqlite"
    for strategy in ("random", "evolution"):
        done = subprocess.run([sys.executable, "-m", "nasviz", "run", "--strategy", strategy, "--store", str(store)],
                              capture_output=True, text=True, cwd=REPO, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
    ARTIFACTS.mkdir(exist_ok=True)
    with streamlit_server(store, tmp_path / "server.log") as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for width in (1400, 390):
            page = browser.new_page(viewport={"width": width, "height": 1400}, is_mobile=width < 500,
                                    has_touch=width < 500)
            page.set_default_timeout(60_000)
            page.goto(f"{server}/compare?runs=1,2")
            chart = ".st-key-chart_parallel"
            wait_until(lambda: page.locator(f"{chart} .parcoords").count() > 0, 120, f"the parallel coordinates at {width} px")
            time.sleep(2.0)
            page.locator(chart).scroll_into_view_if_needed()
            page.locator(chart).screenshot(path=str(ARTIFACTS / f"compare-parallel-{width}.png"))
            assert overlapping_texts(page, chart) == [], width
            page.close()
        browser.close()
