"""Tabulation: each class of equivalent cells trained once per seed, resumable after an interruption."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from nasviz.objectives import load_table
from nasviz.spaces import nb201
from nasviz.tabulate import plan, read_partial, tabulate

#: The first 125 cells have none on edges 0->1, 0->2, 1->2: only edge 0->3 matters -> 5 classes.
LIMIT = 125
SEEDS = 2
TINY = {
    "dataset": "digits", "dataset_seed": 0, "seeds": SEEDS,
    "model_options": {"channels": 4, "n_cells": 1},
    "training": {"epochs": 2, "patience": 2, "estimate_epochs": 2, "lr": 0.2, "batch_size": 128, "optimizer": "sgd",
                 "weight_decay": 5e-4},
}
CHANCE = "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"
CONV = "|none~0|+|none~0|none~1|+|nor_conv_3x3~0|none~1|none~2|"


def test_plan_groups_equivalent_cells():
    p = plan("nb201", LIMIT)
    assert len(p.cells) == LIMIT and len(p.members) == 5
    assert sorted(len(m) for m in p.members) == [25] * 5
    for members in p.members:
        assert len({p.keys[i] for i in members}) == 1


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.slow
def test_interrupted_tabulation_resumes_and_fills_every_cell(tmp_path):
    out = tmp_path / "t.csv"
    first = tabulate(out, "nb201", TINY, workers=0, limit_cells=LIMIT, stop_after=3, progress=False)
    assert first["trained"] == 3 and first["tasks"] == 5 * SEEDS and not first["complete"] and not out.exists()
    partial = out.with_name("t.csv.partial.csv")
    done_before = read_partial(partial)
    assert len(done_before) == 3
    # A torn last line (the process was killed mid-write) is ignored, not fatal.
    with partial.open("a") as fh:
        fh.write("|none~0|+|none~0|none~1|+|nor_conv_3x3~0|none~1|no")
    # A rerun with other settings is refused instead of mixing results.
    other = json.loads(json.dumps(TINY))
    other["training"]["epochs"] = 5
    with pytest.raises(ValueError, match="other settings"):
        tabulate(out, "nb201", other, workers=0, limit_cells=LIMIT, progress=False)

    second = tabulate(out, "nb201", TINY, workers=0, limit_cells=LIMIT, progress=False)
    assert second["resumed"] == 3 and second["trained"] == 5 * SEEDS - 3 and second["complete"]
    rows = _rows(out)
    p = plan("nb201", LIMIT)
    assert [r["arch"] for r in rows] == [nb201.format(a) for a in p.cells]
    by_arch = {r["arch"]: r for r in rows}
    # Equivalent cells share identical values; per-seed lists hold SEEDS values whose mean is the value.
    for members in p.members:
        rows_of = [by_arch[nb201.format(p.cells[i])] for i in members]
        assert len({(r["valid_accuracy"], r["test_accuracy"], r["valid_accuracy_seeds"]) for r in rows_of}) == 1
        seeds = [float(v) for v in rows_of[0]["valid_accuracy_seeds"].split(";")]
        assert len(seeds) == SEEDS
        # the lists hold 0.01-point values; the mean and spread come from the unrounded ones
        assert float(rows_of[0]["valid_accuracy"]) == pytest.approx(np.mean(seeds), abs=5e-3)
        assert float(rows_of[0]["valid_accuracy_std"]) == pytest.approx(np.std(seeds, ddof=1), abs=1e-2)
    # Resumed tasks kept their values.
    for (arch, seed), row in done_before.items():
        assert float(by_arch[arch]["valid_accuracy_seeds"].split(";")[seed]) == round(float(row["valid_accuracy"]), 2)
    # The table loads: accuracies (and the per-epoch curve) are metrics, train_seconds the cost,
    # parameters / FLOPs / spreads are descriptive, the per-seed lists are text.
    table = load_table(out)
    assert len(table) == LIMIT
    assert table.metrics == ["valid_accuracy", "test_accuracy", "valid_accuracy_epoch_1", "valid_accuracy_epoch_2"]
    assert table.cost_column == "train_seconds"
    assert set(table.descriptive) == {"valid_accuracy_std", "test_accuracy_std", "params", "flops"}
    # No path input->output (all none) is at chance; a conv on edge 0->3 is far above it and costs more.
    chance, conv = by_arch[CHANCE], by_arch[CONV]
    assert float(chance["test_accuracy"]) < 20 < float(conv["test_accuracy"])
    assert int(conv["flops"]) > int(chance["flops"]) and int(conv["params"]) > int(chance["params"])
    # The estimate is the mean of the last two epochs' validation accuracies (averaged over seeds).
    for row in (chance, conv):
        epochs = (float(row["valid_accuracy_epoch_1"]) + float(row["valid_accuracy_epoch_2"])) / 2
        assert float(row["valid_accuracy"]) == pytest.approx(epochs, abs=1e-3)


@pytest.mark.slow
def test_worker_processes_give_the_same_table_as_in_process(tmp_path):
    a = tabulate(tmp_path / "a.csv", "nb201", TINY, workers=2, limit_cells=LIMIT, progress=False)
    assert a["complete"] and a["trained"] == 5 * SEEDS
    b = tabulate(tmp_path / "b.csv", "nb201", TINY, workers=0, limit_cells=LIMIT, progress=False)
    assert b["complete"] and b["trained"] == 5 * SEEDS
    keep = [c for c in _rows(tmp_path / "a.csv")[0] if c != "train_seconds"]
    ra, rb = _rows(tmp_path / "a.csv"), _rows(tmp_path / "b.csv")
    assert [[r[c] for c in keep] for r in ra] == [[r[c] for c in keep] for r in rb]


@pytest.mark.slow
def test_more_seeds_extend_a_finished_tabulation(tmp_path):
    """Asking for more seeds trains only the new ones; the table equals a fresh run with that many."""
    one_seed = {**TINY, "seeds": 1}
    out = tmp_path / "t.csv"
    first = tabulate(out, "nb201", one_seed, workers=0, limit_cells=LIMIT, progress=False)
    assert first["complete"] and first["trained"] == 5
    extended = tabulate(out, "nb201", TINY, workers=0, limit_cells=LIMIT, progress=False)
    assert extended["resumed"] == 5 and extended["trained"] == 5 * (SEEDS - 1) and extended["complete"]
    assert json.loads(out.with_name("t.csv.partial.json").read_text())["settings"]["seeds"] == SEEDS
    fresh = tabulate(tmp_path / "f.csv", "nb201", TINY, workers=0, limit_cells=LIMIT, progress=False)
    assert fresh["trained"] == 5 * SEEDS
    keep = [c for c in _rows(out)[0] if c != "train_seconds"]
    assert [[r[c] for c in keep] for r in _rows(out)] == [[r[c] for c in keep] for r in _rows(tmp_path / "f.csv")]
    # Fewer seeds than the progress file holds is another setting: refused.
    with pytest.raises(ValueError, match="other settings"):
        tabulate(out, "nb201", one_seed, workers=0, limit_cells=LIMIT, progress=False)


@pytest.mark.slow
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
           "--workers", "0", "--no-progress", "--seeds", "2", "--epochs", "2"]
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
    assert 2 <= len(done) < 10 and not out.exists()
    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    summary = json.loads(rerun.stdout)
    assert summary["complete"] and summary["resumed"] == len(done) and summary["trained"] == 10 - len(done)
    assert len(_rows(out)) == LIMIT


def test_reliability_of_per_seed_values():
    from nasviz.bench.table_pilot import reliability, spearman_brown

    rng = np.random.default_rng(0)
    truth = rng.normal(size=200)
    same = np.repeat(truth[:, None], 4, axis=1)
    r = reliability(same)
    assert r["seed_spearman"] == pytest.approx(1.0) and r["half_spearman"] == pytest.approx(1.0)
    noisy = truth[:, None] + rng.normal(size=(200, 8))  # single-seed reliability about 0.5
    r = reliability(noisy)
    assert 0.35 < r["seed_spearman"] < 0.65 and r["half_spearman"] > r["seed_spearman"]
    assert r["projected"]["4"] == pytest.approx(spearman_brown(r["seed_spearman"], 4))
    assert r["classes"] == 200 and r["seeds"] == 8 and r["median"] == pytest.approx(np.median(noisy.mean(1)))


@pytest.mark.slow
def test_table_reliability_reads_only_finished_classes_with_a_path(tmp_path):
    """The bench reads the tabulation's progress file: a class counts once all its seeds are ok,
    and a class without an input -> output path (chance whatever the seed) never counts."""
    from nasviz.bench.table_reliability import per_seed_values
    from nasviz.tabulate import PARTIAL_COLUMNS

    p = plan("nb201")
    reps = {p.keys[m[0]]: nb201.format(p.cells[m[0]]) for m in p.members}
    chosen = [k for k in reps if k != "0"][:3]
    partial = tmp_path / "t.csv.partial.csv"
    with partial.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(PARTIAL_COLUMNS)
        for c, key in enumerate(["0", *chosen]):
            for seed in range(2):
                status = "failed" if (key == chosen[2] and seed == 1) else "ok"
                w.writerow([reps[key], seed, status, 10 * c + seed, 5 * c, 0.1, 2, "1;2", ""])
    values = per_seed_values(partial, "nb201", 2)
    assert values["valid_accuracy"].tolist() == [[10.0, 11.0], [20.0, 21.0]]
    assert values["test_accuracy"].tolist() == [[5.0, 5.0], [10.0, 10.0]]


@pytest.mark.slow
def test_table_reliability_reads_a_finished_tables_seed_columns_once_per_class(tmp_path):
    """From a finished table: the members of one class carry one class's seeds and count once; a
    cell without an input -> output path never counts; a table without per-seed columns is refused
    with its file and line."""
    from nasviz.bench.table_reliability import table_seed_values

    p = plan("nb201")
    pair = next(m for m in p.members if len(m) >= 2 and p.keys[m[0]] != "0")
    other = next(m for m in p.members if p.keys[m[0]] not in ("0", p.keys[pair[0]]))
    dead = next(m for m in p.members if p.keys[m[0]] == "0")
    rows = [(p.cells[pair[0]], "1;2;3", "4;5;6"), (p.cells[dead[0]], "10;10;10", "10;10;10"),
            (p.cells[pair[1]], "1;2;3", "4;5;6"), (p.cells[other[0]], "7;8;9", "1;1;2")]
    table = tmp_path / "t.csv"
    with table.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["arch", "valid_accuracy", "test_accuracy", "valid_accuracy_seeds", "test_accuracy_seeds"])
        for cell, valid, test in rows:
            w.writerow([nb201.format(cell), 0, 0, valid, test])
    values = table_seed_values(table, "nb201", 3)
    assert values["valid_accuracy"].tolist() == [[1, 2, 3], [7, 8, 9]]
    assert values["test_accuracy"].tolist() == [[4, 5, 6], [1, 1, 2]]
    bare = tmp_path / "bare.csv"
    bare.write_text(f"arch,valid_accuracy,test_accuracy\n{nb201.format(p.cells[other[0]])},1,2\n")
    with pytest.raises(ValueError, match=r"bare\.csv, line 1: no valid_accuracy_seeds, test_accuracy_seeds column"):
        table_seed_values(bare, "nb201", 3)
    broken = tmp_path / "broken.csv"
    broken.write_text(table.read_text().replace("7;8;9", "7;x;9"))
    with pytest.raises(ValueError, match=r"broken\.csv, line 5: the per-seed columns are not ;-separated numbers"):
        table_seed_values(broken, "nb201", 3)
