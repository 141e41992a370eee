"""A table's own word on its columns: which hold the architecture, which are metrics and in which
direction, which is the cost, which to ignore.

A table declares its schema in a sidecar file beside it (``results.schema.toml`` or
``results.schema.json`` for ``results.csv``) or in comment lines at its top, each ``# nasviz:``
followed by a line of TOML::

    # nasviz: architecture = ["layer_1", "layer_2", "layer_3"]
    # nasviz: metrics = { val_acc = "maximise", latency_ms = "minimise", test_acc = "maximise" }
    # nasviz: cost = "train_seconds"
    # nasviz: ignore = ["run_id"]
    layer_1,layer_2,layer_3,run_id,val_acc,latency_ms,test_acc,train_seconds
    ...

``metrics`` lists the metric columns in order (the first is the one a search uses when none is
named) with ``maximise`` or ``minimise`` (``maximize`` / ``minimize`` / ``max`` / ``min`` too);
numeric columns it does not list are kept as descriptive values, never offered as objectives. A
sidecar may also hold a ``[space]`` table: the spec keys (``name``, ``groups``, ``graph``, ...) of the
space its architecture columns declare (:mod:`nasviz.spaces.declared.loading`). Without a schema
the loader guesses the roles and says so (:class:`ColumnRoles`, ``table info``).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from nasviz.datafiles import parse_text, read_text
from nasviz.errors import InputError, TableError

MAXIMISE = "maximise"
MINIMISE = "minimise"
#: Spellings of the two directions.
_DIRECTIONS = {"maximise": MAXIMISE, "maximize": MAXIMISE, "max": MAXIMISE, "higher": MAXIMISE,
               "minimise": MINIMISE, "minimize": MINIMISE, "min": MINIMISE, "lower": MINIMISE}
#: Keys a schema may have.
KEYS = ("architecture", "metrics", "cost", "ignore", "space")
#: What starts a schema line at the top of a CSV.
HEADER_MARK = re.compile(r"^\s*#\s*nasviz:", re.IGNORECASE)


def direction_of(text: Any, *, source: str = "schema", field_name: str = "metrics") -> str:
    """``maximise`` or ``minimise`` for any accepted spelling; :class:`InputError` otherwise."""
    key = str(text).strip().lower()
    if key not in _DIRECTIONS:
        raise InputError(f"direction must be maximise or minimise, got {text!r}", source=source, field=field_name)
    return _DIRECTIONS[key]


def sign_of(direction: str | None) -> float:
    """+1 for a maximised metric, -1 for a minimised one (``score = sign * value``)."""
    return -1.0 if direction == MINIMISE else 1.0


def shown_value(score: float | None, direction: str | None) -> float | None:
    """A score (what searches maximise, what runs store) as the metric's own value."""
    return None if score is None else sign_of(direction) * float(score)


def run_direction(config: Mapping[str, Any] | None) -> str:
    """The direction of a stored run's metric (``direction`` in its config; older runs: maximise)."""
    return str((config or {}).get("direction") or MAXIMISE)


def metric_heading(metric: str, direction: str | None) -> str:
    """``metric``, or ``"latency (lower is better)"`` for a minimised one."""
    return f"{metric} (lower is better)" if direction == MINIMISE else metric


@dataclass(frozen=True)
class TableSchema:
    """What a table declares (module docstring); empty fields are left to the guesses."""

    architecture: tuple[str, ...] = ()
    metrics: tuple[tuple[str, str], ...] = ()
    cost: str | None = None
    ignore: tuple[str, ...] = ()
    space: Mapping[str, Any] = field(default_factory=dict)
    source: str = "schema"

    def direction(self, metric: str) -> str | None:
        return next((d for m, d in self.metrics if m == metric), None)


def schema_from_data(data: Any, source: str) -> TableSchema:
    """The :class:`TableSchema` of a schema's plain data; errors name ``source`` and the field."""
    if not isinstance(data, Mapping):
        raise InputError("must be a table of keys (architecture, metrics, cost, ignore, space)", source=source)
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise InputError(f"is not a schema key; the keys are {', '.join(KEYS)}", source=source, field=unknown[0])
    metrics = data.get("metrics", {})
    if isinstance(metrics, Sequence) and not isinstance(metrics, str):
        metrics = {str(m): MAXIMISE for m in metrics}  # a plain list: all maximised, in this order
    if not isinstance(metrics, Mapping):
        raise InputError("must map each metric column to maximise or minimise", source=source, field="metrics")
    cost = data.get("cost")
    if cost is not None and not isinstance(cost, str):
        raise InputError("must be one column name", source=source, field="cost")
    space = data.get("space", {})
    if not isinstance(space, Mapping):
        raise InputError("must be a table of space spec keys", source=source, field="space")
    return TableSchema(
        architecture=_names(data.get("architecture", ()), source, "architecture"),
        metrics=tuple((str(m), direction_of(d, source=source, field_name=f"metrics.{m}")) for m, d in metrics.items()),
        cost=cost, ignore=_names(data.get("ignore", ()), source, "ignore"), space=dict(space), source=source)


def _names(value: Any, source: str, name: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Sequence) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InputError("must be a column name or a list of them", source=source, field=name)
    return tuple(v.strip() for v in value)


def split_header_schema(lines: list[str]) -> tuple[list[str], list[tuple[int, str]]]:
    """The CSV's physical lines with its leading ``# nasviz:`` lines blanked (so every later line
    keeps its number), and those lines' TOML as ``(line number, text)``."""
    found: list[tuple[int, str]] = []
    out = list(lines)
    for i, line in enumerate(lines):
        if HEADER_MARK.match(line):
            found.append((i + 1, HEADER_MARK.sub("", line, count=1).strip()))
            out[i] = "\n"
        elif line.strip():
            break
    return out, found


def header_schema(found: Sequence[tuple[int, str]], label: str) -> TableSchema | None:
    """The schema of a CSV's ``# nasviz:`` lines (``None`` without any)."""
    if not found:
        return None
    text = "\n".join(t for _, t in found)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        match = re.search(r"at line (\d+)", str(err))
        line = found[int(match[1]) - 1][0] if match and int(match[1]) <= len(found) else found[0][0]
        raise TableError(f"its '# nasviz:' schema line is not valid TOML ({re.sub(r' *[(]at line.*', '', str(err))})",
                         source=label, line=line) from None
    return schema_from_data(data, f"{label} (header)")


def sidecar_path(table: Path) -> Path | None:
    """The sidecar schema beside ``table`` if there is one (``.schema.toml`` before ``.schema.json``)."""
    for suffix in (".schema.toml", ".schema.json"):
        candidate = table.with_name(table.stem + suffix)
        if candidate.is_file():
            return candidate
    return None


def read_sidecar(path: Path) -> TableSchema:
    """The schema in a sidecar file (TOML or JSON by its suffix)."""
    text = read_text(path, "a table schema")
    return schema_from_data(parse_text(text, path.suffix, str(path)), str(path))


def find_schema(table: Path | None, found: Sequence[tuple[int, str]], label: str) -> TableSchema | None:
    """The table's schema: its header lines, else its sidecar (for a file), else ``None``. A table
    with both is refused (which one holds?)."""
    header = header_schema(found, label)
    sidecar = sidecar_path(table) if table is not None else None
    if header is not None and sidecar is not None:
        raise TableError(f"declares its schema twice: in '# nasviz:' lines and in {sidecar.name}; keep one",
                         source=label, line=found[0][0])
    return header if sidecar is None else read_sidecar(sidecar)


__all__ = ["HEADER_MARK", "MAXIMISE", "MINIMISE", "TableSchema", "direction_of", "find_schema", "header_schema",
           "metric_heading", "read_sidecar", "run_direction", "schema_from_data", "shown_value", "sidecar_path",
           "sign_of", "split_header_schema"]
