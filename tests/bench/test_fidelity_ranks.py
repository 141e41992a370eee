"""``bench fidelity-ranks``: how a table's lower budgets rank its cells, on tables whose fidelity
structure is known, every figure computed by hand."""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np
import pytest

from nasviz.bench import fidelity_ranks
from nasviz.bench.fidelity_ranks import kept_share, optimum_rank, table_figures, top_mask
from nasviz.datafiles import shared_data_path
from nasviz.errors import InputError
from nasviz.objectives import load_table
from nasviz.objectives.fidelity_table import FidelityTableObjective
from nasviz.spaces import nb201

CELLS = list(itertools.islice(nb201.enumerate_all(), 10))
#: The full budget (3 epochs): cell i scores 100 - i, so cells 0, 1, 2 are the top three.
FULL = [100 - i for i in range(10)]
#: One epoch: the same order, except that the top three are reversed (cell 2 first, cell 0 third).
LOW = [48, 49, 50, 47, 46, 45, 44, 43, 42, 41]


def _table(tmp_path: Path, resume: bool) -> Path:
    """The ten cells with a 1-epoch and a 3-epoch value: NAS-Bench-101-style separate runs
    (``acc_1``, ``acc_3``: restart, cost in epochs) or one run's curve (``acc_epoch_<E>``:
    resume) with a cost column whose seconds differ from cell to cell."""
    path = tmp_path / ("curve.csv" if resume else "runs.csv")
    if resume:
        rows = [f"{nb201.format(c)},{f},{lo},{f},{2 + i}" for i, (c, lo, f) in enumerate(zip(CELLS, LOW, FULL))]
        path.write_text("arch,acc,acc_epoch_1,acc_epoch_3,train_seconds\n" + "\n".join(rows) + "\n")
    else:
        rows = [f"{nb201.format(c)},{lo},{f}" for c, lo, f in zip(CELLS, LOW, FULL)]
        path.write_text("arch,acc_1,acc_3\n" + "\n".join(rows) + "\n")
    return path


def _figures(path: Path, metric: str, **options) -> dict:
    return table_figures(FidelityTableObjective(load_table(path), metric), **options)


def test_figures_of_a_rung_that_reverses_the_top_three(tmp_path):
    out = _figures(_table(tmp_path, resume=False), "acc_3", fractions=(0.5, 0.3, 0.1), survive_top=0.1)
    assert (out["ladder"], out["continuation"], out["eta"], out["cells"]) == ([1.0, 3.0], "restart", 3.0, 10)
    assert (out["decimals"], out["distinct_full_values"], out["cost_unit"]) == (0, 10, "epochs")
    # the top half spans 100 - 96, the top three 100 - 98, the best cell alone nothing
    assert out["top_span"] == {"0.1": 0.0, "0.3": 2.0, "0.5": 4.0}
    (rung,) = out["rungs"]
    assert (rung["fidelity"], rung["column"], rung["table"]) == (1.0, "acc_1", "runs.csv")
    # cells 0 and 2 are two ranks off: sum d^2 = 8, rho = 1 - 6 * 8 / (10 * 99)
    assert rung["spearman"] == pytest.approx(1 - 48 / 990)
    # the three pairs among the top three are discordant, the other 42 of 45 concordant
    assert rung["kendall"] == pytest.approx((42 - 3) / 45)
    # top five: d = 2, 0, 2, 0, 0, rho = 1 - 6 * 8 / (5 * 24); top three: reversed; top one: undefined
    assert rung["spearman_top"] == {"0.5": pytest.approx(0.6), "0.3": pytest.approx(-1.0), "0.1": None}
    # one stage keeps floor(10 / 3) = 3 (cells 2, 1, 0: the best cell is in), two keep 1 (cell 2 alone)
    assert rung["survival"] == {"top_cells": 1, "one_stage": {"kept": 3, "share": 1.0, "ceiling": 1.0},
                                "two_stages": {"kept": 1, "share": 0.0, "ceiling": 1.0}}
    assert rung["optimum_rank"] == 3  # cells 2 and 1 above it
    # restart: the rung costs a third of a full evaluation and is lost when the cell goes on
    assert rung["cost"] == pytest.approx(1 / 3) and rung["promoted_cost"] == pytest.approx(4 / 3)


def test_the_ceiling_is_the_places_kept_over_the_top_cells(tmp_path):
    (rung,) = _figures(_table(tmp_path, resume=False), "acc_3", fractions=(), survive_top=0.2)["rungs"]
    # the top two (cells 0, 1); two stages keep cell 2 only: none of them, and at most half could be
    assert rung["survival"]["top_cells"] == 2
    assert rung["survival"]["two_stages"] == {"kept": 1, "share": 0.0, "ceiling": 0.5}
    assert rung["survival"]["one_stage"] == {"kept": 3, "share": 1.0, "ceiling": 1.0}


def test_a_resumed_curve_costs_its_epochs_once_whatever_each_cell_costs(tmp_path):
    out = _figures(_table(tmp_path, resume=True), "acc")
    assert (out["continuation"], out["cost_unit"], out["full_cost_unit"]) == ("resume", "seconds", pytest.approx(6.5))
    (rung,) = out["rungs"]
    assert rung["column"] == "acc_epoch_1"
    assert rung["cost"] == pytest.approx(1 / 3) and rung["promoted_cost"] == pytest.approx(1.0)
    assert rung["spearman"] == pytest.approx(1 - 48 / 990)  # the same values as the restart table


def test_cells_tied_at_the_cut_survive_with_the_share_of_the_places_left():
    rung = np.array([5.0, 4.0, 4.0, 4.0, 1.0])
    # keep 2: cell 0 is in, one place is left for the three cells at 4
    assert kept_share(rung, np.array([False, True, False, False, False]), 2) == pytest.approx(1 / 3)
    assert kept_share(rung, np.array([True, True, True, True, False]), 2) == pytest.approx(2 / 4)
    assert kept_share(rung, np.array([False, False, False, False, True]), 4) == 0.0
    # the top fraction takes every cell tied at its cut; the optimum's rank counts only cells above it
    assert top_mask(np.array([3.0, 2.0, 2.0, 1.0]), 0.5).tolist() == [True, True, True, False]
    assert optimum_rank(rung, np.array([1.0, 2.0, 9.0, 9.0, 0.0])) == 2


def _args(**given) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    fidelity_ranks.add_arguments(parser)
    argv = [f"--{k.replace('_', '-')}={v}" for k, v in given.items()]
    return parser.parse_args(argv)


def test_the_benchmark_names_its_table_not_its_path(tmp_path):
    path = _table(tmp_path, resume=False)
    out = fidelity_ranks.run(_args(table=path, metric="acc_3", fidelity="1=acc_1,3=acc_3", top_fractions="0.3"))
    (entry,) = out["tables"]
    assert (entry["table"], entry["metric"], entry["fidelity"]) == ("runs.csv", "acc_3", "1=acc_1,3=acc_3")
    assert out["top_fractions"] == [0.3] and entry["rungs"][0]["spearman_top"]["0.3"] == pytest.approx(-1.0)
    assert str(tmp_path) not in repr(out)
    auto = fidelity_ranks.run(_args(table=path, metric="acc_3"))  # without --fidelity: the table's own columns
    assert auto["tables"][0]["fidelity"] == "auto" and auto["tables"][0]["ladder"] == [1.0, 3.0]


def test_bad_fractions_are_refused(tmp_path):
    path = _table(tmp_path, resume=False)
    with pytest.raises(InputError, match="top-fractions"):
        fidelity_ranks.run(_args(table=path, metric="acc_3", top_fractions="a"))
    with pytest.raises(InputError, match=r"\(0, 1\]"):
        fidelity_ranks.run(_args(table=path, metric="acc_3", survive_top=0))


@pytest.mark.slow
def test_the_fidelity_protocol_runs_on_the_shared_tables():
    if shared_data_path("nb101_hash_20k.csv") is None or shared_data_path("nb201_12epoch.csv") is None:
        pytest.skip("the shared tables (nb101_hash_20k.csv, nb201_test_accuracy.csv, nb201_12epoch.csv) are absent: "
                    "set NASVIZ_SHARED_DATA or place them in ../shared/data")
    out = fidelity_ranks.run(_args())
    assert [(t["table"], t["eta"], len(t["rungs"])) for t in out["tables"]] == [
        ("nb101_hash_20k.csv", 3.0, 3), ("nb201_test_accuracy.csv", 16.0, 1), ("nb201_test_accuracy.csv", 16.0, 1),
        ("nb201_digits.csv", 3.0, 1)]
    nb101 = out["tables"][0]
    assert [r["cost"] for r in nb101["rungs"]] == pytest.approx([4 / 108, 12 / 108, 36 / 108])
    assert nb101["cells"] == 20001 and nb101["continuation"] == "restart"
