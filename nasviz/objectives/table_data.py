"""A loaded benchmark table (:class:`Table`): its architectures, metric values, costs and skipped
rows, and what is asked of it (a lookup, a score, the optimum, a summary). Loading is
:mod:`nasviz.objectives.table`; reading the rows, :mod:`nasviz.objectives.table_rows`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from nasviz.arch import Architecture
from nasviz.errors import TableError
from nasviz.objectives.columns import DECLARE_METRICS, ColumnRole, declare_metric_hint
from nasviz.spaces.base import SearchSpace
from nasviz.table_schema import MAXIMISE, MINIMISE


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
            role = next((r for r in self.roles if r.column == metric), None)
            if role is None:
                raise TableError(f"metric {metric!r} is not a column of {self.source}; metrics: {', '.join(self.metrics)}")
            declared = "declared" if role.declared else "guessed"
            raise TableError(
                f"metric {metric!r} is not a metric of {self.source}: it is read as {role.role} ({declared}: "
                f"{role.why}); metrics: {', '.join(self.metrics)}" + ("" if role.declared else f"; {DECLARE_METRICS}"),
                detail=None if role.declared else declare_metric_hint([metric, *self.metrics]))
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
