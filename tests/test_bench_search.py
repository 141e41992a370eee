"""The regret benchmark's JSON (tiny budget; speed is measured by the benchmark, not here)."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from nasviz.bench import search, search_runs


def _args(**kw):
    parser = argparse.ArgumentParser()
    search.add_arguments(parser)
    argv = []
    for k, v in kw.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    return parser.parse_args(argv)


def test_regret_report_shape_and_values(nb201_table_path, nb201_table, capsys):
    args = _args(table=nb201_table_path, metric="cifar10", strategies="random,evolution", budget=30, seeds=2,
                 workers=2, checkpoints="10,20")
    out = search.run(args)
    progress = capsys.readouterr().err.splitlines()  # a line per finished run, in the order they end
    assert len(progress) == 4 and progress[-1].startswith("bench search: 4/4 runs done")
    assert all("cifar10 · " in line and " · seed " in line for line in progress)
    assert out["checkpoints"] == [10, 20, 30]
    opt = nb201_table.optimum("cifar10")
    assert out["optimum"] == pytest.approx(opt)
    for name in ("random", "evolution"):
        s = out["strategies"][name]
        assert s["runs"] == 2
        means = [s["regret_mean"][c] for c in ("10", "20", "30")]
        assert all(m >= 0 for m in means) and means == sorted(means, reverse=True)  # regret never grows
        assert s["step_seconds_mean"] > 0


def test_bad_arguments_are_clear(nb201_table_path):
    with pytest.raises(ValueError, match="unknown strategy"):
        search.run(_args(table=nb201_table_path, strategies="random,nope", budget=5, seeds=1, workers=1))
    with pytest.raises(ValueError, match="--budget"):
        search.run(_args(table=nb201_table_path, strategies="random", budget=0, seeds=1, workers=1))
    # timing a step is done on one table: two are refused, not timed on the first alone
    two = f"{nb201_table_path}:cifar10,{nb201_table_path}:cifar100"
    with pytest.raises(ValueError, match="--time-step-at times one table, and --tables gave 2"):
        search.run(_args(tables=two, strategies="random", seeds=1, workers=1, time_step_at=5))


@pytest.mark.slow
def test_a_specs_batch_size_is_what_its_strategy_asks_per_step(nb201_table_path):
    from nasviz.bench.protocol import spec_batch_size
    from nasviz.objectives import TableObjective

    for spec, batch in (("bo-tw2g-kdpp5", 5), ("bo-tw2g-ucb:batch_size=3", 3), ("bo-tw2g-ucb", 1), ("optuna-tpe", 1)):
        assert spec_batch_size(spec) == batch
        job = {"strategy": spec, "seed": 0, "space": "nb201"}
        strategy = search_runs.make_strategy_of(job, TableObjective(search_runs.table(nb201_table_path, "nb201"), "cifar10"))
        assert int(getattr(strategy, "batch_size", 1)) == batch  # what run_one asks per step
    assert spec_batch_size("gone:batch_size=2") == 2 and spec_batch_size("gone") == 1  # names of an old report
    # the step timer asks the spec's own batch, not its preset's
    out = search.run(_args(table=nb201_table_path, metric="cifar10", strategies="bo-tw2g-ucb:batch_size=3",
                           seeds=1, workers=1, time_step_at=5))
    assert out["strategies"]["bo-tw2g-ucb:batch_size=3"]["batch_size"] == 3


def test_final_statistics_and_goal_check_on_known_runs():
    from nasviz.bench.search_report import final_statistics, goal_check, regret_curve

    stats = final_statistics([0.0, 0.0, 0.2, 0.4, 1.0, float("nan")])
    assert stats["runs"] == 5 and stats["found_optimum"] == 2
    assert stats["mean"] == pytest.approx(0.32) and stats["median"] == pytest.approx(0.2)
    assert stats["se"] == pytest.approx(np.std([0, 0, 0.2, 0.4, 1.0], ddof=1) / np.sqrt(5))
    assert stats["p90"] == pytest.approx(np.percentile([0, 0, 0.2, 0.4, 1.0], 90)) and stats["max"] == 1.0
    runs = [{"trajectory": [1.0, 2.0, 3.0], "optimum": 3.0}, {"trajectory": [0.0, 0.0], "optimum": 3.0}]
    assert regret_curve(runs, 3) == [2.5, 2.0, 1.5]  # a short run keeps its last value

    def summary(mean, p90, found):
        return {"final": {"mean": mean, "p90": p90, "found_optimum": found, "runs": 20}}

    table = {"ours": summary(0.04, 0.1, 15), "optuna-tpe": summary(0.1, 0.3, 9), "optuna-gp": summary(0.08, 0.2, 16)}
    check = goal_check(table, "ours", ("optuna-tpe", "optuna-gp"))
    assert check["against"] == "optuna-gp" and check["mean_at_most_half"] and check["p90_no_worse"]
    assert not check["found_at_least"] and not check["met"]
    assert goal_check(table, "missing", ("optuna-tpe",)) is None


def test_batch_goal_compares_regret_after_equal_numbers_of_evaluations():
    from nasviz.bench.search_report import batch_goal_check

    def summary(regrets):
        return {"regret_mean": dict(zip(("25", "50", "100"), regrets)), "final": {"runs": 20}}

    table = {"kdpp5": summary([0.5, 0.2, 0.1]), "optuna-tpe": summary([0.4, 0.3, 0.1])}
    check = batch_goal_check(table, "kdpp5")
    assert check["against"] == "optuna-tpe" and check["checkpoints"] == {"25": False, "50": True, "100": True}
    assert not check["met"]
    table["kdpp5"] = summary([0.4, 0.2, 0.05])
    assert batch_goal_check(table, "kdpp5")["met"]
    assert batch_goal_check(table, "kdpp5", peer="optuna-gp") is None


@pytest.mark.slow
def test_protocol_report_with_peers(nb201_table_path):
    pytest.importorskip("optuna")
    pairs = f"{nb201_table_path}:cifar10,{nb201_table_path}:cifar100"
    out = search.run(_args(tables=pairs, strategies="random,optuna-tpe,bo-tw2g-ucb:pool=exhaustive:n_init=8",
                           budget=10, seeds=2, workers=1, checkpoints="5"))
    assert [t["metric"] for t in out["tables"]] == ["cifar10", "cifar100"]
    for entry in out["tables"]:
        assert set(entry["strategies"]) == {"random", "optuna-tpe", "bo-tw2g-ucb:pool=exhaustive:n_init=8"}
        for s in entry["strategies"].values():
            assert s["final"]["runs"] == 2 and len(s["regret_by_evaluation"]) == 10
            assert s["final"]["mean"] == pytest.approx(s["regret_mean"]["10"])
            assert 1 <= s["distinct_min"] <= 10
        assert s["distinct_min"] == 10  # nasviz never repeats a cell
        assert entry["goal"]["against"] == "optuna-tpe"  # the first bo-* strategy against the peers run
    with pytest.raises(ValueError, match="not TABLE:METRIC"):
        search.run(_args(tables="nometric", strategies="random", budget=5, seeds=1, workers=1))
    with pytest.raises(ValueError, match="does not take option"):
        search.run(_args(tables=pairs, strategies="random:colour=red", budget=5, seeds=1, workers=1))


def test_the_all_protocol_names_every_shared_table_with_a_metric_its_space_reads():
    """``--tables all`` is issue 21's nine pairs; each file's first rows load in the pair's space
    and hold the pair's metric (the whole tables are read by the benchmark itself)."""
    from nasviz.bench.protocol import PROTOCOLS, parse_pairs
    from nasviz.objectives import load_table
    from nasviz.objectives.table import shared_data_path

    pairs = parse_pairs("all")
    assert pairs[:6] == list(PROTOCOLS["shared"]) and pairs[6:8] == list(PROTOCOLS["nb101"])
    assert (pairs[8].table, pairs[8].space) == ("darts_725.csv", "darts") and len({p.label for p in pairs}) == 9
    for pair in pairs:
        if shared_data_path(pair.table) is None:
            pytest.skip(f"the shared table {pair.table} is absent (../shared/data or $NASVIZ_SHARED_DATA)")
        with open(pair.path(), encoding="utf-8") as handle:
            head = [next(handle) for _ in range(3)]
        assert pair.metric in load_table(head, space=pair.space, name=pair.label).metrics
