"""Benchmark provenance: every ``bench`` command's JSON says which code, machine and libraries
made it (``nasviz/bench/provenance.py``), and results files that benchmarks append to do too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from nasviz.bench import BENCHMARKS, provenance

REPO = Path(__file__).resolve().parents[2]
TABLE = REPO / "data" / "nb201_digits.csv"
CHROMIUM = Path("/usr/bin/chromium")
slow = pytest.mark.slow


def _head() -> tuple[str | None, bool | None]:
    return provenance.git_state(REPO)


def check(record: dict, command: list[str]) -> None:
    """``record["provenance"]`` has every field, filled in, and names this checkout's commit."""
    p = record[provenance.KEY]
    assert list(p) == ["schema", "commit", "dirty", "nasviz_version", "started_utc", "finished_utc", "wall_seconds",
                       "cpu_seconds", "command", "machine", "versions"]
    assert p["schema"] == provenance.SCHEMA
    assert (p["commit"], p["dirty"]) == _head()
    assert p["started_utc"].endswith("Z") and p["finished_utc"] >= p["started_utc"]
    assert p["wall_seconds"] >= 0 and p["cpu_seconds"] >= 0
    assert p["command"] == [provenance.portable(a) for a in command]
    machine = p["machine"]
    assert machine["cores"] >= 1 and 1 <= machine["usable_cores"] <= machine["cores"]
    assert machine["cpu_model"] and machine["system"]
    assert machine["device"] == "cpu" or machine["device"].startswith("cuda: ")
    versions = p["versions"]
    assert versions["python"] == ".".join(map(str, sys.version_info[:3]))
    for package in ("torch", "numpy", "scipy", "optuna"):
        assert package in versions
    import numpy
    import scipy
    import torch

    assert (versions["numpy"], versions["scipy"], versions["torch"]) == (numpy.__version__, scipy.__version__,
                                                                        torch.__version__)


#: The smallest real invocation of every benchmark: name -> (arguments, extra marks). A benchmark
#: added to ``nasviz.bench.BENCHMARKS`` needs an entry here (the first test says so). ``{out:NAME}``
#: is the JSON that benchmark NAME printed (run first if need be), ``{tmp}`` a folder of the test's.
INVOCATIONS: dict[str, tuple[list[str], tuple]] = {
    "kernels": (["--n", "12", "--slow-n", "4", "--plain-n", "0", "--kernels", "tw", "--repeats", "1"], ()),
    "surrogate": (["--table", str(TABLE), "--metric", "valid_accuracy", "--train", "10", "--test", "20", "--trials",
                   "1", "--fit-timing", "0"], ()),
    "search": (["--table", str(TABLE), "--metric", "valid_accuracy", "--strategies", "random,optuna-tpe,bo-tw2g-ucb",
                "--budget", "12", "--seeds", "2", "--runs", "--workers", "1", "--no-progress"], ()),
    # every part once, on one network for one epoch (its defaults, 64 networks on every core and a
    # torch.compile, took four minutes of the suite)
    "trainer": (["--networks", "1", "--epochs", "1", "--repeats", "1", "--profile-networks", "1",
                 "--compile-networks", "0", "--variants", "none", "--scale-networks", "2", "--cells", "1",
                 "--skip-parallel"], ()),
    "dashboard": (["--evaluations", "20", "--repeats", "1", "--no-browser", "--no-startup"], ()),
    "explorer": (["--n", "10", "--repeats", "1", "--runs", "1", "--kernels", "tw2g"], ()),
    "store": (["--budget", "10", "--writers", "1", "--writer-steps", "5"], ()),
    "warmstart": (["--epochs", "1", "--n-morphs", "1"], ()),
    "layer-search": (["--seconds", "1", "--seeds", "0", "--strategies", "random", "--workers", "1", "--epochs", "1"],
                     ()),
    "layer-retrain": (["--from", "{out:layer-search}", "--seeds", "1", "--workers", "1"], ()),
    "cnn-search": (["--seconds", "1", "--seeds", "0", "--methods", "random", "--workers", "1", "--results",
                    "{tmp}/cnn.jsonl"], ()),
    "table-pilot": (["--cells", "8", "--seeds", "2", "--epochs", "1", "--gp-train", "4", "--gp-trials", "2",
                     "--workers", "1", "--out", "{tmp}/pilot", "--no-progress"], ()),
    "table-reliability": (["--table", str(TABLE)], ()),
    "tuning": (["--results", "{out:search}"], ()),
    "goal": (["--results", "{out:search}", "--candidate", "bo-tw2g-ucb", "--peers", "optuna-tpe"], ()),
    "nb101": (["--skip-cold", "--train-cells", "0"], ()),
    "browser": (["--repeats", "1", "--compare-evaluations", "50"],
                (pytest.mark.browser,
                 pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium is not installed at /usr/bin/chromium"))),
    "classroom": (["--visitors", "2", "--heavy", "1", "--rounds", "1", "--heavy-request", "n=10&kernels=tw2g"],
                  (pytest.mark.browser,
                   pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium is not installed at /usr/bin/chromium"))),
    "gp-bounds": (["--table", str(TABLE), "--metric", "valid_accuracy", "--budget", "12", "--seeds", "1"], ()),
    "top-cells": (["--tables", f"{TABLE}:valid_accuracy", "--top", "2", "--k", "4"], ()),
    "fidelity-ranks": (["--table", str(TABLE), "--metric", "valid_accuracy", "--fidelity",
                        "1=valid_accuracy_epoch_1,3=valid_accuracy"], ()),
    # no search fits in 20 s: the check says so for each and runs the trainer's smallest parts
    "accelerator-check": (["--total-seconds", "20", "--out", "{tmp}/accel"], ()),
}


class Runs:
    """Each benchmark run once per test session, as a user runs it: in its own process (several
    start worker processes or drive the app, which must not share the test's process).

    The first test of a benchmark that does not drive Chromium starts the session's (``wanted``)
    two at a time in the background (most of a small invocation is the process's imports), each
    after the benchmarks whose output it reads; a test then waits for its own. The benchmarks that
    drive Chromium against a server run alone, when their test comes, after the others have ended:
    beside each other, ``bench browser`` failed once. (Under ``make test`` they run on the worker
    of the Chromium tests, tests/conftest.py, which thus starts none of the others.)"""

    def __init__(self, folder: Path, wanted: list[str]):
        self.folder = folder
        self.wanted = wanted
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.started: dict[str, Future] = {}
        self.lock = threading.RLock()

    def prefetch(self, names: list[str]) -> None:
        for name in names:
            self._start(name)

    def _start(self, name: str) -> Future:
        with self.lock:
            if name not in self.started:
                for argument in INVOCATIONS[name][0]:  # what it reads is queued first (the pool is FIFO)
                    if argument.startswith("{out:"):
                        self._start(argument[5:-1])
                self.started[name] = self.pool.submit(self._run, name)
            return self.started[name]

    def __call__(self, name: str) -> tuple[list[str], Path, dict]:
        if name not in ALONE:
            self.prefetch(self.wanted)
        elif name not in self.started:
            for future in list(self.started.values()):
                future.exception()  # wait for it to end (its own test reports how)
            self.started[name] = self.pool.submit(self._run, name)
        command, tmp, done = self._start(name).result()
        assert done.returncode == 0, f"{' '.join(command)}:\n{done.stderr[-3000:]}"
        return command, tmp, json.loads(done.stdout)

    def _run(self, name: str) -> tuple[list[str], Path, subprocess.CompletedProcess]:
        tmp = self.folder / name
        tmp.mkdir()
        command = ["bench", name, *(self._fill(a, tmp) for a in INVOCATIONS[name][0])]
        # Benchmarks that drive the app get their own store and data folder.
        env = {**os.environ, "NASVIZ_STORE": str(tmp / "store.sqlite"), "NASVIZ_DATA_DIR": str(tmp)}
        done = subprocess.run([sys.executable, "-m", "nasviz", *command], capture_output=True, text=True,
                              cwd=REPO, env=env, timeout=600)
        (tmp / "out.json").write_text(done.stdout)
        return command, tmp, done

    def _fill(self, argument: str, tmp: Path) -> str:
        if argument.startswith("{out:"):
            return str(self(argument[5:-1])[1] / "out.json")
        return argument.replace("{tmp}", str(tmp))


#: The benchmarks that run alone (:class:`Runs`): those that drive a browser.
ALONE = {name for name, (_, marks) in INVOCATIONS.items() if any(m.name == "browser" for m in marks)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory, request) -> Runs:
    wanted = [item.callspec.params["name"] for item in request.session.items
              if item.module is request.module and hasattr(item, "callspec") and item.callspec.params["name"] not in ALONE
              and not any(m.name == "skipif" and m.args and m.args[0] for m in item.iter_markers())]
    runs = Runs(tmp_path_factory.mktemp("bench"), wanted)
    yield runs
    runs.pool.shutdown(wait=True, cancel_futures=True)


def test_every_benchmark_has_an_invocation_here():
    assert set(INVOCATIONS) == set(BENCHMARKS), (
        "give every benchmark of nasviz.bench.BENCHMARKS its smallest real invocation in INVOCATIONS "
        f"(missing: {sorted(set(BENCHMARKS) - set(INVOCATIONS))}; unknown: {sorted(set(INVOCATIONS) - set(BENCHMARKS))})")


@pytest.mark.parametrize("name", [pytest.param(n, marks=(slow, *marks)) for n, (_, marks) in INVOCATIONS.items()])
def test_every_bench_command_prints_its_provenance(name, runs):
    command, tmp, out = runs(name)
    check(out, command)
    assert list(out)[0] == provenance.KEY and len(out) > 1  # the benchmark's own figures follow
    assert str(REPO) not in json.dumps(out)  # results files are committed: no path of this machine
    if name == "cnn-search":  # each run appended to --results carries its own provenance
        records = [json.loads(line) for line in (tmp / "cnn.jsonl").read_text().splitlines()]
        assert len(records) == 1
        check(records[0], command)


def test_git_state_names_the_commit_and_a_dirty_tree(tmp_path):
    assert provenance.git_state(tmp_path) == (None, None)  # not a checkout
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "a.txt").write_text("1")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "a"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert provenance.git_state(tmp_path) == (head, False)
    (tmp_path / "results.json").write_text("{}")  # an untracked results file is not a change of code
    assert provenance.git_state(tmp_path) == (head, False)
    (tmp_path / "a.txt").write_text("2")
    assert provenance.git_state(tmp_path) == (head, True)


def test_recorded_commands_name_no_folder_of_this_machine():
    root = provenance.REPO_ROOT
    assert provenance.portable(f"{root}/data/x.csv") == "./data/x.csv"
    assert provenance.portable(f"{root.parent}/shared/data/t.csv:acc@nb101") == "../shared/data/t.csv:acc@nb101"
    assert provenance.portable(f"--results={root.parent}/r.json") == "--results=../r.json"
    assert provenance.portable(f"{Path.home()}/data") in ("~/data", "../data", "./data")
    assert provenance.portable(f"{root}-other/x") == f"../{root.name}-other/x"  # a sibling, not the checkout
    assert provenance.portable("seeds=3") == "seeds=3"


def test_a_path_outside_the_checkout_home_and_temporary_folder_keeps_only_its_name(monkeypatch):
    monkeypatch.setattr(provenance.tempfile, "gettempdir", lambda: "/var/tmp-x")
    assert provenance.portable("/var/tmp-x/s56/cnn-es.jsonl") == "$TMPDIR/s56/cnn-es.jsonl"
    assert provenance.portable("/scratch/run7/r.jsonl") == "<elsewhere>/r.jsonl"
    assert provenance.portable("--data-folder=/srv/data/mnist") == "--data-folder=<elsewhere>/mnist"
    assert provenance.portable("/data") == "/data"  # a single name says nothing of the machine
    # relative paths and addresses are left as they are
    assert provenance.portable("../s58/es.jsonl") == "../s58/es.jsonl"
    assert provenance.portable("http://127.0.0.1:8501/compare") == "http://127.0.0.1:8501/compare"
    assert provenance.portable("a/b/c") == "a/b/c"


def test_stamp_puts_provenance_first_and_refuses_a_non_dict():
    started = provenance.collect(["bench", "x"])
    out = provenance.stamp({"a": 1, "provenance": "old"}, started)
    assert list(out) == ["provenance", "a"] and out["provenance"]["command"] == ["bench", "x"]
    with pytest.raises(TypeError):
        provenance.stamp([1, 2], started)
