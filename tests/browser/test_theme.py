"""Dark mode and legibility in a real browser: the page follows the visitor's system colour scheme
(no theme is pinned in ``.streamlit/config.toml``), the figures have no opaque background of their
own, and NAS-Bench-201 strings in labels keep their ``~`` (no Markdown strike-through).
Screenshots of the Search page in both schemes go to ``test-artifacts/``."""

from __future__ import annotations

import re

import pytest

from nasviz.dashboard.sources import default_table_path

from browser_helpers import ARTIFACTS, BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, streamlit_server, wait_until

pytestmark = BROWSER_MARKS


def _luminance(css_colour: str) -> float:
    """0 (black) .. 1 (white) of a computed ``rgb(...)`` / ``rgba(...)`` colour."""
    r, g, b = (int(x) for x in re.findall(r"\d+", css_colour)[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


@pytest.fixture()
def server(tmp_path):
    if default_table_path() is None:
        pytest.skip("no default data: data/nb201_cifar.csv and the shared NAS-Bench-201 table are both absent")
    with streamlit_server(tmp_path / "store.sqlite", tmp_path / "server.log") as url:
        yield url


@pytest.mark.slow
def test_the_search_page_follows_the_system_colour_scheme(server):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    seen = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for scheme in ("light", "dark"):
            page = browser.new_page(viewport={"width": 1280, "height": 800}, color_scheme=scheme)
            page.set_default_timeout(60_000)
            page.goto(f"{server}/?space=nb201")
            page.locator(".st-key-start button").wait_for()
            # the inspector's graph: a figure on the page
            page.get_by_text("Inspect an architecture").click()
            box = page.locator(".st-key-inspect input")
            box.fill("|nor_conv_3x3~0|+|skip_connect~0|nor_conv_1x1~1|+|avg_pool_3x3~0|none~1|nor_conv_3x3~2|")
            box.press("Enter")
            wait_until(lambda: page.locator(".js-plotly-plot").count() > 0, 60, "the architecture figure")
            label = page.locator('[data-testid="stWidgetLabel"]').filter(has_text="Architecture string")
            assert label.locator("del, s").count() == 0  # '~' is not Markdown strike-through
            assert "|nor_conv_3x3~0|" in label.inner_text()
            app_bg = page.locator('[data-testid="stApp"]').evaluate("e => getComputedStyle(e).backgroundColor")
            plot_bg = page.locator(".js-plotly-plot .bg").first.evaluate("e => e.getAttribute('style') || ''")
            page.screenshot(path=str(ARTIFACTS / f"search-{scheme}.png"))
            seen[scheme] = (_luminance(app_bg), plot_bg)
            page.close()
        browser.close()
    assert seen["light"][0] > 0.8 and seen["dark"][0] < 0.2, seen
    for scheme, (_, plot_bg) in seen.items():  # the plot area lets the theme's background through
        assert "fill-opacity: 0" in plot_bg or "rgba(0, 0, 0, 0)" in plot_bg, (scheme, plot_bg)
