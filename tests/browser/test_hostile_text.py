"""One visitor's text on another visitor's page (issue 47, finding 2), in a real browser.

A table whose metric header is Markdown and HTML that would show a phishing link, load a beacon
image and restyle the page; a run made on it (its name is built from the header), a note with the
same text and a query parameter with it. Every page that shows them is opened in Chromium against
a real ``streamlit run app.py``; none may contain a link or image from them, load anything from
the beacon server on loopback, or turn their ``**`` / ``~~`` into bold or strike-through; the text
itself is on the page, character for character.
"""

from __future__ import annotations

import csv
import http.server
import threading
import time
from pathlib import Path

import pytest

from browser_helpers import ARTIFACTS, BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, streamlit_server, wait_until

pytestmark = [*BROWSER_MARKS, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


class _Beacon(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self):  # noqa: N802 - the standard library's name
        _Beacon.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture()
def beacon():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Beacon)
    _Beacon.hits = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


def _hostile(port: int) -> str:
    return (f"![x](http://127.0.0.1:{port}/beacon.png) [Session expired: sign in again](http://127.0.0.1:{port}/phish) "
            f"<img src=http://127.0.0.1:{port}/img.png> **bold** ~~strike~~ $x^2$ :red[red]")


@pytest.fixture()
def hostile_server(tmp_path, beacon):
    from nasviz.runner import start_run
    from nasviz.store import RunStore

    hostile = _hostile(beacon)
    with open(REPO / "data" / "nb201_cifar.csv", newline="") as f:
        rows = [r for r in csv.reader(line for line in f if not line.startswith("#"))][1:61]
    table = tmp_path / "hostile.csv"
    with open(table, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["arch", hostile])
        writer.writerows([[r[0], r[1]] for r in rows])
    store = tmp_path / "store.sqlite"
    result = start_run(RunStore(store), {"table": str(table), "metric": hostile, "strategy": "random", "budget": 8})
    RunStore(store).set_notes(result.run_id, hostile)
    with streamlit_server(store, tmp_path / "server.log") as url:
        yield url, result.run_id, hostile


#: page path -> (query string (``{run}``: the hostile run's id; ``{h}``: the hostile text), text the
#: page shows once drawn: the outside text itself where the page names the run)
PAGES = {
    "search": ("?run={run}", "Session expired: sign in again"),
    "runs": ("?run={run}", "Session expired: sign in again"),
    "compare": ("?runs={run}", "Final values (CSV)"),
    "kernels": ("?from=run&run={run}&n=8&kernels=hamming", "Distance vs performance difference"),
    "architectures": ("?a={h}", "Architecture A"),
}


def test_no_page_turns_outside_text_into_links_images_or_formatting(hostile_server, beacon):
    from urllib.parse import quote

    from playwright.sync_api import sync_playwright

    url, run_id, hostile = hostile_server
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 2000})
        page.set_default_timeout(60_000)
        for name, (query, drawn) in PAGES.items():
            page.goto(f"{url}/{name}" + query.format(run=run_id, h=quote(hostile)))
            wait_until(lambda: drawn in page.locator("body").inner_text().replace("\u2060", ""), 90, f"the {name} page to show {drawn!r}")
            time.sleep(3.0)  # the rest of the page (figures) after the text waited for
            page.screenshot(path=str(ARTIFACTS / f"hostile-{name}.png"), full_page=True)
            where = f"on the {name} page"
            links = page.locator(f"a[href*='127.0.0.1:{beacon}']")
            assert links.count() == 0, (f"a link from outside text {where}: "
                                        + " | ".join(links.nth(k).evaluate("e => e.closest('[data-testid]')"
                                                                           ".getAttribute('data-testid') + ': ' "
                                                                           "+ e.outerHTML.slice(0, 200)")
                                                     for k in range(links.count())))
            assert page.locator(f"img[src*='127.0.0.1:{beacon}']").count() == 0, f"an image from outside text {where}"
            assert page.locator(f"svg a[href*='127.0.0.1:{beacon}'], svg [href*='127.0.0.1:{beacon}']").count() == 0
            for tag, word in (("strong", "bold"), ("b", "bold"), ("del", "strike"), ("s", "strike")):
                styled = page.locator(tag).filter(has_text=word)
                assert styled.count() == 0, f"<{tag}>{word}</{tag}> from outside text {where}"
            assert page.locator('[data-testid="stException"]').count() == 0, f"a traceback {where}"
            if name in ("runs", "search"):  # the run's name (and the note) are shown, as text
                body = page.locator("body").inner_text().replace("\u2060", "")  # the word joiners that unlink
                assert "[Session expired: sign in again](http://127.0.0.1:" in body, where
        browser.close()
    assert _Beacon.hits == [], f"the browser fetched {_Beacon.hits} from the beacon server"
