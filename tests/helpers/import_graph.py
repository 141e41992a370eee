"""The static import graph of the ``nasviz`` package (used by ``tests/test_imports.py`` and
``tests/test_layers.py``).

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
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Iterable, Mapping

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "nasviz"


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
