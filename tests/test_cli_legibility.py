"""What the command line prints a person (issue 46): values at their resolution, the space a
table's rows belong to, and the table's own resolution."""

from __future__ import annotations

import json

import pytest

from nasviz.cli import main
from nasviz.rounding import column_decimals, decimals_of, format_spread, format_value, run_decimals
from nasviz.spaces import nb201
from nasviz.store import RunStore

CELL = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|"


def test_decimals_and_formatting_follow_the_written_resolution():
    assert [decimals_of(t) for t in ("93.29", "94", "1.5e-3", "85.8633", "x", "nan")] == [2, 0, 4, 4, 0, 0]
    assert column_decimals(["93.29", "94.3733", "88.2"]) == 4
    assert format_value(94.2967, 4) == "94.2967" and format_value(94.3, 4) == "94.3000"
    assert format_value(99.12499785423279, 4) == "99.1250" and format_value(None) == "-"
    assert format_spread(0.00002, 2) == "< 0.01" and format_spread(1.2513, 2) == "1.25"
    assert run_decimals({"objective": "train"}) == 4 and run_decimals({"value_decimals": 2}) == 2
    assert run_decimals({"objective": "table"}) is None


@pytest.mark.slow
def test_runs_list_prints_a_training_score_at_its_resolution(tmp_path, capsys):
    """``runs list`` printed 99.12499785423279 for a live-training score (float32 noise)."""
    db = tmp_path / "runs.sqlite"
    store = RunStore(db)
    run_id = store.create_run({"objective": "train", "dataset": "digits", "strategy": "random", "budget": 1,
                               "metric": "valid_accuracy"}, status="finished")
    store.add_evaluations(run_id, [{"arch": CELL, "value": 99.12499785423279}], 0, step=1)
    assert main(["runs", "list", "--store", str(db)]) == 0
    out = capsys.readouterr().out
    assert "best 99.1250 " in out and "99.12499785" not in out
    assert main(["runs", "list", "--store", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["best_value"] == 99.125


def test_a_table_run_reports_at_the_tables_resolution(tmp_path, capsys):
    table = tmp_path / "t.csv"
    cells = [nb201.format(a) for a in nb201.sample(__import__("numpy").random.default_rng(0), 6)]
    table.write_text("arch,acc\n" + "".join(f"{c},{90 + k / 10:.1f}\n" for k, c in enumerate(cells)))
    assert main(["run", "--table", str(table), "--strategy", "random", "--budget", "6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["value_decimals"] == 1 and out["regret"] == 0.0 and out["best_value"] == 90.5
    assert main(["run", "--table", str(table), "--strategy", "random", "--budget", "2"]) == 0
    line = capsys.readouterr().out
    assert "optimum 90.5," in line


@pytest.mark.parametrize("name, space", [("nb101_500.csv", "nb101"), ("darts_725.csv", "darts")])
def test_table_info_suggests_the_space_the_rows_parse_in(name, space, capsys):
    """``table info`` on an NB101 CSV without ``--space nb101`` printed a wall of NB201 parse errors."""
    from nasviz.objectives.table import shared_data_path

    path = shared_data_path(name)
    if path is None:
        pytest.skip(f"the shared {name} is absent")
    assert main(["table", "info", "--table", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"add --space {space}" in err and "cannot parse" not in err and len(err.splitlines()) == 1


def test_table_info_names_repeats_averaged_and_prints_the_optimum_at_resolution(tmp_path, capsys):
    from nasviz.objectives.table import shared_data_path

    path = shared_data_path("nb101_500.csv")
    if path is None:
        pytest.skip("the shared nb101_500.csv is absent")
    assert main(["table", "info", "--table", str(path), "--space", "nb101"]) == 0
    out = capsys.readouterr().out
    assert "292 architectures" in out and "208 rows of 48 architectures seen before were averaged" in out
    assert "optimum valid_accuracy: 94.7115 " in out


def test_exports_write_a_training_score_at_its_resolution(tmp_path, capsys):
    db = tmp_path / "runs.sqlite"
    store = RunStore(db)
    run_id = store.create_run({"objective": "train", "dataset": "digits", "strategy": "random", "budget": 1,
                               "metric": "valid_accuracy"}, status="finished")
    store.add_evaluations(run_id, [{"arch": CELL, "value": 99.12499785423279}], 0, step=1)
    assert main(["runs", "export", "--store", str(db), str(run_id), "--csv", str(tmp_path / "r.csv"),
                 "--json-out", str(tmp_path / "r.json")]) == 0
    assert "99.125," in (tmp_path / "r.csv").read_text() and "99.12499785" not in (tmp_path / "r.csv").read_text()
    assert json.loads((tmp_path / "r.json").read_text())["evaluations"][0]["value"] == 99.125
