"""AppTest of the Runs page: list, watch, resume, delete, export."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from nasviz.dashboard import launching
from nasviz.dashboard.sources import DataSource, table_from_path
from nasviz.store import RunStore
from tests_app_helpers import APP, errors


def make_runs(store_path, table, n=2, budget=4):
    src = DataSource.from_table(table, table_from_path(table))
    return [launching.start_run(store_path, launching.search_config(src, metric="acc", strategy="random", budget=budget,
                                                                    seed=s), background=False) for s in range(n)]


def runs_page(at: AppTest) -> AppTest:
    at.run()
    at.switch_page("pages/runs.py").run()
    return at


def test_an_empty_store_says_so(store_path):
    at = runs_page(AppTest.from_file(APP, default_timeout=120))
    assert not errors(at)
    assert any("No runs yet" in i.value for i in at.info)


def test_runs_are_listed_with_status_strategy_and_best(store_path, synthetic_table):
    ids = make_runs(store_path, synthetic_table)
    at = runs_page(AppTest.from_file(APP, default_timeout=120))
    assert not errors(at)
    df = at.dataframe[0].value
    assert df["id"].tolist() == ids[::-1]  # newest first
    assert set(df["status"]) == {"finished"} and set(df["strategy"]) == {"random"}
    assert df["evaluations"].tolist() == ["4 / 4", "4 / 4"]
    store = RunStore(store_path)
    assert df["best value"].tolist() == [store.get_run(i).best_value for i in ids[::-1]]
    for key in ("watch", "stop_run", "resume_run", "delete_run"):
        assert at.button(key=key) is not None
    assert at.button(key="stop_run").disabled and at.button(key="resume_run").disabled  # finished
    assert len(at.get("download_button")) == 2


def test_delete_needs_confirmation(store_path, synthetic_table):
    ids = make_runs(store_path, synthetic_table)
    at = runs_page(AppTest.from_file(APP, default_timeout=120))
    at.selectbox(key="selected_run").set_value(ids[0]).run()
    assert at.button(key="delete_run").disabled
    at.checkbox(key="confirm_delete").check().run()
    at.button(key="delete_run").click().run()
    assert not errors(at)
    assert [r.id for r in RunStore(store_path).list_runs()] == [ids[1]]
    assert at.dataframe[0].value["id"].tolist() == [ids[1]]


def test_watch_opens_the_run_on_the_search_page(store_path, synthetic_table):
    ids = make_runs(store_path, synthetic_table)
    at = runs_page(AppTest.from_file(APP, default_timeout=120))
    at.selectbox(key="selected_run").set_value(ids[0]).run()
    at.button(key="watch").click().run()
    assert not errors(at)
    assert at.title[0].value == "Search"
    assert any(h.value.startswith(f"Run {ids[0]}:") for h in at.subheader)
    assert {m.label: m.value for m in at.metric}["Evaluations"] == "4 / 4"


def test_a_stopped_run_resumes_from_the_runs_page(store_path, synthetic_table):
    src = DataSource.from_table(synthetic_table, table_from_path(synthetic_table))
    store = RunStore(store_path)
    run_id = store.create_run(launching.stored_config(launching.search_config(src, metric="acc", strategy="random",
                                                                              budget=6), src))
    store.set_status(run_id, "stopped")
    at = runs_page(AppTest.from_file(APP, default_timeout=120))
    assert at.dataframe[0].value["status"].tolist() == ["stopped"]
    at.button(key="resume_run").click().run()  # synchronous in tests: runs to the end
    assert not errors(at)
    assert store.get_run(run_id).status == "finished" and store.n_evaluations(run_id) == 6
    assert at.dataframe[0].value["status"].tolist() == ["finished"]


def test_notes_are_kept_with_a_run_and_shown_in_the_table(store_path, synthetic_table):
    """Notes typed on the Runs page are stored with the run (in the SQLite file), shown in the
    table, survive a new session, and text over the limit is refused by the store, not cut."""
    import pytest

    from nasviz.errors import StoreError
    from nasviz.store import MAX_NOTES_CHARS

    first, second = make_runs(store_path, synthetic_table)
    at = runs_page(AppTest.from_file(APP, default_timeout=120))
    at.selectbox(key="selected_run").set_value(first).run()
    at.text_area(key=f"notes_{first}").input("TW kernel, pool of 200: found the optimum at step 40")
    at.button(key=f"FormSubmitter:notes_form_{first}-Save notes").click().run()
    assert not errors(at), [e.value for e in at.error]
    assert RunStore(store_path).get_run(first).notes == "TW kernel, pool of 200: found the optimum at step 40"
    assert RunStore(store_path).get_run(second).notes == ""
    table = at.dataframe[0].value
    assert table.loc[table["id"] == first, "notes"].item().startswith("TW kernel, pool of 200")
    again = runs_page(AppTest.from_file(APP, default_timeout=120))  # a new session reads them back
    again.selectbox(key="selected_run").set_value(first).run()
    assert again.text_area(key=f"notes_{first}").value.startswith("TW kernel")
    with pytest.raises(StoreError, match="at most 10,000"):
        RunStore(store_path).set_notes(first, "x" * (MAX_NOTES_CHARS + 1))


@pytest.mark.slow
def test_exports_are_files_ready_to_download_not_deferred(store_path, synthetic_table):
    """Issue 46: Export JSON hung ("Deferred file ... not found") when the page had rerun between
    drawing the button and the click. The buttons now carry the file itself (a URL of its bytes)."""
    run_id = make_runs(store_path, synthetic_table, n=1)[0]
    at = runs_page(AppTest.from_file(APP, default_timeout=120))
    assert not errors(at)
    buttons = {b.proto.label: b.proto for b in at.get("download_button")}
    assert set(buttons) >= {"Export CSV", "Export JSON"}
    for label in ("Export CSV", "Export JSON"):
        proto = buttons[label]
        assert not proto.HasField("deferred_file_id") and proto.url, label
    assert buttons["Export JSON"].url != buttons["Export CSV"].url and at.selectbox(key="selected_run").value == run_id
