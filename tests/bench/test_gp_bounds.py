"""The GP-bounds benchmark reads the fits a real search stored (tiny budget)."""

from __future__ import annotations

import argparse

import pytest

from nasviz.bench import gp_bounds


@pytest.mark.slow
def test_gp_bounds_counts_the_stored_fits_of_real_runs(nb201_table_path):
    parser = argparse.ArgumentParser()
    gp_bounds.add_arguments(parser)
    args = parser.parse_args(["--table", str(nb201_table_path), "--metric", "cifar10", "--budget", "16",
                              "--seeds", "2"])
    out = gp_bounds.run(args)
    assert [r["seed"] for r in out["runs"]] == [0, 1]
    assert all(r["fits"] >= 1 for r in out["runs"])  # BO steps after the initial design fitted a GP
    assert out["fits"] == sum(r["fits"] for r in out["runs"])
    assert out["fits_on_bound"] == sum(r["fits_on_bound"] for r in out["runs"]) <= out["fits"]
    assert sum(out["by_hyperparameter"].values()) >= out["fits_on_bound"]
    assert set(out["by_hyperparameter"]) <= {"lambda_1", "lambda_2", "lambda_3", "amplitude", "noise"}
