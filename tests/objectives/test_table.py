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
    with pytest.raises(TableError, match="metric 'loss' is not a column"):
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


# ----------------------------------------------------------------------------- malformed files
# Each case of the point 4 is a TableError that names the file, the line and the column.

D = "|nor_conv_1x1~0|+|none~0|none~1|+|none~0|none~1|none~2|"


@pytest.mark.parametrize("content, line, column, problem", [
    # a field over the csv module's 131,072 characters (was a raw _csv.Error)
    (f"arch,acc\n{A},1\n{B},{'9' * 200_000}\n".encode(), 3, len(B) + 2, "longer than the 131,072 characters"),
    # an unclosed quote (used to swallow the rest of the file into one cell)
    (f'arch,acc\n{A},1\n{B},"2\n{C},3\n{D},4\n'.encode(), 3, len(B) + 2, "never closed"),
    # a character after a closing quote
    (f'arch,acc\n{A},"1"x\n'.encode(), 2, len(A) + 5, "after a closing quote"),
    # not UTF-8: the byte's line and column (was a message without file or line)
    (f"arch,acc\n{A},1\n{B},".encode() + b"\xff\n", 3, len(B) + 2, "not UTF-8"),
    (b"\xef\xbb\xbfarch,acc\n\xc3(\n", 2, 1, "not UTF-8"),  # a byte-order mark does not shift the column
])
def test_malformed_files_name_file_line_and_column(tmp_path, content, line, column, problem):
    path = tmp_path / "t.csv"
    path.write_bytes(content)
    with pytest.raises(TableError) as err:
        load_table(path)
    assert (err.value.source, err.value.line, err.value.column) == (str(path), line, column)
    assert problem in str(err.value) and str(path) in str(err.value) and f"line {line}" in str(err.value)


def test_line_numbers_do_not_shift_after_a_multi_line_field():
    table = load_table(lines(f'arch,acc,note\n{A},1,"two\nlines"\n{B},x,y\n{C},,z\n'))
    assert [(b.line, b.problem) for b in table.bad_rows] == [(4, "non-numeric value 'x'"), (5, "missing value")]


@pytest.mark.parametrize("cell, reason", [
    ("1_000", "non-numeric value"), ("\uff11\uff12", "non-numeric value"), ("nan", "non-numeric value"),
    ("inf", "non-numeric value"), ("1e308", "value outside +-1e+15"), ("-1e308", "value outside +-1e+15"),
    ("1e999", "value outside +-1e+15"),
])
def test_numbers_that_float_accepts_but_a_table_must_not(cell, reason):
    table = load_table(lines(f"arch,acc\n{A},1\n{B},2\n{C},{cell}\n"))
    assert len(table) == 2 and [(b.line, b.position, b.reason) for b in table.bad_rows] == [(4, 2, reason)]
    assert table.optimum("acc") == 2.0


def test_plain_numbers_still_load():
    table = load_table(lines(f"arch,acc\n{A}, 91.5 \n{B},-.5e1\n{C},+7\n"))
    assert list(table.values["acc"]) == [91.5, -5.0, 7.0]


def test_a_folder_is_called_a_folder(tmp_path):
    with pytest.raises(TableError, match="is a folder, not a file") as err:
        load_table(tmp_path)
    assert "does not exist" not in str(err.value)


@pytest.mark.timeout(20)
def test_a_fifo_is_named_and_never_read(tmp_path):
    import os

    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)  # no writer: opening it for a blocking read would hang the loader
    with pytest.raises(TableError, match=r"is a FIFO \(named pipe\), not a file"):
        load_table(fifo)


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text(f"arch,acc\n{A},1\n" * 100)
    with pytest.raises(TableError, match="larger than the 0.001 MB allowed"):
        load_table(path, max_bytes=1000)
    assert len(load_table(path, max_bytes=100_000)) == 1


def test_bad_rows_have_a_redacted_form_without_file_content():
    table = load_table(lines(f"arch,acc\nroot:x:0:0,1\n{A},secret\n{B},2\n"))
    assert [str(b) for b in table.bad_rows][1] == "line 3, column 'acc': non-numeric value 'secret'"
    assert [b.redacted() for b in table.bad_rows] == ["line 2, column 1: cannot parse architecture",
                                                      "line 3, column 2: non-numeric value"]
    assert table.skipped_rows(redact=True) == {"count": 2, "first": [b.redacted() for b in table.bad_rows]}


def test_info_gives_each_metrics_quartiles_and_how_many_rows_are_near_the_optimum():
    table = load_table(lines(f"arch,acc\n{A},91.5\n{B},91.2\n{C},10.0\n"))
    d = table.info()["distribution"]["acc"]
    assert d == {"rows": 3, "q25": pytest.approx(50.6), "median": 91.2, "q75": pytest.approx(91.35),
                 "within_0.5_of_optimum": 2}


def test_a_mostly_bad_table_keeps_the_first_bad_rows_and_counts_them_all(tmp_path):
    """Issue 47: a mostly-bad upload kept every bad row (hundreds of thousands of objects per cached
    table, and their text in each visitor's session). The table keeps the first
    ``MAX_KEPT_BAD_ROWS`` and the count of all; the data source keeps fewer still, as text."""
    from nasviz.dashboard.sources import SHOWN_BAD_ROWS, DataSource
    from nasviz.objectives.table import MAX_KEPT_BAD_ROWS, load_table

    n_bad = MAX_KEPT_BAD_ROWS + 1500
    good = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|"
    lines = ["arch,acc", f"{good},90.5"] + [f"{good},oops{i}" if i % 2 else f"not-a-cell-{i},1.0" for i in range(n_bad)]
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(lines) + "\n")
    table = load_table(path, space="nb201")
    assert len(table) == 1
    assert len(table.bad_rows) == MAX_KEPT_BAD_ROWS and table.n_bad_rows == n_bad
    assert [b.line for b in table.bad_rows[:2]] == [3, 4]  # the first ones, in file order
    assert table.skipped_rows()["count"] == n_bad and table.info()["bad_rows_count"] == n_bad
    assert table.duplicates_info()["rows_refused"] == n_bad // 2  # the odd ones repeat the good cell
    source = DataSource.from_table(path, table)
    assert len(source.bad_rows) == SHOWN_BAD_ROWS and source.skipped_rows()["count"] == n_bad
