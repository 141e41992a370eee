"""The SQLite run store: round trips, validation, stop requests, dead runs, concurrent writers."""

from __future__ import annotations

import dataclasses
import json
import math
import multiprocessing
import subprocess
import sys
import os
import threading
import time

import numpy as np
import pytest

from nasviz.errors import LeaseLostError
from nasviz.store import (CSV_COLUMNS, SCHEMA_VERSION, RunStore, StepResult, StoreError, StoredEvaluation, StoredRun,
                          StoredSnapshot, UnknownRunError, read_csv_export)

CONFIG = {"objective": "table", "table": "t.csv", "metric": "acc", "strategy": "random", "seed": 3,
          "budget": 10, "batch_size": 2, "strategy_options": {}}


def evs(n: int, start: int = 0) -> list[dict]:
    return [{"arch": f"a{start + i}", "value": float(start + i) / 3, "cost": 0.5 + i, "info": {"epochs": [1, 2]}}
            for i in range(n)]


@pytest.fixture
def store(tmp_path) -> RunStore:
    return RunStore(tmp_path / "runs.sqlite")


def test_a_run_round_trips_with_its_summary(store):
    run_id = store.create_run(CONFIG)
    store.add_step(run_id, 1, evs(2), 0, {"step": 1, "best_value": 1 / 3, "pool": np.arange(3)})
    store.add_evaluations(run_id, [{"arch": "bad", "value": None, "status": "failed", "error": "boom"}], 2, step=2)
    store.add_snapshot(run_id, {"step": 2, "gp_std": [np.float64(0.5), float("nan")]})
    run = store.get_run(run_id)
    assert run.config == CONFIG and run.status == "running" and run.strategy == "random"
    assert run.n_evaluations == 3 and run.n_failed == 1 and run.last_step == 2
    assert run.best_value == pytest.approx(1 / 3) and run.best_arch == "a1"
    got = store.evaluations(run_id)
    assert [e.index for e in got] == [0, 1, 2] and [e.step for e in got] == [1, 1, 2]
    assert got[1].value == 1 / 3 and got[1].cost == 1.5 and got[1].info == {"epochs": [1, 2]}
    assert got[2].value is None and got[2].status == "failed" and got[2].error == "boom"
    assert store.evaluations(run_id, since_index=2) == got[2:]
    assert store.snapshots(run_id) == [StoredSnapshot(step=1, best_value=1 / 3), StoredSnapshot(step=2)]
    # numpy becomes plain lists; NaN becomes null (strict JSON that a browser can read); keys the
    # record does not read are kept in the file, and exported
    assert store.export_json(run_id)["snapshots"] == [{"step": 1, "best_value": 1 / 3, "pool": [0, 1, 2]},
                                                      {"step": 2, "gp_std": [0.5, None]}]
    assert [s.step for s in store.snapshots(run_id, since_step=1)] == [2]
    assert store.latest_snapshot(run_id).step == 2 and store.snapshot_steps(run_id) == [1, 2]
    store.set_status(run_id, "finished")
    assert store.get_run(run_id).status == "finished"


def test_list_runs_is_newest_first_and_reopening_the_file_keeps_everything(tmp_path):
    path = tmp_path / "sub" / "runs.sqlite"
    first = RunStore(path)
    a = first.create_run(CONFIG, name="first")
    b = first.create_run({**CONFIG, "strategy": "bo-tw2g-ucb"})
    first.add_evaluations(b, evs(4), 0, step=1)
    again = RunStore(path)
    runs = again.list_runs()
    assert [r.id for r in runs] == [b, a] and runs[1].name == "first"
    assert runs[0].strategy == "bo-tw2g-ucb" and runs[0].n_evaluations == 4 and runs[1].best_value is None


def test_nothing_is_written_twice_or_with_a_gap(store):
    run_id = store.create_run(CONFIG)
    store.add_evaluations(run_id, evs(3), 0, step=1)
    with pytest.raises(StoreError, match="next must start at index 3"):
        store.add_evaluations(run_id, evs(1), 2, step=2)  # overlap
    with pytest.raises(StoreError, match="next must start at index 3"):
        store.add_evaluations(run_id, evs(1), 4, step=2)  # gap
    assert store.n_evaluations(run_id) == 3
    # a failing batch is all-or-nothing: the good first record is not kept
    with pytest.raises(StoreError, match="evaluation 4 of run .*'arch' must be"):
        store.add_evaluations(run_id, [evs(1, 3)[0], {"arch": None, "value": 1}], 3, step=2)
    assert store.n_evaluations(run_id) == 3


@pytest.mark.parametrize("bad, message", [
    ({"arch": "x", "value": "high"}, "value must be a number"),
    ({"arch": "x", "value": 1.0, "info": [1]}, "'info' must be a dict"),
    ({"arch": "", "value": 1.0}, "'arch' must be"),
])
def test_bad_evaluations_are_refused_with_the_field_named(store, bad, message):
    run_id = store.create_run(CONFIG)
    with pytest.raises(StoreError, match=message):
        store.add_evaluations(run_id, [bad], 0, step=1)


def test_bad_requests_name_the_problem(store, tmp_path):
    with pytest.raises(UnknownRunError, match="no run 42"):
        store.evaluations(42)
    with pytest.raises(KeyError):  # also a KeyError, for callers that look runs up by id
        store.get_run(42)
    run_id = store.create_run(CONFIG)
    with pytest.raises(StoreError, match="unknown run status 'done'"):
        store.set_status(run_id, "done")
    with pytest.raises(StoreError, match="run id must be an integer"):
        store.get_run("three")
    with pytest.raises(StoreError, match="'step' key"):
        store.add_snapshot(run_id, {"best": 1})
    with pytest.raises(StoreError, match="not plain data"):
        store.create_run({"strategy": object()})
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a nasviz run store"):
        RunStore(junk)
    with pytest.raises(StoreError, match="is a folder"):
        RunStore(tmp_path)


def test_stop_is_requested_through_the_store_and_cleared_by_a_new_owner(store):
    run_id = store.create_run(CONFIG)
    assert not store.stop_requested(run_id)
    store.request_stop(run_id)
    assert store.stop_requested(run_id) and store.get_run(run_id).stop_requested
    store.set_status(run_id, "running", claim=True)  # a resumed run starts without the old request
    assert not store.stop_requested(run_id)


def test_a_run_whose_process_died_is_marked_interrupted(store):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = store.create_run(CONFIG, pid=dead.pid)
    alive = store.create_run(CONFIG)  # this process: alive, fresh heartbeat
    finished = store.create_run(CONFIG, pid=dead.pid)
    store.set_status(finished, "finished")
    statuses = {r.id: r.status for r in store.list_runs()}
    assert statuses == {orphan: "interrupted", alive: "running", finished: "finished"}


def test_a_run_without_a_recent_heartbeat_is_marked_interrupted(tmp_path):
    store = RunStore(tmp_path / "r.sqlite", stale_after=0.0)
    run_id = store.create_run(CONFIG)
    assert store.get_run(run_id).status == "interrupted"


def test_delete_refuses_a_running_run_and_removes_everything_of_a_stopped_one(store):
    keep, gone = store.create_run(CONFIG), store.create_run(CONFIG)
    for run_id in (keep, gone):
        store.add_step(run_id, 1, evs(2), 0, {"step": 1})
        store.add_network(run_id, "a0", {"w": np.ones(3)})
    with pytest.raises(StoreError, match="still running"):
        store.delete_run(gone)
    store.set_status(gone, "stopped")
    store.delete_run(gone)
    assert [r.id for r in store.list_runs()] == [keep]
    with pytest.raises(UnknownRunError):
        store.snapshots(gone)
    with store._read() as conn:  # cascaded: no orphan rows left behind
        assert conn.execute("SELECT COUNT(*) FROM evaluations WHERE run_id=?", (gone,)).fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM snapshots WHERE run_id=?", (gone,)).fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM networks WHERE run_id=?", (gone,)).fetchone()[0] == 0
    assert store.n_evaluations(keep) == 2 and store.network(keep, "a0") is not None


def test_csv_export_round_trips_exactly(store, tmp_path):
    run_id = store.create_run(CONFIG)
    rows = evs(3) + [{"arch": "f", "value": None, "status": "failed", "error": "no row, sorry", "info": {}}]
    store.add_evaluations(run_id, rows, 0, step=1)
    path = tmp_path / "run.csv"
    assert store.export_csv(run_id, path) == 4
    assert path.read_text().splitlines()[0] == ",".join(CSV_COLUMNS)
    assert read_csv_export(path) == store.evaluations(run_id)  # floats bit for bit (repr)


def test_json_export_round_trips_through_import(store, tmp_path):
    run_id = store.create_run(CONFIG, name="demo")
    store.add_step(run_id, 1, evs(2), 0, {"step": 1, "pool": ["a", "b"]})
    store.add_step(run_id, 2, evs(2, 2), 2, {"step": 2, "pool": []})
    store.set_notes(run_id, "a run to show the class")
    path = tmp_path / "run.json"
    doc = store.export_json(run_id, path)
    assert json.loads(path.read_text()) == doc and doc["run"]["config"] == CONFIG
    # the run's part of the file, key for key in this order (exports read by other tools stay as they were)
    assert path.read_text().startswith('{"format":"nasviz-run","version":%d,"run":{"id":%d,"name":"demo","created":'
                                       % (SCHEMA_VERSION, run_id))
    assert list(doc["run"]) == ["id", "name", "created", "updated", "status", "error", "config", "notes"]
    assert all(list(ev) == list(CSV_COLUMNS) for ev in doc["evaluations"])  # each evaluation's keys, in this order
    other = RunStore(tmp_path / "other.sqlite")
    new_id = other.import_json(path)
    run = other.get_run(new_id)
    assert run.name == "demo" and run.config == CONFIG and run.notes == "a run to show the class"
    assert run.status == "interrupted"  # exported while running: nobody owns it here
    assert [dataclasses.replace(e, created=0.0) for e in other.evaluations(new_id)] == \
        [dataclasses.replace(e, created=0.0) for e in store.evaluations(run_id)]
    assert other.snapshots(new_id) == store.snapshots(run_id)
    assert doc["snapshots"] == [{"step": 1, "pool": ["a", "b"]}, {"step": 2, "pool": []}]  # every stored key
    assert other.export_json(new_id)["snapshots"] == doc["snapshots"]
    with pytest.raises(StoreError, match="not a nasviz run export"):
        other.import_json({"format": "something else"})


def _write_run(path: str, worker: int, steps: int, batch: int, barrier) -> int:
    store = RunStore(path, busy_timeout=0.05)  # short timeout: exercise the store's own retries
    run_id = store.create_run({**CONFIG, "seed": worker})
    barrier.wait()  # start writing together
    for step in range(steps):
        rows = [{"arch": f"w{worker}-{step}-{i}", "value": float(worker)} for i in range(batch)]
        store.add_step(run_id, step + 1, rows, step * batch, {"step": step + 1, "worker": worker})
    store.set_status(run_id, "finished")
    return run_id


@pytest.mark.slow
def test_concurrent_writer_processes_all_land(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    RunStore(path)
    n_workers, steps, batch = 4, 40, 3
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Manager().Barrier(n_workers)
    with ctx.Pool(n_workers) as pool:
        ids = pool.starmap(_write_run, [(path, w, steps, batch, barrier) for w in range(n_workers)])
    store = RunStore(path)
    assert sorted(ids) == sorted(r.id for r in store.list_runs()) and len(set(ids)) == n_workers
    for worker, run_id in enumerate(ids):
        got = store.evaluations(run_id)
        assert [e.index for e in got] == list(range(steps * batch))
        assert {e.arch for e in got} == {f"w{worker}-{s}-{i}" for s in range(steps) for i in range(batch)}
        assert store.snapshot_steps(run_id) == list(range(1, steps + 1))
        assert store.get_run(run_id).status == "finished"


def test_threads_sharing_one_store_object_each_get_a_connection(store):
    ids = [store.create_run(CONFIG) for _ in range(4)]
    errors = []

    def write(run_id):
        try:
            for step in range(25):
                store.add_step(run_id, step + 1, evs(2, 2 * step), 2 * step, {"step": step + 1})
                store.latest_snapshot(run_id)  # readers interleave with writers
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)
        finally:
            store.close()

    threads = [threading.Thread(target=write, args=(i,)) for i in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(store.n_evaluations(i) == 50 for i in ids)
    assert all(math.isclose(r.best_value, 49 / 3) for r in store.list_runs())


def test_evaluations_are_fsynced_and_regenerable_writes_are_not(tmp_path):
    store = RunStore(tmp_path / "r.sqlite")
    run_id = store.create_run(CONFIG)
    store.add_snapshot(run_id, {"step": 1})  # written with synchronous=NORMAL ...
    sync = store._connection().execute("PRAGMA synchronous").fetchone()[0]
    assert sync == 2  # ... then back to FULL for the evaluations that follow
    fast = RunStore(tmp_path / "fast.sqlite", durable=False)
    fast.add_evaluations(fast.create_run(CONFIG), evs(2), 0, step=1)
    assert fast._connection().execute("PRAGMA synchronous").fetchone()[0] == 1
    assert fast.list_runs()[0].n_evaluations == 2


def test_runs_come_back_as_typed_read_only_records(store):
    run_id = store.create_run(CONFIG, name="typed")
    store.add_step(run_id, 1, evs(2), 0)
    run, (listed,) = store.get_run(run_id), store.list_runs()
    assert isinstance(run, StoredRun) and listed == run
    assert (run.id, run.name, run.strategy, run.seed, run.budget, run.n_evaluations, run.best_arch) == \
        (run_id, "typed", "random", 3, 10, 2, "a1")
    assert list(run.to_dict()) == [f.name for f in dataclasses.fields(StoredRun)] and run.to_dict()["config"] == CONFIG
    with pytest.raises(TypeError):
        run["status"]  # attributes only: no dict look-alike to drift from the fields
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.status = "finished"  # a record of the file, not a handle on it
    store.set_status(run_id, "stopped")
    claimed = store.claim_run(run_id)
    assert isinstance(claimed, StoredRun) and claimed.lease == run.lease + 1 and claimed.status == "running"


def test_evaluations_come_back_as_typed_read_only_records(store, tmp_path):
    run_id = store.create_run(CONFIG)
    store.add_evaluations(run_id, evs(1) + [{"arch": "f", "value": None, "status": "failed", "error": "no"}], 0, step=1)
    ok, failed = store.evaluations(run_id)
    assert isinstance(ok, StoredEvaluation) and ok.ok and not failed.ok
    assert (ok.index, ok.step, ok.arch, ok.value, ok.info) == (0, 1, "a0", 0.0, {"epochs": [1, 2]})
    assert (failed.index, failed.value, failed.status, failed.error) == (1, None, "failed", "no")
    assert tuple(ok.to_dict()) == CSV_COLUMNS  # the fields are the export's columns, in their order
    with pytest.raises(TypeError):
        ok["value"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ok.value = 1.0
    store.export_csv(run_id, tmp_path / "run.csv")
    assert read_csv_export(tmp_path / "run.csv") == [ok, failed]


def test_snapshots_come_back_as_typed_read_only_records(store):
    run_id = store.create_run(CONFIG)
    written = {"step": 1, "n_evaluations": 2, "budget": 10, "proposals": ["a0", "f"],
               "results": [{"arch": "a0", "value": 0.5, "status": "ok", "error": None, "fidelity": {"epochs": 4}},
                           {"arch": "f", "value": None, "status": "failed", "error": "no"}],
               "best_value": 0.5, "best_arch": "a0", "elapsed": 1.25, "step_seconds": 0.75,
               "strategy": {"version": 3, "strategy": "random", "phase": "init"}}
    store.add_step(run_id, 1, [{"arch": "a0", "value": 0.5}, {"arch": "f", "value": None, "status": "failed"}], 0,
                   written)
    store.add_snapshot(run_id, {"step": 2, "elapsed": None, "results": [{"arch": "b"}]})  # an older writer's fields
    first, second = store.snapshots(run_id)
    assert store.snapshot(run_id, 1) == first and store.latest_snapshot(run_id) == second
    assert isinstance(first, StoredSnapshot) and isinstance(first.results[0], StepResult)
    assert (first.step, first.n_evaluations, first.budget, first.proposals) == (1, 2, 10, ("a0", "f"))
    assert (first.best_value, first.best_arch, first.elapsed, first.step_seconds) == (0.5, "a0", 1.25, 0.75)
    assert first.results == (StepResult("a0", 0.5, "ok", None, {"epochs": 4}), StepResult("f", None, "failed", "no"))
    assert first.strategy == written["strategy"]  # the step state stays plain data: the dashboard types it
    # missing or null fields read as the readers always took them: 0, empty, None
    assert second == StoredSnapshot(step=2, results=(StepResult("b", None),))
    assert (second.n_evaluations, second.elapsed, second.best_value, second.strategy) == (0, 0.0, None, {})
    with pytest.raises(TypeError):
        first["step"]
    with pytest.raises(AttributeError):
        first.get("strategy")
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.step = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.results[0].value = 1.0
    assert store.snapshot(run_id, 3) is None


def test_of_two_processes_claiming_a_run_exactly_one_wins(store):
    run_id = store.create_run(CONFIG)
    store.set_status(run_id, "interrupted")
    claimed = store.claim_run(run_id)
    assert claimed.status == "running" and claimed.pid == os.getpid()
    with pytest.raises(StoreError, match=f"run {run_id} is still running"):
        store.claim_run(run_id)  # a second resumer (here: a second thread of this process)
    assert store.claim_run(run_id, force=True).status == "running"


def test_a_run_claimed_after_it_was_found_dead_is_not_marked_interrupted(store, monkeypatch):
    run_id = store.create_run(CONFIG)
    seen = store.get_run(run_id)
    # mark_interrupted read the row as gone; a resumer claims it before the update is written
    real_write = store._write

    def claim_first(fn, *args, **kwargs):
        monkeypatch.setattr(store, "_write", real_write)
        real_write(lambda conn: conn.execute("UPDATE runs SET heartbeat=?, pid=?, lease=lease+1 WHERE id=?",
                                             (time.time() + 1, os.getpid(), run_id)))  # what a claim writes
        return real_write(fn, *args, **kwargs)

    store.stale_after = -1.0  # everything looks stale to this reader
    monkeypatch.setattr(store, "_write", claim_first)
    assert store.mark_interrupted() == []  # nothing marked: the row changed since it was read
    assert seen.status == "running"
    store.stale_after = 90.0
    assert store.get_run(run_id).status == "running"  # the claim survived


def test_trained_weights_round_trip_exactly_and_pickles_are_refused(store):
    run_id = store.create_run(CONFIG)
    weights = {"linears.1.weight": np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32),
               "linears.1.bias": np.zeros(4, dtype=np.float32)}
    assert store.network(run_id, "a0") is None
    store.add_network(run_id, "a0", weights)
    back = store.network(run_id, "a0")
    assert set(back) == set(weights) and all(np.array_equal(back[k], weights[k]) and back[k].dtype == np.float32
                                             for k in weights)
    assert store.network_bytes(run_id) > weights["linears.1.weight"].nbytes
    store.add_network(run_id, "a0", {"w": np.ones(2)})  # replaced, not duplicated
    assert list(store.network(run_id, "a0")) == ["w"]
    with pytest.raises(StoreError, match="not numeric arrays"):
        store.add_network(run_id, "a1", {"w": np.array([{"x": 1}], dtype=object)})
    # An archive holding a Python object (written behind the store's back) is never unpickled.
    import io

    buffer = io.BytesIO()
    np.savez(buffer, w=np.array([{"x": 1}], dtype=object))
    store._write(lambda conn: conn.execute("INSERT INTO networks VALUES (?, 'evil', ?, 0)", (run_id, buffer.getvalue())))
    with pytest.raises(StoreError, match="unreadable"):
        store.network(run_id, "evil")
    with pytest.raises(UnknownRunError):
        store.add_network(run_id + 99, "a0", weights)


def test_a_version_1_store_gains_the_networks_table_and_keeps_its_runs(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite"
    old = RunStore(path)
    run_id = old.create_run(CONFIG)
    old.add_step(run_id, 1, evs(2), 0, {"step": 1})
    old.close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE networks")
    conn.execute("PRAGMA user_version=1")
    conn.commit()
    conn.close()
    store = RunStore(path)
    assert store.n_evaluations(run_id) == 2
    store.add_network(run_id, "a0", {"w": np.ones(2)})
    assert store._connection().execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5


#: The schema of version 2 exactly as nasviz wrote it before leases (its runs table has no
#: ``lease`` and no ``session``).
SCHEMA_2 = """
CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, created REAL NOT NULL, updated REAL NOT NULL,
    name TEXT NOT NULL DEFAULT '', config TEXT NOT NULL, status TEXT NOT NULL, pid INTEGER, host TEXT,
    heartbeat REAL, stop_requested INTEGER NOT NULL DEFAULT 0, error TEXT);
CREATE TABLE evaluations (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, idx INTEGER NOT NULL,
    step INTEGER NOT NULL, arch TEXT NOT NULL, value REAL, cost REAL, status TEXT NOT NULL, error TEXT,
    info TEXT NOT NULL DEFAULT '{}', created REAL NOT NULL, PRIMARY KEY (run_id, idx));
CREATE TABLE snapshots (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, step INTEGER NOT NULL,
    data TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (run_id, step));
CREATE TABLE networks (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, arch TEXT NOT NULL,
    data BLOB NOT NULL, created REAL NOT NULL, PRIMARY KEY (run_id, arch));
PRAGMA user_version=2;
"""


def test_a_version_2_store_migrates_to_leases_and_keeps_its_runs(tmp_path):
    import json
    import sqlite3

    path = tmp_path / "v2.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA_2)
    now = time.time()
    for status in ("finished", "interrupted"):
        conn.execute("INSERT INTO runs (created, updated, name, config, status, pid, host, heartbeat) "
                     "VALUES (?, ?, 'old', ?, ?, 1, 'h', ?)", (now, now, json.dumps(CONFIG), status, now))
    conn.executemany("INSERT INTO evaluations VALUES (2, ?, 1, ?, ?, 0.1, 'ok', NULL, '{}', ?)",
                     [(i, f"a{i}", float(i), now) for i in range(3)])
    conn.commit()
    conn.close()

    store = RunStore(path)
    conn = store._connection()
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert {"lease", "session"} <= {r["name"] for r in conn.execute("PRAGMA table_info(runs)")}
    runs = {r.id: r for r in store.list_runs()}
    assert runs[1].status == "finished" and runs[2].n_evaluations == 3 and runs[2].best_value == 2.0
    assert runs[2].lease == 0 and runs[2].session is None
    lease = store.claim_run(2).lease  # an old interrupted run resumes under a lease
    assert lease == 1
    store.add_evaluations(2, [{"arch": "a3", "value": 3.0}], 3, step=2, lease=lease)
    with pytest.raises(LeaseLostError):
        store.add_evaluations(2, [{"arch": "a4", "value": 4.0}], 4, step=3, lease=lease - 1)
    assert store.n_evaluations(2) == 4
    RunStore(path)  # opening a current file again changes nothing
    assert store._connection().execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_every_write_of_a_run_needs_its_current_lease(store):
    run_id = store.create_run(CONFIG)
    first = store.claim_run(run_id, force=True).lease
    store.add_step(run_id, 1, evs(2), 0, {"step": 1}, lease=first)
    second = store.claim_run(run_id, force=True).lease  # another process resumes the run
    assert second == first + 1
    writes = {
        "evaluations": lambda: store.add_evaluations(run_id, evs(1), 2, step=2, lease=first),
        "step": lambda: store.add_step(run_id, 2, evs(1), 2, {"step": 2}, lease=first),
        "snapshot": lambda: store.add_snapshot(run_id, {"step": 2}, lease=first),
        "status": lambda: store.set_status(run_id, "failed", error="boom", lease=first),
        "network": lambda: store.add_network(run_id, "a0", {"w": np.ones(2)}, lease=first),
        "drop networks": lambda: store.drop_networks(run_id, lease=first),
        "check": lambda: store.check_lease(run_id, first),
    }
    for what, write in writes.items():
        with pytest.raises(LeaseLostError, match=f"run {run_id} was taken over"):
            write()
    run = store.get_run(run_id)
    assert run.status == "running" and run.error is None and store.n_evaluations(run_id) == 2
    store.heartbeat(run_id, lease=first)  # a stale heartbeat changes nothing
    store.add_evaluations(run_id, evs(1), 2, step=2, lease=second)  # the owner writes on
    assert store.n_evaluations(run_id) == 3


def test_declaring_a_run_interrupted_revokes_its_lease(store):
    run_id = store.create_run(CONFIG)
    lease = store.claim_run(run_id, force=True).lease
    store.stale_after = -1.0
    assert store.mark_interrupted() == [run_id]
    with pytest.raises(LeaseLostError):
        store.add_evaluations(run_id, evs(1), 0, step=1, lease=lease)
    assert store.get_run(run_id).status == "interrupted" and store.n_evaluations(run_id) == 0


def test_a_resume_claim_checks_the_status_in_its_own_transaction(tmp_path):
    """Two visitors press Resume at once: both read "stopped", both claim; the second claim sees
    the first's RUNNING inside its transaction and is refused (issue 47: one worker, not two)."""
    from nasviz.store import RUNNING, RunStore, StoreError

    store = RunStore(tmp_path / "runs.sqlite")
    (run_id,) = store.create_runs([{"strategy": "random", "budget": 5, "metric": "acc"}])
    store.set_status(run_id, "stopped")
    first = store.set_status(run_id, RUNNING, claim=True, resume=True)
    with pytest.raises(StoreError, match="is running"):
        store.set_status(run_id, RUNNING, claim=True, resume=True)
    assert store.get_run(run_id).lease == first  # the first claim's worker keeps its lease
    store.set_status(run_id, "finished")
    with pytest.raises(StoreError, match="is finished"):
        store.set_status(run_id, RUNNING, claim=True, resume=True)
