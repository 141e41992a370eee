"""Tabulation: one training per class of equivalent cells, resumable after an interruption."""

from __future__ import annotations

import csv
import json

import pytest

from nasviz.objectives import load_table
from nasviz.spaces import nb201
from nasviz.tabulate import plan, read_partial, tabulate

#: The first 125 cells have none on edges 0->1, 0->2, 1->2: only edge 0->3 matters -> 5 classes.
LIMIT = 125
TINY = {
    "dataset": "digits", "dataset_seed": 0, "seed": 0,
    "model_options": {"channels": 4, "n_cells": 1},
    "training": {"epochs": 2, "patience": 1, "lr": 0.2, "batch_size": 128, "optimizer": "sgd", "weight_decay": 5e-4},
}


def test_plan_groups_equivalent_cells():
    p = plan("nb201", LIMIT)
    assert len(p.cells) == LIMIT and len(p.members) == 5
    assert sorted(len(m) for m in p.members) == [25] * 5
    for members in p.members:
        assert len({p.keys[i] for i in members}) == 1


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_interrupted_tabulation_resumes_and_fills_every_cell(tmp_path):
    out = tmp_path / "t.csv"
    first = tabulate(out, "nb201", TINY, workers=0, limit_cells=LIMIT, stop_after=2, progress=False)
    assert first["trained"] == 2 and not first["complete"] and not out.exists()
    partial = out.with_name("t.csv.partial.csv")
    done_before = read_partial(partial)
    assert len(done_before) == 2
    # A torn last line (the process was killed mid-write) is ignored, not fatal.
    with partial.open("a") as fh:
        fh.write("|none~0|+|none~0|none~1|+|nor_conv_3x3~0|none~1|no")
    # A rerun with other settings is refused instead of mixing results.
    other = json.loads(json.dumps(TINY))
    other["training"]["epochs"] = 5
    with pytest.raises(ValueError, match="other settings"):
        tabulate(out, "nb201", other, workers=0, limit_cells=LIMIT, progress=False)

    second = tabulate(out, "nb201", TINY, workers=0, limit_cells=LIMIT, progress=False)
    assert second["resumed"] == 2 and second["trained"] == 3 and second["complete"]
    rows = _rows(out)
    assert [r["arch"] for r in rows] == [nb201.format(a) for a in plan("nb201", LIMIT).cells]
    # Resumed classes kept their values; equivalent cells share identical values.
    p = plan("nb201", LIMIT)
    by_arch = {r["arch"]: r for r in rows}
    for members in p.members:
        vals = {(by_arch[nb201.format(p.cells[i])]["valid_accuracy"], by_arch[nb201.format(p.cells[i])]["test_accuracy"]) for i in members}
        assert len(vals) == 1
    for arch, row in done_before.items():
        assert by_arch[arch]["valid_accuracy"] == row["valid_accuracy"]
    # The table loads with accuracies as metrics and train_seconds as the cost column.
    table = load_table(out)
    assert len(table) == LIMIT and table.metrics == ["valid_accuracy", "test_accuracy"]
    assert table.cost_column == "train_seconds"
    # No path input->output (all none) is at chance; a conv on edge 0->3 is far above it.
    chance = by_arch["|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"]
    conv = by_arch["|none~0|+|none~0|none~1|+|nor_conv_3x3~0|none~1|none~2|"]
    assert float(chance["test_accuracy"]) < 20 < float(conv["test_accuracy"])


def test_worker_processes_give_the_same_table_as_in_process(tmp_path):
    a = tabulate(tmp_path / "a.csv", "nb201", TINY, workers=2, limit_cells=LIMIT, progress=False)
    assert a["complete"] and a["trained"] == 5
    b = tabulate(tmp_path / "b.csv", "nb201", TINY, workers=1, limit_cells=LIMIT, progress=False)
    ra, rb = _rows(tmp_path / "a.csv"), _rows(tmp_path / "b.csv")
    assert [(r["arch"], r["valid_accuracy"], r["test_accuracy"]) for r in ra] == \
           [(r["arch"], r["valid_accuracy"], r["test_accuracy"]) for r in rb]


def test_killed_cli_process_resumes(tmp_path):
    """A real ``python -m nasviz tabulate`` killed with SIGKILL mid-run resumes where it stopped."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "k.csv"
    partial = tmp_path / "k.csv.partial.csv"
    cmd = [sys.executable, "-m", "nasviz", "tabulate", "--out", str(out), "--limit-cells", str(LIMIT),
           "--workers", "0", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if partial.is_file() and len(read_partial(partial)) >= 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be interrupted"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = read_partial(partial)
    assert 2 <= len(done) < 5 and not out.exists()
    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    summary = json.loads(rerun.stdout)
    assert summary["complete"] and summary["resumed"] == len(done) and summary["trained"] == 5 - len(done)
    assert len(_rows(out)) == LIMIT
