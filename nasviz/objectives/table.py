"""Benchmark tables: a CSV of architectures and their measured metrics.

Any CSV with an architecture column and numeric metric columns loads, e.g. the shared
NAS-Bench-201 table (``arch,cifar10,cifar100``) or the table nasviz generates itself. A space
may write its architectures over several columns (:attr:`SearchSpace.table_columns`: NAS-Bench-101
rows hold a cell as ``matrix`` + ``ops``); the loader asks the space which columns to read and
the space's :meth:`~nasviz.spaces.base.SearchSpace.parse_columns` reads them. Bad rows (an
architecture that does not parse, a missing or non-numeric value) are reported with their line
numbers and skipped; a table with no usable row is refused.

Several rows of one architecture: by default the later ones are bad rows ("refuse"); a table of
repeated training runs (NAS-Bench-101's) averages them instead ("average": one row per
architecture, the mean of each metric and cost, the mean of the available descriptive values).
The space says which its tables do (:attr:`SearchSpace.table_duplicates`), the caller may
override it (``load_table(..., duplicates=...)``), and :meth:`Table.info` reports the policy and
how many rows it merged or refused. Architectures are compared as the space parses them, so
rows of the same cell written in two vertex orders are one architecture when ``parse``
canonicalises (NAS-Bench-101 does).

A table may declare its columns' roles (:mod:`nasviz.table_schema`: a sidecar
``<table>.schema.toml`` / ``.json`` or ``# nasviz:`` lines at its top): the architecture column(s),
its metrics with their direction (maximise or minimise), the cost column, columns to ignore. What it
does not declare is guessed (:mod:`nasviz.objectives.columns`, which says how): columns whose name
says they measure time are the cost of an evaluation; ``params``, ``flops``, ``macs`` and spreads
(``_std``, ``_sd``, ``_se``) are kept in ``Table.descriptive`` and never offered as objectives (a
missing value there is NaN, not a bad row); identifiers and text are ignored; other numeric columns
are metrics, maximised unless their name says loss, error, latency, energy or memory. A space may
name the metrics it leads with (:attr:`~nasviz.spaces.base.SearchSpace.lead_metrics`); a constant
column is never the first metric (the one chosen when none is named). ``Table.roles`` says, column
by column, what was declared and what was guessed.

A minimised metric is looked up as it is (:meth:`Table.lookup`); :meth:`Table.optimum` and
:meth:`Table.best_index` follow its direction, and :meth:`Table.score` gives the value every
strategy maximises (the metric, or minus it): :class:`~nasviz.objectives.base.TableObjective`
reports scores, so regret (optimum's score minus the best score) is the same for both directions.

This module loads tables (from a path, bytes or lines; parsed ahead of use; written back; the
default table; which space a table's rows belong to). :class:`Table` itself lives in
:mod:`nasviz.objectives.table_data` and the reading of rows in :mod:`nasviz.objectives.table_rows`;
both are re-exported here.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

from nasviz.csvfile import decode, physical_lines, read_bytes, records
from nasviz.datafiles import shared_data_path
from nasviz.errors import TableError
from nasviz.objectives.table_data import BadRow, Table, UnknownArchitectureError
from nasviz.objectives.table_rows import ARCH_COLUMNS, MAX_KEPT_BAD_ROWS, parse_rows
from nasviz.spaces import get_space
from nasviz.table_schema import MINIMISE, TableSchema, find_schema, split_header_schema
from nasviz.defaults import DEFAULT_SPACE

# Re-exported: callers import the table's types and the names that tune its loading from here.
__all__ = ["ARCH_COLUMNS", "BadRow", "DUPLICATE_POLICIES", "MAX_KEPT_BAD_ROWS", "NB201_TABLE_ENV",
           "SPACE_PROBE_ROWS", "Table", "TableError", "UnknownArchitectureError", "default_table_path",
           "load_table", "preload_table", "shared_data_path", "shared_nb201_table_path", "suggest_space",
           "write_table"]

#: What :func:`load_table` may do with several rows of one architecture.
DUPLICATE_POLICIES = ("refuse", "average")

#: Environment variable that points tests and benchmarks at the shared NB201 table.
NB201_TABLE_ENV = "NASVIZ_NB201_TABLE"


#: Tables parsed ahead of use in this process (:func:`preload_table`), by path, space and the
#: file's size and modification time, so a changed file is read again.
_PRELOADED: dict[tuple[str, str, int, int], "Table"] = {}


def _file_key(path: str | os.PathLike, space: str) -> tuple[str, str, int, int]:
    resolved = Path(path).resolve()
    st = resolved.stat()
    return str(resolved), space, st.st_size, st.st_mtime_ns


def preload_table(path: str | os.PathLike, space: str = DEFAULT_SPACE) -> "Table":
    """Parse a table now so that a later :func:`load_table` of the same unchanged file (same
    space, default options) returns it at once: a warm search worker parses the embedded table
    before it knows its run (``nasviz.workers.search --wait``)."""
    table = load_table(path, space=space)
    _PRELOADED[_file_key(path, space)] = table
    return table


def load_table(
    source: str | os.PathLike | bytes | Iterable[str],
    *,
    space: str = DEFAULT_SPACE,
    arch_column: str | Sequence[str] | None = None,
    name: str | None = None,
    max_bytes: int | None = None,
    duplicates: str | None = None,
    schema: TableSchema | None = None,
) -> Table:
    """Load a benchmark CSV from a path, from its bytes (an upload) or from an iterable of lines.

    Parameters
    ----------
    source : path, bytes or iterable of str
        The CSV. Never unpickled: this reads UTF-8 text only.
    space : str
        Name of the search space whose ``parse`` (``parse_columns``) reads the architectures.
    arch_column : str or sequence of str, optional
        Column(s) holding the architectures; by default the first of the space's
        ``table_columns`` groups whose columns are all present, else the first of
        :data:`ARCH_COLUMNS` present, else the first column.
    name : str, optional
        How the table is called in messages (defaults to the path).
    max_bytes : int, optional
        Refuse a file larger than this (paths only; ``None``: no limit).
    duplicates : {"refuse", "average"}, optional
        Several rows of one architecture: later ones are bad rows, or all are averaged into
        one (module docstring). Default: the space's ``table_duplicates``.
    schema : TableSchema, optional
        The columns' roles; by default the table's own (its ``# nasviz:`` lines, else a sidecar
        ``<table>.schema.toml`` / ``.json`` beside a path), else guesses.

    Raises
    ------
    TableError
        Naming the file, line and column: a path that is not a regular file, text that is not
        UTF-8, malformed CSV (an unclosed quote, a field over 131,072 characters), an empty file,
        no metric column, no usable row.
    """
    plain_path = arch_column is None and name is None and max_bytes is None and duplicates is None and schema is None
    preloaded = _preloaded(source, space) if plain_path else None
    if preloaded is not None:
        return preloaded
    space_module = get_space(space)
    policy = space_module.table_duplicates if duplicates is None else duplicates
    if policy not in DUPLICATE_POLICIES:
        raise TableError(f"duplicates must be one of {', '.join(DUPLICATE_POLICIES)}, got {policy!r}",
                         source=name or "table")
    path = Path(source) if isinstance(source, (str, os.PathLike)) else None
    label, text = _text_of(source, name, max_bytes)
    lines, header_lines = split_header_schema(physical_lines(text))
    if schema is None:
        schema = find_schema(path, header_lines, label)
    return parse_rows(records(lines, label), space_module, arch_column, label, policy, schema)


def _preloaded(source: Any, space: str) -> "Table | None":
    """The table :func:`preload_table` parsed from this path in this process, if the file is unchanged."""
    if not _PRELOADED or not isinstance(source, (str, os.PathLike)):
        return None
    try:
        return _PRELOADED.get(_file_key(source, space))
    except OSError:
        return None


def _text_of(source: Any, name: str | None, max_bytes: int | None) -> tuple[str, str]:
    """``(label, text)`` of a table given as a path, its bytes or its lines (see :func:`load_table`)."""
    if isinstance(source, (str, os.PathLike)):
        label = name or str(source)
        return label, decode(read_bytes(source, max_bytes=max_bytes, label=label), label)
    label = name or "uploaded table"
    if isinstance(source, (bytes, bytearray)):
        return label, decode(bytes(source), label)
    return label, "".join(line if line.endswith(("\n", "\r")) else line + "\n" for line in source)


def write_table(path: str | os.PathLike, table: Table) -> None:
    """Write ``table`` back as CSV (architecture column, metrics, cost column). Architectures read
    from several columns are written as one ``arch`` column in the space's string form (which
    ``parse`` reads); an averaged table is written with its means, one row per architecture."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        minimised = [m for m in table.metrics if table.direction(m) == MINIMISE]
        if minimised:  # the directions travel with the table (its schema line, nasviz.table_schema)
            pairs = ", ".join(f'"{m}" = "{table.direction(m)}"' for m in table.metrics)
            handle.write(f"# nasviz: metrics = {{ {pairs} }}\n")
        writer = csv.writer(handle)
        extra = [table.cost_column] if table.costs is not None else []
        column = table.arch_column if len(table.arch_columns) == 1 else "arch"
        writer.writerow([column, *table.metrics, *extra])
        for i, s in enumerate(table.strings):
            row = [s, *(repr(float(table.values[m][i])) for m in table.metrics)]
            if table.costs is not None:
                row.append(repr(float(table.costs[i])))
            writer.writerow(row)


def shared_nb201_table_path() -> Path | None:
    """The shared NAS-Bench-201 table if present: ``$NASVIZ_NB201_TABLE``, else :func:`shared_data_path`."""
    env = os.environ.get(NB201_TABLE_ENV)
    if env and Path(env).is_file():
        return Path(env).resolve()
    return shared_data_path("nb201_test_accuracy.csv")


def default_table_path() -> Path | None:
    """The table a search uses when none is given: the embedded NAS-Bench-201 CIFAR table
    (:data:`nasviz.defaults.DEFAULT_TABLE`), else the shared NAS-Bench-201 table when present (a
    checkout without ``data/``), else ``None``."""
    from nasviz.defaults import DEFAULT_TABLE

    return DEFAULT_TABLE if DEFAULT_TABLE.is_file() else shared_nb201_table_path()


#: Data rows read to guess which space a table's rows belong to (:func:`suggest_space`).
SPACE_PROBE_ROWS = 20


def suggest_space(path: str | os.PathLike, tried: str) -> str | None:
    """The registered space (other than ``tried``) whose parser reads most of the first
    :data:`SPACE_PROBE_ROWS` rows of the table at ``path``, for an error that suggests ``--space``
    instead of listing every row the wrong space could not parse; None when none does.

    Spaces whose architecture columns the table does not have are not tried, nor NAS-Bench-101's
    ``hash`` column (reading it enumerates all 423,624 cells first).
    """
    from nasviz.spaces import space_names

    try:
        text = decode(read_bytes(path, max_bytes=None, label=str(path)), str(path))
    except TableError:
        return None
    lines = physical_lines(text)
    if len(lines) < 2:
        return None
    header = [h.strip() for h in next(records(lines[:1], str(path)))[1]]
    probe = lines[: SPACE_PROBE_ROWS + 1]
    for name in space_names():
        if name == tried:
            continue
        space = get_space(name)
        groups = [g for g in space.table_columns if g != ("hash",) and all(c in header for c in g)]
        if not groups and not any(c in header for c in ARCH_COLUMNS):
            continue
        try:
            table = load_table(probe, space=name, arch_column=groups[0] if groups else None, name=str(path))
        except (TableError, ValueError):
            continue
        if len(table) * 2 > SPACE_PROBE_ROWS or len(table) * 2 > len(probe) - 1:
            return name
    return None
