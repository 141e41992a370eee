"""The wall-clock layer-space benchmark: option parsing and a short real run."""

from __future__ import annotations

import argparse

import pytest

from nasviz.bench import layer_search


def test_options_are_parsed_per_strategy_and_bad_ones_named():
    names = ["nasbot", "autokeras", "random"]
    assert layer_search.parse_options(["nasbot.ea_init=paper+best", "nasbot.acq_fraction=1", "autokeras.beta=1.0"], names) == {
        "nasbot": {"ea_init": "paper+best", "acq_fraction": "1"},
        "autokeras": {"beta": "1.0"},
    }
    with pytest.raises(ValueError, match="STRATEGY.KEY=VALUE"):
        layer_search.parse_options(["nasbot=1"], names)
    with pytest.raises(ValueError, match="'evolution' is not among"):
        layer_search.parse_options(["evolution.population_size=5"], names)


def _args(**kw) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    layer_search.add_arguments(parser)
    argv = []
    for key, value in kw.items():
        for v in value if isinstance(value, list) else [value]:
            argv += [f"--{key.replace('_', '-')}", str(v)]
    return parser.parse_args(argv)


def test_a_bad_strategy_setting_fails_before_training():
    with pytest.raises(ValueError, match="does not take option"):
        layer_search.run(_args(strategies="nasbot", option=["nasbot.bogus=1"], seconds=1))


@pytest.mark.slow
def test_short_run_reports_every_strategy_with_its_options():
    result = layer_search.run(_args(dataset="wine", seconds=1.5, seeds="0", strategies="random,nasbot",
                                    workers=1, epochs=2, option=["nasbot.ea_init=observed"]))
    assert set(result["summary"]) == {"random", "nasbot"}
    assert result["options"] == {"nasbot": {"ea_init": "observed"}}
    for run in result["runs"]:
        assert run["n_evaluations"] >= 1 and run["best_valid"] is not None
        assert run["options"] == ({"ea_init": "observed"} if run["strategy"] == "nasbot" else {})
        # trajectories are best-so-far: never decreasing
        values = [v for v in run["trajectory"] if v is not None]
        assert values == sorted(values)
