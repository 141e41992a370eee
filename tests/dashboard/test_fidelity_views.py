"""A stored multi-fidelity run on the page: learning curves with promotions and stops, the step
explainer's words, and the Compare page's cost axis."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from nasviz import viz
from nasviz.dashboard.explain import explain_run_step
from nasviz.dashboard.explorer.comparison import run_curves
from nasviz.dashboard.views.curves import LearningCurveView
from nasviz.dashboard.watching import RunWatcher
from nasviz.runner import start_run
from nasviz.spaces import nb201
from nasviz.store import RunStore

CELLS = list(itertools.islice(nb201.enumerate_all(), 9))
ACC = [(10, 15, 20), (80, 60, 70), (30, 35, 40), (70, 85, 95), (60, 65, 72), (20, 25, 30), (90, 75, 88),
       (40, 45, 50), (50, 55, 60)]


@pytest.fixture
def stored(tmp_path):
    table = tmp_path / "nine.csv"
    table.write_text("arch,acc_1,acc_3,acc_9\n" + "\n".join(
        f"{nb201.format(c)},{a},{b},{d}" for c, (a, b, d) in zip(CELLS, ACC)) + "\n")
    path = tmp_path / "runs.sqlite"
    result = start_run(RunStore(path), {"table": str(table), "metric": "acc_9", "strategy": "successive-halving",
                                        "budget": 13, "fidelity": "auto", "strategy_options": {"eta": 3}})
    return path, result.run_id


def test_learning_curves_mark_promotions_and_stops(stored):
    watcher = RunWatcher(*stored).refresh()
    view = LearningCurveView()
    assert view.applies(watcher) is None
    fig = view.render(watcher).charts[0][1]
    marks = {t.name: t for t in fig.data if t.name in ("promoted", "stopped")}
    assert len(marks["promoted"].x) == 3 + 1 and len(marks["stopped"].x) == 6 + 2
    best = nb201.format(CELLS[3])
    assert best in list(marks["promoted"].customdata)
    assert any("ranked 4 of 9 at 1 epochs" in text for text in marks["stopped"].text)
    lines = [t for t in fig.data if t.name == best]
    assert list(lines[0].x) == [1.0, 3.0, 9.0] and list(lines[0].y) == [70.0, 85.0, 95.0]


def test_the_explainer_says_why_a_trial_was_stopped_or_promoted(stored):
    watcher = RunWatcher(*stored).refresh()
    text = "\n".join(explain_run_step(watcher.at_step(9)))  # the ninth result completes the first budget
    assert "3 of 9 trials go on" in text
    assert f"`{nb201.format(CELLS[6])}`: It was promoted from 1 to 3 epochs: it ranked 1 of 9" in text
    assert "(below the cut 70)" in text and "keeps the best 3 of the 9 trials" in text
    last = "\n".join(explain_run_step(watcher.at_step(13)))
    assert "measured at the full budget" in last and "a new best so far" not in last.split("Measured")[0]


def test_compare_counts_full_results_only_and_draws_cost(stored):
    (curve,) = run_curves(stored[0], [stored[1]])
    assert np.isnan(curve.values[:12]).all() and curve.values[12] == 95.0
    # 27 epochs in all, 9 of them a full evaluation: the cost axis counts full evaluations
    assert curve.costs[-1] == pytest.approx(27.0 / 9) and len(curve.seconds) == 13
    fig = viz.plot_curves([curve], regret=True, axis="cost")
    assert fig.layout.xaxis.title.text == "cumulative cost"


def test_a_single_fidelity_run_of_the_same_table_costs_one_full_evaluation_per_lookup(stored):
    """Its stored cost is the lookup's seconds; on the cost axis beside a multi-fidelity run it is
    one full evaluation per evaluation, or the two would not share a unit."""
    path, _ = stored
    store = RunStore(path)
    table = store.get_run(stored[1]).config["table"]
    single = start_run(store, {"table": table, "metric": "acc_9", "strategy": "random", "budget": 5, "seed": 0})
    (curve,) = run_curves(path, [single.run_id])
    assert curve.costs.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
