"""Ladders, the cost model and fidelity outcomes."""

from __future__ import annotations

import pytest

from nasviz.fidelity import CostModel, FidelityOutcome, Ladder, RungDecision


def test_ladder_positions_and_ratio():
    ladder = Ladder((4, 12, 36, 108))
    assert ladder.top == 108 and ladder.bottom == 4 and ladder.index(36) == 2 and ladder.above(36) == 108
    assert ladder.above(108) is None
    assert ladder.position(4) == 0 and ladder.position(108) == 1
    assert ladder.position(12) == pytest.approx(1 / 3) and ladder.ratio() == pytest.approx(3)
    with pytest.raises(ValueError):
        ladder.index(5)
    for bad in ((), (3, 2), (0, 1)):
        with pytest.raises(ValueError):
            Ladder(bad)


def test_cost_model_resume_and_restart():
    assert CostModel("resume").cost(108.0, 12, 108) == pytest.approx(12.0)
    assert CostModel("resume").cost(108.0, 36, 108, previous=12) == pytest.approx(24.0)
    assert CostModel("restart").cost(108.0, 36, 108, previous=12) == pytest.approx(36.0)
    with pytest.raises(ValueError):
        CostModel("sometimes")


def test_outcome_round_trip():
    stop = RungDecision("a", 3.0, "stop", "median", 4, 5, 40.0, threshold=55.0)
    outcome = FidelityOutcome(3.0, 12.0, previous=1.0, full=False, stop=stop)
    assert FidelityOutcome.from_dict(outcome.to_dict()) == outcome
    assert FidelityOutcome.from_dict(None) is None
