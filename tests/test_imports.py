"""No import cycles: the ``nasviz.gp`` package strictly, the rest of ``nasviz`` against a list.

The import graph is built statically with :mod:`ast` from every module of the ``nasviz``
package: an edge ``a -> b`` for every ``import`` / ``from ... import`` statement in ``a`` that
names ``b``, wherever it stands (a function-level import that only defers a cycle still counts),
except under ``if TYPE_CHECKING:``, which never runs. ``from pkg import name`` points at the
submodule ``pkg.name`` if there is one, else at the module a lazily loading package maps
``name`` to (its ``_EXPORTS`` table, PEP 562), else at ``pkg``. Importing ``pkg.mod`` also runs
``pkg/__init__``, so an edge to each parent package is added too, except to packages that
contain the importer (those are initialised before it, so they never close a cycle at run time).
Imports by computed name (``importlib.import_module(name)``, as the kernel registry does) are not
seen; importing each ``nasviz.gp`` module first in a fresh interpreter catches what that misses.

Cycles are the strongly connected components of that graph with more than one module. None may
touch ``nasviz.gp``; every other one must lie within a cycle listed in :data:`KNOWN_CYCLES`
(remove entries as they are fixed; a new cycle fails the test).
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path
from typing import Iterable, Mapping

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "nasviz"

#: Import cycles outside ``nasviz.gp`` that predate this test, to be removed as they are fixed.
#: A cycle found later passes while it lies within one of these sets.
KNOWN_CYCLES: list[frozenset[str]] = []


def module_name(path: Path) -> str:
    """``nasviz/gp/model.py`` -> ``nasviz.gp.model``; a package's ``__init__.py`` -> the package."""
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST):
    """Every Import / ImportFrom node, skipping the bodies of ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _lazy_exports(tree: ast.Module) -> dict[str, str]:
    """A package's ``_EXPORTS = {name: module}`` table (PEP 562 lazy loading), if it has one."""
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "_EXPORTS" and node.value is not None:
            return ast.literal_eval(node.value)
    return {}


@functools.cache
def import_graph() -> dict[str, frozenset[str]]:
    """``module -> {modules it imports}`` over the ``nasviz`` package (see the module docstring)."""
    trees = {module_name(p): ast.parse(p.read_text(), filename=str(p)) for p in sorted(PACKAGE.rglob("*.py"))}
    packages = {m for m, p in ((module_name(p), p) for p in PACKAGE.rglob("__init__.py"))}
    lazy = {m: _lazy_exports(trees[m]) for m in packages}

    def known(name: str) -> str | None:
        while name and name not in trees:  # `import a.b.c` where c is a function: a.b
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in trees}
    for mod, tree in trees.items():
        base_pkg = mod if mod in packages else mod.rpartition(".")[0]
        for node in _import_nodes(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                pkg = node.module or ""
                if node.level:
                    anchor = base_pkg.split(".")[: len(base_pkg.split(".")) - node.level + 1]
                    pkg = ".".join(anchor + ([pkg] if pkg else []))
                for alias in node.names:
                    full = f"{pkg}.{alias.name}"
                    targets.append(full if full in trees else lazy.get(pkg, {}).get(alias.name, pkg))
            for target in filter(None, map(known, targets)):
                graph[mod].add(target)
                parent = target.rpartition(".")[0]
                while parent:  # importing a.b.c runs a/__init__ and a/b/__init__
                    if not (mod == parent or mod.startswith(parent + ".")):
                        graph[mod].add(parent)
                    parent = parent.rpartition(".")[0]
        graph[mod].discard(mod)
    return {m: frozenset(t) for m, t in graph.items()}


def cycles(graph: Mapping[str, Iterable[str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative) of
    ``graph`` (module -> the modules it imports)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [frozenset({"a", "b", "c"})]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.slow
def test_the_graph_sees_lazy_and_function_level_imports():
    graph = import_graph()
    assert "nasviz.gp.model" in graph["nasviz.strategies.bo"]  # `from nasviz.gp import GaussianProcess`
    assert "nasviz.gp.linalg" in graph["nasviz.kernels.base"]
    assert "nasviz.interpret" in graph["nasviz.strategies.bo"]  # imported inside a method
    assert "nasviz.kernels.base" not in graph["nasviz.gp.posterior"]  # only under TYPE_CHECKING


def _touches_gp(cycle: frozenset[str]) -> bool:
    return any(m == "nasviz.gp" or m.startswith("nasviz.gp.") for m in cycle)


@pytest.mark.slow
def test_gp_package_has_no_import_cycle():
    touching = [sorted(c) for c in cycles(import_graph()) if _touches_gp(c)]
    assert touching == [], f"import cycles through nasviz.gp: {touching}"


def test_no_new_import_cycles_elsewhere_in_nasviz():
    elsewhere = [c for c in cycles(import_graph()) if not _touches_gp(c)]
    new = [sorted(c) for c in elsewhere if not any(c <= known for known in KNOWN_CYCLES)]
    assert new == [], f"new import cycles (fix them, or list them in KNOWN_CYCLES with a reason): {new}"


GP_MODULES = sorted(module_name(p) for p in (PACKAGE / "gp").glob("*.py"))


@pytest.mark.slow
@pytest.mark.parametrize("module", [*GP_MODULES, "nasviz.kernels.base", "nasviz.acquisition", "nasviz.batch"])
def test_module_imports_on_its_own(module):
    """Each module imported first, in a fresh interpreter: a cycle that the static graph missed
    (a dynamic import) would fail here with a partially initialised module."""
    subprocess.run([sys.executable, "-c", f"import {module}"], cwd=REPO, check=True, capture_output=True, timeout=120)


def test_lazy_exports_resolve():
    import nasviz.gp as gp

    for name in gp.__all__:
        assert getattr(gp, name) is not None
    with pytest.raises(AttributeError, match="no attribute"):
        gp.not_a_name  # noqa: B018


@pytest.mark.slow
def test_the_first_page_does_not_import_torch_pot_or_scipy_stats():
    """What the sidebar and the Search form need (the default table, which strategies fit the
    space, the figures module) must not import torch, POT (which imports torch) or scipy.stats:
    together about three seconds of a cold first page on a small machine. The solvers are
    imported when a search or a figure first needs them."""
    code = (
        "import sys\n"
        "import nasviz.dashboard.sidebar, nasviz.viz\n"
        "from nasviz.components import kernels_for, strategies_for\n"
        "from nasviz.dashboard import sources\n"
        "for space in ('nb201', 'nb101', 'layers', 'cnn'):\n"
        "    strategies_for(space), kernels_for(space)\n"
        "path = sources.default_table_path()\n"
        "if path is not None:\n"
        "    sources.table_from_path(path)\n"
        "print(sorted(m for m in ('torch', 'ot', 'scipy.stats') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "[]"
