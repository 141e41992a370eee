"""bench tuning: one setting across tables (smallest worst score) and the leave-one-table-out check."""

from __future__ import annotations

import argparse
import json

import pytest

from nasviz.bench import tuning


def report(means: dict[str, dict[str, float]], seeds: int = 2) -> dict:
    """A ``bench search --tables`` report: ``means[table][strategy]`` is the mean final regret."""
    def summary(mean: float) -> dict:
        return {"final": {"mean": mean, "p90": 2 * mean, "found_optimum": int(mean == 0), "runs": seeds},
                "regret_mean": {"5": 2 * mean, "10": mean}}

    return {"first_seed": 0, "seeds": seeds, "budget": 10,
            "tables": [{"table": f"/data/{t}.csv", "metric": "acc", "strategies": {s: summary(m) for s, m in row.items()}}
                       for t, row in means.items()]}


def run(tmp_path, *reports, **options):
    paths = []
    for i, r in enumerate(reports):
        paths.append(tmp_path / f"r{i}.json")
        paths[-1].write_text(json.dumps(r))
    args = argparse.Namespace(results=paths, reference=options.get("reference", "optuna-tpe"),
                              exclude=options.get("exclude", ""))
    return tuning.run(args)


def test_one_setting_for_all_tables_and_the_fold_that_would_have_chosen_otherwise(tmp_path):
    # "sharp" is best on t1 and t2 but fails t3; "steady" is good everywhere.
    means = {"t1": {"optuna-tpe": 0.09, "sharp": 0.00, "steady": 0.02, "random": 0.5},
             "t2": {"optuna-tpe": 0.09, "sharp": 0.01, "steady": 0.02, "random": 0.5},
             "t3": {"optuna-tpe": 0.09, "sharp": 0.50, "steady": 0.03, "random": 0.5}}
    out = run(tmp_path, report(means))
    assert out["chosen"] == "steady"  # the smallest worst score, never a peer or random
    assert out["configurations"]["sharp"]["tables"]["t1.csv:acc"]["score"] == pytest.approx(0.01 / 0.10)
    held = out["leave_one_table_out"]
    assert held["t3.csv:acc"]["chosen"] == "sharp" and not held["t3.csv:acc"]["same_as_all_tables"]
    assert held["t3.csv:acc"]["held_out_score"] == pytest.approx(0.51 / 0.10)
    assert held["t1.csv:acc"]["chosen"] == "steady" and held["t1.csv:acc"]["same_as_all_tables"]
    assert run(tmp_path, report(means), exclude="steady")["chosen"] == "sharp"


def test_the_reference_may_come_from_another_report_with_the_same_seeds(tmp_path):
    peers = report({"t1": {"optuna-tpe": 0.2}})
    ours = report({"t1": {"bo": 0.1}})
    out = run(tmp_path, peers, ours)
    assert out["chosen"] == "bo" and out["leave_one_table_out"]["t1.csv:acc"]["chosen"] is None  # no other table
    with pytest.raises(ValueError, match="no 'optuna-tpe' run on t1.csv:acc"):
        run(tmp_path, report({"t1": {"optuna-tpe": 0.2}}, seeds=3), ours)  # other seeds: not comparable


def test_one_setting_on_two_seed_sets_is_refused_not_overwritten(tmp_path):
    first = report({"t1": {"optuna-tpe": 0.2, "bo": 0.1}})
    second = {**report({"t1": {"optuna-tpe": 0.3, "bo": 0.0}}), "first_seed": 20}
    with pytest.raises(ValueError, match=r"'optuna-tpe' on t1.csv:acc is in reports of two seed sets \(first seed 0 and 20\)"):
        run(tmp_path, first, second)
    assert run(tmp_path, second)["configurations"]["bo"]["tables"]["t1.csv:acc"]["mean"] == 0.0


def test_the_goal_of_the_chosen_setting_and_the_batch_goal_on_every_table(tmp_path):
    peers = report({"t1": {"optuna-tpe": 0.2, "optuna-gp": 0.1}, "t2": {"optuna-tpe": 0.2, "optuna-gp": 0.3}})
    ours = report({"t1": {"bo-tw2g-ucb:pool=exhaustive": 0.04, "bo-tw2g-kdpp5": 0.3},
                   "t2": {"bo-tw2g-ucb:pool=exhaustive": 0.15, "bo-tw2g-kdpp5": 0.1}})
    out = run(tmp_path, peers, ours)
    assert out["chosen"] == "bo-tw2g-ucb:pool=exhaustive"
    t1, t2 = out["goals"]["t1.csv:acc"], out["goals"]["t2.csv:acc"]
    assert t1["goal"]["against"] == "optuna-gp" and t1["goal"]["met"]  # 0.04 <= 0.1 / 2, against the better peer
    assert t2["goal"]["against"] == "optuna-tpe" and not t2["goal"]["mean_at_most_half"]  # 0.15 > 0.2 / 2
    assert set(t1["batch_goal"]) == {"bo-tw2g-kdpp5"}  # B = 5 by its preset; the sequential setting has none
    assert not t1["batch_goal"]["bo-tw2g-kdpp5"]["met"] and t2["batch_goal"]["bo-tw2g-kdpp5"]["met"]
