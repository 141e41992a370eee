"""The example plugin package (``examples/nasviz-chain8``), installed the way a user installs it,
used from the command line, from a search started on the page (a real worker process) and from an
Optuna study (issue 48, "Done when").

The package is installed once into a temporary folder (``pip install --no-deps --target``, offline,
from a copy so that the source tree stays clean) and found through ``PYTHONPATH``: its entry point
is what registers the space, in this process and in every process started from it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nasviz import plugins

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "nasviz-chain8"
ORIGIN = "entry point chain8 (nasviz-chain8==0.1.0)"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, Path]:
    """The example installed into a temporary folder, with its synthetic table written by it."""
    root = tmp_path_factory.mktemp("plugin")
    source, target = root / "source", root / "site"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--no-index", "--target", str(target), str(source)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    table = root / "chain8.csv"
    made = _python(["-m", "nasviz_chain8", "table", str(table)], target, root)
    assert made.returncode == 0, made.stderr
    return {"site": target, "source": source, "table": table, "root": root}


def _env(site: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != plugins.PLUGINS_ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def _python(args, site: Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, env=_env(site), capture_output=True, text=True,
                          timeout=600)


@pytest.mark.slow
def test_the_cli_lists_runs_and_benchmarks_the_installed_space(installed):
    site, table, cwd = installed["site"], installed["table"], installed["root"]
    listed = _python(["-m", "nasviz", "components"], site, cwd)
    assert listed.returncode == 0, listed.stderr
    line = next(l for l in listed.stdout.splitlines() if l.strip().startswith("chain8 "))
    assert line.endswith(f"[{ORIGIN}]")
    run = _python(["-m", "nasviz", "run", "--space", "chain8", "--table", str(table), "--strategy",
                   "bo-tw2g-hamming-ei", "--budget", "12", "--n-init", "5", "--json"], site, cwd)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["metric"] == "valid_accuracy" and len(result["evaluations"]) == 12 and result["regret"] >= 0
    bench = _python(["-m", "nasviz", "bench", "search", "--space", "chain8", "--table", str(table), "--strategies",
                     "bo-tw2g-hamming-ei,bo-wl-ei,optuna-tpe", "--budget", "12", "--n-init", "5", "--seeds", "1",
                     "--workers", "1", "--checkpoints", "6", "--no-progress"], site, cwd)
    assert bench.returncode == 0, bench.stderr
    report = json.loads(bench.stdout)
    assert report["space"] == "chain8" and report["crashed_runs"] == 0
    assert all(s["runs"] == 1 for s in report["strategies"].values())


@pytest.mark.slow
def test_the_plugins_own_test_passes_once_installed(installed):
    done = _python(["-m", "pytest", "-q", "-p", "no:cacheprovider", str(installed["source"] / "tests")],
                   installed["site"], installed["source"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout


@pytest.fixture()
def loaded(installed, monkeypatch):
    """The plugin loaded in this process too (as the Streamlit process loads it), and found by the
    processes it starts; unregistered afterwards."""
    from nasviz.components import SPACES, load_plugins

    monkeypatch.syspath_prepend(str(installed["site"]))
    monkeypatch.setenv("PYTHONPATH", _env(installed["site"])["PYTHONPATH"])
    monkeypatch.delenv(plugins.PLUGINS_ENV, raising=False)
    plugins.reset_for_tests()
    load_plugins()
    assert SPACES.get("chain8").origin == ORIGIN
    try:
        yield installed
    finally:
        SPACES.unregister("chain8")
        sys.modules.pop("nasviz_chain8", None)
        plugins.reset_for_tests()


@pytest.mark.slow
def test_a_search_started_on_the_page_runs_in_a_real_worker_process(loaded, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from nasviz.dashboard import launching
    from nasviz.store import RunStore
    from tests_app_helpers import APP, errors

    store = tmp_path / "runs" / "store.sqlite"
    monkeypatch.setenv("NASVIZ_STORE", str(store))
    monkeypatch.setenv("NASVIZ_DATA_DIR", str(loaded["root"]))
    monkeypatch.delenv("NASVIZ_SYNC_RUNS", raising=False)  # a real background worker, as on a server
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.sidebar.selectbox(key="space").set_value("chain8").run()
    at.sidebar.radio(key="source_kind").set_value("CSV on the server").run()
    at.sidebar.text_input(key="server_csv").input("chain8.csv").run()
    assert not errors(at), [e.value for e in at.error]
    assert at.selectbox(key="strategy").value == "bo-tw2g-hamming-ei"  # the default searches it
    at.number_input(key="budget").set_value(12)
    try:
        at.button(key="start").click().run()
        assert not errors(at), [e.value for e in at.error]
        deadline = time.time() + 240
        while time.time() < deadline and RunStore(store).get_run(1).status == "running":
            time.sleep(1)
        run = RunStore(store).get_run(1)
        log = (store.parent / "logs" / "run-1.log")
        assert run.status == "finished", (run.error, log.read_text() if log.exists() else "")
        assert run.pid != os.getpid() and run.n_evaluations == 12  # it ran in another process
        at.run()
        metrics = {m.label: m.value for m in at.metric}
        assert metrics["Evaluations"] == "12 / 12" and not errors(at)
    finally:
        for proc in [*launching._WARM.values(), *launching._CHILDREN.values()]:
            if proc.stdin:
                proc.stdin.close()
            proc.wait(timeout=60)
        launching._WARM.clear()
        launching._CHILDREN.clear()


@pytest.mark.slow
def test_an_optuna_study_searches_the_installed_space(loaded):
    optuna = pytest.importorskip("optuna")
    import nasviz.optuna_sampler as nvo
    from nasviz.objectives import load_table

    table = load_table(loaded["table"], space="chain8")
    params = nvo.parameters("chain8")
    assert list(params) == [f"layer_{i}" for i in range(1, 9)]

    def objective(trial):
        arch = nvo.architecture("chain8", {n: trial.suggest_categorical(n, c) for n, c in params.items()})
        return table.lookup(arch, "valid_accuracy")

    study = optuna.create_study(direction="maximize", sampler=nvo.NASVizSampler(space="chain8", seed=0, n_init=4))
    study.optimize(objective, n_trials=10)
    assert len({tuple(t.params.values()) for t in study.trials}) == 10  # nasviz never proposes a chain twice
    assert study.best_value >= max(t.value for t in study.trials[:4])


@pytest.mark.slow
def test_a_spawned_worker_process_finds_the_plugin(loaded):
    """A process started with ``spawn`` (the executors' and tabulate's workers; Dask's) shares
    nothing with this one but its environment: its plugin loading finds the entry point again."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from nasviz.bench.search_runs import init_worker
    from nasviz.spaces import get_space

    with ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=init_worker) as pool:
        space = pool.submit(get_space, "chain8").result(timeout=300)
    assert type(space).__module__ == "nasviz_chain8" and space.name == "chain8"
