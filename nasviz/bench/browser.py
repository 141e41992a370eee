"""What a visitor waits for, measured in a real browser (Chromium driving the app as `make run` serves it).

``python -m nasviz bench browser --json`` prints, for each measurement, the seconds of every
repeat and their median, ``cold`` (the first page load after the server started: imports and
the first script run included) and ``warm`` (a new tab on the running server):

* ``first_page``: from opening the address to a usable Search page (its Start button);
* ``first_evaluation``: from clicking Start (default strategy on the embedded table) to the
  first evaluation counted on the page;
* ``tab_switch``: during a live run, from clicking a Search tab to its content (a figure or
  its one-sentence reason);
* ``stop_ack``: from clicking Stop to the page acknowledging it (the toast), and
  ``stop_status`` until the run's status reads ``stopped``;
* ``compare``: the Compare page with a 5,000-evaluation run in the store, from opening it to
  the regret figure: ``cold`` and ``warm`` in a new tab (the target), ``in_app`` from the
  sidebar of a page that has already loaded Plotly;
* ``floor``: a page of one small Plotly figure and nothing else
  (:mod:`nasviz.bench.plotly_floor_app`, served by plain ``streamlit run``), from opening it in a
  new tab to the figure, ``cold`` and ``warm`` as for Compare: what any Streamlit page with a
  Plotly figure costs this browser on this machine, measured in the same run as the figures above.

Targets (issue "The dashboard a teacher and a researcher want"): first page <= 3 s cold, first
evaluation <= 2 s, tab switch <= 1 s, Stop acknowledged <= 1.5 s, Compare <= 2 s; ``targets``
in the JSON says which are met. Needs Playwright and Chromium (``/usr/bin/chromium``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from nasviz.bench.dashboard import CHROMIUM, CHROMIUM_ARGS, REPO, SERVE_COMMAND, _answers, _free_port, build_long_run

DESCRIPTION = "Dashboard latency in a real browser: first page, first evaluation, tab switch, Stop, Compare."

TARGETS = {"first_page_cold": 3.0, "first_evaluation": 2.0, "tab_switch": 1.0, "stop_ack": 1.5, "compare": 2.0}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repeats", type=int, default=3, help="repeats of every measurement (default 3; medians)")
    parser.add_argument("--compare-evaluations", type=int, default=5000,
                        help="evaluations of the run in the store for the Compare measurement (default 5,000)")


#: The floor's page, served by plain ``streamlit run`` (:mod:`nasviz.bench.plotly_floor_app`).
FLOOR_COMMAND = (sys.executable, "-m", "streamlit", "run", str(Path(__file__).with_name("plotly_floor_app.py")))


@contextmanager
def server(store: Path, command: Sequence[str] = SERVE_COMMAND) -> Iterator[str]:
    """The app served as ``make run`` serves it (:mod:`nasviz.dashboard.serve`; or ``command``)
    on a free localhost port with ``store`` as its run store."""
    port = _free_port()
    env = {**os.environ, "NASVIZ_STORE": str(store)}
    env.pop("NASVIZ_SYNC_RUNS", None)
    proc = subprocess.Popen([*command, "--server.port", str(port),
                             "--server.address", "localhost", "--server.headless", "true"], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://localhost:{port}"
    try:
        start = time.perf_counter()
        while not _answers(f"{url}/_stcore/health"):
            if time.perf_counter() - start > 120:
                raise RuntimeError("the server did not answer within 120 s")
            time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _timed(action: Callable[[], None], done: Callable[[], bool], timeout: float = 60.0, poll: float = 0.02) -> float:
    """Seconds from ``action()`` until ``done()`` holds (``RuntimeError`` after ``timeout``)."""
    start = time.perf_counter()
    action()
    while not done():
        if time.perf_counter() - start > timeout:
            raise RuntimeError(f"not done within {timeout} s")
        time.sleep(poll)
    return time.perf_counter() - start


def _set_number(page, key: str, value: float, tries: int = 5) -> None:
    """Type ``value`` into the number input with widget key ``key`` until the page keeps it: under
    load a rerun in flight can redraw the box with its old value after the Enter."""
    box = page.locator(f".st-key-{key} input")
    for _ in range(tries):
        box.fill(f"{value:g}")
        box.press("Enter")
        time.sleep(0.5)
        try:
            if float(box.input_value()) == value:
                return
        except ValueError:
            pass
    raise RuntimeError(f"the {key!r} box did not keep {value:g} after {tries} tries (it shows {box.input_value()!r})")


def _metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label)
    return box.locator('[data-testid="stMetricValue"]').inner_text() if box.count() else ""


def _tab_content_shown(page, title: str) -> bool:
    panel = page.locator('[role="tabpanel"]:visible')
    if not panel.count():
        return False
    tab = page.get_by_role("tab", name=title)
    return (tab.count() > 0 and tab.first.get_attribute("aria-selected") == "true"
            and (panel.locator(".js-plotly-plot").count() > 0 or panel.locator('[data-testid="stAlert"]').count() > 0
                 or panel.locator('[data-testid="stDataFrame"]').count() > 0))


def one_session(url: str, browser) -> dict[str, float]:
    """One visitor: open the Search page, start a search, switch tabs while it runs, stop it."""
    out: dict[str, float] = {}
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(60_000)
    start_button = page.locator(".st-key-start button")
    out["first_page"] = _timed(lambda: page.goto(url), lambda: start_button.is_visible())
    # a search that keeps running while we look: a long budget and a pause after each step
    for key, value in (("budget", "1000"), ("step_delay", "0.5")):
        _set_number(page, key, float(value))
    time.sleep(1.0)  # let the form's reruns settle before timing
    out["first_evaluation"] = _timed(lambda: start_button.click(),
                                     lambda: _metric(page, "Evaluations")[:1] not in ("", "0"))
    time.sleep(2.0)  # a few steps in: a GP has been fitted
    for title in ("Hyperparameters", "Candidate pool"):
        out[f"tab_switch_{title}"] = _timed(lambda: page.get_by_role("tab", name=title).first.click(),
                                            lambda: _tab_content_shown(page, title))
    out["tab_switch"] = max(out["tab_switch_Hyperparameters"], out["tab_switch_Candidate pool"])
    toast = page.locator('[data-testid="stToast"]').filter(has_text="Stop requested")
    stop_button = page.locator(".st-key-stop button")

    def stop_acknowledged() -> bool:
        # The toast, or the button greyed out: a rerun that superseded the click's own rerun can take
        # the stop without drawing the toast, and then the button is disabled and cannot be pressed again.
        return toast.count() > 0 or stop_button.is_disabled()

    stop_start = time.perf_counter()
    try:
        _timed(stop_button.click, stop_acknowledged, timeout=15)
    except RuntimeError:  # the click was lost (it landed during a rerun): counted, then pressed again
        out["stop_clicks_lost"] = 1.0
        _timed(stop_button.click, stop_acknowledged)
    out["stop_ack"] = time.perf_counter() - stop_start  # from the first click: what the visitor waited
    page.get_by_text("Status: stopped").first.wait_for(timeout=60_000)
    out["stop_status"] = time.perf_counter() - stop_start
    page.close()
    return out


def compare_page(url: str, browser) -> float:
    """Compare opened in a new tab: the browser loads and compiles Plotly's bundle (4.7 MB) first."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(120_000)
    chart = page.locator(".st-key-chart_curves .js-plotly-plot")
    seconds = _timed(lambda: page.goto(f"{url}/compare"), lambda: chart.count() > 0, timeout=120)
    page.close()
    return seconds


def floor_page(url: str, browser) -> float:
    """The floor's page opened in a new tab, to its one figure."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(120_000)
    chart = page.locator(".js-plotly-plot")
    seconds = _timed(lambda: page.goto(url), lambda: chart.count() > 0, timeout=120)
    page.close()
    return seconds


def compare_in_app(url: str, browser) -> float:
    """Compare reached from the sidebar of a page that has drawn a figure (Architectures): what a
    visitor moving between pages waits for."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(120_000)
    page.goto(f"{url}/architectures")
    page.locator(".js-plotly-plot").first.wait_for()
    time.sleep(1.0)  # let the page settle
    link = page.locator('[data-testid="stSidebarNav"] a').filter(has_text="Compare").first
    chart = page.locator(".st-key-chart_curves .js-plotly-plot")
    seconds = _timed(link.click, lambda: chart.count() > 0, timeout=120)
    page.close()
    return seconds


def _summary(values: list[float]) -> dict[str, Any]:
    return {"median": statistics.median(values), "runs": [round(v, 3) for v in values]}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        raise RuntimeError(f"Chromium is not installed at {CHROMIUM}")
    cold: dict[str, list[float]] = {}
    warm: dict[str, list[float]] = {}
    compare: dict[str, list[float]] = {"cold": [], "warm": [], "in_app": []}
    floor: dict[str, list[float]] = {"cold": [], "warm": []}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        long_store = Path(tmp) / "long.sqlite"
        t0 = time.perf_counter()
        run_id, _, _ = build_long_run(long_store, int(args.compare_evaluations))
        from nasviz.store import RunStore

        RunStore(long_store).set_status(run_id, "finished")
        build_seconds = time.perf_counter() - t0
        for r in range(int(args.repeats)):
            with server(Path(tmp) / f"store{r}.sqlite") as url:  # a fresh server: the first visitor is cold
                for name, seconds in one_session(url, browser).items():
                    cold.setdefault(name, []).append(seconds)
                for name, seconds in one_session(url, browser).items():
                    warm.setdefault(name, []).append(seconds)
            with server(long_store) as url:
                compare["cold"].append(compare_page(url, browser))
                compare["warm"].append(compare_page(url, browser))
                compare["in_app"].append(compare_in_app(url, browser))
            with server(Path(tmp) / "floor.sqlite", FLOOR_COMMAND) as url:
                floor["cold"].append(floor_page(url, browser))
                floor["warm"].append(floor_page(url, browser))
        browser.close()
    result = {
        "repeats": int(args.repeats), "viewport": "1280x800",
        "cold": {k: _summary(v) for k, v in cold.items()},
        "warm": {k: _summary(v) for k, v in warm.items()},
        "compare": {k: _summary(v) for k, v in compare.items()},
        "floor": {k: _summary(v) for k, v in floor.items()},
        "compare_evaluations": int(args.compare_evaluations), "compare_store_build_seconds": build_seconds,
    }
    measured = {"first_page_cold": result["cold"]["first_page"]["median"],
                "first_evaluation": max(result["cold"]["first_evaluation"]["median"],
                                        result["warm"]["first_evaluation"]["median"]),
                "tab_switch": max(result["cold"]["tab_switch"]["median"], result["warm"]["tab_switch"]["median"]),
                "stop_ack": max(result["cold"]["stop_ack"]["median"], result["warm"]["stop_ack"]["median"]),
                "compare": max(result["compare"]["cold"]["median"], result["compare"]["warm"]["median"])}
    result["targets"] = {k: {"target": TARGETS[k], "measured": round(v, 3), "met": v <= TARGETS[k]}
                         for k, v in measured.items()}
    return result
