"""The explorer pages in a real browser: Chromium opens Kernels, Architectures, Interpretability and
Compare on ``streamlit run app.py`` with the default data and two finished runs in the store,
checks that each page draws its figures without an exception, and saves a screenshot of each to
``test-artifacts/`` (look at them)."""

from __future__ import annotations

import time

import pytest

from nasviz.dashboard import launching, sources

from browser_helpers import (
    ARTIFACTS, BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, fill_inputs, streamlit_server, wait_until,
)

pytestmark = BROWSER_MARKS

#: page link name -> (screenshot, number of plotly figures the page draws at least, text its last element shows)
PAGES = {
    "Kernels": ("5-kernels.png", 4, "Per trial: a GP"),
    "Architectures": ("6-architectures.png", 4, "neighbours of B"),
    "Interpretability": ("7-interpretability.png", 6, "holding operations with a negative mean gradient"),
    "Compare": ("8-compare.png", 3, "Evaluations (CSV)"),
}


@pytest.fixture()
def server_with_runs(tmp_path):
    table = sources.default_table_path()
    if table is None:
        pytest.skip("no default data: data/nb201_cifar.csv and the shared NAS-Bench-201 table are both absent")
    store = tmp_path / "store.sqlite"
    source = sources.DataSource.from_table(table, sources.table_from_path(table))
    for strategy in ("random", "evolution"):
        for seed in range(2):
            launching.start_run(store, launching.search_config(source, strategy=strategy, budget=20, seed=seed),
                                source=source, background=False)
    with streamlit_server(store, tmp_path / "server.log") as url:
        yield url


@pytest.mark.slow
def test_every_explorer_page_renders_its_figures(server_with_runs):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 2600})
        page.set_default_timeout(90_000)
        page.goto(server_with_runs)
        wait_until(lambda: page.get_by_role("link", name="Kernels").count() > 0, 60, "the navigation")
        for name, (shot, n_figures, last) in PAGES.items():
            page.get_by_role("link", name=name).click()
            wait_until(lambda: page.get_by_role("heading", name=name if name != "Compare" else "Compare runs").count() > 0,
                  60, f"the {name} page")
            figures = page.locator(".stPlotlyChart .main-svg")
            wait_until(lambda: page.locator(".stPlotlyChart").count() >= n_figures, 120, f"{n_figures} figures on {name}",
                       page=page, screenshot=f"timeout-{shot}")
            wait_until(lambda: figures.count() >= n_figures, 60, f"the {name} figures to draw")
            end = page.get_by_text(last)
            wait_until(lambda: end.count() > 0 and end.first.is_visible(), 120, f"the end of the {name} page")
            # elements left from the previous page fade out until the rerun replaces them
            stale = page.locator('[data-stale="true"]')
            wait_until(lambda: stale.count() == 0, 60, f"the {name} page to finish its rerun", poll=0.5)
            time.sleep(1.5)
            assert page.locator('[data-testid="stException"]').count() == 0, f"exception on {name}"
            page.screenshot(path=str(ARTIFACTS / shot), full_page=True)
            if name == "Kernels":  # run the surrogate protocol (2 short trials) and look at its figure
                fill_inputs(page, {"k_trials": "2", "k_test": "50"})
                page.locator(".st-key-k_run_surrogate button").click()
                chart = page.locator(".st-key-chart_surrogate .main-svg")
                wait_until(lambda: chart.count() > 0, 180, "the surrogate-quality figure")
                time.sleep(1.5)
                assert page.locator('[data-testid="stException"]').count() == 0
                page.locator(".st-key-chart_surrogate").screenshot(path=str(ARTIFACTS / "5b-surrogate.png"))
        # Compare: launch a study (random + evolution, 1 seed, 10 evaluations) in the background
        page.get_by_text("Launch a study").click()
        fill_inputs(page, {"c_seeds": "1", "c_budget": "10"})
        page.locator(".st-key-c_launch button").click()
        done = page.get_by_text("Study: 20 / 20 evaluations, 0 runs still running")
        wait_until(lambda: done.count() > 0, 180, "the study's two background runs to finish")
        # the picker now holds the study's two runs (ids 5 and 6, after the fixture's four)
        picker = page.locator(".st-key-c_selected")
        wait_until(lambda: picker.get_by_text("5: random seed 0").count() > 0
                   and picker.get_by_text("6: evolution seed 0").count() > 0, 60, "the study's runs among the compared runs")
        time.sleep(2.0)
        assert page.locator('[data-testid="stException"]').count() == 0
        page.screenshot(path=str(ARTIFACTS / "8b-compare-study.png"), full_page=True)
        browser.close()
