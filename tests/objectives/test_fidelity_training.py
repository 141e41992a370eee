"""Live training at a budget: exact continuation from a checkpoint, and early stopping of a bad network
that is stored with the run and shown on the page."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.dashboard.explain import explain_run_step
from nasviz.dashboard.views.curves import LearningCurveView
from nasviz.dashboard.watching import RunWatcher
from nasviz.fidelity import FidelityRequest
from nasviz.fidelity.stopping import CurveRecords, StoppingRule, parse_rule
from nasviz.objectives.training import TrainingObjective
from nasviz.runner import run_search
from nasviz.spaces import nb201
from nasviz.state import StepState
from nasviz.store import RunStore

GOOD = nb201.parse("|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_3x3~2|")
#: no path from input to output: the network can only guess (about 10 % on digits)
BAD = nb201.parse("|none~0|+|none~0|none~1|+|none~0|none~1|none~2|")


def test_median_rule_by_hand():
    rule = StoppingRule("median", min_trials=3)
    done = CurveRecords(((50, 60, 70), (40, 50, 60), (20, 30, 40)), (True, True, True))
    # running averages to epoch 2: 55, 45, 25 -> median 45; best so far 44 < 45: stop
    stop = rule.decide(done, "x", [30, 44], max_epochs=3)
    assert (stop.action, stop.threshold, stop.rank, stop.of) == ("stop", 45.0, 3, 4)
    assert rule.decide(done, "x", [30, 46], max_epochs=3).action == "promote"
    assert rule.decide(CurveRecords(done.curves[:2], (True, True)), "x", [1, 2], 3) is None  # too few completed
    stopped = CurveRecords(done.curves, (True, True, False))  # a stopped trial is not a completed one
    assert rule.decide(stopped, "x", [30, 44], max_epochs=3) is None


def test_asha_rungs_and_cut():
    rule = StoppingRule("asha", eta=3, min_epochs=1)
    assert rule.rungs(12) == (1, 3, 9) and rule.rungs(9) == (1, 3)
    records = CurveRecords(tuple((v, v + 1) for v in (50, 40, 30, 20, 10)), (True,) * 5)
    d = rule.decide(records, "x", [35], max_epochs=12)  # 6 at rung 1: keep 2 (50, 40); 35 is third
    assert (d.action, d.rank, d.of, d.keep, d.threshold) == ("stop", 3, 6, 2, 40.0)
    assert rule.decide(records, "x", [45], 12).action == "promote"
    assert rule.decide(records, "x", [45, 46], 12) is None  # epoch 2 is no rung
    assert parse_rule("asha:eta=4:min_epochs=2") == StoppingRule("asha", 4.0, 2)
    with pytest.raises(ValueError):
        parse_rule("patience")


@pytest.mark.slow
def test_a_continued_training_is_the_uninterrupted_one(one_torch_thread):
    settings = {"epochs": 4, "patience": 4}
    whole = TrainingObjective(nb201.SPACE, "digits", training=settings, device="cpu").evaluate([GOOD])[0]
    staged = TrainingObjective(nb201.SPACE, "digits", training=settings, device="cpu")
    low, high = staged.evaluate([FidelityRequest(GOOD, 2.0)])[0], None
    high = staged.evaluate([FidelityRequest(GOOD, 4.0, 2.0)])[0]
    assert (low.fidelity.fidelity, low.fidelity.full, high.fidelity.full) == (2.0, False, True)
    assert low.info["valid_curve"] + high.info["valid_curve"] == pytest.approx(whole.info["valid_curve"])
    assert high.value == pytest.approx(whole.value) and high.info["test_score"] == pytest.approx(whole.info["test_score"])
    assert high.fidelity.previous == 2.0 and "notes" not in high.info  # continued, not retrained


class _Scripted:
    """Proposes the given architectures in order (a strategy for the test)."""

    name = "scripted"

    def __init__(self, archs):
        self.queue, self.space = list(archs), nb201.SPACE

    def ask(self, n):
        out, self.queue = self.queue[:n], self.queue[n:]
        return out

    def tell(self, evaluations):
        pass

    def state(self):
        return StepState(strategy=self.name, phase="scripted")


@pytest.mark.slow
def test_a_bad_network_is_stopped_early_stored_and_shown(tmp_path, one_torch_thread):
    objective = TrainingObjective(nb201.SPACE, "digits", training={"epochs": 6, "patience": 6}, device="cpu",
                                  stopping=StoppingRule("asha", eta=3, min_epochs=1))
    store = RunStore(tmp_path / "runs.sqlite")
    result = run_search(_Scripted([GOOD, BAD]), objective, 2, format_arch=nb201.format, store=store)
    good, bad = result.evaluations
    assert good.fidelity.full and good.fidelity.fidelity == 6.0
    assert bad.fidelity.stop is not None and bad.fidelity.fidelity == 1.0 and not bad.full
    assert (bad.fidelity.stop.rule, bad.fidelity.stop.rank, bad.fidelity.stop.of) == ("asha", 2, 2)
    assert result.best_arch == nb201.format(GOOD)  # a stopped network is never the best
    assert good.cost > 3 * bad.cost  # one epoch instead of six
    stored = store.evaluations(result.run_id)[1].info["fidelity"]
    assert stored["stop"]["action"] == "stop" and stored["full"] is False
    watcher = RunWatcher(tmp_path / "runs.sqlite", result.run_id).refresh()
    fig = LearningCurveView().render(watcher).charts[0][1]
    (stops,) = [t for t in fig.data if t.name == "stopped"]
    assert list(stops.customdata) == [nb201.format(BAD)] and "ranked 2 of 2 at 1 epochs" in stops.text[0]
    words = "\n".join(explain_run_step(watcher.at_step(2)))
    assert "was stopped at 1 epochs" in words and "best 1/3 of the trainings" in words
