"""Pieces the command line's commands share: ``--space`` (registered names, plugins' spaces and
space files), values in a metric's own units, and how an error ends a command (its exit status).

Exit status: 0 done; 2 bad input (:class:`~nasviz.errors.NasvizError`: a file, a setting, a
request; the message says what and where) or a file the system refused (``OSError``); 3 an
internal error, a bug in nasviz or in a plugin, never reported as bad input: its message says so
and the traceback follows.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from nasviz.errors import NasvizError
from nasviz.objectives import UnknownArchitectureError
from nasviz.defaults import DEFAULT_SPACE

#: Exit status of bad input (and of a file the system refused) and of an internal error.
EXIT_BAD_INPUT = 2
EXIT_INTERNAL_ERROR = 3

#: What ``main`` reports as bad input: the errors nasviz raises on purpose, and a table or store
#: lookup of something that is not there.
BAD_INPUT: tuple[type[BaseException], ...] = (NasvizError, UnknownArchitectureError)


def internal_error_message(err: BaseException) -> str:
    """The traceback of an internal error, then one line saying it is one (not bad input)."""
    import traceback

    trace = "".join(traceback.format_exception(err))
    return (f"{trace}internal error: {type(err).__name__}: {err}\n"
            "This is a bug in nasviz or in a plugin, not a problem with the input; the traceback above says where.")


class _Registered:
    """argparse ``choices`` read from a registry when asked, not when the parser is built: a
    space registered while parsing (``--space FILE``) is a choice too."""

    def __init__(self, registry) -> None:
        self.registry = registry

    def __contains__(self, name: object) -> bool:
        return name in self.registry

    def __iter__(self):
        return iter(self.registry.names())


def space_argument(text: str) -> str:
    """argparse type of ``--space``: a registered name, or a space file (a spec ``.toml`` /
    ``.json``, or a ``.csv`` table whose columns declare the space) registered now and passed on
    to the processes this one starts (``NASVIZ_PLUGINS``)."""
    from nasviz.components import PLUGIN_GROUPS, SPACES
    from nasviz.plugins import FILE_LOADERS, load_item

    if text in SPACES or Path(text).suffix.lower() not in FILE_LOADERS:
        return text
    if not Path(text).is_file():
        raise argparse.ArgumentTypeError(f"no space called {text!r} and no such file")
    names, problem = load_item(text, PLUGIN_GROUPS, export=True)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem.error)
    spaces = [n for n in names if n in SPACES]
    return spaces[0] if spaces else text


def add_space_argument(parser: argparse.ArgumentParser, default: str | None = DEFAULT_SPACE, help: str | None = None) -> None:
    from nasviz.components import SPACES

    parser.add_argument("--space", default=default, type=space_argument, choices=_Registered(SPACES),
                        metavar="SPACE", help=help or (
                            f"search space: {', '.join(SPACES.names())}; or a space spec file (.toml / .json) or a "
                            f"table whose columns declare the space (.csv) (default: {default})"))


def in_metric_units(out: dict, direction: str | None) -> dict:
    """A run's result with its values (scores: minus a minimised metric) as the metric's own
    values; regret is the same either way."""
    from nasviz.table_schema import shown_value

    if direction != "minimise":
        return out
    flip = lambda v: shown_value(v, direction) if isinstance(v, (int, float)) else v  # noqa: E731 - NaN stays NaN
    out.update(best_value=flip(out["best_value"]), optimum=flip(out["optimum"]),
               trajectory=[flip(v) for v in out["trajectory"]],
               evaluations=[{**e, "value": flip(e["value"])} for e in out["evaluations"]])
    return out
