"""The Compare page's run picker names each run by what never changes (id, strategy, seed): a
status or an evaluation count in a chip went stale while a run moved on (the Runs picker's
"(stopped)" after Resume, issue 46). Running runs are said once, under the picker."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from nasviz.dashboard import launching
from nasviz.dashboard.sources import DataSource, table_from_path
from nasviz.store import RunStore
from tests_app_helpers import APP, errors, use_server_csv


@pytest.mark.slow
def test_run_labels_stay_the_same_when_a_run_changes_status(store_path, synthetic_table):
    source = DataSource.from_table(synthetic_table, table_from_path(synthetic_table))
    ids = [launching.start_run(store_path, launching.search_config(source, strategy="random", budget=6, seed=seed),
                               source=source, background=False) for seed in (0, 1)]
    at = use_server_csv(AppTest.from_file(APP, default_timeout=120), synthetic_table)
    at.switch_page("pages/compare.py").run()
    assert not errors(at), errors(at)
    before = list(at.multiselect(key="c_selected").options)
    assert sorted(before) == sorted(f"{i}: random seed {s}" for i, s in zip(ids, (0, 1)))
    assert not any("Still running" in c.value for c in at.caption)
    RunStore(store_path).set_status(ids[0], "running")
    at.run()
    assert list(at.multiselect(key="c_selected").options) == before
    assert any(c.value.startswith(f"Still running: run {ids[0]} (6/6)") for c in at.caption)
