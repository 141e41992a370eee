"""Sizes a newcomer can read (``docs/ARCHITECTURE.md``, "Rules that keep it easy to change"): no
module of the project over 400 lines and no function over 60, counted on the source (a function's
lines from its ``def`` to its last statement, docstring and comments included)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def project_sources() -> list[Path]:
    """The engine, the dashboard's entry point and pages, and the scripts and examples."""
    found = [REPO / "app.py", *(REPO / "pages").glob("*.py")]
    for folder in ("nasviz", "scripts", "examples"):
        found.extend((REPO / folder).rglob("*.py"))
    return sorted(found)


def test_the_sources_are_found():
    names = {p.relative_to(REPO).as_posix() for p in project_sources()}
    assert {"app.py", "pages/search.py", "nasviz/config.py"} <= names


def test_no_module_is_over_400_lines():
    long = {p.relative_to(REPO).as_posix(): n for p in project_sources()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split one concern out): {long}"


def test_no_function_is_over_60_lines():
    long = {}
    for path in project_sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(REPO).as_posix()}:{node.lineno} {node.name}"] = lines
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (name their parts): {long}"
