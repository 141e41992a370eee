"""``python -m nasviz components`` and ``tables``: what the README and docs/*.md print (the component
catalogue, the result tables from their raw files)."""

from __future__ import annotations

import argparse
import sys

from nasviz.errors import InputError


def add_components_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("components", help="list the registered spaces, kernels, strategies, pools, ...",
                       description="Every registered component with its description; --markdown writes the README's table.")
    p.add_argument("--markdown", action="store_true", help="Markdown tables (the README's component section)")
    p.add_argument("--readme", metavar="FILE", help="rewrite the component section of this README in place")
    p.set_defaults(func=cmd_components)


def cmd_components(args: argparse.Namespace) -> int:
    from pathlib import Path

    from nasviz.components import catalogue_markdown, catalogue_text, readme_with_catalogue

    if args.readme:
        path = Path(args.readme)
        path.write_text(readme_with_catalogue(path.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"rewrote the component section of {path}")
        return 0
    print(catalogue_markdown() if args.markdown else catalogue_text())
    return 0


def add_tables_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tables", help="print the docs' result tables from their raw results files; --check, --write",
                       description="The tables of measured figures in README.md and docs/*.md are printed from "
                                   "committed raw results files (docs/results/). NAME prints one; --check prints "
                                   "every table a document holds again and fails on a difference; --write rewrites "
                                   "them in place. Without arguments: the registered tables and their files.")
    p.add_argument("name", nargs="?", metavar="NAME", help="the table to print")
    action = p.add_mutually_exclusive_group()
    action.add_argument("--check", action="store_true", help="fail (exit 1) where a document's table differs")
    action.add_argument("--write", action="store_true", help="rewrite every document's tables in place")
    p.set_defaults(func=cmd_tables)


def cmd_tables(args: argparse.Namespace) -> int:
    from nasviz.bench.tables import tables
    from nasviz.bench.tables.markdown import check, write

    registry = tables()
    if args.check:
        problems = check()
        for p in problems:
            print(f"{p.document}, line {p.line}: table {p.name} {p.message}", file=sys.stderr)
        print(f"{len(problems)} table(s) differ from their raw files" if problems else "every table is current")
        return 1 if problems else 0
    if args.write:
        changed = write()
        print("rewrote " + (", ".join(str(p) for p in changed) if changed else "nothing: every table is current"))
        return 0
    if args.name:
        if args.name not in registry:
            raise InputError(f"no table {args.name!r}; known: {', '.join(sorted(registry))}")
        print(registry[args.name].print())
        return 0
    for name, table in sorted(registry.items()):
        print(f"{name:<20} {table.about}\n{'':<20} from {', '.join(table.sources)}")
    return 0

