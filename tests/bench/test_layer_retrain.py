"""Retraining the best networks of a layer-search result: real trainings, clear errors."""

from __future__ import annotations

import argparse
import json

import pytest

from nasviz.bench import layer_retrain


def _result(tmp_path, runs, dataset="wine"):
    path = tmp_path / "search.json"
    path.write_text(json.dumps({"dataset": dataset, "runs": runs}))
    return path


@pytest.mark.slow
def test_best_networks_are_retrained_on_every_seed(tmp_path):
    runs = [
        {"strategy": "autokeras", "seed": 0, "best_valid": 97.0, "best_arch": "input;relu:16<0;elu:16<1;linear<2;output<3"},
        {"strategy": "evolution", "seed": 0, "best_valid": 98.0, "best_arch": "input;tanh:16<0;linear<0,1;output<2"},
        {"strategy": "random", "seed": 0, "best_valid": None, "best_arch": None},  # a run that found nothing
    ]
    args = argparse.Namespace(source=str(_result(tmp_path, runs)), seeds="3,4", workers=1)
    out = layer_retrain.run(args)
    assert out["dataset"] == "wine" and out["seeds"] == [3, 4]
    assert [r["strategy"] for r in out["runs"]] == ["autokeras", "evolution"]
    for r in out["runs"]:
        assert set(r["retrained"]) == {3, 4} and all(v is not None and 0 <= v <= 100 for v in r["retrained"].values())
    assert out["runs"][0]["activations"] == ["elu", "relu"] and not out["runs"][0]["smooth"]
    assert out["runs"][1]["activations"] == ["tanh"] and out["runs"][1]["smooth"]
    assert out["summary"]["evolution"]["smooth_share"] == 1.0 and out["summary"]["autokeras"]["mean_found"] == 97.0


def test_a_file_that_is_not_a_layer_search_result_is_named(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"runs": []}))
    with pytest.raises(ValueError, match="is not a `bench layer-search --json` result"):
        layer_retrain.load_runs(bad)
    with pytest.raises(ValueError, match=r"runs\[0\] has no 'best_arch'"):
        layer_retrain.load_runs(_result(tmp_path, [{"strategy": "random", "seed": 0}]))
    with pytest.raises(ValueError, match="cannot read"):
        layer_retrain.load_runs(tmp_path / "missing.json")
