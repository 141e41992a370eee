"""The multi-fidelity doc tables: the selection score as the protocol in docs/benchmarks.md defines it."""

from __future__ import annotations

import pytest

from nasviz.bench.tables.fidelity import fidelity_selection, selection_scores


def _summary(at30: float | None) -> dict:
    return {"cost": {"regret_at_cost": {"30": {"mean": at30, "se": 0.0}}}}


def _report() -> dict:
    return {"tables": [
        {"table": "a.csv", "metric": "m", "strategies": {"optuna-tpe-hyperband": _summary(0.09), "mf-gp": _summary(0.04),
                                                         "bohb": _summary(0.19)}},
        {"table": "b.csv", "metric": "m", "strategies": {"optuna-tpe-hyperband": _summary(0.0), "mf-gp": _summary(0.0),
                                                         "bohb": _summary(None)}},
    ]}


def test_selection_score_is_the_mean_offset_ratio_to_the_peer_and_a_missing_table_has_none():
    scores = selection_scores(_report())
    # (0.04 + 0.01) / (0.09 + 0.01) = 0.5 on a; both found the optimum on b: (0 + 0.01) / (0 + 0.01) = 1
    assert scores["mf-gp"] == pytest.approx((0.5 + 1.0) / 2)
    assert scores["optuna-tpe-hyperband"] == pytest.approx(1.0)
    assert scores["bohb"] is None  # no run reached cost 30 on b: not comparable, never chosen


def test_the_selection_table_bolds_the_lowest_score():
    text = fidelity_selection([_report()])
    assert "| selection score | **`mf-gp`** |" in text and "**`bohb`**" not in text
