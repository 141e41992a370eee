"""The project's error types.

Every error nasviz raises on purpose derives from :class:`NasvizError`, so a caller (the CLI, a
page, a test) can tell "the input or the request is wrong, here is why" from a bug. The ones about
bad input also derive from ``ValueError``, as they always did, so ``except ValueError`` callers
keep working.

Input errors carry *where* the problem is (``source``, ``line``, ``column``, ``field``) apart from
*what* it is (``problem``) and the text that quotes the input (``detail``). ``str(err)`` gives everything;
:meth:`InputError.redacted` gives the location and the problem without any text taken from the
file, for views that show errors about files which are not the viewer's own (a server path typed
in the dashboard must not become a way to read the server's files).
"""

from __future__ import annotations


class NasvizError(Exception):
    """Base of every error nasviz raises on purpose."""


class InputError(NasvizError, ValueError):
    """Bad input: a file, a string or a setting that cannot be used, and where.

    Parameters
    ----------
    problem : str
        What is wrong, in words that quote nothing from the input (e.g. "not a number").
    source : str, optional
        The file (or "uploaded table", "--seed", ...) the input came from.
    line : int, optional
        1-based line in ``source`` (a CSV's header is line 1).
    column : int, optional
        1-based character column on that line, or for a table cell the 1-based CSV column.
    field : str, optional
        Name of the field: the CSV column's header, an option's name.
    detail : str, optional
        What quotes the input: the offending cell (``repr``'d by the caller), a parser's own
        explanation. Shown by ``str``, left out by :meth:`redacted`.
    """

    def __init__(self, problem: str, *, source: str | None = None, line: int | None = None,
                 column: int | None = None, field: str | None = None, detail: str | None = None) -> None:
        self.problem = problem
        self.source = source
        self.line = line
        self.column = column
        self.field = field
        self.detail = detail
        super().__init__(self._render(disclose=True))

    def _where(self, disclose: bool) -> str:
        parts = []
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.column is not None:
            parts.append(f"column {self.column}")
        if disclose and self.field is not None:
            parts.append(f"field {self.field!r}")
        return ", ".join(parts)

    def _render(self, disclose: bool) -> str:
        where = self._where(disclose)
        head = ": ".join(p for p in (self.source, where) if p)
        text = f"{head}: {self.problem}" if head else self.problem
        if disclose and self.detail is not None:
            text += f": {_shorten(self.detail)}"
        return text

    def redacted(self) -> str:
        """The message without text from the input: source, line, column and the problem."""
        return self._render(disclose=False)

    def __reduce__(self):  # keep the keyword arguments through pickling (multiprocessing)
        return (_rebuild, (type(self), self.problem, self.source, self.line, self.column, self.field, self.detail))


def _rebuild(cls, problem, source, line, column, field, detail):
    return cls(problem, source=source, line=line, column=column, field=field, detail=detail)


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class TableError(InputError):
    """A benchmark table that cannot be used at all (unreadable, no architecture column, no
    usable row, ...). Rows that are merely bad are skipped and listed instead."""


class ArchitectureError(InputError):
    """An architecture string that does not parse in its search space."""


class UnsafeFileError(InputError):
    """A file that asks for something nasviz refuses to do while reading it (a pickle that names
    a class outside the allow-list). Raised before anything from the file has run."""


class PathNotAllowedError(InputError):
    """A server path outside the operator's data folder, or server paths switched off."""


class LimitError(InputError):
    """A request beyond one of the server's limits (budget, running searches, study size,
    upload size). The message says the limit and how to change it."""


class ConfigError(NasvizError, ValueError):
    """A configuration that cannot run: an unknown component name, a bad option value, or
    components that do not fit together (a kernel that cannot read the chosen space)."""


class StoreError(NasvizError, ValueError):
    """A request the run store cannot honour (unknown run, bad status, overlapping evaluations...)."""


class LeaseLostError(StoreError):
    """This process no longer holds the run's lease: another process resumed the run (or it was
    declared interrupted). The process must stop without writing anything to the run."""


__all__ = [
    "ArchitectureError", "ConfigError", "InputError", "LeaseLostError", "LimitError", "NasvizError", "PathNotAllowedError",
    "StoreError", "TableError", "UnsafeFileError",
]
