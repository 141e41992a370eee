"""No import cycles: the ``nasviz.gp`` package strictly, the rest of ``nasviz`` against a list.

The import graph (``tests/helpers/import_graph.py``) is built statically with :mod:`ast` from every module of the ``nasviz``
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

import subprocess
import sys

import pytest
from import_graph import PACKAGE, REPO, cycles, import_graph, module_name  # tests/helpers

#: Import cycles outside ``nasviz.gp`` that predate this test, to be removed as they are fixed.
#: A cycle found later passes while it lies within one of these sets.
KNOWN_CYCLES: list[frozenset[str]] = []


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [frozenset({"a", "b", "c"})]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.slow
def test_the_graph_sees_lazy_and_function_level_imports():
    graph = import_graph()
    assert "nasviz.gp.model" in graph["nasviz.strategies.bo"]  # `from nasviz.gp import GaussianProcess`
    assert "nasviz.linalg" in graph["nasviz.kernels.base"]
    assert "nasviz.interpret" in graph["nasviz.strategies.bo_step"]  # imported inside a function
    assert "nasviz.kernels.base" not in graph["nasviz.gp.posterior"]  # only under TYPE_CHECKING


def _touches_gp(cycle: frozenset[str]) -> bool:
    return any(m == "nasviz.gp" or m.startswith("nasviz.gp.") for m in cycle)


@pytest.mark.slow
def test_gp_package_has_no_import_cycle():
    touching = [sorted(c) for c in cycles(import_graph()) if _touches_gp(c)]
    assert touching == [], f"import cycles through nasviz.gp: {touching}"


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_search_on_a_table_from_the_command_line_does_not_import_torch(tmp_path):
    """``nasviz run`` on a table needs neither torch nor POT: building the command line's parser
    imported torch through ``nasviz export``'s formats (about a second of every command)."""
    import numpy as np

    from nasviz.spaces import nb201

    table = tmp_path / "cells.csv"
    cells = [nb201.format(a) for a in nb201.sample(np.random.default_rng(0), 30)]
    table.write_text("arch,acc\n" + "".join(f"{c},{60 + 0.37 * k:.2f}\n" for k, c in enumerate(cells)))
    code = (
        "import sys\n"
        "from nasviz.cli import main\n"
        f"assert main(['run', '--table', {str(table)!r}, '--strategy', 'random', '--budget', '5', '--json']) == 0\n"
        "print(sorted(m for m in ('torch', 'ot') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "[]"
