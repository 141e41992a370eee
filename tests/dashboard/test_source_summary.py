"""The sidebar's line about a table (issue 46): an NB101 upload of 500 rows said "292
architectures" without saying that repeated rows were averaged."""

from __future__ import annotations

import pytest

from nasviz.dashboard.sources import DataSource
from nasviz.objectives import load_table
from nasviz.objectives.table import shared_data_path


def test_the_summary_says_how_many_repeated_rows_were_averaged():
    path = shared_data_path("nb101_500.csv")
    if path is None:
        pytest.skip("the shared nb101_500.csv is absent")
    source = DataSource.from_table(path, load_table(path, space="nb101"), "nb101_500.csv")
    assert source.rows == 292 and source.rows_averaged == 208
    assert source.summary() == ("nb101_500.csv: 292 architectures (500 rows: 208 repeated an architecture and were "
                                "averaged into it)")


def test_a_table_without_repeats_says_architectures_only(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("arch,acc\n|nor_conv_3x3~0|+|none~0|none~1|+|none~0|none~1|none~2|,50\n")
    source = DataSource.from_table(table, load_table(table), "t.csv")
    assert source.summary() == "t.csv: 1 architecture"
