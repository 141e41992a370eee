"""Explorer pages' speed: one full render of Kernels, Architectures, Interpretability and Compare
with ``--n`` architectures (default 200), timed in Streamlit's AppTest (the whole script: app.py's
sidebar and the page, every figure built; the browser's drawing is not included).

``python -m nasviz bench explorer [--table CSV] [--n 200] [--repeats 3]``

* ``kernels``: the Kernels page with ``n`` sampled architectures and ``--kernels`` (default TW-2G, WL);
  each repeat uses a new sample (new seed), so distances and Gram matrices are computed, not cached;
* ``architectures``: two table architectures compared with every kernel, OTMANN plan, TW masses,
  neighbours (a new pair each repeat);
* ``interpretability``: WL GP fitted on ``n`` architectures, gradients, Fig. 2, feature graphs and
  mutation probabilities (a new sample each repeat);
* ``compare``: ``--runs`` runs (random and evolution, half each) of ``n`` evaluations each.

Reported per page: the median and maximum over the repeats, in seconds (target: under 3 s).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from nasviz.errors import InputError

DESCRIPTION = "Explorer pages (kernels, architectures, interpretability, compare): render time with N architectures"
REPO = Path(__file__).resolve().parents[2]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--table", type=Path, help="table CSV (default: the dashboard's default table)")
    parser.add_argument("--n", type=int, default=200, help="architectures per page (default 200)")
    parser.add_argument("--repeats", type=int, default=3, help="renders timed per page (default 3)")
    parser.add_argument("--runs", type=int, default=6, help="runs on the Compare page (default 6)")
    parser.add_argument("--kernels", default="tw2g,wl", help="kernels on the Kernels page, comma-separated (default tw2g,wl)")


def _apptest(table: Path):
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.testing.v1 import AppTest, app_test

    class _Navigation(PagesManager):  # as tests/app/conftest.py: reruns go through app.py
        def __init__(self, *args, **kwargs):
            PagesManager.uses_pages_directory = False
            super().__init__(*args, **kwargs)

    app_test.PagesManager = _Navigation
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=600)
    at.run()
    # The page reads a server file only from the operator's data folder (``NASVIZ_DATA_DIR``, set
    # by ``run`` to the table's folder), by a path relative to it.
    at.sidebar.radio(key="source_kind").set_value("CSV on the server").run()
    at.sidebar.text_input(key="server_csv").input(table.name).run()
    return at


def _timed(at) -> float:
    t0 = time.perf_counter()
    at.run()
    seconds = time.perf_counter() - t0
    problems = [str(e.value) for e in list(at.exception) + list(at.error)]
    if problems:
        raise RuntimeError(f"the page failed: {problems[0][:300]}")
    return seconds


def run(args: argparse.Namespace) -> dict[str, Any]:
    from nasviz.components import KERNELS
    from nasviz.dashboard import launching, sources
    from nasviz.dashboard.locations import STORE_ENV
    from nasviz.settings import DATA_DIR_ENV

    table = args.table or sources.default_table_path()
    if table is None:
        raise InputError("no --table given and no default table")
    if args.n < 2 or args.repeats < 1 or args.runs < 1:
        raise InputError("--n must be >= 2, --repeats and --runs >= 1")
    tmp = tempfile.mkdtemp(prefix="nasviz-bench-explorer-")
    store = Path(tmp) / "store.sqlite"
    os.environ[STORE_ENV] = str(store)
    os.environ[DATA_DIR_ENV] = str(Path(table).resolve().parent)
    t = sources.table_from_path(table)
    source = sources.DataSource.from_table(Path(table), t)
    for i in range(args.runs):
        strategy = ("random", "evolution")[i % 2]
        launching.start_run(store, launching.search_config(source, strategy=strategy, budget=args.n, seed=i // 2),
                            source=source, background=False)

    at = _apptest(Path(table).resolve())
    times: dict[str, list[float]] = {p: [] for p in ("kernels", "architectures", "interpretability", "compare")}
    at.switch_page("pages/kernels.py").run()
    at.number_input(key="k_n").set_value(args.n)
    kernels = [k.strip() for k in args.kernels.split(",") if k.strip()]
    unknown = sorted(set(kernels) - set(KERNELS.names()))
    if unknown:
        raise InputError(f"--kernels: unknown {', '.join(unknown)}; available: {', '.join(KERNELS.names())}")
    at.multiselect(key="k_kernels").set_value(kernels)
    for r in range(args.repeats):
        at.number_input(key="k_seed").set_value(100 + r)
        times["kernels"].append(_timed(at))
    at.switch_page("pages/architectures.py").run()
    for r in range(args.repeats):
        at.number_input(key="a_rank_A").set_value(1 + 7 * r)
        at.number_input(key="a_rank_B").set_value(500 + 11 * r)
        times["architectures"].append(_timed(at))
    at.switch_page("pages/interpretability.py").run()
    at.number_input(key="i_n").set_value(args.n)
    for r in range(args.repeats):
        at.number_input(key="i_seed").set_value(100 + r)
        times["interpretability"].append(_timed(at))
    at.switch_page("pages/compare.py").run()
    for _ in range(args.repeats):
        times["compare"].append(_timed(at))
    return {
        "table": str(table), "n": args.n, "repeats": args.repeats, "compare_runs": args.runs, "kernels": kernels,
        "pages": {p: {"median_seconds": round(statistics.median(v), 3), "max_seconds": round(max(v), 3),
                      "seconds": [round(x, 3) for x in v]} for p, v in times.items()},
        "cpu_count": os.cpu_count(), "load_average_1min": round(os.getloadavg()[0], 2),
    }
