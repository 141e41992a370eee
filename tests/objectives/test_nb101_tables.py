"""NAS-Bench-101 tables: architectures over two columns, repeated runs averaged, the hash-table import."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nasviz.errors import TableError
from nasviz.objectives import load_table, write_table
from nasviz.objectives.table import shared_data_path
from nasviz.spaces import get_space, nb101

ROOT = Path(__file__).resolve().parents[2]
A = ("01100|00011|00001|00001|00000", "input,conv3x3-bn-relu,maxpool3x3,conv1x1-bn-relu,output")
A_SWAPPED = ("01010|00101|00001|00001|00000", "input,conv3x3-bn-relu,conv1x1-bn-relu,maxpool3x3,output")
B = ("010|001|000", "input,maxpool3x3,output")


def _rows(*rows: tuple[str, ...]) -> list[str]:
    lines = ["matrix,ops,valid_accuracy,params,train_seconds"]
    lines += [",".join(f'"{x}"' if "," in x else x for x in row) for row in rows]
    return lines


def test_two_architecture_columns_and_repeats_averaged():
    table = load_table(_rows((*A, "90", "100", "10"), (*B, "80", "", "4"), (*A_SWAPPED, "92", "300", "20")), space="nb101")
    assert len(table) == 2 and table.arch_columns == ("matrix", "ops") and table.arch_column == "matrix+ops"
    space = get_space("nb101")
    a = space.parse_columns(A)
    assert table.lookup(a, "valid_accuracy") == pytest.approx(91.0)  # the same cell in two vertex orders
    assert table.cost(a) == pytest.approx(15.0) and table.descriptive["params"][table.index_of(a)] == pytest.approx(200)
    assert np.isnan(table.descriptive["params"][1])  # a missing descriptive value stays missing
    assert list(table.repeats) == [2, 1]
    info = table.info()["duplicates"]
    assert info["policy"] == "average" and info["rows_merged"] == 1 and info["architectures_with_repeats"] == 1
    assert "averaged" in info["note"]


def test_the_call_may_refuse_repeats_instead():
    table = load_table(_rows((*A, "90", "1", "1"), (*A_SWAPPED, "92", "1", "1")), space="nb101", duplicates="refuse")
    assert len(table) == 1 and table.lookup(table.archs[0], "valid_accuracy") == 90
    assert table.bad_rows[0].line == 3 and "duplicate architecture" in table.bad_rows[0].problem
    assert table.info()["duplicates"] == {"policy": "refuse", "rows_refused": 1,
                                          "note": "a later row of an architecture already read is a bad row"}
    with pytest.raises(TableError, match="duplicates must be one of refuse, average"):
        load_table(_rows((*A, "1", "1", "1")), space="nb101", duplicates="first")


def test_a_bad_cell_is_a_bad_row_naming_both_columns():
    table = load_table(_rows((*A, "90", "1", "1"), ("010|000|000", "input,conv3x3-bn-relu,output", "1", "1", "1")),
                       space="nb101")
    assert len(table) == 1
    bad = table.bad_rows[0]
    assert (bad.line, bad.column) == (3, "matrix+ops") and "output is not reachable" in bad.problem


def test_written_back_as_one_arch_column(tmp_path):
    table = load_table(_rows((*A, "90", "1", "1"), (*B, "80", "1", "2"), (*A_SWAPPED, "92", "1", "3")), space="nb101")
    write_table(tmp_path / "t.csv", table)
    again = load_table(tmp_path / "t.csv", space="nb101")
    assert again.arch_columns == ("arch",) and again.archs == table.archs
    assert np.allclose(again.values["valid_accuracy"], table.values["valid_accuracy"])


def test_nb201_tables_still_refuse_repeats_by_default():
    arch = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|"
    table = load_table([f"arch,acc\n{arch},1\n{arch},3\n"])
    assert len(table) == 1 and table.info()["duplicates"]["rows_refused"] == 1
    assert load_table([f"arch,acc\n{arch},1\n{arch},3\n"], duplicates="average").values["acc"][0] == 2.0


def test_the_shared_500_row_table_is_292_cells():
    path = shared_data_path("nb101_500.csv")
    if path is None:
        pytest.skip("the shared table nb101_500.csv is absent (../shared/data or $NASVIZ_SHARED_DATA)")
    table = load_table(path, space="nb101")
    assert len(table) == 292 and table.metrics == ["valid_accuracy"]
    assert table.info()["duplicates"]["rows_merged"] == 500 - 292
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    space = get_space("nb101")
    trivial = space.parse("01|00;input,output")
    values = [float(r["valid_accuracy"]) for r in rows if r["matrix"] == "01|00"]
    assert len(values) == 55 and table.lookup(trivial, "valid_accuracy") == pytest.approx(np.mean(values))
    hashes = {r["nb101_hash"] for r in rows}
    assert {space.canonical_key(a) for a in table.archs} == hashes


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "nasviz", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.slow
def test_the_import_command_writes_a_table_that_loads(tmp_path):
    enum = nb101.load_enumeration()
    known = [enum.hashes[i].decode() for i in (3, 4_242)]
    src = tmp_path / "hashes.csv"
    src.write_text("hash,valid_accuracy_4,valid_accuracy_108,train_seconds_108,params\n"
                   f"{known[0]},50,93.5,1500.5,123\n{'e' * 32},1,2,3,4\n{known[1]},40,91.25,900,456\n")
    out = tmp_path / "tables" / "nb101.csv"
    done = _cli("table", "import-nb101", str(src), "--out", str(out), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["rows_read"], report["rows_joined"], report["unknown_hashes"]) == (3, 2, 1)
    assert report["columns"] == ["arch", "valid_accuracy_108", "valid_accuracy_4", "train_seconds", "params"]
    table = load_table(out, space="nb101")
    assert table.metrics[0] == "valid_accuracy_108" and table.cost_column == "train_seconds"
    assert [get_space("nb101").canonical_key(a) for a in table.archs] == known
    refused = _cli("table", "import-nb101", str(src), "--out", str(ROOT / "data" / "nb101.csv"), cwd=tmp_path)
    assert refused.returncode == 2 and "inside the repository" in refused.stderr
    assert not (ROOT / "data" / "nb101.csv").exists()
