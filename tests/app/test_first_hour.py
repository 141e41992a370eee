"""The first hour on the Search page (issue 46): the default search on the embedded NAS-Bench-201
table shows no warning a teacher would have to explain away, a budget the random start-up eats is
named before the start, the time per step counts the pause, and values show at their resolution."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests_app_helpers import APP, errors, use_server_csv  # noqa: F401


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


@pytest.mark.slow
def test_the_default_search_opens_on_nb201_cifar10_and_warns_of_nothing(store_path):
    from nasviz import defaults
    from nasviz.dashboard.watching import RunWatcher

    at = AppTest.from_file(APP, default_timeout=180).run()
    assert at.sidebar.selectbox(key="embedded_table").value == defaults.EMBEDDED_TABLES[0].label
    assert at.selectbox(key="metric").value == "cifar10_test_200ep"
    assert at.selectbox(key="strategy").value == defaults.DEFAULT_STRATEGY
    at.number_input(key="budget").set_value(14)  # 4 model-based steps after the 10 random ones
    at.button(key="start").click().run()
    assert not errors(at), [e.value for e in at.error]
    assert [w.value for w in at.warning] == []  # the GP's switched-off parts and noise floor are no warnings
    run_id = int(at.query_params["run"][0] if isinstance(at.query_params["run"], list) else at.query_params["run"])
    watcher = RunWatcher(store_path, run_id)
    watcher.refresh()
    fit = watcher.last_fit()
    assert fit is not None and fit.bounds_hit == () and fit.switched_off  # l[hamming] at its low end
    best = _metric(at, "Best")
    assert len(best.split(".")[1]) == 4  # the table's resolution: 94.2967, not 94.3
    at.session_state["view_tab"] = "Hyperparameters"
    at.run()
    assert any("switched" in c.value and "Nothing is wrong" in c.value for c in at.caption)


def test_a_budget_the_random_start_up_eats_is_named_before_the_start(store_path, synthetic_table):
    at = use_server_csv(AppTest.from_file(APP, default_timeout=120), synthetic_table)
    at.number_input(key="budget").set_value(8).run()
    (warning,) = [w.value for w in at.warning]
    assert "first 10 evaluations on a random start-up" in warning and "never fits one" in warning
    at.number_input(key="budget").set_value(30).run()
    assert not at.warning
    at.selectbox(key="strategy").set_value("random").run()
    at.number_input(key="budget").set_value(8).run()
    assert not at.warning  # random search has no model to fit


@pytest.mark.slow
def test_time_per_step_includes_the_pause(store_path, synthetic_table):
    at = use_server_csv(AppTest.from_file(APP, default_timeout=120), synthetic_table)
    at.selectbox(key="strategy").set_value("random").run()
    at.number_input(key="budget").set_value(3)
    at.number_input(key="step_delay").set_value(0.5)
    at.button(key="start").click().run()
    assert not errors(at)
    shown = _metric(at, "Time per step")
    number, unit = shown.split()
    assert float(number) * (0.001 if unit == "ms" else 1.0) >= 0.5, shown  # it read "6 ms" during the pause
    assert any("pause per step" in c.value for c in at.caption)
