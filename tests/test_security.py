"""Is the dashboard safe to serve? The attacks of issue 16, each tried for real.

1. Code execution: a pickle (also a valid CSV) and a torch file whose ``__reduce__`` creates a
   marker file are refused by the command line (a real subprocess) and by every function the
   pages call; the marker never appears.
2. File disclosure: server paths are off by default, and confined to the operator's data folder
   when on (``..``, absolute paths and symlinks out of it are refused); what the page shows about a
   server file never quotes it.
3. Unbounded work: budgets, running searches per session and in total (real worker processes),
   study size, upload size, upload names, parse-once caching and upload pruning.
4. Lease race: a real worker process is paused with SIGSTOP until its run is declared
   interrupted, a second worker resumes the run, the first is continued with SIGCONT: it exits
   quietly and the run's status and evaluations are the second worker's.
5. The Docker image: a non-root user, no data folder, a health check that answers, the store on
   a volume.

Real files, a real SQLite store, real subprocesses, Streamlit's AppTest for the page.
"""

from __future__ import annotations

import builtins
import dataclasses
import json
import os
import pickle
import re
import signal
import sqlite3
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from nasviz import uploads
from nasviz.components import DEFAULT_STRATEGY, STRATEGIES
from nasviz.dashboard import launching, locations, sources
from nasviz.errors import LimitError, PathNotAllowedError, TableError, UnsafeFileError
from nasviz.objectives import load_table
from nasviz.objectives.nb201_official import load_official
from nasviz.settings import Limits
from nasviz.spaces import nb201
from nasviz.store import RunStore
from tests_app_helpers import shown_text, use_server_csv  # tests/app, on pytest's pythonpath

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "app.py")
#: Distinct cells, for small valid tables.
CELLS = [nb201.format(a) for a in nb201.sample(np.random.default_rng(16), 400)]
CELLS = list(dict.fromkeys(CELLS))[:200]


def table_text(n: int = 60, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    return "arch,acc\n" + "".join(f"{c},{rng.uniform(40, 90):.3f}\n" for c in CELLS[:n])


def nasviz_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nasviz", *args], capture_output=True, text=True, timeout=300,
                          cwd=REPO, env={**os.environ, **(env or {})})


@pytest.fixture()
def env(tmp_path, monkeypatch):
    """A private store; server paths off (no NASVIZ_DATA_DIR); default limits."""
    for var in [v for v in os.environ if v.startswith("NASVIZ_")]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("NASVIZ_STORE", str(tmp_path / "runs" / "store.sqlite"))
    monkeypatch.setenv("NASVIZ_SYNC_RUNS", "1")
    # the page's default pause after each step would only slow a synchronous run down here
    monkeypatch.setattr("nasviz.defaults.PAGE_STEP_DELAY", 0.0)
    return tmp_path


# ============================================================================ 1. code execution


class _OpenMarker:
    """Unpickling this creates the marker file: ``builtins.open(marker, "w")``."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (builtins.open, (self.marker, "w"))


class _SystemMarker(_OpenMarker):
    """Unpickling this runs a shell command that creates the marker file."""

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def polyglot(marker: Path) -> bytes:
    """A file that is a protocol-0 pickle creating ``marker`` *and* a valid benchmark CSV: pickle
    stops at ``.``, the CSV reader reads the pickle's lines as bad rows and the rest as a table."""
    payload = f"S'arch,acc'\n0cbuiltins\nopen\n(S'{marker}'\nS'w'\ntR.\n".encode()
    rows = "".join(f"{c},{50 + i}\n" for i, c in enumerate(CELLS[:20])).encode()
    return payload + rows


@pytest.fixture()
def marker(tmp_path) -> Path:
    return tmp_path / "pwned-marker"


@pytest.fixture()
def payloads(tmp_path, marker):
    """Crafted files, each shown to run its payload when unpickled the unsafe way."""
    import torch

    files = {"polyglot.csv": polyglot(marker)}
    files["evil.pkl"] = pickle.dumps({"meta_archs": _OpenMarker(marker)}, protocol=4)
    buffer_path = tmp_path / "evil.pth"
    torch.save({"meta_archs": [_SystemMarker(marker)], "arch2infos": {}, "evaluated_indexes": set()}, buffer_path)
    files["evil.pth"] = buffer_path.read_bytes()
    paths = {}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        paths[name] = tmp_path / name
    # the payloads are live: the unsafe loaders do create the marker
    pickle.loads(files["polyglot.csv"])
    assert marker.exists()
    marker.unlink()
    torch.load(paths["evil.pth"], weights_only=False)
    assert marker.exists()
    marker.unlink()
    return paths


@pytest.mark.slow
@pytest.mark.parametrize("name, refused", [("evil.pth", "posix.system"), ("evil.pkl", "io.open"),
                                           ("polyglot.csv", "builtins.open")])
def test_the_cli_importer_refuses_a_crafted_pickle_naming_the_class(payloads, marker, tmp_path, name, refused):
    out = tmp_path / "out.csv"
    proc = nasviz_cli("table", "import-nb201", str(payloads[name]), "--out", str(out))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert f"asks for {refused}" in proc.stderr and "nothing from the file was run" in proc.stderr
    assert not marker.exists() and not out.exists()
    with pytest.raises(UnsafeFileError) as err:
        load_official(payloads[name])
    assert err.value.field == refused and not marker.exists()


def test_the_pages_have_no_way_to_unpickle(env, payloads, marker):
    """Every loader a page calls reads text: the payloads are at most bad tables."""
    polyglot_bytes = payloads["polyglot.csv"].read_bytes()
    path, table = sources.save_upload(polyglot_bytes, "polyglot.csv")  # a valid CSV: it loads, as text
    assert len(table) == 20 and [b.line for b in table.bad_rows] == [2, 3, 4, 5, 6]
    assert sources.table_from_path(path).strings == table.strings
    assert sources.current_table(sources.DataSource.from_table(path, table)) is not None
    for name in ("evil.pth", "evil.pkl"):
        with pytest.raises(TableError):
            sources.save_upload(payloads[name].read_bytes(), "evil.csv")
        with pytest.raises(TableError):
            load_table(payloads[name])
    env_dir = payloads["evil.pth"].parent
    os.environ["NASVIZ_DATA_DIR"] = str(env_dir)
    try:
        with pytest.raises(TableError):
            sources.server_table("evil.pth")  # not a .csv
        assert len(sources.server_table("polyglot.csv")[1]) == 20
    finally:
        del os.environ["NASVIZ_DATA_DIR"]
    # a search on the polyglot table runs (as text) without running the payload
    cfg = launching.search_config(sources.DataSource.from_table(path, table), strategy="random", budget=5)
    run_id = launching.start_run(locations.default_store_path(), cfg)
    assert RunStore(locations.default_store_path()).get_run(run_id).status == "finished"
    assert not marker.exists()
    # The official NB201 file is a pickle: its converter (the restricted unpickler) is the command
    # line's alone. No page and no dashboard module names it, so no request can reach it.
    served = [*(Path(__file__).resolve().parents[1] / "pages").glob("*.py"),
              *Path(sources.__file__).resolve().parent.rglob("*.py")]
    assert len(served) > 20
    for path in served:
        text = path.read_text(encoding="utf-8")
        assert not any(name in text for name in ("nb201_official", "import_official", "restricted_load")), path
        assert not re.search(r"import pickle|pickle\.loads?\(|allow_pickle=True|torch\.load\(", text), path


@pytest.mark.slow  # starts a search
def test_the_sidebar_offers_no_pickle_source_and_an_uploaded_polyglot_stays_text(env, payloads, marker):
    at = AppTest.from_file(APP, default_timeout=120).run()
    kinds = at.sidebar.radio(key="source_kind").options
    assert not any("official" in k.lower() or "pth" in k.lower() for k in kinds)
    at.sidebar.radio(key="source_kind").set_value("Upload a CSV").run()
    at.sidebar.file_uploader(key="upload").upload("polyglot.csv", payloads["polyglot.csv"].read_bytes(),
                                                  "text/csv").run()
    assert not at.exception and "20 architectures" in shown_text(at.sidebar.success[0].value)
    at.number_input(key="budget").set_value(5)
    at.selectbox(key="strategy").set_value("random")
    at.button(key="start").click().run()
    assert not at.exception and not at.error, [shown_text(e.value) for e in at.error]
    assert not marker.exists()


@pytest.mark.slow
def test_running_every_page_never_imports_the_importer(env):
    """In a fresh interpreter, render the app and every page: the module that reads the official
    file is never even imported."""
    script = f"""
import sys
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest, app_test

class Navigation(PagesManager):  # as in tests/conftest.py: every rerun runs app.py, as a server does
    def __init__(self, *args, **kwargs):
        PagesManager.uses_pages_directory = False
        super().__init__(*args, **kwargs)

app_test.PagesManager = Navigation
at = AppTest.from_file({APP!r}, default_timeout=300).run()
for page in ("search", "runs", "compare", "kernels", "architectures", "interpretability"):
    at.switch_page(f"pages/{{page}}.py").run()
    assert not at.exception, (page, [e.value for e in at.exception])
print("IMPORTED" if "nasviz.objectives.nb201_official" in sys.modules else "CLEAN")
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("CLEAN")


# ============================================================================ 2. file disclosure

SECRET = "SECRET-TOKEN-8f3a"


@pytest.fixture()
def data_dir(env, monkeypatch):
    """An operator's data folder with a good table, a table with a secret cell, a secret non-table
    file, and a secret file outside the folder reachable by '..' and by a symlink."""
    data = env / "data"
    data.mkdir()
    (data / "good.csv").write_text(table_text(30))
    lines = table_text(30).splitlines()
    lines.insert(3, f"{SECRET}-cell,1")
    lines.insert(5, f"{CELLS[100]},{SECRET}-value")
    (data / "mixed.csv").write_text("\n".join(lines) + "\n")
    (data / "notes.csv").write_text(f"root:x:0:0:{SECRET}\ndaemon:x:1:1:{SECRET}\n")
    outside = env / "outside.csv"
    outside.write_text(table_text(10) + f"{SECRET},1\n")
    (data / "link.csv").symlink_to(outside)
    monkeypatch.setenv("NASVIZ_DATA_DIR", str(data))
    return data


def test_server_paths_are_off_unless_the_operator_names_a_folder(env, tmp_path):
    (tmp_path / "t.csv").write_text(table_text(10))
    with pytest.raises(PathNotAllowedError, match="server-side files are off"):
        sources.server_table(str(tmp_path / "t.csv"))
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert "CSV on the server" not in at.sidebar.radio(key="source_kind").options


@pytest.mark.parametrize("typed", ["../outside.csv", "{outside}", "link.csv", "sub/../../outside.csv",
                                   "{runs}/uploads/x.csv", ".hidden.csv", "/etc/passwd"])
def test_paths_out_of_the_data_folder_are_refused(data_dir, typed):
    (data_dir / ".hidden.csv").write_text(table_text(5))
    runs = locations.runs_dir()
    (runs / "uploads").mkdir(parents=True, exist_ok=True)
    typed = typed.format(outside=data_dir.parent / "outside.csv", runs=runs)
    with pytest.raises(PathNotAllowedError) as err:
        sources.server_table(typed)
    assert SECRET not in str(err.value) and "does not exist" not in str(err.value)


def test_a_run_folder_inside_the_data_folder_is_still_refused(data_dir, monkeypatch):
    monkeypatch.setenv("NASVIZ_STORE", str(data_dir / "runs" / "store.sqlite"))
    (data_dir / "runs" / "uploads").mkdir(parents=True)
    (data_dir / "runs" / "uploads" / "someone.csv").write_text(table_text(5))
    with pytest.raises(PathNotAllowedError, match="run folder"):
        sources.server_table("runs/uploads/someone.csv")
    assert len(sources.server_table("good.csv")[1]) == 30


def test_what_the_page_shows_about_a_server_file_never_quotes_it(data_dir):
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.sidebar.radio(key="source_kind").set_value("CSV on the server").run()
    shown = []
    for typed in ("notes.csv", "link.csv", "../outside.csv", "mixed.csv"):
        at.sidebar.text_input(key="server_csv").input(typed).run()
        assert not at.exception
        shown += [shown_text(e.value) for e in at.sidebar.error] + [t.value for t in at.sidebar.get("text")]
    assert "mixed.csv: 30 architectures" in shown_text(at.sidebar.success[0].value)
    bad = at.sidebar.expander[0].text[0].value
    assert bad == "line 4, column 1: cannot parse architecture\nline 6, column 2: non-numeric value"
    assert any("notes.csv: no numeric metric column" in s for s in shown)  # the problem is named...
    assert not any(SECRET in s or "root:x" in s for s in shown + [bad])  # ...but never quoted
    # the visitor's own upload of the same file does show its cells
    at.sidebar.radio(key="source_kind").set_value("Upload a CSV").run()
    at.sidebar.file_uploader(key="upload").upload("mixed.csv", (data_dir / "mixed.csv").read_bytes(), "text/csv").run()
    assert SECRET in at.sidebar.expander[0].text[0].value


def test_a_server_table_changed_after_it_was_chosen_is_not_quoted_by_any_page(data_dir):
    table = data_dir / "changing.csv"
    table.write_text(table_text(30))
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.sidebar.radio(key="source_kind").set_value("CSV on the server").run()
    at.sidebar.text_input(key="server_csv").input("changing.csv").run()
    assert "30 architectures" in shown_text(at.sidebar.success[0].value)
    time.sleep(0.01)
    table.write_text(f"arch,acc\n{SECRET},1\n")  # the operator (or anyone) replaces the file
    shown = []
    at.button(key="start").click().run()
    shown += [shown_text(e.value) for e in at.error]
    for page in ("kernels", "architectures", "interpretability"):
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception, page
        shown += [shown_text(e.value) for e in at.error] + [e.value for e in at.sidebar.error]
    assert any("changing.csv" in s and "no usable row" in s for s in shown), shown
    assert not any(SECRET in s for s in shown)


def test_a_server_table_changed_under_a_run_fails_it_without_quoting_it(data_dir):
    table = data_dir / "changing.csv"
    table.write_text(table_text(30))
    path, loaded = sources.server_table("changing.csv")
    cfg = launching.search_config(sources.DataSource.from_table(path, loaded, disclose=False), strategy="random", budget=5)
    table.write_text(f"arch,acc\n{SECRET},1\n")  # replaced before the worker reads it
    store_path = locations.default_store_path()
    run_id = launching.start_run(store_path, cfg, background=True)  # a real worker process
    store = RunStore(store_path)
    deadline = time.time() + 120
    while store.get_run(run_id).status == "running":
        assert time.time() < deadline
        time.sleep(0.1)
    run = store.get_run(run_id)
    assert run.status == "failed" and "no usable row" in run.error and "line 2" in run.error
    assert SECRET not in run.error


# ============================================================================ 3. unbounded work


def _app_on_a_server_table(env, monkeypatch, rows: int, session: str | None = None) -> AppTest:
    """The app, run once, on a ``rows``-row table in the operator's data folder (``session``: the
    browser session's token, for the per-session limits)."""
    (env / "t.csv").write_text(table_text(rows))
    monkeypatch.setenv("NASVIZ_DATA_DIR", str(env))
    at = AppTest.from_file(APP, default_timeout=120)
    if session is not None:
        at.session_state["_nasviz_session"] = session
    return use_server_csv(at, env / "t.csv")


@pytest.mark.slow
def test_a_budget_over_the_limit_is_a_message_not_a_run(env, monkeypatch):
    at = _app_on_a_server_table(env, monkeypatch, rows=50)
    assert any("at most 1,000 evaluations per search" in c.value for c in at.caption)  # shown in the form
    at.number_input(key="budget").set_value(1_000_000_000)
    at.button(key="start").click().run()
    assert not at.exception
    assert any("more than the 1,000 this server allows per search" in shown_text(e.value) for e in at.error)
    assert not locations.default_store_path().exists() or RunStore(locations.default_store_path()).list_runs() == []
    proc = nasviz_cli("run", "--table", str(env / "t.csv"), "--budget", "1200", "--json")  # the CLI is not limited
    assert proc.returncode == 0 and len(json.loads(proc.stdout)["evaluations"]) == 50


def test_every_default_lies_inside_its_page_range():
    bounded = 0
    for name in STRATEGIES.names():
        entry = STRATEGIES.get(name)
        defaults = entry.defaults()
        for option in entry.options:
            if option.page_range is not None:
                bounded += 1
                option.check_page(defaults[option.name], name)  # a LimitError here would block the page's defaults
    assert bounded >= 10


@pytest.mark.parametrize("strategy, options, named", [
    ("bo-tw2g-hamming-ei", {"pool_size": 1_000_000}, "pool_size"),
    ("bo-tw2g-hamming-ei", {"local_search": 500}, "local_search"),
    ("bo-tw2g-hamming-ei", {"n_restarts": 1000}, "n_restarts"),
])
def test_settings_that_grow_a_steps_work_are_bounded_from_the_page(env, strategy, options, named):
    (env / "t.csv").write_text(table_text(40))
    source = sources.DataSource.from_table(env / "t.csv", sources.table_from_path(env / "t.csv"))
    cfg = launching.search_config(source, strategy=strategy, options=options, budget=12)
    store_path = locations.default_store_path()
    with pytest.raises(LimitError, match=f"option '{named}' must be at most .* started from the page") as caught:
        launching.start_run(store_path, cfg, session="alice")
    assert caught.value.field == named
    assert not store_path.exists() or RunStore(store_path).list_runs() == []
    # at the bound it runs
    option = STRATEGIES.get(strategy).option(named)
    at_bound = launching.search_config(source, strategy=strategy, options={named: int(option.page_range[1])}, budget=12)
    run_id = launching.start_run(store_path, at_bound, session="alice")
    assert RunStore(store_path).get_run(run_id).status == "finished"


def test_auto_keras_annealing_is_bounded_from_the_page_and_not_from_the_cli():
    entry = STRATEGIES.get("autokeras")
    with pytest.raises(LimitError, match="option 'r' must be at most 0.95"):
        entry.check_page_options(entry.parse_options({"r": "0.9999"}))
    with pytest.raises(LimitError, match="option 't_low' must be at least 0.001"):
        entry.check_page_options(entry.parse_options({"t_low": "1e-9"}))
    with pytest.raises(LimitError, match="option 'ea_cap' must be at most 2000"):
        STRATEGIES.get("nasbot").check_page_options({"ea_cap": 10 ** 6})
    entry.check_page_options(entry.parse_options({"r": "0.95", "t_low": "0.001", "n_children": "32"}))
    # the command line parses the same values without a page bound
    assert entry.parse_options({"r": "0.9999", "t_low": "1e-9"}) == {"r": 0.9999, "t_low": 1e-9}


def test_the_page_caps_a_settings_widget_and_refuses_a_value_past_it(env, monkeypatch):
    at = _app_on_a_server_table(env, monkeypatch, rows=40)
    widget = at.number_input(key=f"opt_{DEFAULT_STRATEGY}_pool_size")
    assert widget.max == 2000 and widget.min == 1
    assert at.number_input(key=f"opt_{DEFAULT_STRATEGY}_local_search").max == 20
    # a crafted request past the widget (the browser is not trusted): the server refuses it
    source = sources.DataSource.from_table(env / "t.csv", sources.table_from_path(env / "t.csv"))
    cfg = launching.search_config(source, strategy=DEFAULT_STRATEGY, options={"pool_size": 2001}, budget=12)
    with pytest.raises(LimitError, match="pool_size"):
        launching.start_run(locations.default_store_path(), cfg)


def _wait(condition, seconds: float = 60.0, what: str = "") -> None:
    deadline = time.time() + seconds
    while not condition():
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.mark.slow
def test_running_searches_are_capped_per_session_and_in_total(env, monkeypatch):
    """Real worker processes: a session may run 2, all sessions 3; a slot frees when one stops."""
    monkeypatch.setenv("NASVIZ_MAX_RUNNING_PER_SESSION", "2")
    monkeypatch.setenv("NASVIZ_MAX_RUNNING", "3")
    (env / "t.csv").write_text(table_text(150))
    source = sources.DataSource.from_table(env / "t.csv", sources.table_from_path(env / "t.csv"))
    cfg = launching.search_config(source, strategy="random", budget=150, step_delay=0.2)
    store_path = locations.default_store_path()
    store = RunStore(store_path)
    started = [launching.start_run(store_path, cfg, background=True, session="alice") for _ in range(2)]
    try:
        with pytest.raises(LimitError, match="this browser session already runs 2 search"):
            launching.start_run(store_path, cfg, background=True, session="alice")
        started.append(launching.start_run(store_path, cfg, background=True, session="bob"))
        with pytest.raises(LimitError, match="already runs 3 search.*allows 3 at once"):
            launching.start_run(store_path, cfg, background=True, session="carol")
        with pytest.raises(LimitError):  # a study counts all its runs
            launching.start_study(store_path, source, "acc", ["random"], [0, 1], 10, session="carol")
        assert len(store.list_runs()) == 3
        _wait(lambda: all(store.n_evaluations(i) > 0 for i in started), what="the workers to start")
        launching.request_stop(store_path, started[0])
        _wait(lambda: store.get_run(started[0]).status == "stopped", what="the stop")
        started.append(launching.start_run(store_path, cfg, background=True, session="carol"))  # a slot is free
        with pytest.raises(LimitError):  # resuming is starting a search too
            launching.resume_run(store_path, started[0], background=True, session="alice")
        # The command line is the operator's: with every slot of the server taken it still starts a
        # search, in the same store (it never goes through the page's launching functions).
        done = subprocess.run([sys.executable, "-m", "nasviz", "run", "--table", str(env / "t.csv"), "--strategy",
                               "random", "--budget", "3", "--store", str(store_path), "--json"],
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr[-1500:]
        assert len(store.list_runs()) == len(started) + 1
    finally:
        for run_id in started:
            launching.request_stop(store_path, run_id)
        _wait(lambda: all(store.get_run(i).status != "running" for i in started), what="all to stop")


def test_the_page_says_when_the_session_runs_too_many(env, monkeypatch):
    monkeypatch.setenv("NASVIZ_MAX_RUNNING_PER_SESSION", "1")
    monkeypatch.delenv("NASVIZ_SYNC_RUNS")
    at = _app_on_a_server_table(env, monkeypatch, rows=150, session="this-tab")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        store = RunStore(locations.default_store_path())  # a live process of this session owns a running run
        store.create_run({"strategy": "random", "budget": 9}, pid=sleeper.pid, session="this-tab")
        at.button(key="start").click().run()
        assert not at.exception
        assert any("this browser session already runs 1 search and may run 1 at once" in shown_text(e.value) for e in at.error)
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.mark.slow
def test_a_study_larger_than_allowed_is_refused_on_the_compare_page(env, monkeypatch):
    at = _app_on_a_server_table(env, monkeypatch, rows=50)
    at.switch_page("pages/compare.py").run()
    at.number_input(key="c_seeds").set_value(4).run()  # 2 strategies x 4 seeds = 8 > 6
    at.button(key="c_launch").click().run()
    assert not at.exception
    assert any("a study of 8 runs is larger than the 6 this server allows" in shown_text(e.value) for e in at.error)
    assert not locations.default_store_path().exists() or RunStore(locations.default_store_path()).list_runs() == []


def test_uploads_are_capped_in_code_and_in_streamlit(env):
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == Limits().max_upload_mb == 50
    data = table_text(200).encode()
    with pytest.raises(LimitError, match="larger than the 0.001 MB an upload may have"):
        sources.save_upload(data, "t.csv", limits=Limits(max_upload_mb=0.001))
    with pytest.raises(TableError, match="only CSV files"):
        sources.save_upload(data, "t.pkl")


@pytest.mark.slow  # each new upload is read first in a child process
def test_uploads_get_unguessable_private_names(env):
    import hashlib

    data = table_text(40).encode()
    first, _ = sources.save_upload(data, "mine.csv")
    second, _ = sources.save_upload(data, "mine.csv")
    assert first != second and first.read_bytes() == second.read_bytes() == data
    for path in (first, second):
        assert hashlib.sha256(data).hexdigest()[:16] not in path.name
        # the session's tag (12 hex digits of a hash of its random id), then 192 random bits
        assert re.fullmatch(r"(?:[0-9a-f]{12}|anon)-[A-Za-z0-9_-]{32}\.csv", path.name)
        assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.slow
def test_an_upload_is_parsed_once_however_often_the_page_reruns(env):
    data = table_text(200, seed=7).encode()
    before = uploads.cache_stats()
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.sidebar.radio(key="source_kind").set_value("Upload a CSV").run()
    at.sidebar.file_uploader(key="upload").upload("big.csv", data, "text/csv").run()
    for _ in range(3):  # every click reruns the whole script
        at.run()
    at.number_input(key="budget").set_value(5)
    at.selectbox(key="strategy").set_value("random")
    at.button(key="start").click().run()
    assert not at.exception and not at.error
    after = uploads.cache_stats()
    assert after["parses"] - before["parses"] == 1
    # another visitor with the same file: found by its content hash, still one parse
    other = AppTest.from_file(APP, default_timeout=120).run()
    other.sidebar.radio(key="source_kind").set_value("Upload a CSV").run()
    other.sidebar.file_uploader(key="upload").upload("big.csv", data, "text/csv").run()
    assert uploads.cache_stats()["parses"] - before["parses"] == 1
    assert uploads.cache_stats()["hits"] > after["hits"]


def test_uploads_no_search_has_used_for_a_day_are_deleted(env):
    store_path = locations.default_store_path()
    names = ("running", "recent", "long-ago", "unused", "fresh")
    files = {name: sources.save_upload(table_text(30 + i).encode(), f"{name}.csv")[0] for i, name in enumerate(names)}
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        store = RunStore(store_path)
        store.create_run({"table": str(files["running"]), "strategy": "random"}, pid=sleeper.pid)  # running
        store.create_run({"table": str(files["recent"]), "strategy": "random"}, status="finished")
        long_ago = store.create_run({"table": str(files["long-ago"]), "strategy": "random"}, status="finished")
        old = time.time() - 3 * 86400  # default age: 24 hours
        store._write(lambda conn: conn.execute("UPDATE runs SET updated=? WHERE id=?", (old, long_ago)))
        for name in ("running", "recent", "long-ago", "unused"):
            os.utime(files[name], (old, old))
        sources.save_upload(table_text(40).encode(), "new.csv")  # each upload prunes first
        assert {name for name, path in files.items() if path.exists()} == {"running", "recent", "fresh"}
    finally:
        sleeper.kill()
        sleeper.wait()
    with pytest.raises(LimitError, match="NASVIZ_UPLOADS_MAX_TOTAL_MB"):
        sources.save_upload(table_text(34).encode(), "more.csv", limits=Limits(uploads_max_total_mb=0.001))


def test_server_tables_have_a_size_limit(data_dir, monkeypatch):
    monkeypatch.setenv("NASVIZ_MAX_TABLE_MB", "0.0005")
    with pytest.raises(TableError, match="larger than the 0.0005 MB allowed"):
        sources.server_table("good.csv")


def test_bad_limit_settings_are_named(env, monkeypatch):
    monkeypatch.setenv("NASVIZ_MAX_BUDGET", "lots")
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    assert any("misconfigured" in e.value and "NASVIZ_MAX_BUDGET" in shown_text(e.value) for e in at.error)


# ============================================================================ 4. lease race


def _owner_holds_no_lock(store_path: Path) -> bool:
    """Whether the store's write lock is free (a paused worker may hold it mid-transaction)."""
    conn = sqlite3.connect(store_path, timeout=0.2)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_paused_worker_woken_after_a_resume_exits_without_writing(env, monkeypatch):
    monkeypatch.setenv("NASVIZ_STALE_AFTER", "1.5")  # workers beat every 0.5 s; 1.5 s silent = interrupted
    (env / "t.csv").write_text(table_text(120))
    source = sources.DataSource.from_table(env / "t.csv", sources.table_from_path(env / "t.csv"))
    cfg = launching.search_config(source, strategy="evolution", budget=60, seed=5, step_delay=0.1)
    store_path = locations.default_store_path()
    store = RunStore(store_path)
    run_id = launching.start_run(store_path, cfg, background=True)
    first = launching._CHILDREN[run_id]
    _wait(lambda: store.n_evaluations(run_id) >= 5, what="the first worker's evaluations")
    for _ in range(50):  # pause it outside a transaction (else the second worker would wait for it)
        os.kill(first.pid, signal.SIGSTOP)
        time.sleep(0.05)
        if _owner_holds_no_lock(store_path):
            break
        os.kill(first.pid, signal.SIGCONT)
    paused_at = store.n_evaluations(run_id)
    try:
        _wait(lambda: store.get_run(run_id).status == "interrupted", 30, "the run to be declared interrupted")
        assert first.poll() is None  # paused, not dead: only its silence gave it away
        launching.resume_run(store_path, run_id, background=True)
        second = launching._CHILDREN[run_id]
        _wait(lambda: store.n_evaluations(run_id) >= paused_at + 5, what="the second worker's progress")
    finally:
        os.kill(first.pid, signal.SIGCONT)  # the first worker wakes up while the second one runs
    assert first.wait(timeout=60) == 0  # it exits quietly...
    assert second.wait(timeout=120) == 0
    log = (store_path.parent / "logs" / f"run-{run_id}.log").read_text()
    assert "was taken over" in log and "lost after" in log
    run = store.get_run(run_id)
    assert run.status == "finished" and run.error is None and run.pid == second.pid  # ...writing nothing
    evaluations = store.evaluations(run_id)
    assert [e.index for e in evaluations] == list(range(60))
    # the same evaluations as a run that was never paused
    monkeypatch.setenv("NASVIZ_STORE", str(env / "other.sqlite"))
    plain = launching.start_run(env / "other.sqlite", dataclasses.replace(cfg, run=dataclasses.replace(cfg.run, step_delay=0.0)), background=False)
    assert [e.arch for e in RunStore(env / "other.sqlite").evaluations(plain)] == [e.arch for e in evaluations]


# ============================================================================ 5. the Docker image


@pytest.mark.slow
def test_the_docker_image_runs_unprivileged_with_paths_off_a_health_check_and_a_volume(tmp_path):
    """Docker is not available to the tests: the Dockerfile is read, and its health check command
    is run against a real Streamlit server (and against a port where nothing listens)."""
    text = (REPO / "Dockerfile").read_text()
    instructions = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    users = [line.split()[1] for line in instructions if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    assert "NASVIZ_DATA_DIR" not in "\n".join(instructions)  # server-side paths stay off
    volume = next(line for line in instructions if line.startswith("VOLUME "))
    store = re.search(r"NASVIZ_STORE=(\S+)", text).group(1)
    assert Path(store).parent.as_posix() in volume
    command = json.loads(text.split("HEALTHCHECK", 1)[1].split("CMD", 1)[1].splitlines()[0].strip())
    assert "/_stcore/health" in " ".join(command)
    assert 'address = "localhost"' in (REPO / ".streamlit" / "config.toml").read_text()  # outside Docker

    sys.path.insert(0, str(REPO / "tests" / "browser"))
    from browser_helpers import free_port, streamlit_server

    def health(port: str) -> int:
        argv = [sys.executable if a == "python" else a.replace("8501", port) for a in command]
        return subprocess.run(argv, capture_output=True, timeout=30).returncode

    assert health(str(free_port())) != 0  # nothing listens: the check fails
    with streamlit_server(tmp_path / "store.sqlite", tmp_path / "server.log") as url:
        assert health(url.rsplit(":", 1)[1]) == 0


def test_a_dataset_folder_typed_in_the_dashboard_stays_in_the_data_folder(tmp_path):
    from nasviz.errors import PathNotAllowedError
    from nasviz.server_paths import resolve_server_folder

    data = tmp_path / "data"
    (data / "MNIST" / "raw").mkdir(parents=True)
    (data / "table.csv").write_text("arch,acc\n")
    assert resolve_server_folder("MNIST", data) == (data / "MNIST").resolve()
    for text, message in (("../", "outside the data folder"), ("table.csv", "not a folder"),
                          ("/etc", "outside the data folder")):
        with pytest.raises(PathNotAllowedError, match=message):
            resolve_server_folder(text, data)
    with pytest.raises(PathNotAllowedError, match="off"):
        resolve_server_folder("MNIST", None)


@pytest.mark.slow  # each new upload is read first in a child process
def test_one_session_cannot_fill_the_servers_uploads(env, tmp_path):
    """Issue 47: each browser session may keep its own share of the uploads folder; another
    session's upload still goes in when one session's share is full."""
    data = table_text(30).encode()
    limits = Limits(max_uploads_per_session_mb=2.5 * len(data) / 1e6, uploads_max_total_mb=1.0)  # two fit
    folder = tmp_path / "uploads"
    sources.save_upload(data, "a.csv", folder=folder, limits=limits, owner="alice")
    with pytest.raises(LimitError, match="this browser session keeps"):
        for k in range(5):
            sources.save_upload(table_text(31 + k).encode(), "b.csv", folder=folder, limits=limits, owner="alice")
    path, _ = sources.save_upload(table_text(50).encode(), "c.csv", folder=folder, limits=limits, owner="bob")
    assert path.exists() and not path.name.startswith(uploads.owner_tag("alice"))


@pytest.mark.slow  # each new upload is read first in a child process
def test_an_upload_that_reads_too_slowly_is_refused_before_the_server_parses_it(env, tmp_path):
    """Issue 47: a new upload is read first in a child process with a time limit."""
    before = uploads.cache_stats()["parses"]
    with pytest.raises(LimitError, match="takes more than"):
        sources.save_upload(table_text(40).encode() + b"\n# slow\n", "slow.csv", folder=tmp_path / "u",
                            limits=Limits(max_upload_parse_seconds=0.001))
    assert uploads.cache_stats()["parses"] == before  # the server's process never parsed it
    path, table = sources.save_upload(table_text(41).encode(), "fine.csv", folder=tmp_path / "u",
                                      limits=Limits(max_upload_parse_seconds=60))
    assert len(table) == 41
