"""Architecture strings from outside (a table cell, a text box) into architectures, with one error type.

Each space's ``parse`` raises ``ValueError`` with its own explanation. Code that reads strings it
did not write (the table loader, the dashboard) calls :func:`parse_architecture` instead, which
also bounds the length of what it hands to the parser and turns every refusal into an
:class:`~nasviz.errors.ArchitectureError` that can say where the string came from and can be
shown without quoting it (:meth:`~nasviz.errors.InputError.redacted`).
"""

from __future__ import annotations


from nasviz.arch import Architecture
from nasviz.errors import ArchitectureError
from nasviz.spaces.base import SearchSpace

#: Longest architecture string read. The longest valid NB201 string is 161 characters and a
#: layer network at the domain's limits (60 layers, 200 edges) stays under 2,000; the bound keeps
#: a megabyte-long cell from reaching a parser (and from being quoted in a message).
MAX_ARCH_CHARS = 10_000

#: What a parser may raise on text it cannot read, besides ``ValueError``: a number too large for a
#: float (``seed=1e999`` in a wired string: OverflowError), nesting too deep (RecursionError), a
#: size it cannot allocate (MemoryError), and the lookups of a hand-written parser (KeyError,
#: IndexError, TypeError). Each becomes an :class:`ArchitectureError`; nothing else reaches a visitor.
PARSER_REFUSALS = (ValueError, ArithmeticError, RecursionError, MemoryError, LookupError, TypeError)
#: Characters of a parser's own explanation kept in the error (it may quote the input).
MAX_REASON_CHARS = 200


def _reason(err: BaseException | str) -> str:
    text = err if isinstance(err, str) else (str(err) or type(err).__name__)
    return text if len(text) <= MAX_REASON_CHARS else f"{text[:MAX_REASON_CHARS]}… ({len(text):,} characters)"


def parse_architecture(space: SearchSpace, text: str, *, source: str | None = None, line: int | None = None,
                       column: int | None = None, field: str | None = None) -> Architecture:
    """``space.parse(text)``, refusing with :class:`ArchitectureError` (a ``ValueError``).

    Parameters
    ----------
    space : SearchSpace
        The space whose ``parse`` reads ``text`` (``nasviz.spaces.get_space(name)``).
    text : str
        The architecture string.
    source, line, column, field
        Where ``text`` came from, for the message (see :class:`~nasviz.errors.InputError`).
    """
    where = {"source": source, "line": line, "column": column, "field": field}
    if not isinstance(text, str):
        raise ArchitectureError(f"expected a {space.name} architecture string, got {type(text).__name__}", **where)
    if len(text) > MAX_ARCH_CHARS:
        raise ArchitectureError(f"architecture string of {len(text):,} characters: longer than the "
                                f"{MAX_ARCH_CHARS:,} any {space.name} architecture needs", **where)
    try:
        return space.parse(text)
    except ArchitectureError as err:  # a parser's own error may quote the input in its problem: cut both
        raise ArchitectureError(_reason(err.problem), detail=None if err.detail is None else _reason(err.detail),
                                **where) from None
    except PARSER_REFUSALS as err:
        raise ArchitectureError(f"not a valid {space.name} architecture", detail=_reason(err), **where) from None


def parse_architecture_columns(space: SearchSpace, texts: tuple[str, ...], *, source: str | None = None,
                               line: int | None = None, column: int | None = None,
                               fields: tuple[str, ...] | None = None) -> Architecture:
    """``space.parse_columns(texts)`` for an architecture written over several table columns
    (NAS-Bench-101's ``matrix`` + ``ops``), with the checks and the error of :func:`parse_architecture`.

    ``fields`` names the columns, for the message."""
    where = {"source": source, "line": line, "column": column, "field": "+".join(fields) if fields else None}
    for text in texts:
        if not isinstance(text, str):
            raise ArchitectureError(f"expected {space.name} architecture text, got {type(text).__name__}", **where)
        if len(text) > MAX_ARCH_CHARS:
            raise ArchitectureError(f"architecture text of {len(text):,} characters: longer than the "
                                    f"{MAX_ARCH_CHARS:,} any {space.name} architecture needs", **where)
    try:
        return space.parse_columns(tuple(texts))
    except ArchitectureError as err:
        raise ArchitectureError(_reason(err.problem), detail=None if err.detail is None else _reason(err.detail),
                                **where) from None
    except PARSER_REFUSALS as err:
        raise ArchitectureError(f"not a valid {space.name} architecture", detail=_reason(err), **where) from None
