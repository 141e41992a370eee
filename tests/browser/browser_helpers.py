"""Shared plumbing for the browser tests: Chromium, a real ``streamlit run app.py``, waiting."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
# Without the background-networking flags Chromium keeps trying hosts a closed network refuses.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium is not installed at /usr/bin/chromium "
                                                       "(apt-get install chromium; CI does)"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fill_inputs(page, values: dict[str, str], settle: float = 1.0) -> None:
    """Type each value into the Streamlit input whose widget key is the dict key, press Enter and
    give the app ``settle`` seconds to rerun (each change reruns the page)."""
    for key, value in values.items():
        box = page.locator(f".st-key-{key} input")
        box.fill(value)
        box.press("Enter")
        time.sleep(settle)


def wait_until(condition, timeout: float, what: str, poll: float = 0.25, *, page=None, screenshot: str | None = None):
    """Poll ``condition()`` until it is truthy; fail naming ``what`` after ``timeout`` seconds.

    With ``page`` the failure also says what the page's main area showed instead (a refusal, an
    error), and with ``screenshot`` saves one under that name in ``test-artifacts/``."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(poll)
    message = f"timed out after {timeout} s waiting for {what}"
    if page is not None:
        if screenshot:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / screenshot), full_page=True)
        message += f"; the page shows: {page.locator('[data-testid=stMain]').inner_text()[:800]!r}"
    raise AssertionError(message)


@contextlib.contextmanager
def streamlit_server(store: Path, log_path: Path) -> Iterator[str]:
    """Run ``streamlit run app.py`` on a free localhost port with ``store`` as the run store.

    The explorer's limits on a request's CPU time are lifted, as in the app tests
    (``tests/app/conftest.py``), unless the test's environment sets them: a request's cost is
    estimated from speeds measured on this machine, and under a loaded test run a request near
    the default limit can flip to refused, so a page shows a sentence instead of its figures."""
    port = free_port()
    env = {"NASVIZ_MAX_EXPLORER_SECONDS": "1e9", "NASVIZ_MAX_EXPLORER_SECONDS_TOTAL": "1e9", **os.environ,
           "NASVIZ_STORE": str(store)}
    env.pop("NASVIZ_SYNC_RUNS", None)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                                 "--server.address", "localhost", "--server.headless", "true"],
                                cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://localhost:{port}"

        def healthy() -> bool:
            try:
                return urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200
            except OSError:
                return False

        try:
            wait_until(healthy, 60, "the Streamlit server to answer")
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def whole_page_screenshot(page, path, settle: float = 0.5) -> None:
    """A screenshot of the whole app: Streamlit scrolls inside its main container, so Playwright's
    ``full_page`` stops at the viewport; the viewport is stretched to the content's height for the
    shot and restored after."""
    size = page.viewport_size
    height = page.evaluate("""() => {
        const main = document.querySelector('[data-testid="stMain"]') || document.body;
        return Math.max(main.scrollHeight, document.documentElement.scrollHeight);
    }""")
    page.set_viewport_size({"width": size["width"], "height": min(int(height) + 40, 16000)})
    time.sleep(settle)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)


def overlapping_texts(page, selector: str, tolerance: float = 1.0) -> list[tuple[str, str]]:
    """Pairs of visible SVG texts inside ``selector`` whose boxes overlap by more than
    ``tolerance`` pixels each way (labels drawn over each other); ``[]`` when none do."""
    return page.evaluate("""([selector, tol]) => {
        const boxes = [];
        for (const t of document.querySelectorAll(selector + ' text')) {
            const text = (t.textContent || '').trim();
            const r = t.getBoundingClientRect();
            const style = window.getComputedStyle(t);
            if (!text || r.width < 1 || r.height < 1 || style.visibility === 'hidden' || style.opacity === '0') continue;
            boxes.push([text, r]);
        }
        const out = [];
        for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
            const a = boxes[i][1], b = boxes[j][1];
            const dx = Math.min(a.right, b.right) - Math.max(a.left, b.left);
            const dy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
            if (dx > tol && dy > tol) out.push([boxes[i][0], boxes[j][0]]);
        }
        return out;
    }""", [selector, tolerance])


def assert_nothing_wider_than_the_screen(page, what: str) -> None:
    """Neither the document nor Streamlit's main container scrolls sideways (a phone-width check)."""
    widths = page.evaluate("""() => {
        const main = document.querySelector('[data-testid="stMain"]') || document.body;
        return [document.documentElement.scrollWidth, main.scrollWidth, window.innerWidth];
    }""")
    assert max(widths[:2]) <= widths[2] + 1, (what, widths)
