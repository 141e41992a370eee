"""AppTest of the explorer pages: Kernels, Architectures, Interpretability, Compare."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from nasviz.dashboard import launching
from nasviz.dashboard.sources import DataSource, table_from_path
from nasviz.store import RunStore
from tests_app_helpers import APP, errors, shown_text, use_server_csv


def open_page(table, page: str) -> AppTest:
    at = use_server_csv(AppTest.from_file(APP, default_timeout=180), table)
    at.switch_page(page).run()
    return at


def chart_keys(at: AppTest) -> set[str]:
    return {c.key for c in at.get("plotly_chart") if getattr(c, "key", None)} | {
        c.proto.id for c in at.get("plotly_chart")}


@pytest.mark.slow
def test_kernels_page_draws_every_kernel_and_the_quality_views(store_path, synthetic_table, monkeypatch):
    from nasviz.dashboard.explorer import budget

    # the request's estimate times its kernels in a child process, never in the server's (issue 47)
    monkeypatch.setattr(budget, "measure", lambda *a, **k: pytest.fail("a kernel timed in the server's process"))
    monkeypatch.setattr(budget, "_MEASURED", {})
    at = open_page(synthetic_table, "pages/kernels.py")
    assert not errors(at), errors(at)
    assert at.title[0].value == "Kernels"
    assert at.multiselect(key="k_kernels").value == ["tw2g", "wl"]
    keys = [c.key for c in at.get("plotly_chart")]
    # one panel per distance component (TW 2-gram: 3, WL: one per depth), scatter, quality
    assert keys[:3] == ["chart_dist_tw2g_operations", "chart_dist_tw2g_in_degree", "chart_dist_tw2g_out_degree"]
    assert keys[-2:] == ["chart_dist_perf", "chart_quality"] and keys[3].startswith("chart_dist_wl_")
    assert "100 architectures from the table" in at.caption[0].value
    # the explorer's kernels are not fitted to the data: the figures built on them say so (issue 46)
    captions = " ".join(c.value for c in at.caption)
    assert captions.count("default hyperparameters") >= 2, captions
    at.multiselect(key="k_kernels").set_value(["tw2g"]).run()
    assert len(at.get("plotly_chart")) == 3 + 2 and not errors(at)


@pytest.mark.slow
def test_kernels_page_surrogate_protocol_and_too_large_a_split(store_path, synthetic_table):
    at = open_page(synthetic_table, "pages/kernels.py")
    at.number_input(key="k_trials").set_value(2).run()
    at.number_input(key="k_test").set_value(40).run()
    at.number_input(key="k_train").set_value(20).run()
    at.button(key="k_run_surrogate").click().run()
    assert not errors(at), errors(at)
    df = at.dataframe[0].value
    assert list(df["kernel"]) == ["tw2g", "wl"]
    # the synthetic value grows with the number of convolutions: every kernel ranks it well
    assert (df["Spearman ρ (mean)"] > 0.3).all()
    at.number_input(key="k_train").set_value(290).run()
    at.button(key="k_run_surrogate").click().run()
    assert any("exceed the 300 rows" in e.value for e in at.error)


@pytest.mark.slow
def test_architectures_page_compares_two_cells_and_rejects_a_bad_string(store_path, synthetic_table):
    at = open_page(synthetic_table, "pages/architectures.py")
    assert not errors(at), errors(at)
    assert not at.table  # issue 46: no static tables (they read '~' as strike-through and ran off the page)
    df = at.dataframe[0].value  # the distances, then the neighbours of A and of B
    assert {"tw2g", "wl", "otmann"} <= set(df["kernel"])
    assert set(df[df["kernel"] == "tw2g"]["component"]) == {"operations", "in_degree", "out_degree"}
    neighbours = at.dataframe[1].value
    assert len(neighbours) == 24 and list(neighbours.columns) == ["value", "change", "arch"]  # the value first
    at.radio(key="a_mode_B").set_value("typed nb201 string").run()
    at.text_input(key="a_text_B").input("|nor_conv_3x3~0|+|bogus~0|").run()
    assert any("Architecture B is invalid" in e.value for e in at.error)
    # the same cell on both sides: every distance is zero
    a = table_from_path(synthetic_table)
    best = a.strings[int(np.argmax(a.values["acc"]))]
    at.text_input(key="a_text_B").input(best).run()
    assert not errors(at)
    assert np.allclose(at.dataframe[0].value["distance"], 0.0, atol=1e-9)


def test_interpretability_page_profiles_features_and_mutation(store_path, synthetic_table):
    at = open_page(synthetic_table, "pages/interpretability.py")
    assert not errors(at), errors(at)
    assert at.title[0].value == "Interpretability"
    assert len(at.get("plotly_chart")) >= 7  # profile, bars, feature graphs, slot importance, cell, mutation
    assert "chart_importance" in chart_keys(at) and any("Permutation importance" in c.value for c in at.caption)
    at.text_input(key="i_cell").input("not a cell").run()
    assert any("Invalid architecture" in e.value for e in at.error)


@pytest.mark.slow
def test_interpretability_page_fits_in_a_worker_process_not_in_the_request(store_path, synthetic_table, monkeypatch):
    """Issue 47: the page's GP fits (WL gradients, slot importances) run as a job of the server's
    job manager; the page's own process never fits a GP (a fit here fails the test)."""
    import time

    from nasviz.gp import GaussianProcess

    def no_fit(*args, **kwargs):
        raise AssertionError("a GP was fitted in the request")

    monkeypatch.setattr(GaussianProcess, "fit", no_fit)
    monkeypatch.setenv("NASVIZ_SYNC_RUNS", "0")  # jobs in worker processes, as served
    at = use_server_csv(AppTest.from_file(APP, default_timeout=180), synthetic_table)
    at.query_params.update({"n": "40"})
    at.switch_page("pages/interpretability.py").run()
    end = time.monotonic() + 120
    while "chart_importance" not in chart_keys(at) and time.monotonic() < end:
        assert not errors(at), errors(at)
        time.sleep(1.0)
        at.run()
    assert not errors(at), errors(at)
    assert {"chart_profile", "chart_features", "chart_importance", "chart_mutation"} <= chart_keys(at)
    assert list((store_path.parent / "explorer-cache").glob("*.npz")), "the result is cached for the next visitor"


@pytest.mark.slow
def test_compare_page_launches_a_study_and_exports(store_path, synthetic_table):
    at = open_page(synthetic_table, "pages/compare.py")
    assert any("No runs yet" in i.value for i in at.info)
    at.number_input(key="c_seeds").set_value(2).run()
    at.number_input(key="c_budget").set_value(8).run()
    at.button(key="c_launch").click().run()  # synchronous in tests
    assert not errors(at), errors(at)
    runs = RunStore(store_path).list_runs()
    assert len(runs) == 4 and {r.status for r in runs} == {"finished"}
    df = at.dataframe[0].value
    assert sorted(df["strategy"]) == ["evolution", "random"] and set(df["runs"]) == {2}
    assert len(at.get("download_button")) == 3
    assert sorted(at.multiselect(key="c_selected").value) == sorted(r.id for r in runs)
    # a second study replaces the selection with its own runs
    at.number_input(key="c_seeds").set_value(1).run()
    at.button(key="c_launch").click().run()
    new = [r.id for r in RunStore(store_path).list_runs()][:2]
    assert sorted(at.multiselect(key="c_selected").value) == sorted(new)
    assert set(at.dataframe[0].value["runs"]) == {1}
    at.number_input(key="c_seeds").set_value(0).run()
    at.button(key="c_launch").click().run()
    assert any("seeds must be at least 1" in e.value for e in at.error)


@pytest.mark.slow
def test_compare_draws_large_parallel_coordinates_on_request(store_path, synthetic_table, monkeypatch):
    """Thousands of parcoords lines hold the browser for seconds: above the limit the page draws
    everything else at once and the parallel coordinates when the visitor switches them on."""
    from nasviz.dashboard.explorer import comparison

    source = DataSource.from_table(synthetic_table, table_from_path(synthetic_table))
    launching.start_run(store_path, launching.search_config(source, metric="acc", strategy="random", budget=20, seed=0),
                        background=False)
    at = open_page(synthetic_table, "pages/compare.py")
    assert "chart_parallel" in chart_keys(at)  # 20 evaluations: drawn at once, no switch
    assert "c_parallel_on" not in [t.key for t in at.toggle]
    monkeypatch.setattr(comparison, "PARALLEL_EAGER_LINES", 15)
    at.run()
    assert "chart_parallel" not in chart_keys(at) and not errors(at)
    switch = at.toggle(key="c_parallel_on")
    assert switch.label == "Parallel coordinates (20 evaluations)" and switch.value is False
    assert {"chart_curves", "chart_final_values"} <= chart_keys(at)  # the rest of the page is drawn
    switch.set_value(True).run()
    assert "chart_parallel" in chart_keys(at) and not errors(at)


@pytest.mark.slow
def test_two_runs_side_by_side_at_one_step(store_path, synthetic_table):
    """Teaching: two searches on the same seed that differ in their batch selector, the same step
    of each side by side, with what happened in it and the chosen view for both."""
    source = DataSource.from_table(synthetic_table, table_from_path(synthetic_table))
    ids = [launching.start_run(store_path, launching.search_config(source, metric="acc", strategy=name, budget=20,
                                                                   seed=3), background=False)
           for name in ("bo-tw2g-kdpp5", "bo-tw2g-topk5")]
    at = open_page(synthetic_table, "pages/compare.py")
    at.toggle(key="sbs_on").set_value(True).run()
    at.selectbox(key="sbs_left").set_value(ids[0])
    at.selectbox(key="sbs_right").set_value(ids[1]).run()
    at.select_slider(key="sbs_step").set_value(3).run()
    assert not errors(at), [e.value for e in at.error]
    text = " ".join(shown_text(m.value) for m in at.markdown)
    assert f"**Run {ids[0]}: bo-tw2g-kdpp5**" in text and f"**Run {ids[1]}: bo-tw2g-topk5**" in text
    assert text.count("**Step 3**") == 2 and "quality k-DPP" in text and "took the 5 candidates with the highest" in text
    assert {"sbs_l_chart_pool", "sbs_r_chart_pool"} <= chart_keys(at)  # the pool view, once per run
    at.radio(key="sbs_view").set_value("Hyperparameters").run()
    assert not errors(at) and {"sbs_l_chart_hyperparameters", "sbs_r_chart_hyperparameters"} <= chart_keys(at)


@pytest.mark.slow
def test_kernels_and_architectures_read_a_runs_evaluations(store_path, synthetic_table):
    src = DataSource.from_table(synthetic_table, table_from_path(synthetic_table))
    run_id = launching.start_run(store_path, launching.search_config(src, metric="acc", strategy="random", budget=12,
                                                                     seed=0), background=False)
    at = open_page(synthetic_table, "pages/kernels.py")
    at.radio(key="k_origin").set_value("a run's evaluations").run()
    assert not errors(at), errors(at)
    assert "12 architectures from the run 1" in shown_text(at.caption[0].value)
    at.switch_page("pages/architectures.py").run()
    at.radio(key="a_mode_A").set_value("a run's evaluation").run()
    assert not errors(at), errors(at)
    best = RunStore(store_path).get_run(run_id).best_arch
    assert at.selectbox(key="a_eval_A").value == best  # best first


def _param(at: AppTest, name: str):
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


@pytest.mark.slow
def test_explorer_settings_are_in_the_url_and_a_shared_link_restores_them(store_path, synthetic_table):
    """Optuna Dashboard parity: a view can be shared. Each explorer page writes its settings to the
    URL, and a new session opened on that URL (a colleague's browser) shows the same view; values a
    widget would refuse are ignored rather than breaking the page."""
    at = use_server_csv(AppTest.from_file(APP, default_timeout=180), synthetic_table)
    at.query_params.update({"n": "30", "seed": "2", "kernels": "wl,not-a-kernel", "from": "table"})
    at.switch_page("pages/kernels.py").run()
    assert not errors(at), errors(at)
    assert at.number_input(key="k_n").value == 30 and at.number_input(key="k_seed").value == 2
    assert at.multiselect(key="k_kernels").value == ["wl"]
    assert "30 architectures from the table" in at.caption[0].value
    at.multiselect(key="k_kernels").set_value(["tw2g", "wl"]).run()
    at.number_input(key="k_n").set_value(40).run()
    assert _param(at, "kernels") == "tw2g,wl" and _param(at, "n") == "40" and _param(at, "from") == "table"

    at = use_server_csv(AppTest.from_file(APP, default_timeout=180), synthetic_table)
    at.query_params.update({"n": "99999", "seed": "1", "top": "3"})  # n beyond the input's maximum: ignored
    at.switch_page("pages/interpretability.py").run()
    assert not errors(at), errors(at)
    assert at.number_input(key="i_n").value == 200 and at.number_input(key="i_seed").value == 1
    assert at.number_input(key="i_top").value == 3 and _param(at, "n") == "200"

    at = open_page(synthetic_table, "pages/compare.py")
    at.number_input(key="c_seeds").set_value(2).run()
    at.number_input(key="c_budget").set_value(4).run()
    at.button(key="c_launch").click().run()
    ids = sorted(r.id for r in RunStore(store_path).list_runs())
    assert sorted(int(i) for i in _param(at, "runs").split(",")) == ids
    shared = AppTest.from_file(APP, default_timeout=180)
    shared = use_server_csv(shared, synthetic_table)
    shared.query_params.update({"runs": f"{ids[1]},{ids[2]},12345"})  # a deleted run is dropped
    shared.switch_page("pages/compare.py").run()
    assert not errors(shared), errors(shared)
    assert shared.multiselect(key="c_selected").value == [ids[1], ids[2]]
    shared.query_params.update({"run": str(ids[2])})
    shared.switch_page("pages/runs.py").run()
    assert shared.selectbox(key="selected_run").value == ids[2]
