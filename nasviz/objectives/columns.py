"""The role of each column of a benchmark table: architecture, metric (with its direction), cost,
descriptive value or ignored, each role declared by the table's schema or guessed, and why.

A table's schema (:mod:`nasviz.table_schema`) decides what it declares. What it leaves open is
guessed from names and values, and every guess says so (``table info`` prints them):

* a column is numeric when at least half of its non-empty cells are plain numbers; codes written
  with digits (``007``, or more than 15 digits: a hash) count as text, and text is ignored;
* cost: a name that says time (``time``, ``seconds``, ``cost``, ``*_time``, ``*_seconds``, also
  with a budget suffix: ``train_seconds_108``);
* descriptive: ``params``, ``flops``, ``macs`` and spreads (``*_std``, ``*_sd``, ``*_se``);
* identifier, ignored: a name such as ``id``, ``index``, ``*_id``, or whole numbers that count the
  rows (all different, consecutive, from 0 or 1; at least 10 rows);
* metric: every other numeric column, maximised unless its name says loss, error, latency,
  energy or memory. A constant column is never the first metric, and the space's lead metrics
  (:attr:`~nasviz.spaces.base.SearchSpace.lead_metrics`) go first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from nasviz.errors import TableError
from nasviz.table_schema import MAXIMISE, MINIMISE, TableSchema

#: A plain decimal number in ASCII (see :func:`nasviz.csvfile.number_problem`).
NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
#: Digits that are a code, not a quantity: a leading zero, or more than a float holds exactly.
_CODE = re.compile(r"0[0-9]+|[0-9]{16,}", re.ASCII)
_WHOLE = re.compile(r"[+-]?[0-9]+", re.ASCII)
#: Names of numeric columns that describe rather than score.
DESCRIPTIVE_COLUMNS = frozenset({"params", "n_params", "parameters", "flops", "mflops", "macs"})
_IDENTIFIERS = frozenset({"id", "idx", "index", "uid", "row", "rowid", "row_id", "unnamed: 0", "#"})
#: Words in a metric's name that mean lower is better.
_LOWER_IS_BETTER = frozenset({"loss", "error", "err", "latency", "energy", "memory", "mem", "regret", "mse", "rmse",
                              "mae"})

#: Fewest rows before whole numbers that are all different and consecutive count as row numbers
#: (a tiny table's scores 1, 2, 3 may be just that).
MIN_ROWS_FOR_ROW_NUMBERS = 10

ARCHITECTURE, METRIC, COST, DESCRIPTIVE, IGNORED = "architecture", "metric", "cost", "descriptive", "ignored"


@dataclass(frozen=True)
class ColumnRole:
    """One column's role, its direction (metrics), and why: ``declared`` by the schema or a guess."""

    column: str
    role: str
    why: str
    declared: bool = False
    direction: str | None = None

    def __str__(self) -> str:
        what = f"{self.role} ({self.direction})" if self.direction else self.role
        return f"{self.column}: {what}, {'declared' if self.declared else 'guessed'}: {self.why}"


@dataclass
class ColumnRoles:
    """Roles by column index: ``arch`` columns, ``metrics`` in order (first = the default one)
    with their ``directions``, the ``cost`` column, ``descriptive`` and ``ignored`` ones, and each
    column's :class:`ColumnRole` in header order."""

    arch: list[int]
    metrics: list[int]
    cost: int | None
    descriptive: list[int]
    ignored: list[int]
    directions: dict[int, str] = field(default_factory=dict)
    roles: list[ColumnRole] = field(default_factory=list)


def is_cost_column(name: str) -> bool:
    n = re.sub(r"_\d+$", "", name.strip().lower())  # a budget suffix: train_seconds_108 is seconds at 108 epochs
    return n in {"time", "seconds", "cost", "train_time", "runtime"} or n.endswith(("_time", "_seconds"))


def is_descriptive_column(name: str) -> bool:
    n = name.strip().lower()
    return n in DESCRIPTIVE_COLUMNS or n.endswith(("_std", "_sd", "_se"))


def _identifier_name(name: str) -> bool:
    n = name.strip().lower()
    return n in _IDENTIFIERS or n.endswith(("_id", "_index", " id")) or n.startswith("id_")


def declare_metric_hint(columns: Sequence[str]) -> str:
    """The schema line that declares ``columns`` the table's metrics (directions guessed from the
    names), for errors about a column the guess did not take as one."""
    return "# nasviz: metrics = { " + ", ".join(f'{c} = "{guessed_direction(c)}"' for c in columns) + " }"


#: What an error says after a numeric column was guessed not to be a metric.
DECLARE_METRICS = ("a comment line above the header declares the metrics, every one of them, \"minimise\" where "
                   "lower is better")


def guessed_direction(name: str) -> str:
    words = set(re.split(r"[^a-z0-9]+", name.lower()))
    return MINIMISE if words & _LOWER_IS_BETTER else MAXIMISE


class _Column:
    """The non-empty cells of one column and what they look like."""

    def __init__(self, cells: Sequence[str]) -> None:
        self.cells = [x.strip() for x in cells if x.strip()]
        numbers = [x for x in self.cells if NUMBER.fullmatch(x) and not _CODE.fullmatch(x.lstrip("+-"))]
        self.numeric = bool(self.cells) and len(numbers) * 2 >= len(self.cells)
        self.codes = sum(_CODE.fullmatch(x.lstrip("+-")) is not None for x in self.cells)
        values = [float(x) for x in numbers]
        self.constant = len(values) >= 2 and max(values) == min(values)
        whole = [int(x) for x in numbers if _WHOLE.fullmatch(x)]
        self.row_numbers = (len(whole) == len(self.cells) >= MIN_ROWS_FOR_ROW_NUMBERS and len(set(whole)) == len(whole)
                            and min(whole) in (0, 1) and max(whole) - min(whole) + 1 == len(whole))


def column_roles(header: list[str], body: list[tuple[int, list[str]]], arch_idx: list[int], label: str,
                 lead: tuple[str, ...] = (), schema: TableSchema | None = None) -> ColumnRoles:
    """Every column's role (module docstring); ``schema`` decides what it declares."""
    schema = schema or TableSchema()
    roles: dict[int, ColumnRole] = {c: ColumnRole(header[c], ARCHITECTURE, "the schema's architecture" if
                                                  schema.architecture else "the space's or a known name",
                                                  bool(schema.architecture)) for c in arch_idx}
    columns = {c: _Column([row[c] for _, row in body if c < len(row)]) for c in range(len(header)) if c not in roles}
    _declared_columns(header, schema, label)
    for c, col in columns.items():
        roles[c] = _role(header[c], col, schema)
    metrics = [c for c, r in roles.items() if r.role == METRIC]
    if schema.metrics:
        metrics = [header.index(m) for m, _ in schema.metrics]
        bad = [header[c] for c in metrics if not columns[c].numeric]
        if bad:
            raise TableError("a metric the schema declares is not numeric", source=label, field=bad[0])
    else:
        metrics = _order_guessed(metrics, header, columns, lead)
    if not metrics:
        where = ", ".join(str(c + 1) for c in arch_idx)
        ignored = [(c, r) for c, r in sorted(roles.items()) if r.role == IGNORED]
        numeric = [r.column for c, r in ignored if columns[c].numeric]
        problem = f"no numeric metric column besides the architecture column (column {where})"
        if numeric:
            problem += f"; {len(numeric)} numeric column{'s were' if len(numeric) > 1 else ' was'} guessed not to be " \
                       f"one: if {'they are' if len(numeric) > 1 else 'it is'}, {DECLARE_METRICS}"
        detail = "; ".join(f"{r.column} is ignored ({r.why})" for _, r in ignored) if ignored else None
        if numeric:
            detail = f"{declare_metric_hint(numeric)}; {detail}"
        raise TableError(problem, source=label, detail=detail)
    costs = [c for c, r in sorted(roles.items()) if r.role == COST]
    return ColumnRoles(
        arch=list(arch_idx), metrics=metrics, cost=costs[0] if costs else None,
        descriptive=[c for c, r in sorted(roles.items()) if r.role == DESCRIPTIVE],
        ignored=[c for c, r in sorted(roles.items()) if r.role == IGNORED or (r.role == COST and c not in costs[:1])],
        directions={c: roles[c].direction or MAXIMISE for c in metrics},
        roles=[roles[c] for c in range(len(header))])


def _declared_columns(header: list[str], schema: TableSchema, label: str) -> None:
    declared = [*(m for m, _ in schema.metrics), *([schema.cost] if schema.cost else []), *schema.ignore]
    missing = [c for c in declared if c not in header]
    if missing:
        raise TableError(f"the schema ({schema.source}) names column {missing[0]!r}, which the header lacks",
                         source=label, line=1, field=missing[0])


def _role(name: str, col: _Column, schema: TableSchema) -> ColumnRole:
    """The role of one column that is not the architecture (see the module docstring)."""
    if name in schema.ignore:
        return ColumnRole(name, IGNORED, "the schema ignores it", True)
    if schema.direction(name) is not None:
        return ColumnRole(name, METRIC, "the schema's metric", True, schema.direction(name))
    if schema.cost == name:
        return ColumnRole(name, COST, "the schema's cost", True)
    if not col.numeric:
        why = "codes written with digits (leading zeros or over 15 digits)" if col.codes else "text, not numbers"
        return ColumnRole(name, IGNORED, why if col.cells else "empty")
    if schema.cost is None and is_cost_column(name):
        return ColumnRole(name, COST, "its name says time or cost")
    if is_descriptive_column(name):
        return ColumnRole(name, DESCRIPTIVE, "its name says it describes (parameters, FLOPs, a spread)")
    if _identifier_name(name) or col.row_numbers:
        why = "its name says identifier" if _identifier_name(name) else "whole numbers that count the rows from 0 or 1"
        return ColumnRole(name, IGNORED, f"an identifier: {why}")
    if schema.metrics:
        return ColumnRole(name, DESCRIPTIVE, "numeric, but not among the schema's metrics", True)
    direction = guessed_direction(name)
    why = "numeric" + (", and its name says lower is better" if direction == MINIMISE else "")
    return ColumnRole(name, METRIC, why + ("; constant, so never the first metric" if col.constant else ""),
                      direction=direction)


def _order_guessed(metrics: list[int], header: list[str], columns: dict[int, _Column], lead: tuple[str, ...]) -> list[int]:
    """The space's lead metric first, then the columns that vary, then the constant ones."""
    first = next((c for name in lead for c in metrics if header[c] == name and not columns[c].constant), None)
    rest = [c for c in metrics if c != first]
    return ([first] if first is not None else []) + [c for c in rest if not columns[c].constant] + \
        [c for c in rest if columns[c].constant]


__all__ = ["ARCHITECTURE", "COST", "ColumnRole", "ColumnRoles", "DECLARE_METRICS", "DESCRIPTIVE", "DESCRIPTIVE_COLUMNS",
           "IGNORED", "METRIC", "NUMBER", "column_roles", "declare_metric_hint", "guessed_direction", "is_cost_column",
           "is_descriptive_column"]
