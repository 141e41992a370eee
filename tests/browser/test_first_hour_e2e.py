"""The first hour (issue 46), in real Chromium against a real server on a fresh store.

The default search is started with every setting at its default (NAS-Bench-201 CIFAR-10, the
default strategy, budget 100, a one-second pause after each step) and runs to its end; random
search with the same seed is run from the command line into the same store (the CLI and the page
share table, budget and seed); the Compare page then draws the default's regret below random's.
Screenshots of the Learn, Architectures and Kernels pages at 1400 px, 390 px and in dark mode go to
``test-artifacts/first-hour-*.png``.

The default search spends most of its hundred seconds in its teaching pause, so the command-line
search and the pages at every width are done while it runs (as a visitor reads the other pages
while a search runs), and the Compare page once both searches have ended.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from browser_helpers import (ARTIFACTS, assert_nothing_wider_than_the_screen, BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, streamlit_server, wait_until,
                             whole_page_screenshot)

pytestmark = [*BROWSER_MARKS, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def fresh_server(tmp_path):
    """A server on the embedded default table with an empty store: ``(url, store path)``."""
    from nasviz.dashboard.sources import default_table_path
    from nasviz.store import RunStore

    if default_table_path() is None:
        pytest.skip("no default data: data/nb201_cifar.csv and the shared NAS-Bench-201 table are both absent")
    store = tmp_path / "store.sqlite"
    try:
        with streamlit_server(store, tmp_path / "server.log") as url:
            yield url, store
    finally:
        for run in RunStore(store).list_runs() if store.exists() else []:
            if run.status == "running":
                RunStore(store).request_stop(run.id)


def _metric(page, label: str) -> str | None:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label)
    return box.first.locator('[data-testid="stMetricValue"]').inner_text().strip() if box.count() else None


def _final_regrets(page) -> dict[str, float]:
    """The Compare page's curves as Plotly holds them: each trace's last regret, by its name."""
    return page.evaluate("""() => {
        const plot = document.querySelector('.stPlotlyChart .js-plotly-plot');
        const out = {};
        for (const t of (plot._fullData || [])) {  // decoded: the figure's arrays arrive base64-encoded
            if (!t.name || !t.y || !t.y.length || t.showlegend === false) continue;
            const ys = Array.from(t.y).filter(v => v !== null && !Number.isNaN(v));
            if (ys.length) out[t.name] = ys[ys.length - 1];
        }
        return out;
    }""")


def _pages_read_at_every_width(browser, server) -> None:
    """The Learn, Architectures and Kernels pages at 1400 px, 390 px and in dark mode: drawn, no
    traceback, nothing wider than a phone's screen; a screenshot of each."""
    for width, scheme in ((1400, "light"), (390, "light"), (1400, "dark")):
        view = browser.new_page(viewport={"width": width, "height": 1200}, color_scheme=scheme,
                                is_mobile=width < 500, has_touch=width < 500)
        view.set_default_timeout(60_000)
        for name, drawn in (("learn", "Run this lesson"), ("architectures", "neighbours of B"),
                            ("kernels", "Distance vs performance difference")):
            view.goto(f"{server}/{name}")
            wait_until(lambda: drawn in view.locator("body").inner_text(), 120, f"{name} at {width} px, {scheme}")
            time.sleep(1.5)
            whole_page_screenshot(view, ARTIFACTS / f"first-hour-{name}-{width}-{scheme}.png")
            assert view.locator('[data-testid="stException"]').count() == 0, (name, width, scheme)
            if width < 500:  # nothing wider than a phone's screen
                assert_nothing_wider_than_the_screen(view, name)
        view.close()


def test_the_default_search_beats_random_on_compare_and_the_pages_read_at_every_width(fresh_server):
    from playwright.sync_api import sync_playwright

    from nasviz.store import RunStore

    server, store = fresh_server
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        page.set_default_timeout(60_000)
        page.goto(server)
        start = page.locator(".st-key-start button")
        wait_until(lambda: start.count() > 0, 60, "the Start button")
        start.click()  # every setting at its default
        # the default search is run 1: only then does the command line add run 2
        wait_until(lambda: store.exists() and RunStore(store).list_runs(), 60, "the default search in the store")
        cli = subprocess.Popen([sys.executable, "-m", "nasviz", "run", "--strategy", "random", "--store", str(store)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)  # the CLI's defaults: same table, budget, seed
        try:
            _pages_read_at_every_width(browser, server)
            _, stderr = cli.communicate(timeout=300)
        finally:
            if cli.poll() is None:
                cli.kill()
                cli.communicate()
        assert cli.returncode == 0, stderr[-2000:]
        wait_until(lambda: _metric(page, "Evaluations") == "100 / 100", 400, "the default search to finish")

        page.goto(f"{server}/compare?runs=1,2")
        wait_until(lambda: page.locator(".stPlotlyChart .js-plotly-plot").count() > 0, 90, "the Compare curves")
        time.sleep(2.0)
        final = wait_until(lambda: _final_regrets(page) or None, 30, "the curves' data")
        default = [v for name, v in final.items() if "bo-tw2g-hamming-ei" in name]
        random = [v for name, v in final.items() if name.startswith("random")]
        assert default and random, final
        assert default[0] < random[0], final  # regret: the default's best so far lies above random's
        whole_page_screenshot(page, ARTIFACTS / "first-hour-compare-1400.png")
        browser.close()
