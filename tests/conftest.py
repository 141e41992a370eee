"""Shared fixtures: the shared NAS-Bench-201 table (skipped with a reason when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nasviz.objectives import load_table, shared_nb201_table_path

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def nb201_table_path() -> Path:
    path = shared_nb201_table_path()
    if path is None:
        pytest.skip(
            "the shared NAS-Bench-201 table is absent: set NASVIZ_NB201_TABLE or place it at "
            "../shared/data/nb201_test_accuracy.csv"
        )
    return path


@pytest.fixture(scope="session")
def nb201_table(nb201_table_path):
    return load_table(nb201_table_path)
