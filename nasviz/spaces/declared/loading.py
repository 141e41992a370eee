"""Reading declared spaces: from a spec file (TOML or JSON), or from a table whose architecture is
spread over one column per position (``layer_1`` ... ``layer_8``); and registering them.

Both end as a :class:`~nasviz.spaces.declared.spec.SpaceSpec` registered under its name in the
spaces' registry (:func:`register_spec`), which is what ``NASVIZ_PLUGINS`` items ending in
``.toml`` / ``.json`` / ``.csv`` and ``--space FILE`` do (:mod:`nasviz.plugins`). Registering the
same spec again is a no-op; another spec under a taken name is refused.

A table's space: its architecture columns are those its schema declares
(:mod:`nasviz.table_schema`: ``architecture = ["layer_1", ...]``), else the longest run of
columns named ``<prefix><n>`` (``layer_1``, ``layer_2``, ...; numbered from 0 or 1 without gaps)
whose cells are not numbers. Each column's choices are its distinct values, sorted. The schema's
``[space]`` table may add the spec's other keys (``name``, ``description``, ``groups``,
``graph``, ``labels``); the name defaults to the file's stem.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

from nasviz.datafiles import parse_text, read_text
from nasviz.errors import InputError
from nasviz.registry import Entry, Registry
from nasviz.spaces.declared.space import DeclaredSpace, space_class
from nasviz.spaces.declared.spec import KEYS, SpaceSpec, spec_from_data

#: Largest number of distinct values a position column may have to count as categorical.
MAX_CHOICES = 256
_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def read_spec_file(path: str | Path) -> SpaceSpec:
    """The spec in ``path`` (``.toml`` or ``.json``); :class:`~nasviz.errors.InputError` names the
    file, the line and the field of a problem."""
    text = read_text(path, "a space spec")
    return spec_from_data(parse_text(text, Path(path).suffix, str(path)), source=str(path), text=text)


def register_spec(spec: SpaceSpec, registry: Registry, origin: str | None = None) -> Entry:
    """Register ``spec``'s space under its name (a no-op for the same spec; another space under a
    taken name is refused with :class:`~nasviz.errors.ConfigError`)."""
    from nasviz.errors import ConfigError

    if spec.name in registry:
        existing = registry.get(spec.name)
        factory = existing.factory
        if isinstance(factory, type) and issubclass(factory, DeclaredSpace) and _same_spec(factory.spec, spec):
            return existing
        raise ConfigError(f"a search space called {spec.name!r} is already registered ({existing.origin}); "
                          f"{spec.source} declares another one: give it another name")
    return registry.register(Entry(spec.name, spec.description, space_class(spec), origin=origin or ""))


def _same_spec(a: SpaceSpec, b: SpaceSpec) -> bool:
    return a.to_dict() == b.to_dict()


def register_spec_file(path: str | Path, registry: Registry, origin: str | None = None) -> Entry:
    """Read the spec file at ``path`` and register its space (``NASVIZ_PLUGINS``, ``--space FILE``)."""
    return register_spec(read_spec_file(path), registry, origin or f"spec file {path}")


def register_table_space(path: str | Path, registry: Registry, origin: str | None = None) -> Entry:
    """Infer the space of the table at ``path`` (module docstring) and register it."""
    return register_spec(table_spec(path), registry, origin or f"table columns {path}")


def table_spec(path: str | Path) -> SpaceSpec:
    """The space a table's columns declare (module docstring)."""
    from nasviz.csvfile import decode, physical_lines, read_bytes, records
    from nasviz.table_schema import find_schema, split_header_schema

    label = str(path)
    lines = physical_lines(decode(read_bytes(path, label=label), label))
    lines, comment = split_header_schema(lines)
    schema = find_schema(Path(path), comment, label)
    rows = [(line, row) for line, row in records(lines, label) if any(cell.strip() for cell in row)]
    if not rows:
        raise InputError("is empty: expected a header line", source=label, line=1)
    header = [h.strip() for h in rows[0][1]]
    columns = schema.architecture if schema is not None and schema.architecture else infer_position_columns(
        header, rows[1:], label)
    missing = [c for c in columns if c not in header]
    if missing:
        raise InputError(f"declares architecture column {missing[0]!r}, which the header lacks", source=label, line=1,
                         field=missing[0])
    index = [header.index(c) for c in columns]
    values = {c: sorted({row[i].strip() for _, row in rows[1:] if i < len(row) and row[i].strip()}) for c, i in
              zip(columns, index)}
    extra = dict(schema.space) if schema is not None else {}
    data: dict[str, Any] = {"name": extra.pop("name", _name_of(Path(path))),
                            "description": extra.pop("description", f"the space of the columns {columns[0]} ... "
                                                                    f"{columns[-1]} of {Path(path).name}"),
                            "positions": list(columns), "choices": values, **extra}
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise InputError(f"the schema's space table has key {unknown[0]!r}; it may have name, description, groups, "
                         "graph, labels, separator", source=schema.source if schema else label, field=unknown[0])
    return spec_from_data(data, source=schema.source if schema is not None and schema.space else label)


def infer_position_columns(header: Sequence[str], rows: Sequence[tuple[int, list[str]]], label: str) -> tuple[str, ...]:
    """The longest run of ``<prefix><n>`` columns (consecutive ``n`` from 0 or 1, at least two)
    whose cells are not numbers and have at most :data:`MAX_CHOICES` distinct values."""
    from nasviz.csvfile import parse_number

    runs: dict[str, dict[int, str]] = {}
    for name in header:
        match = _NUMBERED.match(name)
        if match:
            runs.setdefault(match[1], {})[int(match[2])] = name
    best: tuple[str, ...] = ()
    for numbered in runs.values():
        first = min(numbered)
        if first not in (0, 1) or sorted(numbered) != list(range(first, first + len(numbered))) or len(numbered) < 2:
            continue
        columns = tuple(numbered[k] for k in sorted(numbered))
        cells = [row[header.index(c)] for c in columns for _, row in rows if header.index(c) < len(row)]
        categorical = cells and sum(parse_number(x) is None for x in cells) * 2 > len(cells)
        distinct = max(len({row[header.index(c)] for _, row in rows if header.index(c) < len(row)}) for c in columns)
        if categorical and distinct <= MAX_CHOICES and len(columns) > len(best):
            best = columns
    if not best:
        raise InputError("has no architecture spread over position columns (layer_1, layer_2, ... with names, not "
                         "numbers, as values); declare them in a schema: architecture = [\"...\", ...]",
                         source=label, line=1)
    return best


def _name_of(path: Path) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.+-]+", "-", path.stem).strip("-.") or "table-space"
    return stem[:64]


__all__ = ["infer_position_columns", "read_spec_file", "register_spec", "register_spec_file",
           "register_table_space", "table_spec"]
