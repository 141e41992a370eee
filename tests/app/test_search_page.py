"""AppTest of the app frame and the Search page: widgets, a short search, bad input."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests_app_helpers import APP, errors, shown_text, use_server_csv  # noqa: F401  (on the path: pyproject's pytest pythonpath)


def search_on_tab(table, strategy: str, budget: int, tab: str) -> AppTest:
    """A finished search of ``strategy`` on ``table`` (a server CSV), its page open on ``tab``."""
    at = use_server_csv(AppTest.from_file(APP, default_timeout=120), table)
    at.selectbox(key="strategy").set_value(strategy).run()
    at.number_input(key="budget").set_value(budget)
    at.button(key="start").click().run()
    at.session_state["view_tab"] = tab
    at.run()
    return at


def test_search_page_has_every_control(store_path, synthetic_table):
    at = use_server_csv(AppTest.from_file(APP, default_timeout=120), synthetic_table)
    for key in ("space", "metric", "strategy"):
        assert at.selectbox(key=key) is not None
    # the default strategy's components are shown with the values it really uses, fixed
    fixed = {key: at.selectbox(key=f"{key}_bo-tw2g-hamming-ei") for key in ("kernel", "acquisition", "pool", "batch")}
    assert {k: b.value for k, b in fixed.items()} == {"kernel": "tw2g-hamming", "acquisition": "ei",
                                                        "pool": "evolution", "batch": "topk"}
    assert all(b.disabled for b in fixed.values())
    assert at.number_input(key="budget").value == 100
    assert at.number_input(key="seed").value == 0
    assert at.button(key="start") is not None
    assert at.selectbox(key="metric").options == ["acc", "other"]
    strategies = at.selectbox(key="strategy").options
    assert at.selectbox(key="strategy").value == "bo-tw2g-hamming-ei" and "random" in strategies  # the tuned default
    assert not errors(at)


def test_each_space_is_offered_the_tuned_default_or_paper_000s_bo_where_the_default_cannot_search_it():
    """The tuned default's Hamming factor reads categorical parameters; wired graphs, layer and CNN
    networks have none, and there the page offers ``bo-tw2g-ucb`` first (it fits every space)."""
    from nasviz.components import DEFAULT_STRATEGY, SPACES, strategies_for
    from nasviz.dashboard.forms import PREFERRED, default_index
    from nasviz.spaces import get_space
    from nasviz.spaces.base import PARAMETERS

    for space in SPACES.names():
        names = strategies_for(space)
        offered = names[default_index(names, PREFERRED)]
        has_parameters = get_space(space).provides(PARAMETERS)
        assert offered == (DEFAULT_STRATEGY if has_parameters else "bo-tw2g-ucb"), space
        assert (DEFAULT_STRATEGY in names) == has_parameters, space


@pytest.mark.slow
def test_a_short_search_shows_progress_history_and_views(store_path, synthetic_table):
    at = use_server_csv(AppTest.from_file(APP, default_timeout=120), synthetic_table)
    at.selectbox(key="strategy").set_value("bo").run()
    assert "kdpp-quality" not in at.selectbox(key="batch").options  # a k-DPP needs a batch of 2 or more
    at.number_input(key="batch_size_bo").set_value(2).run()
    at.selectbox(key="kernel").set_value("tw2g")
    at.selectbox(key="batch").set_value("kdpp-quality")
    at.number_input(key="budget").set_value(14)
    at.button(key="start").click().run()
    assert not errors(at), [shown_text(e.value) for e in at.error]
    assert at.query_params["run"] in ("1", ["1"])  # a reloaded tab finds the run again
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Step"] == "7" and metrics["Evaluations"] == "14 / 14"
    assert any(c.value.startswith("Status: finished · step 7 · 14/14 evaluations") for c in at.caption)
    charts = [c.key for c in at.get("plotly_chart")]
    # lazy tabs: only the open one (the pool, first) is drawn on a refresh
    assert charts == ["chart_history", "chart_pool"]
    pool_figure = at.get("plotly_chart")[1].proto.spec
    assert '"evaluated so far"' in pool_figure  # the measured architectures, embedded with the pool
    assert [t.label for t in at.tabs] == ["Candidate pool", "Hyperparameters", "Distances", "WL features",
                                          "Selected architectures", "Evaluations", "Learning curves"]
    for tab, expected in [("Hyperparameters", ["chart_hyperparameters"]), ("Distances", ["chart_distances_operations", "chart_distances_in_degree", "chart_distances_out_degree"]),
                          ("Selected architectures", ["chart_arch_0", "chart_arch_1"]), ("WL features", [])]:
        at.session_state["view_tab"] = tab
        at.run()
        assert not errors(at), (tab, [shown_text(e.value) for e in at.error])
        assert [c.key for c in at.get("plotly_chart")] == ["chart_history", *expected], tab
    assert any("WL feature gradients are shown when" in i.value for i in at.info)
    # the distance view's order toggle reruns the view
    at.session_state["view_tab"] = "Distances"
    at.run()
    at.radio(key="dist_order").set_value("value").run()
    assert not errors(at)


@pytest.mark.slow
def test_the_step_pause_of_the_form_reaches_the_run(store_path, synthetic_table, monkeypatch):
    """Teaching: the page's search pauses after each step by default (issue 46: a default search
    used to be over in 5 s), visibly and changeably; the value is stored with the run."""
    from nasviz import defaults
    from nasviz.store import RunStore

    monkeypatch.setattr("nasviz.defaults.PAGE_STEP_DELAY", 1.0)  # the fixture's 0 undone: the real default
    assert defaults.PAGE_STEP_DELAY == 1.0
    at = use_server_csv(AppTest.from_file(APP, default_timeout=120), synthetic_table)
    assert at.number_input(key="step_delay").value == 1.0
    assert at.number_input(key="step_delay").label == "Pause after each step (s)"
    at.selectbox(key="strategy").set_value("random").run()
    at.number_input(key="budget").set_value(3)
    at.number_input(key="step_delay").set_value(0.5)
    at.button(key="start").click().run()
    assert not errors(at), [shown_text(e.value) for e in at.error]
    run = RunStore(store_path).get_run(int(at.query_params["run"][0] if isinstance(at.query_params["run"], list)
                                           else at.query_params["run"]))
    assert run.config["step_delay"] == 0.5


@pytest.mark.slow
def test_a_minimised_metrics_best_reads_as_its_value_in_the_metric_and_the_status_line(store_path, tmp_path):
    """Runs store scores (minus a minimised metric); the status line once read "best -4.12" for an
    error of 4.12 while the metric beside it read 4.12."""
    import numpy as np

    from nasviz.spaces import nb201

    rng = np.random.default_rng(3)
    cells = sorted({nb201.format(a) for a in nb201.sample(rng, 80)})
    table = tmp_path / "errors.csv"
    table.write_text("arch,error\n" + "".join(f"{c},{rng.uniform(4, 9):.2f}\n" for c in cells))
    at = use_server_csv(AppTest.from_file(APP, default_timeout=120), table)
    at.selectbox(key="strategy").set_value("random").run()
    at.number_input(key="budget").set_value(6)
    at.button(key="start").click().run()
    assert not errors(at), [shown_text(e.value) for e in at.error]
    best = {m.label: m.value for m in at.metric}["Best"]
    assert 4 <= float(best) <= 9, best
    (status,) = [c.value for c in at.caption if c.value.startswith("Status: finished")]
    assert status.endswith(f"best {best}"), status


@pytest.mark.slow
def test_a_gp_fit_on_a_bound_is_a_visible_warning(store_path, synthetic_table):
    """A TW GP fitted to pure noise (the table's ``other`` column) often cannot pin its
    hyperparameters down: the run's page warns above the views and names them with their values
    exactly when the last fit left some on a bound (runs of four seeds: both cases are checked)."""
    from nasviz.dashboard.watching import RunWatcher

    hits = []
    for seed in range(4):
        at = use_server_csv(AppTest.from_file(APP, default_timeout=120), synthetic_table)
        at.selectbox(key="metric").set_value("other")
        at.selectbox(key="strategy").set_value("bo-tw2g-ucb").run()
        at.number_input(key="budget").set_value(16)
        at.number_input(key="seed").set_value(seed)
        at.button(key="start").click().run()
        assert not errors(at), [shown_text(e.value) for e in at.error]
        run_id = int(at.query_params["run"][0] if isinstance(at.query_params["run"], list) else at.query_params["run"])
        watcher = RunWatcher(store_path, run_id)
        watcher.refresh()
        hit = watcher.last_fit().bounds_hit
        warnings = [w.value for w in at.warning if "on a bound" in w.value]
        if hit:
            assert len(warnings) == 1 and all(name in warnings[0] for name in hit)
        else:
            assert warnings == []
        hits.append(bool(hit))
    assert any(hits)  # noise: some run's last fit has a lambda, the amplitude or the noise on its bound


@pytest.mark.slow
def test_the_evaluations_table_filters_and_links_to_the_architectures_page(store_path, synthetic_table):
    """Every evaluation in one table (sortable by Streamlit), filtered by status, each row with a
    link that opens the architecture on the Architectures page; the link's page shows it."""
    from urllib.parse import parse_qs, urlparse

    at = search_on_tab(synthetic_table, "random", 6, "Evaluations")
    assert not errors(at), [shown_text(e.value) for e in at.error]
    assert len(at.dataframe) == 1  # the evaluations table (AppTest does not expose a dataframe's key)
    frame = at.dataframe[0].value
    assert list(frame.columns) == ["#", "step", "architecture", "acc", "status", "error", "open"]
    assert frame["#"].tolist() == [1, 2, 3, 4, 5, 6] and set(frame["status"]) == {"ok"}
    at.radio(key="eval_show").set_value("failed").run()
    assert len(at.dataframe[0].value) == 0
    link = urlparse(frame["open"].iloc[2])
    assert link.path == "architectures"
    params = {k: v[0] for k, v in parse_qs(link.query).items()}
    assert params == {"space": "nb201", "a": frame["architecture"].iloc[2]}
    # the link's page: architecture A is the linked one, typed, and stays in the URL
    page = use_server_csv(AppTest.from_file(APP, default_timeout=120), synthetic_table)
    page.query_params.update(params)
    page.switch_page("pages/architectures.py").run()
    assert not errors(page), [e.value for e in page.error]
    assert page.radio(key="a_mode_A").value == "typed nb201 string"
    assert page.text_input(key="a_text_A").value == params["a"]
    assert page.query_params["a"] in (params["a"], [params["a"]])


@pytest.mark.slow
def test_teaching_mode_replays_a_past_step_and_says_what_happened(store_path, synthetic_table):
    """Once the run has ended the slider is there at once (issue 46: one click away, not behind a
    toggle), and shows a past step as it was: the pool and the evaluations of that step, a
    plain-language account of the step's fit and choice, and the history marks the step."""
    at = use_server_csv(AppTest.from_file(APP, default_timeout=120), synthetic_table)
    at.selectbox(key="strategy").set_value("bo-tw2g-kdpp5").run()
    at.number_input(key="budget").set_value(25)
    at.button(key="start").click().run()
    assert not errors(at), [shown_text(e.value) for e in at.error]
    newest = [e for e in at.expander if e.label.startswith("What happened in step")]
    assert [e.label for e in newest] == ["What happened in step 5"]
    assert not [t for t in at.toggle if t.key == "follow_latest"]  # finished: no toggle in the way
    at.select_slider(key="replay_step").set_value(3).run()
    assert not errors(at), [shown_text(e.value) for e in at.error]
    panel = next(e for e in at.expander if e.label.startswith("What happened in step"))
    text = " ".join(m.value for m in panel.markdown)
    assert panel.label == "What happened in step 3"
    assert "the GP with the `tw2g` kernel was fitted to 10 measured architectures" in text
    assert "quality k-DPP" in text and "Measured: 5 values" in text
    at.session_state["view_tab"] = "Evaluations"
    at.run()
    assert at.dataframe[0].value["step"].max() == 3 and len(at.dataframe[0].value) == 15


def test_learning_curves_from_a_tables_epoch_columns(store_path, tmp_path):
    """A table with ``<metric>_epoch_<E>`` columns (as ``tabulate`` writes them): the Learning
    curves tab draws the evaluated cells' curves; a table without them says why not."""
    import numpy as np

    from nasviz.spaces import nb201

    rng = np.random.default_rng(0)
    archs = list({nb201.format(a): a for a in nb201.sample(rng, 80)})[:60]
    path = tmp_path / "curves.csv"
    lines = ["arch,valid_accuracy,valid_accuracy_epoch_1,valid_accuracy_epoch_2,valid_accuracy_epoch_3"]
    for a in archs:
        final = float(rng.uniform(40, 90))
        lines.append(f"{a},{final:.2f},{final * 0.4:.2f},{final * 0.8:.2f},{final:.2f}")
    path.write_text("\n".join(lines) + "\n")
    at = search_on_tab(path, "random", 6, "Learning curves")
    assert not errors(at), [shown_text(e.value) for e in at.error]
    chart = next(c for c in at.get("plotly_chart") if c.proto.id and "chart_curves" in c.proto.id)
    assert chart.proto.spec.count('"mode":"lines+markers"') == 6  # one curve per evaluated cell


@pytest.mark.slow
def test_a_link_opens_the_run_on_its_metric_and_tab_and_the_url_follows_the_page(store_path):
    """Every choice that makes a view is in the URL: a link with ``metric`` and ``tab`` opens the
    form on that metric and the run on that tab (the embedded table: a data source a visitor
    chose is their session's, not the link's), and changing them rewrites the URL."""
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.selectbox(key="strategy").set_value("random").run()
    at.number_input(key="budget").set_value(4)
    at.button(key="start").click().run()
    run = at.query_params["run"]
    link = AppTest.from_file(APP, default_timeout=120)
    link.query_params.update({"run": run if isinstance(run, str) else run[0], "metric": "cifar100_test_200ep",
                              "tab": "Evaluations"})
    link.run()
    assert not errors(link), [e.value for e in link.error]
    assert link.selectbox(key="metric").value == "cifar100_test_200ep"
    assert len(link.dataframe) == 1  # the Evaluations tab is the open one (the only view with a table)
    assert link.query_params["tab"] in ("Evaluations", ["Evaluations"])
    link.selectbox(key="metric").set_value("cifar10_valid_12ep").run()
    assert link.query_params["metric"] in ("cifar10_valid_12ep", ["cifar10_valid_12ep"])
    assert link.query_params["space"] in ("nb201", ["nb201"])
    link.query_params.update({"metric": "nonsense"})  # a value the box does not offer is ignored
    link.run()
    assert not errors(link) and link.selectbox(key="metric").value == "cifar10_valid_12ep"
    # A browser can send its old address after a click (the server's URL update still on its
    # way): the URL is read once per session, so the visitor's choice stands.
    link.session_state["view_tab"] = "Hyperparameters"  # the click
    link.run()
    assert link.query_params["tab"] in ("Hyperparameters", ["Hyperparameters"])
    link.query_params.update({"tab": "Evaluations"})  # the browser's stale address on the next refresh
    link.run()
    assert link.query_params["tab"] in ("Hyperparameters", ["Hyperparameters"]) and len(link.dataframe) == 0


def test_random_search_says_it_has_no_pool(store_path, synthetic_table):
    at = use_server_csv(AppTest.from_file(APP, default_timeout=120), synthetic_table)
    at.selectbox(key="strategy").set_value("random").run()
    at.number_input(key="budget").set_value(5)
    at.button(key="start").click().run()
    assert not errors(at)
    assert any("no candidate pool" in i.value for i in at.info)
    assert {m.label: m.value for m in at.metric}["Evaluations"] == "5 / 5"


def test_budget_zero_is_an_error_not_a_traceback(store_path, synthetic_table):
    at = use_server_csv(AppTest.from_file(APP, default_timeout=120), synthetic_table)
    at.number_input(key="budget").set_value(0)
    at.button(key="start").click().run()
    assert not at.exception
    assert any("budget must be at least 1" in shown_text(e.value) for e in at.error)


def test_an_invalid_architecture_string_is_named(store_path, synthetic_table):
    at = use_server_csv(AppTest.from_file(APP, default_timeout=120), synthetic_table)
    at.text_input(key="inspect").input("|nor_conv_9x9~0|+|none~0|none~1|+|none~0|none~1|none~2|").run()
    assert not at.exception
    assert any("unknown operation 'nor_conv_9x9'" in shown_text(e.value) for e in at.error)
    at.text_input(key="inspect").input("|nor_conv_3x3~0|+|none~0|none~1|+|none~0|none~1|none~2|").run()
    assert not errors(at) and len(at.get("plotly_chart")) == 1


CELL = "|nor_conv_3x3~0|+|none~0|none~1|+|none~0|none~1|none~2|"


@pytest.mark.parametrize("content, message", [
    (b"", "is empty"),
    (b"arch,acc\n", "no data rows"),
    (b"arch,acc\nfoo,bar\nbaz,qux\n", "no numeric metric column"),
    # the malformed files of issue 16 point 4: named with their line and column, never a traceback
    (f"arch,acc\n{CELL},{'1' * 140_000}\n".encode(), "bad.csv: line 2, column 57: a field is longer than"),
    (f'arch,acc\n{CELL},"1\n{CELL},2\n'.encode(), "bad.csv: line 2, column 57: a quoted field is opened here"),
    (f"arch,acc\n{CELL},1\n".encode() + b"\xff\n", "bad.csv: line 3, column 1: is not UTF-8 text"),
])
def test_bad_uploads_are_named_in_the_sidebar(store_path, content, message):
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.sidebar.radio(key="source_kind").set_value("Upload a CSV").run()
    at.sidebar.file_uploader(key="upload").upload("bad.csv", content, "text/csv").run()
    assert not at.exception
    assert any(message in shown_text(e.value) for e in at.sidebar.error), [e.value for e in at.sidebar.error]
    assert any("Choose a data source" in shown_text(e.value) or message in shown_text(e.value) for e in at.main.error)


def test_an_upload_with_bad_rows_lists_their_lines(store_path, synthetic_table):
    good = synthetic_table.read_bytes()
    content = good + b"not-an-arch,1\n|nor_conv_3x3~0|+|none~0|none~1|+|none~0|none~1|none~2|,x,y\n"
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.sidebar.radio(key="source_kind").set_value("Upload a CSV").run()
    at.sidebar.file_uploader(key="upload").upload("mine.csv", content, "text/csv").run()
    assert not errors(at)
    assert "300 architectures" in at.sidebar.success[0].value
    text = at.sidebar.expander[0].text[0].value
    assert "line 302, column 'arch'" in text and "line 303" in text
    # the run keeps them and its page lists them
    at.selectbox(key="strategy").set_value("random")
    at.number_input(key="budget").set_value(5)
    at.button(key="start").click().run()
    assert not errors(at)
    skipped = [e for e in at.expander if "bad rows of the table were skipped" in e.label]
    assert skipped[0].label.startswith("2 bad rows") and "line 302, column 'arch'" in skipped[0].text[0].value


def test_a_missing_server_path_is_named(store_path, tmp_path):
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.sidebar.radio(key="source_kind").set_value("CSV on the server").run()
    at.sidebar.text_input(key="server_csv").input(str(tmp_path / "nope.csv")).run()
    assert not at.exception
    assert any("does not exist" in e.value for e in at.sidebar.error)


def test_the_default_data_source_loads(store_path, nb201_table_path):
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not errors(at)
    assert at.sidebar.success and "architectures" in at.sidebar.success[0].value


@pytest.mark.slow
def test_a_wl_search_shows_feature_gradients(store_path, synthetic_table):
    at = use_server_csv(AppTest.from_file(APP, default_timeout=120), synthetic_table)
    at.selectbox(key="strategy").set_value("bo-wl-ei").run()
    at.number_input(key="budget").set_value(12)  # 10 initial random cells, then 2 BO steps
    at.button(key="start").click().run()
    assert not errors(at), [shown_text(e.value) for e in at.error]
    at.session_state["view_tab"] = "WL features"
    at.run()
    assert not errors(at)
    assert "chart_wl_gradients" in [c.key for c in at.get("plotly_chart")]


def test_live_training_is_offered_with_the_datasets_that_fit_the_space(store_path):
    from nasviz.dashboard import sources

    at = AppTest.from_file(APP, default_timeout=120).run()
    kinds = at.sidebar.radio(key="source_kind").options
    assert ("Live training" in kinds) == sources.trainer_available()
    if sources.trainer_available():
        at.sidebar.radio(key="source_kind").set_value("Live training").run()
        assert not errors(at)
        assert at.selectbox(key="metric").options == ["valid_accuracy", "test_accuracy"]
        # NB201 cells read images: the bundled digits and the image sets read from a folder
        assert at.sidebar.selectbox(key="train_dataset").options == ["digits", "mnist", "fashion_mnist", "cifar10"]
        at.sidebar.selectbox(key="space").set_value("layers").run()
        assert at.sidebar.selectbox(key="train_dataset").options == sources.training_datasets("layers")
        assert {"wine", "friedman1"} <= set(sources.training_datasets("layers"))
        at.sidebar.selectbox(key="train_dataset").set_value("friedman1").run()
        assert not errors(at)
        assert at.selectbox(key="metric").options == ["valid_score", "test_score"]  # a regression set: R^2
        assert "nasbot" in at.selectbox(key="strategy").options


def test_a_dataset_folder_typed_in_the_sidebar_stays_in_the_data_folder(store_path, tmp_path):
    """A folder dataset (MNIST in torchvision's layout) is read from a folder the visitor names
    inside the operator's data folder; the search config keeps the resolved folder."""
    from nasviz.dashboard import launching, sources
    from vision_fixtures import write_mnist_folder

    if not sources.trainer_available():
        pytest.skip("live training needs torch")
    write_mnist_folder(tmp_path / "MNIST-here", n_train=20, n_test=10, size=8)
    (tmp_path.parent / "outside").mkdir(exist_ok=True)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.sidebar.selectbox(key="space").set_value("cnn").run()
    at.sidebar.radio(key="source_kind").set_value("Live training").run()
    at.sidebar.selectbox(key="train_dataset").set_value("mnist").run()
    assert at.session_state["source"] is None and "Type the folder of mnist" in at.session_state["source_error"]
    for typed in ("../outside", "synthetic-missing", str(store_path.parent)):
        at.sidebar.text_input(key="train_data_folder").input(typed).run()
        assert not at.exception and at.session_state["source"] is None, typed
        assert at.session_state["source_error"], typed
    at.sidebar.text_input(key="train_data_folder").input("MNIST-here").run()
    assert not errors(at), errors(at)
    source = at.session_state["source"]
    assert source.dataset == "mnist" and source.data_folder == str((tmp_path / "MNIST-here").resolve())
    config = launching.search_config(source, strategy="random", budget=2, space="cnn")
    assert config.objective.data_folder == source.data_folder and config.objective.dataset == "mnist"


@pytest.mark.slow
def test_an_impossible_combination_is_named_and_cannot_start(store_path, synthetic_table):
    at = use_server_csv(AppTest.from_file(APP, default_timeout=120), synthetic_table)
    at.selectbox(key="strategy").set_value("bo-tw2g-kdpp5").run()
    assert at.number_input(key="batch_size_bo-tw2g-kdpp5").value == 5  # the batch it was designed for
    at.number_input(key="batch_size_bo-tw2g-kdpp5").set_value(1).run()
    assert not at.exception
    assert any("cannot run: batch selector 'kdpp-quality' chooses a diverse set: it needs a batch size of at least 2"
               in shown_text(e.value) for e in at.error), [shown_text(e.value) for e in at.error]
    assert at.button(key="start").disabled


def test_a_strategy_shows_only_the_settings_it_takes(store_path):
    from nasviz.components import STRATEGIES

    at = AppTest.from_file(APP, default_timeout=120).run()
    at.sidebar.selectbox(key="space").set_value("layers").run()
    at.sidebar.radio(key="source_kind").set_value("Upload a CSV").run()  # no source: the form waits for one
    assert not at.exception
    if "Live training" not in at.sidebar.radio(key="source_kind").options:
        return
    at.sidebar.radio(key="source_kind").set_value("Live training").run()
    at.selectbox(key="strategy").set_value("nasbot").run()
    assert not errors(at), errors(at)
    keys = {w.key for w in at.main.get("number_input") + at.main.get("selectbox") + at.main.get("text_input")
            + at.main.get("checkbox") if w.key and w.key.startswith("opt_")}
    assert keys == {f"opt_nasbot_{o.name}" for o in STRATEGIES.get("nasbot").options}  # its own, nothing of BO's
    assert at.number_input(key="opt_nasbot_ea_cap").value == STRATEGIES.get("nasbot").defaults()["ea_cap"]
    assert not [b for b in at.selectbox if b.key and b.key.startswith("kernel")]  # its GP kernel is fixed
    assert any("GP kernel: otmann" in shown_text(c.value) for c in at.caption)


def test_a_noise_on_the_default_strategys_floor_is_named_without_the_bound_warning(store_path, tmp_path):
    """The default strategy fits the GP with a noise floor (min_noise=1e-3). A fit resting on it is
    the chosen value: the Search page shows no "on a bound" warning for the noise, and the
    Hyperparameters tab names the floor under its chart. The table's values are a noiseless count
    of convolutions, so ML-II would fit less noise than the floor."""
    import numpy as np

    from nasviz.dashboard.watching import RunWatcher
    from nasviz.spaces import nb201

    rng = np.random.default_rng(0)
    cells = {nb201.format(arch): arch for arch in nb201.sample(rng, 400)}
    table = tmp_path / "noiseless.csv"
    table.write_text("arch,acc,other\n" + "".join(
        f"{s},{50 + 5 * sum(op.startswith('nor_conv') for op in nb201.operations(a))},0\n" for s, a in cells.items()))
    at = search_on_tab(table, "bo-tw2g-hamming-ei", 16, "Hyperparameters")
    assert not errors(at), [shown_text(e.value) for e in at.error]
    run_id = int(at.query_params["run"][0] if isinstance(at.query_params["run"], list) else at.query_params["run"])
    watcher = RunWatcher(store_path, run_id)
    watcher.refresh()
    fit = watcher.last_fit()
    assert fit.floors_hit == ("noise",) and "noise" not in fit.bounds_hit
    assert not any("noise" in w.value for w in at.warning)
    assert any("on the floor the strategy sets" in shown_text(c.value) for c in at.caption)
