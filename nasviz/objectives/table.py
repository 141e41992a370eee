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
"""

from __future__ import annotations

import csv
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.datafiles import shared_data_path
from nasviz.errors import InputError, TableError
from nasviz.objectives.columns import ColumnRole, ColumnRoles, column_roles
from nasviz.csvfile import decode, number_problem, physical_lines, read_bytes, records
from nasviz.table_schema import MAXIMISE, MINIMISE, TableSchema, find_schema, split_header_schema
from nasviz.rounding import decimals_of
from nasviz.spaces import get_space
from nasviz.spaces.base import SearchSpace
from nasviz.spaces.strings import parse_architecture, parse_architecture_columns

#: Column names tried, in order, when no architecture column is named (after the space's own
#: :attr:`~nasviz.spaces.base.SearchSpace.table_columns`).
ARCH_COLUMNS = ("arch", "architecture", "arch_str", "cell")

#: What :func:`load_table` may do with several rows of one architecture.
DUPLICATE_POLICIES = ("refuse", "average")

#: Environment variable that points tests and benchmarks at the shared NB201 table.
NB201_TABLE_ENV = "NASVIZ_NB201_TABLE"

class UnknownArchitectureError(KeyError):
    """An architecture that the table has no row for."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else "unknown architecture"


@dataclass(frozen=True)
class BadRow:
    """One row that was skipped, and why. ``line`` counts the header as line 1.

    ``column`` is the header name of the offending column and ``problem`` the full reason,
    which may quote the cell; ``position`` (1-based CSV column) and ``reason`` (the reason
    without text from the file) make :meth:`redacted`.
    """

    line: int
    column: str
    problem: str
    position: int | None = None
    reason: str | None = None

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column!r}: {self.problem}"

    def redacted(self) -> str:
        """The bad row without any text from the file (for files that are not the viewer's own)."""
        where = f"line {self.line}" + (f", column {self.position}" if self.position is not None else "")
        return f"{where}: {self.reason or self.problem}"


@dataclass
class Table:
    """A loaded benchmark table.

    Attributes
    ----------
    archs : list of Architecture, length n
        The architectures of the usable rows, in file order.
    strings : list of str, length n
        Their strings as written by the space's ``format``.
    values : dict metric -> ndarray (n,)
        The metric columns.
    costs : ndarray (n,) or None
        Seconds per evaluation, if the table has a time column.
    bad_rows : list of BadRow
        The first :data:`MAX_KEPT_BAD_ROWS` rows that were skipped, in file order.
    bad_count : int or None
        How many rows were skipped in all (``None``: ``len(bad_rows)``, a table built in code).
    duplicates_refused : int or None
        Of them, the rows refused as a repeat of an architecture (``None``: counted in ``bad_rows``).
    descriptive : dict column -> ndarray (n,)
        Numeric columns that describe the rows (parameters, FLOPs, standard deviations); NaN
        where a row has no value.
    arch_columns : tuple of str
        The column(s) the architectures were read from (``arch_column`` joins them with ``+``).
    duplicates : str
        The policy for several rows of one architecture (:data:`DUPLICATE_POLICIES`).
    repeats : ndarray (n,) of int
        How many rows each architecture had (all 1 under ``"refuse"``).
    directions : dict metric -> str
        ``"maximise"`` or ``"minimise"`` (a metric missing here is maximised).
    roles : list of ColumnRole
        Every column's role, declared or guessed, and why (header order).
    schema_source : str or None
        Where the table's schema was declared (``None``: every role is a guess).
    decimals : dict metric -> int
        The resolution of each metric: the most decimals a row writes (:mod:`nasviz.rounding`);
        values are shown with that many.
    """

    source: str
    space: SearchSpace
    arch_column: str
    archs: list[Architecture]
    strings: list[str]
    values: dict[str, np.ndarray]
    costs: np.ndarray | None = None
    cost_column: str | None = None
    bad_rows: list[BadRow] = field(default_factory=list)
    ignored_columns: list[str] = field(default_factory=list)
    descriptive: dict[str, np.ndarray] = field(default_factory=dict)
    arch_columns: tuple[str, ...] = ()
    duplicates: str = "refuse"
    repeats: np.ndarray | None = None
    directions: dict[str, str] = field(default_factory=dict)
    roles: list[ColumnRole] = field(default_factory=list)
    schema_source: str | None = None
    decimals: dict[str, int] = field(default_factory=dict)
    bad_count: int | None = None
    duplicates_refused: int | None = None

    @property
    def n_bad_rows(self) -> int:
        """How many rows were skipped (``bad_rows`` keeps the first :data:`MAX_KEPT_BAD_ROWS`)."""
        return len(self.bad_rows) if self.bad_count is None else self.bad_count

    def __post_init__(self) -> None:
        if not self.arch_columns:
            self.arch_columns = (self.arch_column,)
        if self.repeats is None:
            self.repeats = np.ones(len(self.archs), dtype=np.int64)
        self._index = {arch: i for i, arch in enumerate(self.archs)}

    def __len__(self) -> int:
        return len(self.archs)

    @property
    def metrics(self) -> list[str]:
        return list(self.values)

    def check_metric(self, metric: str) -> str:
        if metric not in self.values:
            raise TableError(
                f"metric {metric!r} is not a numeric column of {self.source}; metrics: {', '.join(self.metrics)}"
            )
        return metric

    def index_of(self, arch: Architecture) -> int:
        try:
            return self._index[arch]
        except KeyError:
            try:
                text = self.space.format(arch)
            except ValueError:
                text = repr(arch)
            raise UnknownArchitectureError(f"architecture {text} is not in table {self.source}") from None

    def __contains__(self, arch: Architecture) -> bool:
        return arch in self._index

    def lookup(self, arch: Architecture, metric: str) -> float:
        """The metric's value for ``arch``; raises :class:`UnknownArchitectureError`."""
        return float(self.values[self.check_metric(metric)][self.index_of(arch)])

    def cost(self, arch: Architecture) -> float | None:
        return None if self.costs is None else float(self.costs[self.index_of(arch)])

    def direction(self, metric: str) -> str:
        """``"maximise"`` or ``"minimise"``."""
        return self.directions.get(self.check_metric(metric), MAXIMISE)

    def sign(self, metric: str) -> float:
        """+1 for a maximised metric, -1 for a minimised one: ``score = sign * value``."""
        return -1.0 if self.direction(metric) == MINIMISE else 1.0

    def score(self, arch: Architecture, metric: str) -> float:
        """The value a search maximises: the metric, or minus a minimised one."""
        return self.sign(metric) * self.lookup(arch, metric)

    def optimum(self, metric: str) -> float:
        """The best value of ``metric`` in its own units: the largest, or the smallest of a minimised one."""
        values = self.values[self.check_metric(metric)]
        return float(np.min(values) if self.direction(metric) == MINIMISE else np.max(values))

    def best_index(self, metric: str) -> int:
        values = self.values[self.check_metric(metric)]
        return int(np.argmin(values) if self.direction(metric) == MINIMISE else np.argmax(values))

    def skipped_rows(self, first: int = 5, *, redact: bool = False) -> dict:
        """``{"count": n, "first": [...]}``: how many rows were skipped and the first few as text
        (:meth:`BadRow.redacted` when ``redact``: for files that are not the viewer's own).
        This is what a run stores and shows about the rows its table lost."""
        shown = self.bad_rows[:first]
        return {"count": self.n_bad_rows, "first": [b.redacted() if redact else str(b) for b in shown]}

    def duplicates_info(self) -> dict:
        """What happened to rows of an architecture seen before: the policy and its counts."""
        if self.duplicates == "average":
            merged = int(self.repeats.sum() - len(self.repeats))
            return {"policy": "average", "rows_merged": merged,
                    "architectures_with_repeats": int((self.repeats > 1).sum()),
                    "max_repeats": int(self.repeats.max()) if len(self.repeats) else 0,
                    "note": "rows of the same architecture were averaged: each metric and cost is their mean"}
        refused = self.duplicates_refused if self.duplicates_refused is not None else sum(
            1 for b in self.bad_rows if b.reason and b.reason.startswith("duplicate architecture"))
        return {"policy": "refuse", "rows_refused": refused,
                "note": "a later row of an architecture already read is a bad row"}

    def distribution(self, metric: str, near: float = 0.5) -> dict[str, float | int]:
        """Quartiles of ``metric`` over the rows with a value, and how many rows lie within
        ``near`` of the optimum (how hard the optimum is to hit: a search finds it only if few do)."""
        v = np.asarray(self.values[metric], dtype=float)
        v = v[np.isfinite(v)]
        if not v.size:
            return {"rows": 0}
        q25, median, q75 = (float(x) for x in np.quantile(v, [0.25, 0.5, 0.75]))
        score = self.sign(metric) * v
        return {"rows": int(v.size), "q25": q25, "median": median, "q75": q75,
                f"within_{near:g}_of_optimum": int(np.sum(score >= score.max() - near))}

    def info(self) -> dict:
        """Plain-data summary: rows, metrics, optimum per metric, the duplicate policy and the bad rows."""
        return {
            "source": self.source,
            "space": self.space.name,
            "rows": len(self),
            "arch_column": self.arch_column,
            "arch_columns": list(self.arch_columns),
            "duplicates": self.duplicates_info(),
            "metrics": self.metrics,
            "directions": {m: self.direction(m) for m in self.metrics},
            "schema": self.schema_source,
            "column_roles": [{"column": r.column, "role": r.role, "direction": r.direction, "declared": r.declared,
                              "why": r.why} for r in self.roles],
            "cost_column": self.cost_column,
            "ignored_columns": self.ignored_columns,
            "descriptive_columns": list(self.descriptive),
            "optimum": {m: self.optimum(m) for m in self.metrics},
            "decimals": dict(self.decimals),
            "best_arch": {m: self.strings[self.best_index(m)] for m in self.metrics},
            "distribution": {m: self.distribution(m) for m in self.metrics},
            "bad_rows": [{"line": b.line, "column": b.column, "position": b.position, "problem": b.problem}
                         for b in self.bad_rows],
            "bad_rows_count": self.n_bad_rows,
        }


#: Tables parsed ahead of use in this process (:func:`preload_table`), by path, space and the
#: file's size and modification time, so a changed file is read again.
_PRELOADED: dict[tuple[str, str, int, int], "Table"] = {}


def _file_key(path: str | os.PathLike, space: str) -> tuple[str, str, int, int]:
    resolved = Path(path).resolve()
    st = resolved.stat()
    return str(resolved), space, st.st_size, st.st_mtime_ns


def preload_table(path: str | os.PathLike, space: str = "nb201") -> "Table":
    """Parse a table now so that a later :func:`load_table` of the same unchanged file (same
    space, default options) returns it at once: a warm search worker parses the embedded table
    before it knows its run (``nasviz.workers.search --wait``)."""
    table = load_table(path, space=space)
    _PRELOADED[_file_key(path, space)] = table
    return table


def load_table(
    source: str | os.PathLike | bytes | Iterable[str],
    *,
    space: str = "nb201",
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
    return _parse_rows(records(lines, label), space_module, arch_column, label, policy, schema)


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


def _architecture_columns(header: list[str], space: SearchSpace, arch_column: str | Sequence[str] | None,
                          line: int, label: str, declared: Sequence[str] = ()) -> tuple[str, ...]:
    """The header names the architectures are read from (see :func:`load_table`): the caller's,
    the schema's (``declared``), the space's, a known name, else the first column."""
    if arch_column is not None:
        chosen = (arch_column,) if isinstance(arch_column, str) else tuple(arch_column)
    elif declared:
        chosen = tuple(declared)
    else:
        groups = (*space.table_columns, *((c,) for c in ARCH_COLUMNS))
        chosen = next((g for g in groups if all(c in header for c in g)), (header[0],))
    missing = [c for c in chosen if c not in header]
    if missing or not chosen:
        raise TableError(f"no column {', '.join(repr(c) for c in missing) or '(none named)'}", source=label,
                         line=line, detail="columns: " + ", ".join(header))
    return chosen


def _parse_rows(rows: Iterator[tuple[int, list[str]]], space: SearchSpace, arch_column: str | Sequence[str] | None,
                label: str, policy: str = "refuse", schema: TableSchema | None = None) -> Table:
    """The table of ``(line, fields)`` records (see :func:`~nasviz.csvfile.records`);
    blank lines before the header (where ``# nasviz:`` lines stood) are skipped."""
    first = next((r for r in rows if any(cell.strip() for cell in r[1])), None)
    if first is None or not any(cell.strip() for cell in first[1]):
        raise TableError("is empty: expected a header line such as 'arch,cifar10'", source=label, line=1)
    header = [h.strip() for h in first[1]]
    if len(set(header)) != len(header):
        dup = sorted({h for h in header if header.count(h) > 1})
        raise TableError("duplicate column name(s) in the header", source=label, line=first[0],
                         detail=", ".join(dup))
    names = _architecture_columns(header, space, arch_column, first[0], label, schema.architecture if schema else ())
    body = [(line, row) for line, row in rows if any(cell.strip() for cell in row)]
    if not body:
        raise TableError("has a header but no data rows", source=label)
    cols = column_roles(header, body, [header.index(c) for c in names], label, space.lead_metrics, schema)
    rows_read = _RowReader(header, names, cols, space, policy, schema.source if schema else None)
    for line, row in body:
        rows_read.add(line, row)
    if not rows_read.archs:
        bad = rows_read.bad
        raise TableError(f"has no usable row ({rows_read.n_bad} bad row(s); first: "
                         + "; ".join(b.redacted() for b in bad[:3]) + ")", source=label,
                         detail="; ".join(str(b) for b in bad[:3]))
    return rows_read.table(label)


#: Bad rows a table keeps as objects (their count is kept in full): a mostly-bad upload of 49 MB
#: kept hundreds of thousands of them per cached table, and their text in every visitor's session.
MAX_KEPT_BAD_ROWS = 1000


class _RowReader:
    """Reads data rows one by one into architectures and values, applying the duplicate policy."""

    def __init__(self, header: list[str], names: tuple[str, ...], cols: ColumnRoles, space: SearchSpace,
                 policy: str, schema_source: str | None = None) -> None:
        self.header, self.names, self.cols, self.space, self.policy = header, names, cols, space, policy
        self.schema_source = schema_source
        self.archs: list[Architecture] = []
        self.strings: list[str] = []
        self.values: list[list[list[float]]] = []  # per arch, per row: metric values then the cost
        self.described: list[list[list[float]]] = []  # per arch, per row: descriptive values
        self.bad: list[BadRow] = []  # the first MAX_KEPT_BAD_ROWS
        self.n_bad = 0
        self.n_duplicates = 0
        self.seen: dict[Architecture, tuple[int, int]] = {}  # arch -> (first line, index)
        self.positions = [header.index(c) for c in names]
        self.where = "+".join(names)
        self.decimals = [0] * len(cols.metrics)  # per metric: the most decimals a row writes

    def _skip(self, bad: BadRow) -> None:
        """Count a skipped row; keep it if fewer than :data:`MAX_KEPT_BAD_ROWS` are kept."""
        self.n_bad += 1
        if bad.reason and bad.reason.startswith("duplicate architecture"):
            self.n_duplicates += 1
        if len(self.bad) < MAX_KEPT_BAD_ROWS:
            self.bad.append(bad)

    def _architecture(self, line: int, row: list[str]) -> Architecture | None:
        texts = tuple(row[c] for c in self.positions)
        where = self.positions[0] + 1
        try:
            if len(texts) == 1:
                return parse_architecture(self.space, texts[0])
            return parse_architecture_columns(self.space, texts, fields=self.names)
        except InputError as err:
            self._skip(BadRow(line, self.where, f"cannot parse architecture: {err.detail or err.problem}",
                                   where, "cannot parse architecture"))
            return None

    def _numbers(self, line: int, row: list[str]) -> list[float] | None:
        parsed = []
        for c in self.cols.metrics + ([self.cols.cost] if self.cols.cost is not None else []):
            why = number_problem(row[c])
            if why is not None:
                full = why if why == "missing value" else f"{why} {_shorten(row[c].strip())!r}"
                self._skip(BadRow(line, self.header[c], full, c + 1, why))
                return None
            parsed.append(float(row[c]))
        for k, c in enumerate(self.cols.metrics):
            self.decimals[k] = max(self.decimals[k], decimals_of(row[c]))
        return parsed

    def add(self, line: int, row: list[str]) -> None:
        if len(row) != len(self.header):
            what = f"has {len(row)} fields, the header has {len(self.header)}"
            self._skip(BadRow(line, self.where, what, None, what))
            return
        arch = self._architecture(line, row)
        if arch is None:
            return
        if arch in self.seen and self.policy == "refuse":
            what = f"duplicate architecture (first seen on line {self.seen[arch][0]})"
            self._skip(BadRow(line, self.where, what, self.positions[0] + 1, what))
            return
        numbers = self._numbers(line, row)
        if numbers is None:
            return
        # describes the row: a missing or bad value is NaN, not a bad row
        described = [math.nan if number_problem(row[c]) else float(row[c]) for c in self.cols.descriptive]
        if arch in self.seen:
            i = self.seen[arch][1]
        else:
            i = len(self.archs)
            self.seen[arch] = (line, i)
            self.archs.append(arch)
            self.strings.append(self.space.format(arch))
            self.values.append([])
            self.described.append([])
        self.values[i].append(numbers)
        self.described[i].append(described)

    def table(self, label: str) -> Table:
        """The table; several rows of an architecture (``"average"``) become their mean."""
        header, cols = self.header, self.cols
        repeats = np.array([len(v) for v in self.values], dtype=np.int64)
        single = bool((repeats == 1).all())
        means = np.array([v[0] if single else np.mean(v, axis=0) for v in self.values]).reshape(len(self.archs), -1)
        described = np.zeros((len(self.archs), len(cols.descriptive)))
        if cols.descriptive:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a value no row has stays NaN
                described = np.array([d[0] if single else np.nanmean(d, axis=0) for d in self.described])
        n_metrics = len(cols.metrics)
        return Table(
            source=label,
            space=self.space,
            arch_column="+".join(self.names),
            archs=self.archs,
            strings=self.strings,
            values={header[c]: means[:, k].copy() for k, c in enumerate(cols.metrics)},
            costs=means[:, n_metrics].copy() if cols.cost is not None else None,
            cost_column=header[cols.cost] if cols.cost is not None else None,
            bad_rows=self.bad,
            bad_count=self.n_bad,
            duplicates_refused=self.n_duplicates,
            ignored_columns=[header[c] for c in cols.ignored],
            descriptive={header[c]: described[:, k].copy() for k, c in enumerate(cols.descriptive)},
            arch_columns=self.names,
            duplicates=self.policy,
            repeats=repeats,
            directions={header[c]: cols.directions.get(c, MAXIMISE) for c in cols.metrics},
            roles=list(cols.roles),
            schema_source=self.schema_source,
            decimals={header[c]: self.decimals[k] for k, c in enumerate(cols.metrics)},
        )


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
