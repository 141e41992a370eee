"""The regret benchmark's JSON (tiny budget; speed is measured by the benchmark, not here)."""

from __future__ import annotations

import argparse

import pytest

from nasviz.bench import search


def _args(**kw):
    parser = argparse.ArgumentParser()
    search.add_arguments(parser)
    argv = []
    for k, v in kw.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    return parser.parse_args(argv)


def test_regret_report_shape_and_values(nb201_table_path, nb201_table):
    args = _args(table=nb201_table_path, metric="cifar10", strategies="random,evolution", budget=30, seeds=2,
                 workers=1, checkpoints="10,20")
    out = search.run(args)
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


def test_a_strategy_spec_runs_with_its_options(nb201_table_path):
    assert search.parse_strategy_spec("bo:kernel=wl,pool=mixed,n_init=3") == ("bo", {"kernel": "wl", "pool": "mixed", "n_init": 3})
    spec = "bo:kernel=wl,pool=mixed,n_init=3"
    parser = argparse.ArgumentParser()
    search.add_arguments(parser)
    args = parser.parse_args(["--table", str(nb201_table_path), "--metric", "cifar10", "--strategies", "random",
                              "--strategy", spec, "--budget", "5", "--seeds", "1", "--workers", "1", "--checkpoints", "5"])
    out = search.run(args)
    assert set(out["strategies"]) == {"random", spec}
    assert out["strategies"][spec]["bo_step_seconds_mean"] is not None  # model-based steps after 3 random ones
    args.strategy = ["bo:kernel=nope"]
    with pytest.raises(Exception, match="nope"):
        search.run(args)
    args.strategy = ["bo:kernel"]
    with pytest.raises(ValueError, match="--strategy 'bo:kernel': option 'kernel' is not of the form key=value"):
        search.run(args)
