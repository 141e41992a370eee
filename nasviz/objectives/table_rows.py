"""A table's CSV records read into a :class:`~nasviz.objectives.table_data.Table`: which columns
hold the architectures, each data row parsed or skipped as a bad row (with its line and column),
several rows of one architecture refused or averaged."""

from __future__ import annotations

import math
import warnings
from typing import Iterator, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.csvfile import number_problem
from nasviz.errors import InputError, TableError
from nasviz.objectives.columns import ColumnRoles, column_roles
from nasviz.objectives.table_data import BadRow, Table
from nasviz.rounding import counted, decimals_of
from nasviz.spaces.base import SearchSpace
from nasviz.spaces.strings import parse_architecture, parse_architecture_columns
from nasviz.table_schema import MAXIMISE, TableSchema

#: Column names tried, in order, when no architecture column is named (after the space's own
#: :attr:`~nasviz.spaces.base.SearchSpace.table_columns`).
ARCH_COLUMNS = ("arch", "architecture", "arch_str", "cell")


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


def parse_rows(rows: Iterator[tuple[int, list[str]]], space: SearchSpace, arch_column: str | Sequence[str] | None,
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
        raise TableError(f"has no usable row ({counted(rows_read.n_bad, 'bad row')}; first: "
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
