"""Background run management (nasviz.dashboard.launching, .watching, .sources): start, stop, resume,
watch, upload validation."""

from __future__ import annotations

import os
import time

import pytest

from nasviz.config import SearchConfig
from nasviz.errors import ConfigError
from nasviz.dashboard import launching
from nasviz.dashboard.sources import DataSource, save_upload, table_from_path
from nasviz.dashboard.watching import RunWatcher, export_bytes
from nasviz.objectives import TableError
from nasviz.store import RunStore
from nasviz.workers.search import NICENESS


def source_for(path):
    return DataSource.from_table(path, table_from_path(path))


def test_the_config_is_validated_once_and_names_the_bad_field(synthetic_table):
    src = source_for(synthetic_table)
    with pytest.raises(ValueError, match="budget must be at least 1"):
        launching.search_config(src, budget=0)
    with pytest.raises(ValueError, match="batch_size 5 is larger than the budget 3"):
        launching.search_config(src, budget=3, batch_size=5)
    with pytest.raises(ValueError, match="metric 'nope' is not measured by"):
        launching.search_config(src, metric="nope")
    with pytest.raises(ValueError, match="unknown strategy 'magic'"):
        launching.search_config(src, strategy="magic")
    with pytest.raises(ValueError, match="'kdpp-quality' chooses a diverse set: it needs a batch size of at least 2"):
        launching.search_config(src, strategy="bo", options={"batch": "kdpp-quality"}, batch_size=1)
    cfg = launching.search_config(src, metric="acc", strategy="random", budget=7, seed=3)
    assert isinstance(cfg, SearchConfig) and cfg.objective.table == str(synthetic_table) and cfg.objective.metric == "acc"
    assert launching.search_config(src, strategy="bo-tw2g-kdpp5").run.batch_size == 5  # the strategy's own batch
    stored = launching.stored_config(cfg, src)
    assert SearchConfig.from_dict(stored) == cfg and stored["skipped_rows"] == {"count": 0, "first": []}


def test_synchronous_run_writes_every_step_to_the_store(tmp_path, synthetic_table):
    store_path = tmp_path / "s.sqlite"
    cfg = launching.search_config(source_for(synthetic_table), metric="acc", strategy="random", budget=12, batch_size=3)
    run_id = launching.start_run(store_path, cfg, background=False)
    watcher = RunWatcher(store_path, run_id).refresh()
    assert watcher.status == "finished"
    assert len(watcher.evaluations) == 12 and [s.step for s in watcher.steps] == [1, 2, 3, 4]
    assert watcher.optimum() == pytest.approx(table_from_path(synthetic_table).optimum("acc"))
    # refresh is incremental: nothing new, nothing duplicated
    watcher.refresh()
    assert len(watcher.evaluations) == 12 and len(watcher.steps) == 4


def test_elapsed_keeps_moving_while_a_run_waits_on_its_next_step(tmp_path, synthetic_table):
    """The Elapsed figure of a running search is its last step's time plus the time since that
    step was stored (a long step no longer looks frozen); a finished run shows its last step's."""
    store_path = tmp_path / "s.sqlite"
    cfg = launching.search_config(source_for(synthetic_table), metric="acc", strategy="random", budget=4, batch_size=2)
    run_id = launching.start_run(store_path, cfg, background=False)
    watcher = RunWatcher(store_path, run_id).refresh()
    stored_at = RunStore(store_path).latest_snapshot_time(run_id)
    last = watcher.steps[-1].elapsed
    assert stored_at is not None and watcher.last_snapshot_at == stored_at
    assert watcher.elapsed(now=stored_at + 30) == last  # finished: the last step's time
    RunStore(store_path).set_status(run_id, "running")
    watcher.refresh()
    assert watcher.elapsed(now=stored_at + 30) == pytest.approx(last + 30)
    assert watcher.elapsed(now=stored_at - 5) == last  # a clock behind the store never subtracts
    assert RunWatcher(store_path, run_id).elapsed() == 0.0  # nothing read yet


@pytest.mark.slow
def test_a_warm_worker_takes_the_next_search_and_a_new_one_waits(tmp_path, synthetic_table, monkeypatch):
    """Real processes: ``prewarm`` starts a worker that imports the engine and parses the
    embedded table before any search exists; the next background search is handed to it (its
    pid runs the search, which finishes), a new warm worker waits for the one after, and a warm
    worker whose server lets go of it (stdin closed) ends without touching the store."""
    monkeypatch.delenv("NASVIZ_SYNC_RUNS", raising=False)
    store_path = tmp_path / "s.sqlite"
    warm = launching.prewarm(store_path)
    assert warm is not None and warm.poll() is None and launching.prewarm(store_path) is warm  # one per store
    # Below the server's CPU priority: the pages of a class come first (the worker lowers its own).
    deadline = time.time() + 60
    while os.getpriority(os.PRIO_PROCESS, warm.pid) != min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICENESS):
        assert time.time() < deadline and warm.poll() is None, "the warm worker kept the server's priority"
        time.sleep(0.05)
    cfg = launching.search_config(source_for(synthetic_table), metric="acc", strategy="random", budget=6)
    run_id = launching.start_run(store_path, cfg, background=True)
    store = RunStore(store_path)
    deadline = time.time() + 120
    while store.get_run(run_id).status == "running":
        assert time.time() < deadline, store.get_run(run_id)
        time.sleep(0.1)
    assert store.get_run(run_id).status == "finished" and store.n_evaluations(run_id) == 6
    assert store.get_run(run_id).pid == warm.pid  # the warm process ran it
    assert warm.wait(timeout=30) == 0
    assert "finished" in (tmp_path / "logs" / f"run-{run_id}.log").read_text()
    nxt = launching._WARM[store_path]
    assert nxt.pid != warm.pid and nxt.poll() is None
    nxt.stdin.close()  # the server lets go: the waiting worker ends, and the store has no new run
    assert nxt.wait(timeout=60) == 0 and [r.id for r in store.list_runs()] == [run_id]
    launching._WARM.pop(store_path, None)


@pytest.mark.slow
def test_the_page_waits_briefly_for_a_new_searchs_first_evaluation(tmp_path, synthetic_table, monkeypatch):
    """After Start the page redraws once, then every REFRESH_SECONDS: ``wait_for_first_evaluation``
    lets that first redraw show the first evaluation a warm worker has already made. Real
    processes: a paced search (5 s after each step) on a warm worker has exactly its first step's
    evaluation when the wait returns; a run no worker serves is given up on after the timeout; a
    run that is no longer running is not waited for."""
    monkeypatch.delenv("NASVIZ_SYNC_RUNS", raising=False)
    store_path = tmp_path / "s.sqlite"
    launching.prewarm(store_path)
    time.sleep(3.0)  # let it import the engine, as a page's visitor takes seconds to press Start
    cfg = launching.search_config(source_for(synthetic_table), metric="acc", strategy="random", budget=6,
                                  step_delay=5.0)
    run_id = launching.start_run(store_path, cfg, background=True)
    store = RunStore(store_path)
    assert launching.wait_for_first_evaluation(store_path, run_id, timeout=30.0)
    assert store.n_evaluations(run_id) == 1  # the first step's, not a later one: the search is paced
    launching.request_stop(store_path, run_id)

    idle = store.create_run(cfg.to_dict())  # running, but no worker will ever take it
    start = time.monotonic()
    assert not launching.wait_for_first_evaluation(store_path, idle, timeout=0.3)
    assert 0.3 <= time.monotonic() - start < 2.0
    store.set_status(idle, "stopped")
    start = time.monotonic()
    assert not launching.wait_for_first_evaluation(store_path, idle, timeout=30.0)
    assert time.monotonic() - start < 2.0
    deadline = time.time() + 60
    while store.get_run(run_id).status == "running":
        assert time.time() < deadline
        time.sleep(0.1)
    warm = launching._WARM.pop(store_path, None)
    if warm is not None:
        warm.stdin.close()
        warm.wait(timeout=60)


@pytest.mark.slow
def test_background_run_survives_its_starter_and_stops_and_resumes(tmp_path, synthetic_table):
    store_path = tmp_path / "s.sqlite"
    cfg = launching.search_config(source_for(synthetic_table), metric="acc", strategy="random", budget=60, step_delay=0.05)
    run_id = launching.start_run(store_path, cfg, background=True)  # a real worker process
    store = RunStore(store_path)

    def wait(condition, seconds=60):
        deadline = time.time() + seconds
        while not condition():
            assert time.time() < deadline, store.get_run(run_id)
            time.sleep(0.05)

    wait(lambda: store.n_evaluations(run_id) >= 2)
    run = store.get_run(run_id)
    assert run.status == "running" and run.pid != os.getpid()  # owned by the worker
    launching.request_stop(store_path, run_id)
    wait(lambda: store.get_run(run_id).status != "running")
    run = store.get_run(run_id)
    assert run.status == "stopped" and 2 <= run.n_evaluations < 60
    launching.resume_run(store_path, run_id, background=True)
    wait(lambda: store.get_run(run_id).status == "finished")
    evaluations = store.evaluations(run_id)
    assert len(evaluations) == 60 and len({e.arch for e in evaluations}) == 60
    assert [e.index for e in evaluations] == list(range(60))
    with pytest.raises(ValueError, match="has finished"):
        launching.resume_run(store_path, run_id, background=False)


def test_a_stop_pressed_while_the_worker_starts_is_honoured(tmp_path, synthetic_table):
    """Claiming a run clears its stop flag: the worker reads it first (a real worker process)."""
    store_path = tmp_path / "s.sqlite"
    cfg = launching.search_config(source_for(synthetic_table), metric="acc", strategy="random", budget=50,
                                  step_delay=0.2)
    run_id = launching.start_run(store_path, cfg, background=True)
    launching.request_stop(store_path, run_id)  # the worker is still importing
    store = RunStore(store_path)
    deadline = time.time() + 60
    while store.get_run(run_id).status == "running":
        assert time.time() < deadline
        time.sleep(0.05)
    assert store.get_run(run_id).status == "stopped" and store.n_evaluations(run_id) < 50


def test_a_failing_run_is_recorded_not_raised(tmp_path, synthetic_table):
    store_path = tmp_path / "s.sqlite"
    gone = tmp_path / "gone.csv"
    gone.write_bytes(synthetic_table.read_bytes())
    src = source_for(gone)
    cfg = launching.search_config(src, metric="acc", strategy="random", budget=5)
    gone.unlink()  # the table disappears before the worker reads it
    run_id = launching.start_run(store_path, cfg, source=src, background=False)
    run = RunStore(store_path).get_run(run_id)
    assert run.status == "failed" and "gone.csv" in run.error


def test_save_upload_reports_bad_rows_with_line_numbers(tmp_path):
    data = b"arch,acc\n|nor_conv_3x3~0|+|none~0|none~1|+|none~0|none~1|none~2|,1.5\nnot-an-arch,2\n" \
           b"|avg_pool_3x3~0|+|none~0|none~1|+|none~0|none~1|none~2|,abc\n"
    path, table = save_upload(data, "mine.csv", folder=tmp_path)
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
        save_upload(data, name, folder=tmp_path)


def test_the_views_of_a_finished_bo_run(tmp_path, synthetic_table):
    from nasviz.dashboard.views import views

    store_path = tmp_path / "s.sqlite"
    options = {"kernel": "tw2g", "acquisition": "ucb", "pool": "evolution", "batch": "kdpp-quality"}
    cfg = launching.search_config(source_for(synthetic_table), metric="acc", strategy="bo", options=options,
                                  budget=16, batch_size=2, seed=0)
    run_id = launching.start_run(store_path, cfg, background=False)
    w = RunWatcher(store_path, run_id).refresh()
    assert w.status == "finished", w.error
    assert w.model_kernel == "tw2g" and w.state.pool is not None and w.state.gp.kernel == "tw2g"
    view = {name: v for name, _, v in views()}
    fig = dict(view["pool"].render(w).charts)["chart_pool"]
    traces = {t.name: t for t in fig.data}
    assert len(traces["selected batch"].x) == 2
    assert len(traces["evaluated so far"].x) == len({e["arch"] for e in w.evaluations if e["step"] < w.steps[-1].step})
    panels = view["distances"].render(w, view_kernel="tw2g", dist_order="value").charts
    assert [key for key, _ in panels] == ["chart_distances_operations", "chart_distances_in_degree",
                                          "chart_distances_out_degree"]
    assert len(view["selection"].render(w).charts) == 2
    assert view["hyperparameters"].applies(w) is None
    assert view["features"].applies(w).startswith("WL feature gradients are shown when the search uses the WL kernel")
    assert len(w.kernels) == 1  # the watcher's own kernel, reused by the pool and distance views


def test_exports_are_bytes_of_csv_and_json(tmp_path, synthetic_table):
    store_path = tmp_path / "s.sqlite"
    cfg = launching.search_config(source_for(synthetic_table), metric="acc", strategy="random", budget=4)
    run_id = launching.start_run(store_path, cfg, background=False)
    csv_text = export_bytes(store_path, run_id, "csv").decode()
    assert csv_text.splitlines()[0].startswith("index,step,arch,value") and len(csv_text.splitlines()) == 5
    import json

    doc = json.loads(export_bytes(store_path, run_id, "json"))
    assert doc["format"] == "nasviz-run" and len(doc["evaluations"]) == 4


@pytest.mark.slow
def test_two_searches_run_at_the_same_time(tmp_path, synthetic_table):
    store_path = tmp_path / "s.sqlite"
    src = source_for(synthetic_table)
    ids = [launching.start_run(store_path, launching.search_config(src, metric="acc", strategy="random", budget=30, seed=s,
                                                       step_delay=0.05), background=True) for s in (0, 1)]
    store = RunStore(store_path)
    deadline = time.time() + 120
    both_running = False
    while time.time() < deadline:
        runs = {r.id: r for r in store.list_runs()}
        if all(runs[i].status == "running" and 0 < runs[i].n_evaluations < 30 for i in ids):
            both_running = True
        if all(runs[i].status == "finished" for i in ids):
            break
        time.sleep(0.05)
    assert both_running, "the two searches never made progress at the same time"
    assert [store.get_run(i).status for i in ids] == ["finished", "finished"]
    assert all(store.n_evaluations(i) == 30 for i in ids)


def _watching(path, config) -> RunWatcher:
    """A watcher of a stored run with ``config`` (no step yet)."""
    return RunWatcher(path, RunStore(path).create_run(config)).refresh()


@pytest.mark.parametrize("config, kernel", [
    ({"strategy": "random"}, None),
    ({"strategy": "bo-tw2g-ucb"}, "tw2g"),
    ({"strategy": "bo-wl-ei"}, "wl"),
    ({"strategy": "bo", "strategy_options": {"kernel": "otmann"}}, "otmann"),
    ({"strategy": "bo"}, "tw2g"),
    ({"strategy": "nasbot"}, "otmann"),
])
def test_the_views_use_the_kernel_of_the_runs_strategy(tmp_path, config, kernel):
    w = _watching(tmp_path / "s.sqlite", config)
    assert w.model_kernel == kernel and w.has_model == (kernel is not None)


@pytest.mark.parametrize("strategy, options, kernel", [
    ("random", {}, None), ("bo-wl-ei", {}, "wl"), ("bo", {"kernel": "otmann"}, "otmann"), ("bo-tw2g-ucb", {}, "tw2g"),
])
def test_the_config_names_the_kernel_once_and_the_watcher_reads_it(tmp_path, strategy, options, kernel):
    config = SearchConfig.create(table="t.csv", strategy=strategy, strategy_options=options)
    assert config.strategy.kernel == kernel and SearchConfig.from_dict(config.to_dict()) == config
    w = _watching(tmp_path / "s.sqlite", {**config.to_dict(), "kernel": "edit"})  # what the store says wins over the registry
    assert w.model_kernel == "edit"
    with pytest.raises(ConfigError, match="choose the kernel through the strategy's options"):
        SearchConfig.create(table="t.csv", strategy="bo-wl-ei", kernel="tw2g")
