"""What several commands share: the default table, a table loaded with a hint at the right
``--space``, seeds as an argparse type, and JSON printed strictly (no NaN)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from nasviz import defaults
from nasviz.errors import InputError
from nasviz.objectives import Table, TableError, load_table
from nasviz.objectives import default_table_path as objectives_default_table


def default_table_path() -> Path:
    """The table every command uses when none is given (:func:`nasviz.objectives.default_table_path`)."""
    path = objectives_default_table()
    if path is None:
        raise TableError(f"no table given and the embedded default {defaults.DEFAULT_TABLE} is missing")
    return path


def print_json(obj) -> None:
    """``obj`` as one line of strict JSON: NaN and infinities (a multi-fidelity run's best-so-far
    before its first full evaluation, an undefined statistic) written as ``null``."""
    json.dump(_null_if_not_finite(obj), sys.stdout, allow_nan=False, default=float)
    sys.stdout.write("\n")


def _null_if_not_finite(obj):
    if isinstance(obj, dict):
        return {k: _null_if_not_finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_null_if_not_finite(v) for v in obj]
    if isinstance(obj, (float, np.floating)) and not np.isfinite(obj):
        return None
    return obj


def non_negative_int(text: str) -> int:
    """argparse type of seeds: ``0, 1, 2, ...`` (numpy's generators take no negative seed)."""
    if not text.strip().isascii() or not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {text!r}")
    return int(text)


def load_with_space_hint(path: Path | str, space: str, **options) -> "Table":
    """:func:`load_table`, but a table whose rows are architectures of another space is refused
    with one line that names the ``--space`` to add, not a list of rows the space cannot parse."""
    from nasviz.objectives.table import suggest_space

    try:
        return load_table(path, space=space, **options)
    except TableError as err:
        if "no usable row" not in str(err):
            raise
        hint = suggest_space(path, space)
        if hint is None:
            raise
        raise InputError(f"no row is an architecture of the {space} space, but the rows parse in the {hint} "
                         f"space: add --space {hint}", source=str(path)) from None

