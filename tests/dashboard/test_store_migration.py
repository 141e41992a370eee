"""A run store written by the previous release (schema 3: leases, untyped strategy states) opens,
migrates to schema 4 (typed step states) and its runs display on every page.

The old file is built here with raw SQL in the schema-3 layout, its snapshots holding the
dictionaries that release's strategies wrote: BO's top-level ``pool`` / ``mean`` / ``std`` /
``acquisition`` / ``selected`` / ``batch`` / ``hyperparameters`` (``FitResult.as_dict``),
NASBOT's ``gp`` and ``pool_top`` with ``pool_top_values``, random search's bare proposals.
"""

from __future__ import annotations

import json
import sqlite3
import time

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from nasviz.spaces import get_space
from nasviz.state import STATE_VERSION, StepState
from nasviz.store import SCHEMA_VERSION, RunStore
from tests_app_helpers import APP, errors  # noqa: E402  (tests/app on the path, see conftest)

#: The schema of version 3 exactly as the previous release wrote it.
SCHEMA_3 = """
CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, created REAL NOT NULL, updated REAL NOT NULL,
    name TEXT NOT NULL DEFAULT '', config TEXT NOT NULL, status TEXT NOT NULL, pid INTEGER, host TEXT,
    heartbeat REAL, stop_requested INTEGER NOT NULL DEFAULT 0, error TEXT, lease INTEGER NOT NULL DEFAULT 0,
    session TEXT);
CREATE TABLE evaluations (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, idx INTEGER NOT NULL,
    step INTEGER NOT NULL, arch TEXT NOT NULL, value REAL, cost REAL, status TEXT NOT NULL, error TEXT,
    info TEXT NOT NULL DEFAULT '{}', created REAL NOT NULL, PRIMARY KEY (run_id, idx));
CREATE TABLE snapshots (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, step INTEGER NOT NULL,
    data TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (run_id, step));
CREATE TABLE networks (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, arch TEXT NOT NULL,
    data BLOB NOT NULL, created REAL NOT NULL, PRIMARY KEY (run_id, arch));
PRAGMA user_version=3;
"""


def _fit(rng, theta: dict[str, float], n_obs: int) -> dict:
    """A GP fit as the previous release's ``FitResult.as_dict`` wrote it."""
    return {"theta": theta, "amplitude": 1.3, "noise": 0.01, "log_marginal_likelihood": -4.2, "jitter": 0.0,
            "seconds": 0.05, "n_obs": n_obs, "transform": "standardize", "candidates": {},
            "n_evaluations": 30, "initial_log_marginal_likelihood": -9.1}


def _snapshot(step: int, archs: list[str], values: list[float], n_before: int, budget: int, state: dict) -> dict:
    best = int(np.argmax(values))
    return {"step": step, "n_evaluations": n_before + len(archs), "budget": budget, "proposals": archs,
            "results": [{"arch": a, "value": v, "status": "ok", "error": None} for a, v in zip(archs, values)],
            "best_value": values[best], "best_arch": archs[best], "elapsed": 0.1 * step, "step_seconds": 0.1,
            "strategy": state}


def _bo_steps(table_path, rng) -> tuple[dict, list]:
    """A finished ``bo-tw2g-kdpp5``-like run of the previous release: 4 random cells, then one BO
    step choosing 2 of a 10-cell pool by quality k-DPP."""
    lines = table_path.read_text().splitlines()[1:]
    rows = [(line.split(",")[0], float(line.split(",")[1])) for line in lines]
    first, pool = rows[:4], rows[10:20]
    chosen = [pool[0], pool[3]]
    mean = [v + rng.normal() for _, v in pool]
    legacy_bo = {
        "strategy": "bo-tw2g-kdpp5", "phase": "bo", "bo_step": 1, "proposals": [a for a, _ in chosen],
        "pool": [a for a, _ in pool], "pool_origin": ["mutation"] * 10, "pool_info": {}, "mean": mean,
        "std": [0.5] * 10, "acquisition": [m + 0.75 for m in mean], "acquisition_name": "ucb", "kappa": 1.5,
        "selected": [0, 3], "batch": {"method": "kdpp-quality", "indices": [0, 3], "acquisition": [m + 0.75 for m in mean],
                                      "qualities": [float(np.exp(m - max(mean))) for m in mean], "eigenvalues": None,
                                      "std_after": None, "draws_argmax": None, "info": {"temperature": 0.5}},
        "hyperparameters": _fit(rng, {"lambda_1": 0.3, "lambda_2": 0.02, "lambda_3": 0.001}, 4),
        "noise_variance_y": 0.01, "n_observations": 4, "timings": {"fit": 0.05, "pool": 0.01},
    }
    steps = [(1, first, {"strategy": "bo-tw2g-kdpp5", "phase": "init", "proposals": [a for a, _ in first]}),
             (2, chosen, legacy_bo)]
    config = {"space": "nb201", "strategy": "bo-tw2g-kdpp5", "strategy_options": {}, "budget": 6, "batch_size": 5,
              "seed": 0, "objective": "table", "table": str(table_path), "metric": "acc",
              "skipped_rows": {"count": 0, "first": []}}
    return config, steps


def _nasbot_steps(rng) -> tuple[dict, list]:
    """A stopped NASBOT run on the layer space: its initial networks, then one EA step."""
    space = get_space("layers")
    archs = [space.format(a) for a in space.initial_pool()[:3]] + [space.format(space.sample(rng, 1)[0])]
    scores = [float(v) for v in rng.uniform(0.6, 0.95, len(archs))]
    legacy = {"strategy": "nasbot", "phase": "bo", "proposals": archs[3:], "acquisition": "ei", "bo_step": 1,
              "gp": _fit(rng, {"beta": 1.0, "nu_str": 0.5}, 3), "n_ea": 10, "n_mut": 0, "pool_size": 10,
              "pool_top": archs[:2], "pool_top_values": [0.01, 0.005]}
    steps = [(1, list(zip(archs[:3], scores[:3])), {"strategy": "nasbot", "phase": "init", "proposals": archs[:3]}),
             (2, list(zip(archs[3:], scores[3:])), legacy)]
    config = {"space": "layers", "strategy": "nasbot", "strategy_options": {"n_init": 3}, "budget": 20, "batch_size": 1,
              "seed": 0, "objective": "train", "dataset": "wine", "metric": "valid_accuracy"}
    return config, steps


def write_schema_3_store(path, table_path) -> None:
    """The previous release's store: a finished BO run, a stopped NASBOT run, an interrupted
    random search, all with untyped strategy states."""
    rng = np.random.default_rng(3)
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA_3)
    now = time.time()
    bo_config, bo_steps = _bo_steps(table_path, rng)
    nasbot_config, nasbot_steps = _nasbot_steps(rng)
    random_steps = [(1, bo_steps[0][1][:2], {"strategy": "random", "phase": "random",
                                             "proposals": [a for a, _ in bo_steps[0][1][:2]]})]
    random_config = {**bo_config, "strategy": "random", "batch_size": 2, "budget": 10}
    for status, config, steps in (("finished", bo_config, bo_steps), ("stopped", nasbot_config, nasbot_steps),
                                  ("interrupted", random_config, random_steps)):
        run_id = conn.execute("INSERT INTO runs (created, updated, name, config, status, lease) VALUES (?, ?, ?, ?, ?, 1)",
                              (now, now, f"old {config['strategy']}", json.dumps(config), status)).lastrowid
        n = 0
        for step, pairs, state in steps:
            archs, values = [a for a, _ in pairs], [v for _, v in pairs]
            for a, v in pairs:
                conn.execute("INSERT INTO evaluations VALUES (?, ?, ?, ?, ?, 0.1, 'ok', NULL, '{}', ?)",
                             (run_id, n, step, a, v, now))
                n += 1
            conn.execute("INSERT INTO snapshots VALUES (?, ?, ?, ?)",
                         (run_id, step, json.dumps(_snapshot(step, archs, values, n - len(pairs), config["budget"], state)),
                          now))
    conn.commit()
    conn.close()


@pytest.fixture()
def old_store(store_path, synthetic_table):
    write_schema_3_store(store_path.parent.mkdir(parents=True, exist_ok=True) or store_path, synthetic_table)
    return store_path


def test_a_schema_3_store_migrates_to_typed_step_states(old_store):
    store = RunStore(old_store)
    assert store._connection().execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
    for run in store.list_runs():
        for snap in store.snapshots(run.id):
            assert snap.strategy["version"] == STATE_VERSION, (run.strategy, snap.step)
    bo = StepState.from_dict(store.latest_snapshot(1).strategy)
    assert bo.phase == "bo" and len(bo.pool) == 10 and bo.pool.acquisition_name == "ucb"
    assert bo.batch.method == "kdpp-quality" and bo.batch.indices == (0, 3) and len(bo.batch.qualities) == 10
    assert bo.gp.hyperparameters == {"lambda_1": 0.3, "lambda_2": 0.02, "lambda_3": 0.001} and bo.gp.n_observations == 4
    assert bo.gp.kernel == "tw2g"  # old states did not name it: the run's strategy does
    nasbot = StepState.from_dict(store.latest_snapshot(2).strategy)
    assert nasbot.gp.kernel == "otmann" and nasbot.gp.hyperparameters["nu_str"] == 0.5
    assert nasbot.notes["pool_top_values"] == [0.01, 0.005]  # no typed place: kept in notes
    # evaluations, statuses and leases are untouched; opening again changes nothing
    assert {r.id: (r.status, r.n_evaluations, r.lease) for r in store.list_runs()} == {
        1: ("finished", 6, 1), 2: ("stopped", 4, 1), 3: ("interrupted", 2, 1)}
    before = store.snapshots(1)
    assert RunStore(old_store).snapshots(1) == before


def _watch(at: AppTest, run_id: int) -> AppTest:
    at.session_state["run_id"] = run_id
    return at.run()


@pytest.mark.slow
def test_the_migrated_runs_display_on_every_page(old_store, synthetic_table):
    from tests_app_helpers import use_server_csv

    at = use_server_csv(AppTest.from_file(APP, default_timeout=180), synthetic_table)
    _watch(at, 1)
    assert not errors(at), errors(at)
    assert {m.label: m.value for m in at.metric}["Evaluations"] == "6 / 6"
    assert "chart_pool" in [c.key for c in at.get("plotly_chart")]  # the old BO pool, typed
    for tab in ("Hyperparameters", "Distances", "Selected architectures"):
        at.session_state["view_tab"] = tab
        at.run()
        assert not errors(at), (tab, errors(at))
        assert len(at.get("plotly_chart")) >= 2, tab
    at.session_state["view_tab"] = "Hyperparameters"
    _watch(at, 2)  # NASBOT on the layer space: its old GP fit is traced
    assert not errors(at), errors(at)
    assert "chart_hyperparameters" in [c.key for c in at.get("plotly_chart")]
    for page in ("runs", "compare"):
        at.switch_page(f"pages/{page}.py").run()
        assert not errors(at), (page, errors(at))
    assert sorted(at.multiselect(key="c_selected").value) == [1, 3]  # the newest run's metric and space


def test_an_old_state_written_or_imported_now_is_stored_typed(tmp_path):
    store = RunStore(tmp_path / "s.sqlite")
    run_id = store.create_run({"strategy": "bo-wl-ei", "budget": 5})
    old = {"strategy": "bo-wl-ei", "phase": "bo", "hyperparameters": {"theta": {"h": 1.0}, "amplitude": 1.0, "noise": 0.1}}
    store.add_snapshot(run_id, {"step": 1, "strategy": old})
    state = store.snapshots(run_id)[0].strategy
    assert state["version"] == STATE_VERSION and state["gp"]["kernel"] == "wl"
    doc = store.export_json(run_id)
    doc["snapshots"][0]["strategy"] = old  # an export of the previous release
    copy = store.import_json(doc)
    assert store.snapshots(copy) == store.snapshots(run_id)
    typed = {"step": 2, "strategy": StepState(strategy="bo-wl-ei", phase="init").to_dict()}
    store.add_snapshot(run_id, typed)  # already typed: stored as given
    assert store.snapshots(run_id, since_step=1)[0].strategy == json.loads(json.dumps(typed["strategy"]))
