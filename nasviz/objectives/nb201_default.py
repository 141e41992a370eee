"""The embedded default table: NAS-Bench-201's CIFAR-10 / CIFAR-100 results in one compact CSV.

``python -m nasviz table make-default --test-200 nb201_test_accuracy.csv --epoch-12 nb201_12epoch.csv
--out data/nb201_cifar.csv`` joins two converted NAS-Bench-201 tables on the architecture string:

- the 200-epoch test accuracies (columns ``cifar10``, ``cifar100``: NATS-Bench's topology results,
  the mean over the training seeds), and
- the 12-epoch schedule (``cifar10_valid``, ``cifar10_test``, ``cifar100_valid``, ``cifar100_test``),

and writes them under names that say the split and the training length (:data:`COLUMNS`), the
200-epoch CIFAR-10 test accuracy first (the loader's default metric). Values are copied as the
source files write them (no float round trip), so the table keeps the sources' resolution: 4
decimals at 200 epochs, 2-3 at 12 epochs. Rows follow the 200-epoch file's order. The numbers are
NAS-Bench-201's (MIT licence): ``data/NB201-LICENSE.txt`` keeps the notice beside the table.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path

from nasviz.errors import TableError
from nasviz.csvfile import decode, physical_lines, read_bytes, records

#: (output column, source file key, source column): the 200-epoch CIFAR-10 test accuracy first.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("cifar10_test_200ep", "test_200", "cifar10"),
    ("cifar100_test_200ep", "test_200", "cifar100"),
    ("cifar10_valid_12ep", "epoch_12", "cifar10_valid"),
    ("cifar10_test_12ep", "epoch_12", "cifar10_test"),
    ("cifar100_valid_12ep", "epoch_12", "cifar100_valid"),
    ("cifar100_test_12ep", "epoch_12", "cifar100_test"),
)
#: Cells of the NAS-Bench-201 space: both sources must hold each exactly once.
NB201_CELLS = 15_625


@dataclass(frozen=True)
class _Source:
    """One source CSV: its header and its rows by architecture string, in file order."""

    label: str
    header: list[str]
    rows: dict[str, list[str]]


def _read(path: str | os.PathLike, needed: list[str]) -> _Source:
    label = str(path)
    lines = records(physical_lines(decode(read_bytes(path, label=label), label)), label)
    first = next(lines, None)
    if first is None:
        raise TableError("is empty", source=label, line=1)
    header = [h.strip() for h in first[1]]
    missing = [c for c in ["arch", *needed] if c not in header]
    if missing:
        raise TableError(f"has no column {', '.join(missing)}", source=label, line=first[0],
                         detail="columns: " + ", ".join(header))
    rows: dict[str, list[str]] = {}
    for line, fields in lines:
        if len(fields) != len(header):
            raise TableError(f"has {len(fields)} fields, the header has {len(header)}", source=label, line=line)
        arch = fields[header.index("arch")].strip()
        if arch in rows:
            raise TableError("repeats an architecture", source=label, line=line, detail=arch)
        rows[arch] = [f.strip() for f in fields]
    return _Source(label, header, rows)


def build_default_table(test_200: str | os.PathLike, epoch_12: str | os.PathLike, out: str | os.PathLike) -> int:
    """Join the two sources on ``arch`` and write :data:`COLUMNS` to ``out``; returns the rows written.

    Raises :class:`~nasviz.errors.TableError` naming the file when a source lacks a column, repeats
    an architecture, or the two do not hold the same :data:`NB201_CELLS` cells.
    """
    sources = {"test_200": _read(test_200, [c for _, k, c in COLUMNS if k == "test_200"]),
               "epoch_12": _read(epoch_12, [c for _, k, c in COLUMNS if k == "epoch_12"])}
    first, second = sources["test_200"], sources["epoch_12"]
    if set(first.rows) != set(second.rows) or len(first.rows) != NB201_CELLS:
        only = sorted(set(first.rows) ^ set(second.rows))
        raise TableError(f"the sources do not hold the same {NB201_CELLS:,} cells "
                         f"({len(first.rows):,} and {len(second.rows):,} rows, {len(only):,} in one only)",
                         source=second.label, detail=", ".join(only[:3]) or None)
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["arch", *(name for name, _, _ in COLUMNS)])
        for arch in first.rows:
            cells = []
            for _, key, column in COLUMNS:
                source = sources[key]
                cells.append(source.rows[arch][source.header.index(column)])
            writer.writerow([arch, *cells])
    return len(first.rows)


def default_table_sources() -> tuple[Path | None, Path | None]:
    """The shared source files the embedded table is made from, where present."""
    from nasviz.objectives.table import shared_data_path

    return shared_data_path("nb201_test_accuracy.csv"), shared_data_path("nb201_12epoch.csv")
