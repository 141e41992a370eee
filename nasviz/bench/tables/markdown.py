"""Markdown for the docs' tables: the marker lines around each printed table, finding and
replacing them in a document, checking them, and formatting a table's rows."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from nasviz.bench.tables import REPO, DocTable, tables

#: The documents whose tables are printed (relative to the checkout).
DOCUMENTS = ("README.md", "docs/*.md")

_BEGIN = re.compile(r"^<!-- table (?P<name>[A-Za-z0-9-]+): printed by .*?; do not edit -->$", re.MULTILINE)


def begin_marker(table: DocTable) -> str:
    sources = ", ".join(table.sources)
    return f"<!-- table {table.name}: printed by `python -m nasviz tables {table.name}` from {sources}; do not edit -->"


def end_marker(name: str) -> str:
    return f"<!-- table {name}: end -->"


@dataclass(frozen=True)
class Region:
    """One printed table in a document: its name, the marker line's text and the text between
    the markers (``[start, end)`` character offsets of that text)."""

    name: str
    marker: str
    start: int
    end: int
    line: int


def regions(text: str, where: str = "document") -> list[Region]:
    """Every marked table of ``text``; a begin marker without its end marker is an error naming
    ``where`` and the line."""
    out = []
    for match in _BEGIN.finditer(text):
        name = match.group("name")
        line = text.count("\n", 0, match.start()) + 1
        end = text.find("\n" + end_marker(name), match.end())
        if end < 0:
            raise ValueError(f"{where}, line {line}: table {name!r} has no line {end_marker(name)!r}")
        out.append(Region(name, match.group(0), match.end() + 1, end + 1, line))
    return out


def documents(root: Path = REPO) -> list[Path]:
    """The documents whose tables are checked: README.md and docs/*.md."""
    found: list[Path] = []
    for pattern in DOCUMENTS:
        found.extend(sorted(root.glob(pattern)))
    return found


@dataclass(frozen=True)
class Problem:
    """A document's table that is not what its raw files print."""

    document: str
    line: int
    name: str
    message: str


def check(root: Path = REPO, docs: Iterable[Path] | None = None) -> list[Problem]:
    """Print every marked table again from its raw files and compare it with the document's text
    (and its marker line with the current one). Unknown names and missing files are problems too."""
    registry = tables()
    problems = []
    for path in documents(root) if docs is None else docs:
        text = path.read_text(encoding="utf-8")
        where = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        for region in regions(text, where):
            table = registry.get(region.name)
            if table is None:
                problems.append(Problem(where, region.line, region.name, "no such table is registered"))
                continue
            try:
                fresh = table.print(root) + "\n"
            except (OSError, ValueError, KeyError) as err:
                problems.append(Problem(where, region.line, region.name, f"cannot be printed: {err}"))
                continue
            if region.marker != begin_marker(table):
                problems.append(Problem(where, region.line, region.name,
                                        f"the marker line should read {begin_marker(table)!r}"))
            old = text[region.start:region.end]
            if old != fresh:
                diff = "".join(difflib.unified_diff(old.splitlines(True), fresh.splitlines(True), "document",
                                                    "printed from the raw files", n=0))
                problems.append(Problem(where, region.line, region.name, "differs from its raw files:\n" + diff))
    return problems


def rewrite(text: str, where: str = "document", root: Path = REPO) -> str:
    """``text`` with every marked table (and marker line) printed again from its raw files."""
    registry = tables()
    pieces, at = [], 0
    for region in regions(text, where):
        if region.name not in registry:
            raise ValueError(f"{where}, line {region.line}: no table {region.name!r} is registered")
        table = registry[region.name]
        marker_start = region.start - len(region.marker) - 1
        pieces += [text[at:marker_start], begin_marker(table), "\n", table.print(root), "\n"]
        at = region.end
    pieces.append(text[at:])
    return "".join(pieces)


def write(root: Path = REPO) -> list[Path]:
    """Rewrite every document's marked tables in place; the documents that changed."""
    changed = []
    for path in documents(root):
        text = path.read_text(encoding="utf-8")
        fresh = rewrite(text, str(path.relative_to(root)), root)
        if fresh != text:
            path.write_text(fresh, encoding="utf-8")
            changed.append(path)
    return changed


def used_names(root: Path = REPO) -> set[str]:
    """The names of the tables the documents print."""
    return {r.name for path in documents(root) for r in regions(path.read_text(encoding="utf-8"), str(path))}


# ------------------------------------------------------------------------------ formatting

def md_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table (``| a | b |`` lines, ``|---|`` under the header)."""
    lines = ["| " + " | ".join(map(str, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join("" if cell is None else str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def fixed(value: float | None, digits: int = 3) -> str:
    """``value`` with ``digits`` decimals; ``—`` for a missing one."""
    return "—" if value is None else f"{value:.{digits}f}"


def bold(text: str, on: bool = True) -> str:
    return f"**{text}**" if on else text
