"""Serve the dashboard ready for its first visitor: ``python -m nasviz.dashboard.serve [options]``.

``streamlit run app.py`` imports the engine and parses the embedded table while its first visitor
waits: on two cores that was about a second of a 3.4-s cold first page (``python -m nasviz bench
browser``). This launcher does that work once, before the server accepts a connection, and then
hands over to Streamlit's own command line (``streamlit run app.py`` with the options given here,
so every ``streamlit run`` option works unchanged). ``make run`` and the Docker image use it.

What is warmed up:

* the modules that ``app.py`` and ``pages/*.py`` import at their top level, read from their own
  import statements (so the list cannot go stale when a page changes);
* the default strategy's class (the search form reads its defaults on the first page);
* the embedded default table, parsed into the process's table cache the sidebar reads.

A failure here (a missing table, a broken plugin) is left for the page to report in its own
words: the warm-up only skips what it could not do.
"""

from __future__ import annotations

import ast
import importlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path

APP = Path("app.py")


@dataclass(frozen=True)
class WarmUp:
    """What :func:`warm_up` did: the modules it imported, the table it parsed (``None`` when
    there was none to parse) and how long it took (seconds)."""

    modules: tuple[str, ...]
    table: str | None
    seconds: float


def page_imports(app: Path = APP) -> tuple[str, ...]:
    """The absolute module names that ``app`` and the ``pages/*.py`` beside it import at their top
    level (``import x`` and ``from x import y``), sorted."""
    scripts = [app, *sorted((app.parent / "pages").glob("*.py"))]
    found: set[str] = set()
    for script in scripts:
        for node in ast.parse(script.read_text(encoding="utf-8"), filename=str(script)).body:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
    found.discard("__future__")
    return tuple(sorted(found))


def warm_up(app: Path = APP) -> WarmUp:
    """Import what the pages import, load the default strategy's class and parse the embedded
    default table into the table cache (:func:`nasviz.dashboard.sources.table_from_path`)."""
    start = time.perf_counter()
    modules = page_imports(app)
    for name in modules:
        importlib.import_module(name)
    from nasviz import defaults
    from nasviz.components import STRATEGIES, default_strategy
    from nasviz.dashboard import sources
    from nasviz.dashboard.sidebar import EMBEDDED_SPACE
    from nasviz.errors import InputError

    STRATEGIES.get(default_strategy(defaults.DEFAULT_SPACE)).load()
    table = next((t.path for t in defaults.EMBEDDED_TABLES if t.path.is_file()), None)
    if table is not None:
        try:
            sources.table_from_path(table, EMBEDDED_SPACE)
        except (InputError, OSError):  # the sidebar says what is wrong with it, in its words
            table = None
    return WarmUp(modules, None if table is None else table.name, time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    """Warm up, then run ``streamlit run app.py ARGV`` in this process."""
    if not APP.is_file():
        sys.exit(f"{APP} not found: run this from the nasviz checkout (where `make run` is)")
    done = warm_up(APP)
    print(f"nasviz: warmed up in {done.seconds:.1f} s ({len(done.modules)} modules"
          f"{', table ' + done.table if done.table else ''})", flush=True)
    from streamlit.web.cli import main as streamlit_main

    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    streamlit_main()


if __name__ == "__main__":
    main()
