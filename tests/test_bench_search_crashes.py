"""A benchmark survives a run that raises, internal errors are not bad input, and each run's best
architecture comes with its whole table row (issue 48, findings 4 and 5).

A strategy registered here raises NumPy's own error on seed 1 after a few evaluations, as
``bo-wl-ei`` did (``ValueError: Probabilities contain NaN``): a plain ``ValueError`` that is a bug,
not bad input.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from nasviz.bench import search
from nasviz.cli import main
from nasviz.cli_common import EXIT_BAD_INPUT, EXIT_INTERNAL_ERROR
from nasviz.components import STRATEGIES
from nasviz.registry import Entry
from nasviz.strategies.random_search import RandomSearch

TABLE = Path(__file__).resolve().parents[1] / "data" / "nb201_digits.csv"
CRASHY = "test-crash-on-seed-1"


class CrashOnSeedOne(RandomSearch):
    """Random search that fails like a NaN normalisation once it has seen 3 evaluations on seed 1."""

    def __init__(self, space, seed: int = 0, domain=None, **options) -> None:
        super().__init__(space, seed=seed, domain=domain, **options)
        self.crashes = seed == 1

    def ask(self, n: int):
        if self.crashes and len(self.seen) >= 3:
            raise ValueError("probabilities contain NaN")
        return super().ask(n)


@pytest.fixture()
def crashy():
    STRATEGIES.register(Entry(CRASHY, "random search that crashes on seed 1", CrashOnSeedOne,
                              capabilities={"model": False}))
    try:
        yield CRASHY
    finally:
        STRATEGIES.unregister(CRASHY)


def _args(**kw) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    search.add_arguments(parser)
    argv = ["--no-progress"]
    for k, v in kw.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    return parser.parse_args(argv)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_a_run_that_raises_is_a_recorded_crash_and_the_others_go_on(crashy, workers, capsys):
    out = search.run(_args(table=TABLE, metric="valid_accuracy", strategies=f"random,{crashy}", budget=8, seeds=3,
                           workers=workers, checkpoints="4"))
    assert out["crashed_runs"] == 1 and len(out["crashes"]) == 1
    crash = out["crashes"][0]
    assert (crash["strategy"], crash["seed"]) == (crashy, 1)
    assert crash["error"] == "ValueError: probabilities contain NaN"
    assert "Traceback" in crash["traceback"] and "in ask" in crash["traceback"]
    mine = out["strategies"][crashy]
    assert mine["crashes"] == 1 and mine["runs"] == 2 and mine["final"]["runs"] == 2
    assert [r["seed"] for r in mine["best_per_run"]] == [0, 2]
    assert out["strategies"]["random"]["crashes"] == 0 and out["strategies"]["random"]["runs"] == 3
    assert "1 of 6 runs crashed" in capsys.readouterr().err


@pytest.mark.slow
def test_each_runs_best_architecture_comes_with_every_metric_of_its_row():
    from nasviz.objectives import load_table

    table = load_table(TABLE)
    out = search.run(_args(table=TABLE, metric="valid_accuracy", strategies="random", budget=10, seeds=2, workers=1))
    best = out["strategies"]["random"]["best_per_run"]
    assert [b["seed"] for b in best] == [0, 1]
    for b in best:
        row = table.index_of(table.space.parse(b["arch"]))
        assert b["row"] == {m: pytest.approx(float(table.values[m][row])) for m in table.metrics}
        assert b["value"] == pytest.approx(b["row"]["valid_accuracy"])
        assert "test_accuracy" in b["row"]  # the second metric of the best-by-validation cell


@pytest.mark.slow
def test_the_cli_tells_an_internal_error_from_bad_input(crashy, capsys):
    common = ["run", "--table", str(TABLE), "--budget", "6"]
    assert main([*common, "--strategy", crashy, "--seed", "1"]) == EXIT_INTERNAL_ERROR
    err = capsys.readouterr().err
    assert "internal error: ValueError: probabilities contain NaN" in err and "not a problem with the input" in err
    assert "Traceback" in err
    assert main([*common, "--strategy", "random", "--metric", "no_such_column"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "internal error" not in err and "no_such_column" in err
    assert EXIT_BAD_INPUT != EXIT_INTERNAL_ERROR


@pytest.mark.slow
def test_bench_search_on_the_command_line_finishes_with_a_crash_in_it(crashy, capsys):
    import json

    code = main(["bench", "search", "--table", str(TABLE), "--strategies", crashy, "--budget", "6", "--seeds", "2",
                 "--workers", "1", "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0
    report = json.loads(captured.out)
    assert report["crashed_runs"] == 1 and report["strategies"][crashy]["runs"] == 1
    assert "1 of 2 runs crashed" in captured.err
