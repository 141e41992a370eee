"""Reading a CSV file as text, with every problem named by file, line and column.

Three steps, each refusing with a :class:`~nasviz.errors.TableError` that says where:

1. :func:`read_bytes`: the file is opened without following it anywhere surprising: a folder, a
   FIFO, a socket or a device is named as such (a FIFO is never read, so a reader never blocks on
   it), and a file larger than ``max_bytes`` is refused before it is read.
2. :func:`decode`: UTF-8 (an optional byte-order mark is dropped); a byte that is not UTF-8 is
   reported with its line and column.
3. :func:`records`: the csv module in strict mode, with each record's *first* physical line (a
   quoted field may span lines, so counting records would shift every later line number). A
   quote that is never closed, a character after a closing quote and a field longer than the csv
   module's limit (131,072 characters) are errors that point at the opening quote or the field.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
import stat
from pathlib import Path
from typing import Iterator, Sequence

from nasviz.errors import TableError

#: What a file that is not a regular file is called in messages.
_FILE_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def file_kind(mode: int) -> str:
    """``"a regular file"``, ``"a folder"``, ``"a FIFO (named pipe)"``, ... for an ``st_mode``."""
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")


def _open_regular(path: str | os.PathLike, label: str) -> tuple[int, os.stat_result]:
    """An open read-only descriptor of the regular file ``path`` and its ``fstat``.

    Opened with ``O_NONBLOCK`` and checked on the open descriptor, so a FIFO is refused at once
    instead of blocking the reader, and nothing can be swapped in between the check and the read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise TableError("file does not exist", source=label) from None
    except IsADirectoryError:
        raise TableError("is a folder, not a file", source=label) from None
    except PermissionError:
        raise TableError("cannot be read: permission denied", source=label) from None
    except OSError as err:
        raise TableError(f"cannot be opened: {err.strerror or err}", source=label) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise TableError(f"is {file_kind(info.st_mode)}, not a file", source=label)
    return fd, info


def check_regular_file(path: str | os.PathLike, *, label: str | None = None) -> os.stat_result:
    """``stat`` of ``path`` if it is a regular file we may read; else a :class:`TableError` that
    says what it is (missing, a folder, a FIFO, ...). A FIFO is never opened for reading."""
    fd, info = _open_regular(path, label or str(path))
    os.close(fd)
    return info


def read_bytes(path: str | os.PathLike, *, max_bytes: int | None = None, label: str | None = None) -> bytes:
    """The bytes of the regular file ``path`` (see :func:`check_regular_file`); ``max_bytes``
    (``None``: no limit) refuses a larger file before reading it."""
    label = label or str(path)
    fd, info = _open_regular(path, label)
    with os.fdopen(fd, "rb") as handle:
        if max_bytes is not None and info.st_size > max_bytes:
            raise TableError(f"is {info.st_size / 1e6:.1f} MB, larger than the {max_bytes / 1e6:g} MB allowed",
                             source=label)
        data = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
    if max_bytes is not None and len(data) > max_bytes:  # grew while being read
        raise TableError(f"is larger than the {max_bytes / 1e6:g} MB allowed", source=label)
    return data


def decode(data: bytes, label: str) -> str:
    """UTF-8 text of ``data`` (without a leading byte-order mark); a bad byte is named by line
    and column (1-based, counted in bytes on its line)."""
    start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[start:].decode("utf-8")
    except UnicodeDecodeError as err:
        at = start + err.start
        line = data.count(b"\n", 0, at) + 1
        column = at - (data.rfind(b"\n", 0, at) + 1) + 1
        raise TableError("is not UTF-8 text (save it as a UTF-8 CSV)", source=label, line=line, column=column,
                         detail=f"byte 0x{data[at]:02x}") from None


def physical_lines(text: str) -> list[str]:
    """``text`` split the way the csv module reads a file opened with ``newline=""``: at
    ``\\n``, ``\\r`` and ``\\r\\n`` only, line ends kept."""
    return list(io.StringIO(text, newline=""))


def records(lines: Sequence[str], label: str) -> Iterator[tuple[int, list[str]]]:
    """``(line, fields)`` per CSV record of ``lines`` (from :func:`physical_lines`), ``line``
    being the 1-based physical line the record starts on. Blank lines give ``[]``."""
    reader = csv.reader(lines, strict=True)
    first = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as err:
            raise _syntax_error(str(err), lines, first, label) from None
        yield first, row
        first = reader.line_num + 1


def _syntax_error(message: str, lines: Sequence[str], first: int, label: str) -> TableError:
    """A csv module error on the record starting at line ``first``, located by :func:`_scan`."""
    limit = csv.field_size_limit()
    kind, line, column = _scan(lines, first, limit)
    if kind == "long":
        return TableError(f"a field is longer than the {limit:,} characters a CSV cell may have",
                          source=label, line=line, column=column)
    if kind == "unclosed":
        return TableError("a quoted field is opened here and never closed (it would swallow the rest of the file)",
                          source=label, line=line, column=column)
    if kind == "after-quote":
        return TableError("unexpected character after a closing quote (a quote inside a quoted field is "
                          "written twice: \"\")", source=label, line=line, column=column)
    return TableError(f"malformed CSV ({message})", source=label, line=first)


def _scan(lines: Sequence[str], first: int, limit: int) -> tuple[str | None, int, int]:
    """Walk one record from line ``first`` as the csv module does and find its first problem.

    Returns ``(kind, line, column)`` with kind ``"long"`` (a field over ``limit`` characters;
    where it starts), ``"unclosed"`` (the opening quote of a field still open at the end of the
    data), ``"after-quote"`` (a character after a closing quote) or ``None``.
    """
    in_quotes = closed = False
    start = (first, 1)
    length = 0
    for ln in range(first, len(lines) + 1):
        text = lines[ln - 1]
        for col, ch in enumerate(text, start=1):
            if in_quotes:
                if ch == '"':
                    in_quotes, closed = False, True
                else:
                    length += 1
            elif ch == '"' and (length == 0 and not closed):  # opening quote at a field's start
                in_quotes, start = True, (ln, col)
            elif ch == '"' and closed:  # "" inside a quoted field: a literal quote
                in_quotes, closed = True, False
                length += 1
            elif ch == ",":  # the next field starts after it
                closed, length, start = False, 0, (ln, col + 1)
            elif ch in "\r\n":  # the record ended without a problem found here
                return None, first, 1
            elif closed:
                return "after-quote", ln, col
            else:
                if length == 0:
                    start = (ln, col)
                length += 1
            if length > limit:
                return "long", *start
    if in_quotes:
        return "unclosed", *start
    return None, first, 1


#: Largest magnitude a metric or cost may have. Accuracies, losses and seconds are far below it;
#: the surrogate squares and sums the values (standardisation, likelihood), and 1e15 keeps a sum
#: of squares over a million rows finite (1e36), while a value such as 1e308 overflows to inf at
#: the first square and turns the GP's fit into NaN. Values beyond it are bad rows.
MAX_ABS_VALUE = 1e15

#: A plain decimal number in ASCII: optional sign, digits with an optional fraction, an optional
#: exponent. ``float()`` accepts more (``1_000``, full-width digits, ``inf``, ``nan``), none of
#: which a benchmark table should contain.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def parse_number(text: str) -> float | None:
    """The value of a plain ASCII decimal number (see :data:`_NUMBER`), else ``None``.

    Surrounding whitespace is ignored. Returns ``None`` for anything else, including numbers
    whose magnitude exceeds :data:`MAX_ABS_VALUE`; use :func:`number_problem` to say why.
    """
    return None if number_problem(text) else float(text.strip())


def number_problem(text: str) -> str | None:
    """Why ``text`` is not a usable number (``None`` if it is one)."""
    t = text.strip()
    if not t:
        return "missing value"
    if not _NUMBER.fullmatch(t):
        return "non-numeric value"
    if not abs(float(t)) <= MAX_ABS_VALUE:  # also catches 1e999 -> inf
        return f"value outside +-{MAX_ABS_VALUE:g}"
    return None
