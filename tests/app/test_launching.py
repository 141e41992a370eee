"""Background run management (nasviz.live): start, stop, resume, watch, upload validation."""

from __future__ import annotations

import os
import time

import pytest

from nasviz import live
from nasviz.objectives import TableError
from nasviz.store import RunStore


def source_for(path):
    return live.DataSource.from_table(path, live.table_from_path(path))


def test_make_config_names_the_bad_field(synthetic_table):
    src = source_for(synthetic_table)
    with pytest.raises(ValueError, match="budget must be at least 1"):
        live.make_config(src, budget=0)
    with pytest.raises(ValueError, match="batch size 5 is larger than the budget 3"):
        live.make_config(src, budget=3, batch_size=5)
    with pytest.raises(ValueError, match="metric 'nope' is not a numeric column"):
        live.make_config(src, metric="nope")
    with pytest.raises(ValueError, match="unknown strategy 'magic'"):
        live.make_config(src, strategy="magic")
    cfg = live.make_config(src, metric="acc", strategy="random", budget=7, seed=3)
    assert cfg["table"] == str(synthetic_table) and cfg["metric"] == "acc" and cfg["budget"] == 7


def test_synchronous_run_writes_every_step_to_the_store(tmp_path, synthetic_table):
    store_path = tmp_path / "s.sqlite"
    cfg = live.make_config(source_for(synthetic_table), metric="acc", strategy="random", budget=12, batch_size=3)
    run_id = live.start_run(store_path, cfg, background=False)
    watcher = live.RunWatcher(store_path, run_id).refresh()
    assert watcher.status == "finished"
    assert len(watcher.evaluations) == 12 and [s["step"] for s in watcher.steps] == [1, 2, 3, 4]
    assert watcher.optimum() == pytest.approx(live.table_from_path(synthetic_table).optimum("acc"))
    # refresh is incremental: nothing new, nothing duplicated
    watcher.refresh()
    assert len(watcher.evaluations) == 12 and len(watcher.steps) == 4


def test_background_run_survives_its_starter_and_stops_and_resumes(tmp_path, synthetic_table):
    store_path = tmp_path / "s.sqlite"
    cfg = live.make_config(source_for(synthetic_table), metric="acc", strategy="random", budget=60, step_delay=0.05)
    run_id = live.start_run(store_path, cfg, background=True)  # a real worker process
    store = RunStore(store_path)

    def wait(condition, seconds=60):
        deadline = time.time() + seconds
        while not condition():
            assert time.time() < deadline, store.get_run(run_id)
            time.sleep(0.05)

    wait(lambda: store.n_evaluations(run_id) >= 2)
    run = store.get_run(run_id)
    assert run["status"] == "running" and run["pid"] != os.getpid()  # owned by the worker
    live.request_stop(store_path, run_id)
    wait(lambda: store.get_run(run_id)["status"] != "running")
    run = store.get_run(run_id)
    assert run["status"] == "stopped" and 2 <= run["n_evaluations"] < 60
    live.resume_run(store_path, run_id, background=True)
    wait(lambda: store.get_run(run_id)["status"] == "finished")
    evaluations = store.evaluations(run_id)
    assert len(evaluations) == 60 and len({e["arch"] for e in evaluations}) == 60
    assert [e["index"] for e in evaluations] == list(range(60))
    with pytest.raises(ValueError, match="has finished"):
        live.resume_run(store_path, run_id, background=False)


def test_a_failing_run_is_recorded_not_raised(tmp_path, synthetic_table):
    store_path = tmp_path / "s.sqlite"
    cfg = live.make_config(source_for(synthetic_table), metric="acc", strategy="random", budget=5)
    cfg["table"] = str(tmp_path / "gone.csv")
    run_id = live.start_run(store_path, cfg, background=False)
    run = RunStore(store_path).get_run(run_id)
    assert run["status"] == "failed" and "gone.csv" in run["error"]


def test_save_upload_reports_bad_rows_with_line_numbers(tmp_path):
    data = b"arch,acc\n|nor_conv_3x3~0|+|none~0|none~1|+|none~0|none~1|none~2|,1.5\nnot-an-arch,2\n" \
           b"|avg_pool_3x3~0|+|none~0|none~1|+|none~0|none~1|none~2|,abc\n"
    path, table = live.save_upload(data, "mine.csv", folder=tmp_path)
    assert len(table) == 1 and path.read_bytes() == data
    assert [b.line for b in table.bad_rows] == [3, 4]
    assert "non-numeric value 'abc'" in str(table.bad_rows[1])


@pytest.mark.parametrize("data, name, message", [
    (b"", "empty.csv", "is empty"),
    (b"arch,acc\n", "header.csv", "no data rows"),
    (b"arch,name\nx,y\n", "text.csv", "no numeric metric column"),
    (b"\xff\xfe\x00garbage", "bin.csv", "not UTF-8"),
    (b"arch,acc\n", "table.pkl", "only CSV files"),
])
def test_save_upload_refuses_unusable_files(tmp_path, data, name, message):
    with pytest.raises(TableError, match=message):
        live.save_upload(data, name, folder=tmp_path)


def test_kernel_views_on_a_finished_bo_run(tmp_path, synthetic_table):
    store_path = tmp_path / "s.sqlite"
    cfg = live.make_config(source_for(synthetic_table), metric="acc", strategy="bo",
                           options=live.strategy_options("bo", kernel="tw2g", acquisition="ucb", pool="evolution",
                                                         batch="kdpp-quality", batch_size=2),
                           budget=16, batch_size=2, seed=0)
    run_id = live.start_run(store_path, cfg, background=False)
    w = live.RunWatcher(store_path, run_id).refresh()
    assert w.status == "finished", w.run.get("error")
    assert live.run_kernel(w.config) == "tw2g"
    view = live.pool_view(w.latest["strategy"])
    assert view is not None and len(view["selected"]) == 2 and view["qualities"] is not None
    fig = live.pool_figure(w, view, "tw2g")
    assert fig.data[1].name == "selected batch" and len(fig.data[1].x) == 2
    fig = live.distance_figure(w, "tw2g", "value")
    assert [a.text for a in fig.layout.annotations][:3] == ["operations", "in_degree", "out_degree"]
    assert len(live.selection_figures(w)) == 2
    assert live.feature_gradient_figure(w) is not None  # WL gradients from a GP fitted to the run


def test_exports_are_bytes_of_csv_and_json(tmp_path, synthetic_table):
    store_path = tmp_path / "s.sqlite"
    cfg = live.make_config(source_for(synthetic_table), metric="acc", strategy="random", budget=4)
    run_id = live.start_run(store_path, cfg, background=False)
    csv_text = live.export_bytes(store_path, run_id, "csv").decode()
    assert csv_text.splitlines()[0].startswith("index,step,arch,value") and len(csv_text.splitlines()) == 5
    import json

    doc = json.loads(live.export_bytes(store_path, run_id, "json"))
    assert doc["format"] == "nasviz-run" and len(doc["evaluations"]) == 4


def test_two_searches_run_at_the_same_time(tmp_path, synthetic_table):
    store_path = tmp_path / "s.sqlite"
    src = source_for(synthetic_table)
    ids = [live.start_run(store_path, live.make_config(src, metric="acc", strategy="random", budget=30, seed=s,
                                                       step_delay=0.05), background=True) for s in (0, 1)]
    store = RunStore(store_path)
    deadline = time.time() + 120
    both_running = False
    while time.time() < deadline:
        runs = {r["id"]: r for r in store.list_runs()}
        if all(runs[i]["status"] == "running" and 0 < runs[i]["n_evaluations"] < 30 for i in ids):
            both_running = True
        if all(runs[i]["status"] == "finished" for i in ids):
            break
        time.sleep(0.05)
    assert both_running, "the two searches never made progress at the same time"
    assert [store.get_run(i)["status"] for i in ids] == ["finished", "finished"]
    assert all(store.n_evaluations(i) == 30 for i in ids)


@pytest.mark.parametrize("config, kernel", [
    ({"strategy": "random"}, None),
    ({"strategy": "bo-tw2g-ucb"}, "tw2g"),
    ({"strategy": "bo-wl-ei"}, "wl"),
    ({"strategy": "bo", "strategy_options": {"kernel": "otmann"}}, "otmann"),
    ({"strategy": "bo"}, "tw2g"),
    ({"strategy": "nasbot"}, "otmann"),
])
def test_the_views_use_the_kernel_of_the_runs_strategy(config, kernel):
    assert live.run_kernel(config) == kernel
