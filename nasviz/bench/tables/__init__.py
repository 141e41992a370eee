"""The docs' result tables, printed from committed raw results files.

Every table of measured figures in ``README.md`` and ``docs/*.md`` sits between two marker lines::

    <!-- table NAME: printed by `python -m nasviz tables NAME` from docs/results/FILE; do not edit -->
    | ... the table ... |
    <!-- table NAME: end -->

``NAME`` is a :class:`DocTable` registered here: the raw results files it reads (JSON that a
``bench`` command printed, with its ``provenance``, or JSON lines a benchmark appended) and a
function that prints the Markdown table from them. ``python -m nasviz tables --check`` prints
every table again from its files and fails on any difference; the tests run it. Every other table
of the docs carries a ``not-results`` or ``hand-copied`` marker on the line before it
(:mod:`nasviz.bench.tables.inventory`).

Adding a table (the recipe ``docs/benchmarks.md`` gives): run the benchmark, commit its output
under ``docs/results/``, register a :class:`DocTable` in one of this package's modules (or a new
one listed in :data:`MODULES`) whose ``render`` reads it, put the two marker lines in the doc and
run ``python -m nasviz tables --write``.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

#: The checkout: raw files and docs are named relative to it.
REPO = Path(__file__).resolve().parents[3]

#: Modules that register tables (imported on first use of :data:`TABLES`).
MODULES = (
    "nasviz.bench.tables.other_tables",
    "nasviz.bench.tables.first_hour",
    "nasviz.bench.tables.fidelity",
    "nasviz.bench.tables.classroom",
    "nasviz.bench.tables.browser",
    "nasviz.bench.tables.top_cells",
    "nasviz.bench.tables.surrogate",
    "nasviz.bench.tables.nb101",
    "nasviz.bench.tables.digits",
    "nasviz.bench.tables.step_time",
)

#: A raw results file as read: a JSON document, or the records of a JSON-lines file.
Results = Any


@dataclass(frozen=True)
class DocTable:
    """One table of the docs.

    name : the marker's name (letters, digits, ``-``).
    sources : raw results files, relative to the checkout (``docs/results/...``).
    render : the loaded sources, in order -> the Markdown table (no trailing newline).
    about : one line: what the table shows (``python -m nasviz tables`` lists it).
    """

    name: str
    sources: tuple[str, ...]
    render: Callable[[Sequence[Results]], str]
    about: str

    def print(self, root: Path = REPO) -> str:
        """The table, printed from its raw files under ``root``."""
        return self.render([load_results(root / source) for source in self.sources])


_TABLES: dict[str, DocTable] = {}


def register(table: DocTable) -> DocTable:
    if table.name in _TABLES:
        raise ValueError(f"table {table.name!r} is registered twice")
    if not table.name or not all(c.isalnum() or c == "-" for c in table.name):
        raise ValueError(f"table name {table.name!r}: use letters, digits and '-'")
    _TABLES[table.name] = table
    return table


def tables() -> dict[str, DocTable]:
    """Every registered table, by name."""
    for module in MODULES:
        importlib.import_module(module)
    return dict(_TABLES)


def load_results(path: Path) -> Results:
    """A raw results file: ``.jsonl`` -> its records, else the JSON document."""
    if not path.is_file():
        raise FileNotFoundError(f"raw results file {path} is missing")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


__all__ = ["DocTable", "REPO", "Results", "load_results", "register", "tables"]
