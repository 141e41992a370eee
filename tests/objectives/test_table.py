import io

import pytest

from nasviz.objectives import TableError, TableObjective, UnknownArchitectureError, load_table, write_table
from nasviz.spaces import nb201

A = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|"
B = "|avg_pool_3x3~0|+|none~0|none~1|+|nor_conv_3x3~0|none~1|none~2|"
C = "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"


def lines(text: str):
    return io.StringIO(text.strip() + "\n")


def test_shared_table_loads_as_it_is(nb201_table):
    assert len(nb201_table) == 15625
    assert nb201_table.metrics == ["cifar10", "cifar100"]
    assert nb201_table.bad_rows == []
    assert nb201_table.optimum("cifar10") == pytest.approx(94.3733)
    assert nb201_table.strings[nb201_table.best_index("cifar10")] == A
    assert nb201_table.lookup(nb201.parse(A), "cifar10") == pytest.approx(94.3733)


def test_bad_rows_are_reported_with_line_numbers_and_skipped():
    table = load_table(
        lines(
            f"""
arch,acc,note
{A},91.5,best
not-a-cell,50,typo
{B},,missing
{C},abc,words
{A},90.0,again
{B},80.25,ok
"""
        )
    )
    assert len(table) == 2 and table.metrics == ["acc"] and table.ignored_columns == ["note"]
    problems = {b.line: (b.column, b.problem) for b in table.bad_rows}
    assert problems[3][0] == "arch" and "cannot parse" in problems[3][1]
    assert problems[4] == ("acc", "missing value")
    assert problems[5] == ("acc", "non-numeric value 'abc'")
    assert problems[6][0] == "arch" and "duplicate architecture (first seen on line 2)" in problems[6][1]
    assert table.optimum("acc") == 91.5


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty"),
        ("arch,acc\n", "no data rows"),
        (f"arch,note\n{A},hello\n", "no numeric metric column"),
        ("arch,acc\nxx,1\nyy,2\n", "no usable row"),
        (f"cell,acc\n{A},1\n", None),
    ],
)
def test_unusable_tables_are_refused_with_a_reason(text, message):
    if message is None:  # an alternative architecture column name is found
        assert load_table(io.StringIO(text)).arch_column == "cell"
        return
    with pytest.raises(TableError, match=message):
        load_table(io.StringIO(text))


def test_unknown_metric_and_unknown_architecture_are_clear_errors():
    table = load_table(lines(f"arch,acc\n{A},1\n"))
    with pytest.raises(TableError, match="metric 'loss' is not a numeric column"):
        table.lookup(nb201.parse(A), "loss")
    with pytest.raises(UnknownArchitectureError, match="is not in table"):
        table.lookup(nb201.parse(B), "acc")


def test_objective_reports_cost_from_time_column_and_failures_for_unknown():
    table = load_table(lines(f"arch,acc,train_time\n{A},91,12.5\n{B},80,3\n"))
    assert table.metrics == ["acc"] and table.cost_column == "train_time"
    obj = TableObjective(table, "acc")
    ok, bad = obj.evaluate([nb201.parse(A), nb201.parse(C)])
    assert ok.ok and ok.value == 91 and ok.cost == 12.5
    assert not bad.ok and bad.value is None and "is not in table" in bad.error
    assert obj.optimum() == 91


def test_write_then_load_round_trip(tmp_path):
    table = load_table(lines(f"arch,acc,seconds\n{A},91.25,1.5\n{B},80,3\n"))
    path = tmp_path / "t.csv"
    write_table(path, table)
    again = load_table(path)
    assert again.strings == table.strings and list(again.values["acc"]) == [91.25, 80.0]
    assert list(again.costs) == [1.5, 3.0]


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(TableError, match="does not exist"):
        load_table(tmp_path / "nope.csv")
