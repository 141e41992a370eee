"""A classroom on one server: page latency for visitors who only browse, alone and in a class.

``python -m nasviz bench classroom`` starts the app on loopback as ``make run`` does and drives it
with simulated visitors, all from one asyncio loop, through one of two clients (``--client``):

* ``browser``: one headless Chromium, one context per visitor. A page's seconds run from opening
  its address to its content drawn (Search: the Start button; Kernels: a figure; Compare: its
  heading): the server's work *and* the browser's. With twenty contexts on a small machine the
  renderers take the CPU the server needs, so this measures the browser as much as the server.
* ``protocol``: each visitor speaks Streamlit's own websocket protocol
  (:mod:`nasviz.bench.stream_visitor`), no browser. Each page opened is a new session (as an
  address load is) and its seconds run from sending the ``rerun_script`` request for the page to
  the ``script_finished`` message of the whole-page run whose deltas hold the same content (the
  Start button widget; a Plotly chart; the "Compare runs" heading): the server's time alone,
  without the websocket's opening and without any drawing.

The phases, with either client:

1. **alone**: one visitor browses Search, Kernels (the default request) and Compare, ``--rounds``
   times, timed as above;
2. **crowd**: the class's browsing visitors at once, no heavy visitor: what sharing one server
   process costs by itself (the sessions' scripts take turns in one Python process);
3. **class**: ``--visitors`` visitors at once. The ``--heavy`` ones each start a paced search
   (``--pause`` seconds after each step; over the protocol: the page's budget, pause and seed
   boxes and its Start button sent as widget values, so the page starts it as for a click) and
   open Kernels with a heavy request of their own (``?n=...&kernels=...&seed=i``, computed in
   worker processes within the server's budgets, or refused with one sentence), staying until the
   others are done; the others browse as the lone visitor did, timed the same way.

The JSON records the ``client`` and reports p50 / p95 per page for each phase, ``ratio_p95``
(class / alone, the issue's goal <= 2), ``ratio_p95_to_crowd`` (class / crowd: what the heavy
visitors add to the browsing ones, also checked against 2), ``lost`` (visitors whose pages never arrived, searches that never
started) and each search's median seconds between steps against its pause (``slowed``: more than
pause + 1 s).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator

from websockets.exceptions import ConnectionClosed, InvalidHandshake

from nasviz.bench.dashboard import CHROMIUM, CHROMIUM_ARGS, REPO, SERVE_COMMAND, _answers, _free_port
from nasviz.bench.stream_visitor import PageRun, StreamVisitor, widget_value

DESCRIPTION = "Classroom load: browsing visitors' page latency alone and beside paced searches and heavy Kernels requests."

#: page -> (path, selector that is there once the page has drawn its content)
PAGES = {
    "search": ("", ".st-key-start button"),
    "kernels": ("/kernels", ".stPlotlyChart"),
    "compare": ("/compare", "h1:has-text('Compare runs')"),
}


#: Searches run from the command line into the store before the server starts (default table,
#: budget and seed): what Compare draws in every phase.
PRESTORED = ("random", "evolution")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--client", choices=("browser", "protocol"), default="browser",
                        help="visitors as Chromium contexts (pages drawn) or as Streamlit protocol sessions "
                             "(no browser: the server's time alone; default browser)")
    parser.add_argument("--visitors", type=int, default=20, help="visitors at once in the class phase (default 20)")
    parser.add_argument("--heavy", type=int, default=None,
                        help="of them, how many start a search and a heavy Kernels request (default half)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of Search, Kernels, Compare per browsing visitor")
    parser.add_argument("--pause", type=float, default=1.0, help="pause after each step of the visitors' searches (s)")
    parser.add_argument("--heavy-request", default="n=100&kernels=otmann,rw",
                        help="the heavy visitors' Kernels query (each adds its own seed)")
    parser.add_argument("--explorer-seconds", type=float, default=120.0,
                        help="NASVIZ_MAX_EXPLORER_SECONDS of the server (per visitor; default 120)")
    parser.add_argument("--explorer-seconds-total", type=float, default=480.0,
                        help="NASVIZ_MAX_EXPLORER_SECONDS_TOTAL of the server (default 480)")


@contextmanager
def _server(store: Path, env_extra: dict[str, str]) -> Iterator[str]:
    port = _free_port()
    env = {**os.environ, "NASVIZ_STORE": str(store), **env_extra}
    env.pop("NASVIZ_SYNC_RUNS", None)
    proc = subprocess.Popen([*SERVE_COMMAND, "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--server.headless", "true"], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        start = time.perf_counter()
        while not _answers(f"{url}/_stcore/health"):
            if time.perf_counter() - start > 120:
                raise RuntimeError("the server did not answer within 120 s")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def _open(page, url: str, name: str, timeout_s: float = 120.0) -> float | None:
    """Seconds from opening page ``name`` to its content; ``None`` if it never came."""
    path, selector = PAGES[name]
    start = time.perf_counter()
    try:
        await page.goto(url + path, timeout=timeout_s * 1000)
        await page.locator(selector).first.wait_for(timeout=timeout_s * 1000)
    except Exception:  # Playwright's TimeoutError and navigation errors: counted as lost
        return None
    return time.perf_counter() - start


async def _browse(browser, url: str, rounds: int) -> dict[str, list[float | None]]:
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    page = await context.new_page()
    out: dict[str, list[float | None]] = {name: [] for name in PAGES}
    for _ in range(rounds):
        for name in PAGES:
            out[name].append(await _open(page, url, name))
    await context.close()
    return out


async def _heavy(browser, url: str, i: int, pause: float, query: str, hold: asyncio.Event) -> dict[str, Any]:
    """Start a paced search, then ask Kernels for a heavy matrix and stay until ``hold`` is set."""
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    page = await context.new_page()
    out: dict[str, Any] = {"started": False, "kernels": None}
    try:
        if await _open(page, url, "search") is not None:
            for key, value in (("budget", "1000"), ("step_delay", str(pause)), ("seed", str(i))):
                box = page.locator(f".st-key-{key} input")
                if await box.count():
                    await box.fill(value)
                    await box.press("Enter")
            await asyncio.sleep(1.0)
            await page.locator(".st-key-start button").click()
            await page.get_by_text("Status: running").first.wait_for(timeout=120_000)
            out["started"] = True
        await page.goto(f"{url}/kernels?{query}&seed={i}", timeout=120_000)
        await asyncio.sleep(3.0)
        text = await page.locator("[data-testid='stMain'] [data-testid='stAlert'], [data-testid='stMain'] [data-testid='stProgress']").all_inner_texts()
        out["kernels"] = " | ".join(t.strip()[:160] for t in text)[:400]
        await hold.wait()  # the tab stays open (its jobs keep their heartbeat) while the others browse
    except Exception as err:
        out["error"] = f"{type(err).__name__}: {str(err)[:200]}"
    await context.close()
    return out


def _stats(values: list[float | None]) -> dict[str, Any]:
    got = sorted(v for v in values if v is not None)
    if not got:
        return {"n": 0, "lost": len(values)}
    p95 = got[min(len(got) - 1, int(round(0.95 * (len(got) - 1))))]
    return {"n": len(got), "lost": len(values) - len(got), "p50": round(statistics.median(got), 3),
            "p95": round(p95, 3), "max": round(got[-1], 3)}


def _runs_report(store: Path, pause: float) -> list[dict[str, Any]]:
    from nasviz.store import RunStore

    rs = RunStore(store)
    out = []
    for r in rs.list_runs():
        times = sorted(float(e.created) for e in rs.evaluations(r.id) if e.created is not None)
        gaps = [b - a for a, b in zip(times, times[1:]) if b > a]
        median_gap = statistics.median(gaps) if gaps else None
        out.append({"run": r.id, "evaluations": r.n_evaluations, "status": r.status,
                    "median_step_seconds": None if median_gap is None else round(median_gap, 3),
                    "slowed": bool(median_gap is not None and median_gap > pause + 1.0)})
    return out


def _stop_all(store: Path) -> None:
    from nasviz.dashboard import launching
    from nasviz.store import RunStore

    rs = RunStore(store)
    for r in rs.list_runs():
        if r.status == "running":
            launching.request_stop(store, r.id)
    deadline = time.time() + 60
    while time.time() < deadline and any(r.status == "running" for r in rs.list_runs()):
        time.sleep(0.5)


async def _class(browse: Callable[[int], Awaitable[dict[str, list[float | None]]]],
                 heavy_visitor: Callable[[int, asyncio.Event], Awaitable[dict[str, Any]]],
                 args: argparse.Namespace) -> dict[str, Any]:
    """The two phases, whichever client drives the visitors: ``browse(rounds)`` is one browsing
    visitor, ``heavy_visitor(i, hold)`` one heavy visitor, staying until ``hold`` is set."""
    visitors = int(args.visitors)
    heavy = visitors // 2 if args.heavy is None else min(int(args.heavy), visitors)
    await browse(1)  # warm-up: imports, the first script run, the default matrices cached
    t0 = time.perf_counter()
    alone = await browse(int(args.rounds))
    alone_seconds = time.perf_counter() - t0
    # The same browsing visitors at once, with no heavy visitor: what sharing one server process
    # costs by itself (their scripts take turns in one Python process), apart from the heavy work.
    crowd_runs = await asyncio.gather(*(browse(int(args.rounds)) for _ in range(visitors - heavy)))
    crowd = {name: [v for b in crowd_runs for v in b[name]] for name in PAGES}
    hold = asyncio.Event()
    heavy_tasks = [asyncio.create_task(heavy_visitor(i, hold)) for i in range(heavy)]
    await asyncio.sleep(5.0)  # the searches and the heavy requests are under way
    t0 = time.perf_counter()
    browsing = await asyncio.gather(*(browse(int(args.rounds)) for _ in range(visitors - heavy)))
    class_seconds = time.perf_counter() - t0
    hold.set()
    heavy_out = await asyncio.gather(*heavy_tasks)
    together = {name: [v for b in browsing for v in b[name]] for name in PAGES}
    return {"alone": alone, "crowd": crowd, "class": together, "heavy": heavy_out, "heavy_visitors": heavy,
            "browsing_visitors": visitors - heavy, "alone_seconds": round(alone_seconds, 1),
            "class_seconds": round(class_seconds, 1)}


async def _browser_session(url: str, args: argparse.Namespace) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        out = await _class(lambda rounds: _browse(browser, url, rounds),
                           lambda i, hold: _heavy(browser, url, i, float(args.pause), args.heavy_request, hold), args)
        await browser.close()
    return out


# ------------------------------------------------------------------ Streamlit's own protocol


#: page -> (its URL path as the protocol names it, what its deltas hold once it has its content:
#: the same content the browser mode waits for)
PROTOCOL_PAGES: dict[str, tuple[str, Callable[[PageRun], bool]]] = {
    "search": ("", lambda run: run.widget("start") is not None),
    "kernels": ("kernels", lambda run: "plotly_chart" in run.kinds()),
    "compare": ("compare", lambda run: any("Compare runs" in t for t in run.texts(("heading",)))),
}


async def _protocol_open(url: str, name: str, timeout_s: float = 120.0) -> float | None:
    """Seconds from asking for page ``name`` (a new session, as the browser's address load is) to
    the end of its script's run with its content (:mod:`nasviz.bench.stream_visitor`); ``None``
    if that never came."""
    path, done = PROTOCOL_PAGES[name]
    try:
        async with StreamVisitor(url) as visitor:
            return (await visitor.open(path, done=done, timeout_s=timeout_s)).seconds
    except (OSError, asyncio.TimeoutError, InvalidHandshake, ConnectionClosed):  # counted as lost
        return None


async def _protocol_browse(url: str, rounds: int) -> dict[str, list[float | None]]:
    out: dict[str, list[float | None]] = {name: [] for name in PAGES}
    for _ in range(rounds):
        for name in PAGES:
            out[name].append(await _protocol_open(url, name))
    return out


async def _protocol_heavy(url: str, i: int, pause: float, query: str, hold: asyncio.Event) -> dict[str, Any]:
    """The heavy visitor over the protocol, one session throughout as one tab: the Search page's
    budget, pause and seed boxes and its Start button sent as widget values in one rerun (the
    page starts the search itself), then Kernels with the heavy query; the session stays (its
    fragments' timers polling, the jobs' heartbeat) until ``hold`` is set."""
    out: dict[str, Any] = {"started": False, "kernels": None}
    try:
        async with StreamVisitor(url) as visitor:
            page = await visitor.open("", done=PROTOCOL_PAGES["search"][1])
            ids = {key: page.widget(key) for key in ("budget", "step_delay", "seed", "start")}
            if page.seconds is not None and all(ids.values()):
                values = [widget_value(ids["budget"][1], 1000), widget_value(ids["step_delay"][1], float(pause)),
                          widget_value(ids["seed"][1], i), widget_value(ids["start"][1], None, trigger=True)]
                started = await visitor.open("", widgets=values,
                                             done=lambda run: any("Status: running" in t for t in run.texts()))
                out["started"] = started.seconds is not None
            kernels = await visitor.open("kernels", query=f"{query}&seed={i}", timeout_s=120.0)
            text = kernels.texts(("alert", "progress"))
            out["kernels"] = " | ".join(t.strip()[:160] for t in text)[:400]
            await hold.wait()
            if visitor.closed_reason:
                out["error"] = visitor.closed_reason
    except (OSError, asyncio.TimeoutError, InvalidHandshake, ConnectionClosed) as err:
        out["error"] = f"{type(err).__name__}: {str(err)[:200]}"
    return out


async def _protocol_session(url: str, args: argparse.Namespace) -> dict[str, Any]:
    return await _class(lambda rounds: _protocol_browse(url, rounds),
                        lambda i, hold: _protocol_heavy(url, i, float(args.pause), args.heavy_request, hold), args)


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.client == "browser" and not CHROMIUM.exists():
        raise RuntimeError(f"Chromium is not installed at {CHROMIUM}")
    env = {"NASVIZ_MAX_EXPLORER_SECONDS": str(args.explorer_seconds),
           "NASVIZ_MAX_EXPLORER_SECONDS_TOTAL": str(args.explorer_seconds_total),
           "NASVIZ_MAX_RUNNING": str(max(12, int(args.visitors))),
           "NASVIZ_MAX_PAUSE_SECONDS": str(1000 * float(args.pause) + 1)}
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store.sqlite"
        # Two finished searches in the store before anyone arrives, so Compare draws curves in
        # every phase (alone it drew "no runs yet" while the class's Compare drew the runs).
        for strategy in PRESTORED:
            subprocess.run([sys.executable, "-m", "nasviz", "run", "--strategy", strategy, "--store", str(store)],
                           check=True, capture_output=True, cwd=str(REPO), timeout=600)
        try:
            with _server(store, env) as url:
                session = _browser_session if args.client == "browser" else _protocol_session
                raw = asyncio.run(session(url, args))
        finally:
            _stop_all(store)
        runs = _runs_report(store, float(args.pause))
    alone = {name: _stats(v) for name, v in raw["alone"].items()}
    together = {name: _stats(v) for name, v in raw["class"].items()}
    crowd = {name: _stats(v) for name, v in raw["crowd"].items()}
    ratio = {name: round(together[name]["p95"] / alone[name]["p95"], 2)
             for name in PAGES if together[name].get("p95") and alone[name].get("p95")}
    # what the heavy visitors add: the class against the same browsing visitors without them
    ratio_crowd = {name: round(together[name]["p95"] / crowd[name]["p95"], 2)
                   for name in PAGES if together[name].get("p95") and crowd[name].get("p95")}
    lost = {"pages": sum(s["lost"] for phase in (alone, crowd, together) for s in phase.values()),
            "searches_not_started": sum(not h["started"] for h in raw["heavy"])}
    return {
        "client": args.client, "visitors": int(args.visitors), "heavy_visitors": raw["heavy_visitors"],
        "browsing_visitors": raw["browsing_visitors"], "rounds": int(args.rounds), "pause": float(args.pause),
        "heavy_request": args.heavy_request, "server_env": env, "prestored_runs": list(PRESTORED),
        "alone": alone, "crowd": crowd, "class": together, "ratio_p95": ratio, "ratio_p95_to_crowd": ratio_crowd,
        "alone_seconds": raw["alone_seconds"], "class_seconds": raw["class_seconds"],
        "heavy": raw["heavy"], "runs": runs, "lost": lost,
        "goal": {"p95_at_most_2x": bool(ratio) and all(r <= 2.0 for r in ratio.values()),
                 "heavy_work_p95_at_most_2x_of_crowd": bool(ratio_crowd) and all(r <= 2.0 for r in ratio_crowd.values()),
                 "nothing_lost": lost["pages"] == 0 and lost["searches_not_started"] == 0,
                 "no_run_slowed_past_its_pause": not any(r["slowed"] for r in runs)},
    }
