"""bench top-cells: the best cells of a table, how far apart they lie, whether mutation links them."""

from __future__ import annotations

import argparse

import pytest

from nasviz.bench import top_cells
from nasviz.errors import ConfigError


def cell(*ops: str) -> str:
    """An NB201 cell string from its six edge operations, in the string's order."""
    return f"|{ops[0]}~0|+|{ops[1]}~0|{ops[2]}~1|+|{ops[3]}~0|{ops[4]}~1|{ops[5]}~2|"


def run(tables: str, top: int = 3, k: str = "1,3") -> dict:
    parser = argparse.ArgumentParser()
    top_cells.add_arguments(parser)
    return top_cells.run(parser.parse_args(["--tables", tables, "--top", str(top), "--k", k]))


def test_regrets_distances_and_links_of_a_small_table(tmp_path):
    """A best cell, its one-edit neighbour, and a cell six edits away whose own nearest member is
    a poor cell: only the neighbour links to a better top cell when k = 1; with k = 3 both do."""
    conv, skip, pool, none = "nor_conv_3x3", "skip_connect", "avg_pool_3x3", "none"
    rows = {cell(*[conv] * 6): 90.0, cell(skip, *[conv] * 5): 89.0, cell(*[pool] * 6): 88.0,
            cell(none, *[pool] * 5): 10.0}
    path = tmp_path / "small.csv"
    path.write_text("arch,acc\n" + "".join(f"{a},{v}\n" for a, v in rows.items()))
    out = run(f"{path}:acc@nb201")
    assert out["top"] == 3 and out["k"] == [1, 3]
    (table,) = out["tables"]
    assert table["table"] == "small.csv" and table["rows"] == 4 and table["parameters"] == 6
    assert [c["regret"] for c in table["cells"]] == [0.0, 1.0, 2.0]
    assert table["cells"][0]["arch"] == cell(*[conv] * 6)
    assert table["distances"] == [[0, 1, 6], [1, 0, 6], [6, 6, 0]]
    assert table["median_distance"] == 6.0
    assert table["better_within_k"] == {"1": 1, "3": 2}


@pytest.mark.slow
def test_the_shared_nb201_table_has_its_best_cells_close_together(nb201_table_path):
    """On NB201 (CIFAR-10, 200 epochs) the best cells lie a few edits apart and mutation links
    most of them to a better one: the landscape the default search was first tuned on."""
    out = run(f"{nb201_table_path}:cifar10@nb201", top=6, k="24")
    (table,) = out["tables"]
    assert table["rows"] == 15625 and table["parameters"] == 6
    regrets = [c["regret"] for c in table["cells"]]
    assert regrets[0] == 0.0 and regrets == sorted(regrets)
    assert table["median_distance"] <= 3 and table["better_within_k"]["24"] >= 3


def test_bad_options_are_refused():
    with pytest.raises(ConfigError, match="--k"):
        run("shared", k="a,b")
    with pytest.raises(ConfigError, match="--top"):
        run("shared", top=0)
