"""Explorer work a visitor walks away from, in a real browser (issue 47): the Kernels page's Cancel
button and a closed tab each end the worker process their request started, long before it would
have finished, and nothing is cached from it. The server is a real ``streamlit run app.py``; the
worker processes are found by their command line (``python -m nasviz.workers.explorer JOB.json``
with the job file in this test's folder)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from browser_helpers import BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, streamlit_server, wait_until

pytestmark = BROWSER_MARKS

#: A minute or more of the random-walk kernel on this machine: long enough to walk away from.
HEAVY = "n=700&kernels=rw"
PROGRESS = "Computing in worker processes"


def explorer_workers(folder: Path) -> list[int]:
    """PIDs of the explorer worker processes whose job file lies under ``folder``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"nasviz.workers.explorer" in argv and any(str(folder).encode() in a for a in argv):
            found.append(int(pid))
    return found


@pytest.fixture()
def server(tmp_path):
    # streamlit_server lifts the limit on a request's cost: the test's request must not be refused
    # because the machine is busy, and it must still be running when the test leaves
    with streamlit_server(tmp_path / "store.sqlite", tmp_path / "server.log") as url:
        yield url


def _open_heavy_request(browser, url: str, folder: Path):
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    page.set_default_timeout(60_000)
    page.goto(f"{url}/kernels?{HEAVY}")
    wait_until(lambda: page.get_by_text(PROGRESS).count() > 0, 120, "the Kernels page's progress bar", page=page)
    wait_until(lambda: explorer_workers(folder), 30, "the request's worker process")
    return page


@pytest.mark.slow
def test_cancel_and_a_closed_tab_each_end_the_kernel_workers(server, tmp_path):
    from playwright.sync_api import sync_playwright

    cache = tmp_path / "explorer-cache"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        # Cancel: the page says so at once and the worker is gone within the reaper's second
        page = _open_heavy_request(browser, server, tmp_path)
        page.locator(".st-key-k_matrices_cancel button").click()
        wait_until(lambda: page.get_by_text("Cancelled: change the request, or compute again.").count() > 0, 30,
                   "the page to say the request was cancelled")
        # within the reaper's tick, well before the 10-s heartbeat would have ended it anyway
        wait_until(lambda: not explorer_workers(tmp_path), 5, "the worker to end after Cancel")
        assert page.locator('[data-testid="stException"]').count() == 0
        assert not list(cache.glob("*.npz")), "a cancelled request left a result"
        page.close()
        # a closed tab: its session stops polling, and the job is killed after the heartbeat (10 s)
        page = _open_heavy_request(browser, server, tmp_path)
        closed = time.monotonic()
        page.close()
        wait_until(lambda: not explorer_workers(tmp_path), 30, "the worker to end after its tab closed")
        assert time.monotonic() - closed < 30
        assert not list(cache.glob("*.npz")), "the closed tab's request ran to the end"
        browser.close()
