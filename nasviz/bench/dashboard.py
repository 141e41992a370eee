"""Dashboard speed: server start to a page that answers, and one live refresh of a long run.

``python -m nasviz bench dashboard`` prints JSON with

* ``startup``: seconds from launching the app as ``make run`` does (warm-up included) until the server's health check
  answers, until ``/`` answers over HTTP, and (when Chromium is installed) until a browser shows
  the Search page's Start button (target: under 10 s);
* ``refresh``: with a run of ``--evaluations`` evaluations (default 500) in a run store, the time
  of one live refresh of the Search page: ``fragment_seconds`` times what the page's live
  fragment does (read the new step from the store, build every figure: history, pool embedding,
  hyperparameter traces, distance heatmaps, selected graphs), ``apptest_rerun_seconds`` a whole
  page rerun in Streamlit's AppTest with one new step appended before each rerun (an upper
  bound: the browser reruns only the fragment). Target: under 0.5 s.

The long run is built from real parts: its evaluations are rows of the default table, in the
order of a random search, and every snapshot carries the strategy state of a real BO step
(pool of 100 table architectures, GP mean/std on it, the chosen batch, k-DPP qualities and
learned TW hyperparameters), so the views draw exactly what they draw for a BO run of that
length without spending the minutes such a run takes.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np

DESCRIPTION = "Dashboard speed: server start until the page answers; one live refresh with 500 evaluations."

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--evaluations", type=int, default=500, help="evaluations in the watched run (default 500)")
    parser.add_argument("--repeats", type=int, default=5, help="refreshes timed (default 5; the median is reported)")
    parser.add_argument("--no-startup", action="store_true", help="skip the server start measurement")
    parser.add_argument("--no-browser", action="store_true", help="do not time the page in Chromium")


#: How the benchmarks start the app: as ``make run`` does (warmed up before it listens,
#: :mod:`nasviz.dashboard.serve`), followed by ``streamlit run`` options.
SERVE_COMMAND = (sys.executable, "-m", "nasviz.dashboard.serve")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(url: str) -> bool:
    try:
        return urllib.request.urlopen(url, timeout=2).status == 200
    except OSError:
        return False


def measure_startup(store: Path, browser: bool) -> dict[str, Any]:
    """Launch the server and time the first answers (seconds from launch)."""
    port = _free_port()
    url = f"http://localhost:{port}"
    env = {**os.environ, "NASVIZ_STORE": str(store)}
    start = time.perf_counter()
    proc = subprocess.Popen([*SERVE_COMMAND, "--server.port", str(port),
                             "--server.headless", "true"], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out: dict[str, Any] = {}
    try:
        while not _answers(f"{url}/_stcore/health"):
            if time.perf_counter() - start > 120:
                raise RuntimeError("the server did not answer within 120 s")
            time.sleep(0.05)
        out["health_seconds"] = time.perf_counter() - start
        while not _answers(url):
            time.sleep(0.05)
        out["http_seconds"] = time.perf_counter() - start
        if browser and CHROMIUM.exists():
            from playwright.sync_api import sync_playwright

            with sync_playwright() as p:
                b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
                launched = time.perf_counter()
                page = b.new_page()
                page.goto(url)
                page.locator(".st-key-start button").wait_for(timeout=120_000)
                out["page_rendered_seconds"] = time.perf_counter() - start
                out["page_rendered_seconds_after_browser_launch"] = time.perf_counter() - launched
                b.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return out


#: New architectures per step in the synthetic pool: a real bo-tw2g-ucb run on NAS-Bench-201 had
#: 100, 95, 87, ... new pool members in its first steps and about 20 per step after 80 steps (its
#: evolutionary pool mutates the same top architectures), so 20 of 100 is realistic at 500.
POOL_NEW_PER_STEP = 20
_last_pool: dict[str, np.ndarray] = {}


def _bo_state(rng: np.random.Generator, strings: list[str], values: np.ndarray, step: int) -> dict[str, Any]:
    """A BO step's strategy state with the fields :class:`nasviz.strategies.bo` writes."""
    previous = _last_pool.get("pool")
    if previous is None:
        pool_idx = rng.choice(len(strings), size=100, replace=False)
    else:
        keep = rng.choice(previous, size=100 - POOL_NEW_PER_STEP, replace=False)
        fresh = rng.choice(np.setdiff1d(np.arange(len(strings)), keep), size=POOL_NEW_PER_STEP, replace=False)
        pool_idx = np.concatenate([keep, fresh])
    _last_pool["pool"] = pool_idx
    mean = values[pool_idx] + rng.normal(0, 0.5, size=100)
    std = rng.uniform(0.05, 1.5, size=100)
    selected = [int(np.argmax(mean + std))]
    return {
        "strategy": "bo-tw2g-ucb", "phase": "bo", "bo_step": step,
        "proposals": [strings[pool_idx[selected[0]]]],
        "pool": [strings[i] for i in pool_idx], "mean": mean.tolist(), "std": std.tolist(),
        "acquisition": (mean + std).tolist(), "selected": selected,
        "batch": {"method": "topk", "indices": selected, "qualities": np.exp(mean - mean.max()).tolist()},
        "hyperparameters": {"theta": {"lambda_1": 0.1 + 0.01 * np.sin(step), "lambda_2": 0.01, "lambda_3": 0.001},
                            "amplitude": 2.0, "noise": 1e-3, "seconds": 0.1},
    }


def build_long_run(store_path: Path, n: int, seed: int = 0) -> tuple[int, list[str], np.ndarray]:
    """A finished-looking ``running`` run of ``n`` evaluations on the default table."""
    from nasviz.dashboard import launching, sources
    from nasviz.store import RunStore

    table_path = sources.default_table_path()
    if table_path is None:
        raise RuntimeError("no default table (data/nb201_cifar.csv or the shared NAS-Bench-201 table)")
    table = sources.table_from_path(table_path)
    metric = table.metrics[0]
    source = sources.DataSource.from_table(table_path, table)
    config = launching.search_config(source, metric=metric, strategy="bo-tw2g-ucb", budget=n + 100, seed=seed)
    store = RunStore(store_path)
    run_id = store.create_run(launching.stored_config(config, source))
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(table))
    values = table.values[metric]
    best = -np.inf
    for i in range(n):
        j = int(order[i])
        v = float(values[j])
        best = max(best, v)
        snap = {"step": i + 1, "n_evaluations": i + 1, "budget": n + 100, "proposals": [table.strings[j]],
                "results": [{"arch": table.strings[j], "value": v, "status": "ok", "error": None}],
                "best_value": best, "best_arch": None, "elapsed": 0.3 * (i + 1), "step_seconds": 0.3,
                "strategy": _bo_state(rng, table.strings, values, i + 1)}
        store.add_step(run_id, i + 1, [{"arch": table.strings[j], "value": v, "cost": 0.0}], i, snap)
    return run_id, table.strings, values


def _append_step(store_path: Path, run_id: int, strings: list[str], values: np.ndarray, rng) -> None:
    from nasviz.store import RunStore

    store = RunStore(store_path)
    n = store.n_evaluations(run_id)
    done = {e.arch for e in store.evaluations(run_id)}
    j = next(int(k) for k in rng.permutation(len(strings)) if strings[int(k)] not in done)
    snap = {"step": n + 1, "n_evaluations": n + 1, "budget": n + 100, "proposals": [strings[j]],
            "results": [{"arch": strings[j], "value": float(values[j]), "status": "ok", "error": None}],
            "best_value": float(values.max()), "best_arch": None, "elapsed": 0.3 * (n + 1), "step_seconds": 0.3,
            "strategy": _bo_state(rng, strings, values, n + 1)}
    store.add_step(run_id, n + 1, [{"arch": strings[j], "value": float(values[j]), "cost": 0.0}], n, snap)
    store.heartbeat(run_id)


def fragment_work(watcher, view: str = "pool") -> dict[str, float]:
    """What the Search page's live fragment computes on a refresh, without Streamlit: read the
    new step, progress, history, and the open tab's view (a :data:`nasviz.components.VIEWS`
    name). Returns seconds per part."""
    from nasviz import viz
    from nasviz.components import VIEWS

    parts: dict[str, float] = {}
    t = time.perf_counter()
    watcher.refresh()
    viz.get_progress_info(watcher.status, watcher.steps, budget=watcher.search.run.budget,
                          pause=watcher.search.run.step_delay, n_evaluations=len(watcher.evaluations),
                          decimals=watcher.decimals, shown=watcher.shown)
    parts["store_and_progress"] = time.perf_counter() - t
    t = time.perf_counter()
    viz.plot_history(watcher.evaluations, watcher.optimum(), metric=watcher.search.objective.metric or "value")
    parts["history"] = time.perf_counter() - t
    t = time.perf_counter()
    shown = VIEWS.create(view)
    if shown.applies(watcher) is None:
        shown.render(watcher, **{c.key: c.default for c in shown.controls(watcher)})
    parts[view] = time.perf_counter() - t
    parts["total"] = sum(parts.values())
    return parts


def measure_refresh(store_path: Path, n: int, repeats: int) -> dict[str, Any]:
    from nasviz.dashboard.watching import RunWatcher
    from nasviz.store import RunStore

    t0 = time.perf_counter()
    run_id, strings, values = build_long_run(store_path, n)
    build_seconds = time.perf_counter() - t0
    rng = np.random.default_rng(1)

    # (a) the fragment's work, one new step per refresh, for each tab being the open one; the
    # first refresh reads the whole run
    watcher = RunWatcher(store_path, run_id)
    first = fragment_work(watcher)["total"]
    fragment: dict[str, list[float]] = {}
    for view in ("pool", "hyperparameters", "distances", "selection"):
        for _ in range(repeats):
            _append_step(store_path, run_id, strings, values, rng)
            fragment.setdefault(view, []).append(fragment_work(watcher, view)["total"])

    # (b) a whole page rerun in AppTest (upper bound of a fragment rerun in the browser)
    os.environ["NASVIZ_STORE"] = str(store_path)
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.testing.v1 import AppTest, app_test

    class _Navigation(PagesManager):  # see tests/app/conftest.py: AppTest re-enables the pages/ heuristic
        def __init__(self, *args, **kwargs):
            PagesManager.uses_pages_directory = False
            super().__init__(*args, **kwargs)

    app_test.PagesManager = _Navigation
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300)
    at.query_params["run"] = str(run_id)
    t = time.perf_counter()
    at.run()
    first_page = time.perf_counter() - t
    if at.exception:
        raise RuntimeError(f"the search page raised: {at.exception[0].value}")
    reruns = []
    for _ in range(repeats):
        _append_step(store_path, run_id, strings, values, rng)
        t = time.perf_counter()
        at.run()
        reruns.append(time.perf_counter() - t)
    n_final = RunStore(store_path).n_evaluations(run_id)
    return {
        "evaluations": n, "evaluations_at_end": n_final, "build_run_seconds": build_seconds,
        "fragment_first_seconds": first,
        "fragment_seconds_median_by_open_tab": {k: statistics.median(v) for k, v in fragment.items()},
        "apptest_first_render_seconds": first_page,
        "apptest_rerun_seconds_median": statistics.median(reruns), "apptest_rerun_seconds": reruns,
        "target_seconds": 0.5,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out: dict[str, Any] = {"cpu_count": os.cpu_count(), "load_average_1min": os.getloadavg()[0]}
        if not args.no_startup:
            out["startup"] = measure_startup(Path(tmp) / "startup.sqlite", browser=not args.no_browser)
            out["startup"]["target_seconds"] = 10.0
        out["refresh"] = measure_refresh(Path(tmp) / "refresh.sqlite", args.evaluations, args.repeats)
        return out
