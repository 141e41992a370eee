"""Objectives: benchmark tables and (in :mod:`nasviz.objectives.trainer` and :mod:`nasviz.objectives.training`) real training."""

from nasviz.objectives.base import FAILED, OK, Evaluation, Objective, TableObjective
from nasviz.objectives.table import (
    BadRow,
    Table,
    TableError,
    UnknownArchitectureError,
    default_table_path,
    load_table,
    shared_nb201_table_path,
    write_table,
)

__all__ = [
    "BadRow",
    "Evaluation",
    "FAILED",
    "OK",
    "Objective",
    "Table",
    "TableError",
    "TableObjective",
    "UnknownArchitectureError",
    "default_table_path",
    "load_table",
    "shared_nb201_table_path",
    "write_table",
]
