"""Command line: ``python -m nasviz COMMAND ...``; every command has ``--help``.

Plugins (:mod:`nasviz.plugins`) are loaded before the parser is built, so their spaces,
strategies, kernels, ... are choices like the built-in ones; ``--space`` also takes a space spec
file (``.toml`` / ``.json``) or a table whose columns declare a space (``.csv``).

Exit statuses (:mod:`nasviz.cli_common`): 0 done; 2 bad input (:class:`~nasviz.errors.NasvizError`: a file, a setting, a
request; the message says what and where) or a file the system refused (``OSError``); 3 an
internal error, a bug in nasviz or in a plugin, never reported as bad input: its message says so
and the traceback follows.

One module per command group: :mod:`~nasviz.cli.run`, :mod:`~nasviz.cli.table`,
:mod:`~nasviz.cli.bench` (``bench``, ``tabulate``), :mod:`~nasviz.cli.runs` (``runs``, ``export``),
:mod:`~nasviz.cli.docs` (``components``, ``tables``); :mod:`~nasviz.cli.shared` what they share.
Here: the parser they make together and :func:`main`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from nasviz.cli.bench import add_bench_parser, add_tabulate_parser, cmd_tabulate
from nasviz.cli.docs import add_components_parser, add_tables_parser, cmd_components, cmd_tables
from nasviz.cli.run import _run_config, add_run_parser, cmd_run
from nasviz.cli.runs import add_export_parser, add_runs_parser, cmd_export, cmd_runs
from nasviz.cli.shared import default_table_path, load_with_space_hint
from nasviz.cli.table import (add_table_parser, cmd_table_import, cmd_table_import_nb101, cmd_table_info,
                              cmd_table_make_default, rank_against)
from nasviz.cli_common import BAD_INPUT, EXIT_BAD_INPUT, EXIT_INTERNAL_ERROR, internal_error_message

__all__ = ["build_parser", "main", "default_table_path", "load_with_space_hint", "rank_against", "cmd_run",
           "cmd_table_info", "cmd_table_import", "cmd_table_make_default", "cmd_table_import_nb101",
           "cmd_components", "cmd_tables", "cmd_tabulate", "cmd_runs", "cmd_export",
           "_run_config"]  # the last for tests of the config a command line makes


def build_parser(load_benchmarks: bool = True) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m nasviz", description="nasviz: see neural architecture search work.")
    sub = parser.add_subparsers(dest="command", required=True)
    add_run_parser(sub)
    add_table_parser(sub)
    add_bench_parser(sub, load_benchmarks)
    add_tabulate_parser(sub)
    add_runs_parser(sub)
    add_export_parser(sub)
    add_components_parser(sub)
    add_tables_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from nasviz.components import load_plugins

    argv = list(sys.argv[1:] if argv is None else argv)
    load_plugins()  # before the parser: plugins' components are choices too
    parser = build_parser(load_benchmarks=bool(argv) and argv[0] == "bench")
    args = parser.parse_args(argv)
    if args.command == "bench":
        args.argv = argv  # what was asked, recorded in the benchmark's provenance
    try:
        return args.func(args)
    except BAD_INPUT as err:
        # Bad input: a clear one-line message, no traceback.
        print(f"error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as err:  # noqa: BLE001 - anything else is a bug, and must not look like bad input
        print(internal_error_message(err), file=sys.stderr)
        return EXIT_INTERNAL_ERROR
