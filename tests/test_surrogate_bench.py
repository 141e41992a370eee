"""The surrogate-quality benchmark (paper 002 §5.1 protocol) on a small table of our own."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from nasviz.bench.surrogate import parse_kernel_spec
from nasviz.cli import main
from nasviz.spaces import nb101, nb201

WEIGHTS = {"nor_conv_3x3": 3.0, "nor_conv_1x1": 1.5, "avg_pool_3x3": -1.0, "skip_connect": 0.5, "none": -2.0}


@pytest.fixture
def table_csv(tmp_path):
    rng = np.random.default_rng(0)
    archs = list({nb201.format(a): a for a in nb201.sample(rng, 400)}.values())
    path = tmp_path / "synthetic.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["arch", "acc", "score"])
        for a in archs:
            acc = 80 + sum(WEIGHTS[o] for o in nb201.operations(a)) + rng.normal(0, 0.3)
            w.writerow([nb201.format(a), f"{acc:.4f}", f"{acc * 10:.4f}"])
    return path


def test_parse_kernel_spec():
    assert parse_kernel_spec("tw") == ("tw", {})
    assert parse_kernel_spec("wl:base=oa,h_max=3,normalize=False") == ("wl", {"base": "oa", "h_max": 3, "normalize": False})
    with pytest.raises(ValueError, match="key=value"):
        parse_kernel_spec("wl:oa")
    with pytest.raises(ValueError, match="missing kernel name"):
        parse_kernel_spec(":h_max=2")


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["wl", "wl:base=oa,h_max=1", "tw"])
def test_bench_prints_the_protocol_figures(table_csv, capsys, kernel):
    rc = main(["bench", "surrogate", "--table", str(table_csv), "--metric", "acc", "--kernel", kernel,
               "--train", "40", "--test", "100", "--trials", "3", "--seed", "1", "--fit-timing", "60", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kernel"] == kernel and out["metric"] == "acc" and out["transform"] == "log_error"
    assert len(out["spearman_per_trial"]) == 3
    # An additive function of the operations: every kernel ranks it well (TW ~0.7, WL ~0.9).
    assert out["spearman_mean"] > 0.6
    assert 0.0 <= out["spearman_se"] < 0.2
    assert 0.5 <= out["coverage_95"] <= 1.0
    assert out["fit_timing"]["n_obs"] == 60 and out["fit_timing"]["seconds"] > 0
    assert out["distinct_per_trial_mean"] == 140 and out["test_also_in_train"] == 0.0  # distinct cells


def test_rows_sampling_reports_repeats_and_kernels_share_their_trials(tmp_path, capsys):
    """Rows of a table that repeats an architecture (NAS-Bench-101 tables hold one row per
    training run): the figures say how many test cells were training cells too; several kernels
    are scored on the same trials."""
    from nasviz.spaces.nb101.moves import generate

    rng = np.random.default_rng(0)
    cells = list({c.hash: c for c in generate(rng, 200)}.values())[:40]
    gain = {"conv3x3-bn-relu": 2.0, "conv1x1-bn-relu": 0.5, "maxpool3x3": -1.0, "input": 0.0, "output": 0.0}
    path = tmp_path / "repeats.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["matrix", "ops", "acc"])
        for c in cells:
            acc = 85 + sum(gain[o] for o in c.ops) + 0.3 * c.n_edges
            for _ in range(3):  # three rows (training runs) per cell
                w.writerow([nb101.format_matrix(c), nb101.format_ops(c), f"{acc + rng.normal(0, 0.2):.4f}"])
    base = ["bench", "surrogate", "--table", str(path), "--space", "nb101", "--metric", "acc", "--train", "20",
            "--test", "60", "--trials", "2", "--fit-timing", "0", "--sampling", "rows"]
    assert main(base + ["--kernel", "wl"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert alone["distinct_per_trial_mean"] <= 40 and alone["test_also_in_train"] > 0.1
    assert main(base + ["--kernel", "wl", "--kernel", "tw"]) == 0
    both = json.loads(capsys.readouterr().out)["kernels"]
    assert both["wl"]["spearman_per_trial"] == alone["spearman_per_trial"]
    assert both["tw"]["test_also_in_train"] == alone["test_also_in_train"]


def test_bench_standardises_non_percent_targets_and_validates(table_csv, capsys):
    rc = main(["bench", "surrogate", "--table", str(table_csv), "--metric", "score", "--kernel", "wl",
               "--train", "30", "--test", "50", "--trials", "2", "--fit-timing", "0"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["transform"] == "standardize" and "fit_timing" not in out
    assert main(["bench", "surrogate", "--table", str(table_csv), "--metric", "acc", "--kernel", "nope",
                 "--train", "30", "--test", "50", "--trials", "1", "--fit-timing", "0"]) != 0
    assert "unknown kernel" in capsys.readouterr().err
    assert main(["bench", "surrogate", "--table", str(table_csv), "--metric", "acc",
                 "--train", "300", "--test", "300", "--fit-timing", "0"]) != 0
    assert "exceeds" in capsys.readouterr().err
