"""The explorer pages in a real browser: Chromium opens Kernels, Architectures, Interpretability and
Compare on ``streamlit run app.py`` with the default data and two finished runs in the store,
checks that each page draws its figures without an exception, and saves a screenshot of each to
``test-artifacts/`` (look at them)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from nasviz import live

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium is not installed at /usr/bin/chromium "
                                                       "(apt-get install chromium; CI does)"),
]

#: page link name -> (screenshot, number of plotly figures the page draws at least, text its last element shows)
PAGES = {
    "Kernels": ("5-kernels.png", 4, "Per trial: a GP"),
    "Architectures": ("6-architectures.png", 4, "neighbours of B"),
    "Interpretability": ("7-interpretability.png", 6, "Edges holding operations"),
    "Compare": ("8-compare.png", 3, "Evaluations (CSV)"),
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(condition, timeout: float, what: str, poll: float = 0.25):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


@pytest.fixture()
def server_with_runs(tmp_path):
    table = live.default_table_path()
    if table is None:
        pytest.skip("no default data: data/nb201_digits.csv and the shared NAS-Bench-201 table are both absent")
    store = tmp_path / "store.sqlite"
    source = live.DataSource.from_table(table, live.table_from_path(table))
    for strategy in ("random", "evolution"):
        for seed in range(2):
            live.start_run(store, live.make_config(source, strategy=strategy, budget=20, seed=seed), background=False)
    port = _free_port()
    env = {**os.environ, "NASVIZ_STORE": str(store)}
    env.pop("NASVIZ_SYNC_RUNS", None)
    log = open(tmp_path / "server.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             "--server.address", "localhost", "--server.headless", "true"],
                            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://localhost:{port}"

    def healthy():
        try:
            return urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200
        except OSError:
            return False

    try:
        _wait(healthy, 60, "the Streamlit server to answer")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def test_every_explorer_page_renders_its_figures(server_with_runs):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 2600})
        page.set_default_timeout(90_000)
        page.goto(server_with_runs)
        _wait(lambda: page.get_by_role("link", name="Kernels").count() > 0, 60, "the navigation")
        for name, (shot, n_figures, last) in PAGES.items():
            page.get_by_role("link", name=name).click()
            _wait(lambda: page.get_by_role("heading", name=name if name != "Compare" else "Compare runs").count() > 0,
                  60, f"the {name} page")
            figures = page.locator(".stPlotlyChart .main-svg")
            _wait(lambda: page.locator(".stPlotlyChart").count() >= n_figures, 120, f"{n_figures} figures on {name}")
            _wait(lambda: figures.count() >= n_figures, 60, f"the {name} figures to draw")
            end = page.get_by_text(last)
            _wait(lambda: end.count() > 0 and end.first.is_visible(), 120, f"the end of the {name} page")
            # elements left from the previous page fade out until the rerun replaces them
            stale = page.locator('[data-stale="true"]')
            _wait(lambda: stale.count() == 0, 60, f"the {name} page to finish its rerun", poll=0.5)
            time.sleep(1.5)
            assert page.locator('[data-testid="stException"]').count() == 0, f"exception on {name}"
            page.screenshot(path=str(ARTIFACTS / shot), full_page=True)
            if name == "Kernels":  # run the surrogate protocol (2 short trials) and look at its figure
                for key, value in (("k_trials", "2"), ("k_test", "50")):
                    box = page.locator(f".st-key-{key} input")
                    box.fill(value)
                    box.press("Enter")
                    time.sleep(1.0)
                page.locator(".st-key-k_run_surrogate button").click()
                chart = page.locator(".st-key-chart_surrogate .main-svg")
                _wait(lambda: chart.count() > 0, 180, "the surrogate-quality figure")
                time.sleep(1.5)
                assert page.locator('[data-testid="stException"]').count() == 0
                page.locator(".st-key-chart_surrogate").screenshot(path=str(ARTIFACTS / "5b-surrogate.png"))
        # Compare: launch a study (random + evolution, 1 seed, 10 evaluations) in the background
        page.get_by_text("Launch a study").click()
        for key, value in (("c_seeds", "1"), ("c_budget", "10")):
            box = page.locator(f".st-key-{key} input")
            box.fill(value)
            box.press("Enter")
            time.sleep(1.0)
        page.locator(".st-key-c_launch button").click()
        done = page.get_by_text("Study: 20 / 20 evaluations, 0 run(s) still running")
        _wait(lambda: done.count() > 0, 180, "the study's two background runs to finish")
        _wait(lambda: page.get_by_text("study random seed 0").count() + page.get_by_text("random seed 0 (10/10").count() > 0,
              60, "the study's runs among the compared runs")
        time.sleep(2.0)
        assert page.locator('[data-testid="stException"]').count() == 0
        page.screenshot(path=str(ARTIFACTS / "8b-compare-study.png"), full_page=True)
        browser.close()
