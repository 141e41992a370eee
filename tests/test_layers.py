"""Layer rules of ``docs/ARCHITECTURE.md`` ("Rules that keep it easy to change"), checked on the
import graph, with no list of exceptions.

The graph is ``import_graph`` (tests/helpers/import_graph.py) (every ``import`` in ``nasviz``, function-level
ones included, ``if TYPE_CHECKING:`` blocks excluded); third-party imports are read the same way
with :mod:`ast`. A rule on a package covers every module under it, and where it says "never"
(Streamlit in the worker, the engine in ``viz``) it covers what those modules import in turn.

- ``viz`` imports neither Streamlit nor the engine: only ``nasviz.viz`` itself and the plain value
  modules in :data:`VIZ_MAY_IMPORT`, transitively.
- ``spaces`` import neither kernels, objectives nor the table builder (``nasviz.tabulate``).
- ``kernels`` do not import ``gp`` (the PSD repair both use lives below them, ``nasviz.linalg``).
- The worker process (``nasviz.workers``) never imports Streamlit, transitively.
- Pages (``pages/*.py``, ``app.py``) import only ``nasviz.dashboard`` and ``nasviz.viz`` from the project
  (what they need of the engine, ``nasviz.dashboard.engine`` lists).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from import_graph import PACKAGE, REPO, _import_nodes, import_graph, module_name  # tests/helpers

#: Modules outside ``nasviz.viz`` that ``viz`` may import: plain values with no engine behaviour
#: (the labelled DAG :class:`nasviz.arch.Architecture` with its canonical form, number formatting).
VIZ_MAY_IMPORT = frozenset({"nasviz", "nasviz.arch", "nasviz.arch_canonical", "nasviz.rounding"})


pytestmark = pytest.mark.slow  # building the import graph takes about a second


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _external_imports(path: Path) -> set[str]:
    """Top-level names of the packages outside ``nasviz`` that ``path`` imports (absolute imports)."""
    names: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names - {"nasviz"}


def _external() -> dict[str, set[str]]:
    return {module_name(p): _external_imports(p) for p in PACKAGE.rglob("*.py")}


def reachable(roots: set[str]) -> set[str]:
    """Every ``nasviz`` module that importing ``roots`` imports, the roots included."""
    graph = import_graph()
    seen, todo = set(roots), list(roots)
    while todo:
        for target in graph[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def modules_of(package: str) -> set[str]:
    return {m for m in import_graph() if _under(m, package)}


def offending_edges(package: str, forbidden: tuple[str, ...]) -> list[str]:
    """``a -> b`` for every module ``a`` of ``package`` importing a module ``b`` under ``forbidden``."""
    graph = import_graph()
    return sorted(f"{a} -> {b}" for a in modules_of(package) for b in graph[a]
                  if any(_under(b, f) for f in forbidden))


def test_reachable_follows_imports_transitively():
    # nasviz.kernels.base imports nasviz.linalg, which imports nothing of the project's but itself
    assert {"nasviz.kernels.base", "nasviz.linalg"} <= reachable({"nasviz.kernels.base"})
    assert offending_edges("nasviz.kernels", ("nasviz.linalg",))  # the check can fail


def test_viz_imports_neither_streamlit_nor_the_engine():
    found = reachable(modules_of("nasviz.viz"))
    engine = sorted(m for m in found if not _under(m, "nasviz.viz") and m not in VIZ_MAY_IMPORT)
    assert engine == [], f"nasviz.viz reaches engine modules: {engine}"
    external = _external()
    streamlit = sorted(m for m in found if "streamlit" in external[m])
    assert streamlit == [], f"nasviz.viz reaches Streamlit through {streamlit}"


def test_spaces_import_neither_kernels_objectives_nor_tabulate():
    edges = offending_edges("nasviz.spaces", ("nasviz.kernels", "nasviz.objectives", "nasviz.tabulate"))
    assert edges == [], f"spaces import what builds on them: {edges}"


def test_kernels_do_not_import_the_gp():
    edges = offending_edges("nasviz.kernels", ("nasviz.gp",))
    assert edges == [], f"kernels import the GP: {edges}"


def test_the_worker_never_imports_streamlit():
    external = _external()
    found = sorted(m for m in reachable(modules_of("nasviz.workers")) if "streamlit" in external[m])
    assert found == [], f"the worker process imports Streamlit through {found}"


def _page_imports(path: Path) -> set[str]:
    """The ``nasviz`` modules a page names in its imports (``from nasviz import viz``: ``nasviz.viz``)."""
    names: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names if _under(a.name, "nasviz"))
        elif node.level == 0 and node.module and _under(node.module, "nasviz"):
            if node.module == "nasviz":
                names.update(f"nasviz.{a.name}" for a in node.names)
            else:
                names.add(node.module)
    return names


PAGES = sorted((REPO / "pages").glob("*.py")) + [REPO / "app.py"]


def test_pages_import_only_the_dashboard_and_viz():
    bad = sorted(f"{p.relative_to(REPO)}: {m}" for p in PAGES if p.exists() for m in _page_imports(p)
                 if not (_under(m, "nasviz.dashboard") or _under(m, "nasviz.viz")))
    assert bad == [], f"pages import the engine directly (go through nasviz.dashboard): {bad}"


def test_third_party_names_are_read():
    assert "numpy" in _external_imports(PACKAGE / "linalg.py")
