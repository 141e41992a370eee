"""bench goal: issue 21's goal per seed set and pooled over seed sets, from per-run regrets."""

from __future__ import annotations

import argparse
import json

import pytest

from nasviz.bench import goal, search
from nasviz.bench.search_report import final_statistics

PEERS = "optuna-tpe,optuna-gp"


def report(first_seed: int, regrets: dict[str, dict[str, list[float]]], budget: int = 10,
           settings: dict | None = None) -> dict:
    """A ``bench search --runs`` report: ``regrets[table][strategy]`` are the runs' final regrets
    for seeds ``first_seed, first_seed + 1, ...``."""
    seeds = len(next(iter(next(iter(regrets.values())).values())))
    out = {"first_seed": first_seed, "seeds": seeds, "budget": budget,
           "tables": [{"table": f"/data/{t}.csv", "metric": "acc",
                       "strategies": {s: {"final": final_statistics(r), "final_regrets": r,
                                          "seeds_run": list(range(first_seed, first_seed + len(r)))}
                                      for s, r in row.items()}}
                      for t, row in regrets.items()]}
    if settings is not None:
        out["strategy_settings"] = settings
    return out


def run(tmp_path, *reports, candidate="bo", peers=PEERS, trapped=3.0, draws=0, draw_size=20):
    paths = []
    for i, r in enumerate(reports):
        paths.append(tmp_path / f"r{i}.json")
        paths[-1].write_text(json.dumps(r))
    return goal.run(argparse.Namespace(results=paths, candidate=candidate, peers=peers, trapped=trapped,
                                       draws=draws, draw_size=draw_size))


def test_goal_per_seed_set_and_pooled(tmp_path):
    # Seeds 0-1: the candidate meets the goal (0.05 <= 0.2 / 2, p90 and found no worse); seeds
    # 2-3: a trapped run (regret 4) makes it miss. Pooled over four seeds it misses on the mean.
    first = report(0, {"t1": {"bo": [0.0, 0.1], "optuna-tpe": [0.2, 0.2], "optuna-gp": [0.0, 0.3]}})
    second = report(2, {"t1": {"bo": [0.0, 4.0], "optuna-tpe": [0.2, 0.2], "optuna-gp": [0.3, 0.3]}})
    out = run(tmp_path, first, second)
    sets = out["seed_sets"]
    assert list(sets) == ["0-1", "2-3"] and out["budget"] == 10
    assert sets["0-1"]["met_on"] == 1 and sets["2-3"]["met_on"] == 0 and sets["2-3"]["of"] == 1
    assert sets["0-1"]["tables"]["t1.csv:acc"]["goal"]["against"] == "optuna-gp"  # the lower mean of the two
    pooled = out["pooled"]["tables"]["t1.csv:acc"]
    assert pooled["seeds"] == 4
    assert pooled["final"]["bo"] == final_statistics([0.0, 0.1, 0.0, 4.0])
    assert pooled["final"]["optuna-gp"]["found_optimum"] == 1
    assert pooled["goal"]["against"] == "optuna-tpe" and not pooled["goal"]["mean_at_most_half"]
    assert out["pooled"]["met_on"] == 0
    assert out["trapped"] == [{"table": "t1.csv:acc", "seed": 3, "regret": 4.0}]
    assert out["unchecked"] == [str(tmp_path / "r0.json"), str(tmp_path / "r1.json")]


def test_a_candidate_run_alone_is_set_against_peers_run_earlier_on_the_same_seeds(tmp_path):
    peers = report(0, {"t1": {"optuna-tpe": [0.5, 0.5, 0.5]}, "t2": {"optuna-tpe": [0.1, 0.1, 0.1]}})
    ours = report(0, {"t1": {"bo": [0.0, 0.0, 0.1]}, "t2": {"bo": [0.2, 0.0, 0.0]}})
    out = run(tmp_path, peers, ours, peers="optuna-tpe")
    assert list(out["seed_sets"]) == ["0-2"]
    tables = out["seed_sets"]["0-2"]["tables"]
    assert tables["t1.csv:acc"]["goal"]["met"] and not tables["t2.csv:acc"]["goal"]["met"]
    assert out["seed_sets"]["0-2"]["met_on"] == 1 and out["pooled"]["met_on"] == 1
    # A table without the candidate or without a peer is left out rather than counted as missed.
    assert run(tmp_path, peers, report(0, {"t1": {"bo": [0, 0, 0]}}), peers="optuna-tpe")["pooled"]["of"] == 1


def test_pooling_refuses_runs_that_cannot_be_the_same_strategy(tmp_path):
    runs = {"t1": {"bo": [0.0, 0.1], "optuna-tpe": [0.2, 0.2]}}
    same = run(tmp_path, report(0, runs), report(0, runs))  # the same runs twice: counted once
    assert same["pooled"]["tables"]["t1.csv:acc"]["seeds"] == 2
    with pytest.raises(ValueError, match=r"r1.json: table t1.csv:acc, strategy bo, seed 1: final regret 0.3 but 0.1 in"):
        run(tmp_path, report(0, runs), report(0, {"t1": {"bo": [0.0, 0.3], "optuna-tpe": [0.2, 0.2]}}))
    with pytest.raises(ValueError, match=r"r1.json: strategy bo runs with \{'local_search': 10\} but with \{\} in"):
        run(tmp_path, report(0, runs, settings={"bo": {}}), report(2, runs, settings={"bo": {"local_search": 10}}))
    with pytest.raises(ValueError, match="r1.json: budget 20 differs from the first report's 10"):
        run(tmp_path, report(0, runs), report(2, runs, budget=20))
    bare = report(0, runs)
    del bare["tables"][0]["strategies"]["bo"]["final_regrets"]
    with pytest.raises(ValueError, match="r0.json: table t1.csv:acc, strategy bo: no per-run regrets .* --runs"):
        run(tmp_path, bare)
    (tmp_path / "r0.json").write_text("{")
    with pytest.raises(ValueError, match="r0.json: not a readable bench search report"):
        goal.run(argparse.Namespace(results=[tmp_path / "r0.json"], candidate="bo", peers=PEERS, trapped=3.0, draws=0))


@pytest.mark.slow
def test_pools_two_real_search_reports(tmp_path, nb201_table_path):
    """Two real ``bench search --runs`` reports on disjoint seeds pool into one four-seed table."""
    parser = argparse.ArgumentParser()
    search.add_arguments(parser)
    paths = []
    for first in (0, 2):
        args = parser.parse_args(["--table", str(nb201_table_path), "--metric", "cifar10", "--strategies",
                                  "random,evolution", "--budget", "8", "--seeds", "2", "--first-seed", str(first),
                                  "--workers", "1", "--runs"])
        paths.append(tmp_path / f"s{first}.json")
        paths[-1].write_text(json.dumps(search.run(args)))
    reports = [json.loads(p.read_text()) for p in paths]
    assert reports[0]["strategy_settings"]["evolution"] == reports[1]["strategy_settings"]["evolution"]
    out = goal.run(argparse.Namespace(results=paths, candidate="evolution", peers="random", trapped=3.0, draws=0))
    assert list(out["seed_sets"]) == ["0-1", "2-3"] and out["unchecked"] == []
    label = f"{nb201_table_path.name}:cifar10"
    pooled = out["pooled"]["tables"][label]
    assert pooled["seeds"] == 4
    assert pooled["final"]["evolution"] == final_statistics(
        reports[0]["strategies"]["evolution"]["final_regrets"] + reports[1]["strategies"]["evolution"]["final_regrets"])
    assert pooled["goal"]["against"] == "random"


@pytest.mark.slow
def test_draws_estimate_how_often_one_run_meets_the_goal_on_every_table(tmp_path):
    # t1: the candidate meets the goal unless seed 3 (regret 5) is drawn: a drawn pair of the
    # four seeds misses it with probability 3/6. t2: it meets the goal on every pair.
    first = report(0, {"t1": {"bo": [0.0, 0.0, 0.0, 5.0], "optuna-tpe": [1.0] * 4, "optuna-gp": [1.0] * 4},
                       "t2": {"bo": [0.0] * 4, "optuna-tpe": [1.0] * 4, "optuna-gp": [1.0] * 4}})
    out = run(tmp_path, first, draws=2000, draw_size=2)["draws"]
    assert out["size"] == 2 and out["draws"] == 2000 and out["from_seeds"] == 4
    assert out["all_tables"] == pytest.approx(0.5, abs=0.04)
    assert out["per_table"]["t2.csv:acc"] == 1.0 and out["per_table"]["t1.csv:acc"] == out["all_tables"]
    assert out["tables_met"]["1"] + out["tables_met"]["2"] == pytest.approx(1.0)
    again = run(tmp_path, first, draws=2000, draw_size=2)["draws"]
    assert again == out  # a fixed generator: the same figures every time
    whole = run(tmp_path, first, draws=5, draw_size=4)["draws"]  # every seed: the pooled verdict
    assert whole["all_tables"] == 0.0 and whole["tables_met"] == {"1": 1.0}
    with pytest.raises(ValueError, match="share 4 seeds"):
        run(tmp_path, first, draws=5, draw_size=5)
    with pytest.raises(ValueError, match="--draws must be"):
        run(tmp_path, first, draws=-1)
