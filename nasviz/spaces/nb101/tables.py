"""Tables of cells known only by module hash, joined with the enumeration into normal tables."""

from __future__ import annotations

import csv
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from nasviz.csvfile import decode, physical_lines, read_bytes, records
from nasviz.datafiles import SHARED_DATA_ENV, shared_data_path
from nasviz.errors import TableError
from nasviz.spaces.nb101.cache import load_enumeration
from nasviz.spaces.nb101.cell import format

@dataclass(frozen=True)
class ImportResult:
    """What :func:`import_hash_table` did."""

    out_path: Path
    rows_read: int
    rows_joined: int
    unknown_hashes: tuple[str, ...]  # hashes no cell has (the rows were skipped)
    duplicate_hashes: tuple[str, ...]  # later rows of a hash already written (skipped)
    columns: tuple[str, ...]

    def __str__(self) -> str:
        return (
            f"{self.rows_joined} of {self.rows_read} rows joined -> {self.out_path} "
            f"({len(self.unknown_hashes)} unknown hash(es), {len(self.duplicate_hashes)} duplicate(s))"
        )


#: Column renames applied by :func:`import_hash_table`: the table loader reads columns whose
#: name ends in ``_seconds`` as the cost of an evaluation, and ``train_seconds_108`` does not.
HASH_TABLE_RENAMES = {"train_seconds_108": "train_seconds"}


#: The column :func:`import_hash_table` puts first: the loader's default metric is the first one,
#: and NAS-Bench-101's headline budget is 108 epochs.
LEAD_COLUMN = "valid_accuracy_108"


def import_hash_table(
    hash_csv: str | Path,
    out_csv: str | Path,
    hash_column: str = "hash",
    arch_column: str = "arch",
    renames: dict[str, str] | None = None,
    lead: str | None = LEAD_COLUMN,
) -> ImportResult:
    """Join a table of cells known only by module hash with the enumeration; write a normal table.

    ``hash_csv`` is e.g. ``nb101_hash_20k.csv`` (columns ``hash, valid_accuracy_4, _12, _36,
    _108, train_seconds_108, params``), read strictly (:mod:`nasviz.csvfile`: UTF-8,
    a malformed record named by its line). Every row whose hash names a cell is written to
    ``out_csv`` as ``arch`` (the cell's single-string form, :func:`format`, canonical) followed
    by the other columns with their text unchanged: column ``lead`` (default
    :data:`LEAD_COLUMN`) first if present, then the rest in their order, renamed by ``renames``
    (default :data:`HASH_TABLE_RENAMES`, so ``train_seconds_108`` becomes the cost column
    ``train_seconds``; that run's budget is still 108 epochs). Rows with an unknown hash and
    repeated hashes are skipped and listed in the result. The parent folder of ``out_csv`` is
    created; the file is replaced atomically. Raises :class:`~nasviz.errors.TableError` (a
    ``ValueError``) if ``hash_column`` is missing, a row has the wrong number of fields, or
    ``out_csv`` is ``hash_csv``.
    """
    src, dst = Path(hash_csv), Path(out_csv)
    if dst.resolve() == src.resolve():
        raise TableError(f"refusing to overwrite the input table {src}", source=str(src))
    renames = HASH_TABLE_RENAMES if renames is None else renames
    enum = load_enumeration()
    label = str(src)
    reader = records(physical_lines(decode(read_bytes(src, label=label), label)), label)
    first = next(reader, None)
    header = [h.strip() for h in first[1]] if first is not None else []
    if hash_column not in header:
        raise TableError(f"has no {hash_column!r} column", source=label, line=1, detail=f"header: {', '.join(header)}")
    h_idx = header.index(hash_column)
    others = [k for k, name in enumerate(header) if k != h_idx]
    others.sort(key=lambda k: header[k] != lead)  # stable: the lead column first, the rest in order
    columns = (arch_column, *(renames.get(header[k], header[k]) for k in others))
    rows, unknown, dupes, seen, read = [], [], [], set(), 0
    for line, row in reader:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise TableError(f"has {len(row)} fields, the header has {len(header)}", source=label, line=line)
        read += 1
        h = row[h_idx].strip().lower()
        if h in seen:
            dupes.append(h)
            continue
        try:
            i = enum.index_of_hash(h)
        except (KeyError, UnicodeEncodeError):
            unknown.append(h)
            continue
        seen.add(h)
        rows.append([format(enum.cell(i)), *(row[k] for k in others)])
    _write_atomically(dst, columns, rows)
    return ImportResult(dst, read, len(rows), tuple(unknown), tuple(dupes), columns)


def _write_atomically(dst: Path, columns: tuple[str, ...], rows: list[list[str]]) -> None:
    """Write the CSV to a temporary file beside ``dst`` and rename it into place."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=dst.stem, suffix=".tmp", dir=dst.parent)
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(columns)
            writer.writerows(rows)
        os.replace(tmp, dst)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
