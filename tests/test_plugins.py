"""Plugins: components from outside the package, loaded the same way in every process, with their
origin recorded; a broken plugin is one line, never a crash (issue 48, findings 1 and 7).

The subprocess tests run ``python -m nasviz`` as a user would, with a plugin module in a folder of
their own (``NASVIZ_PLUGINS`` + ``PYTHONPATH``); the entry-point route is tested with the example
package in ``tests/test_example_plugin.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nasviz import plugins
from nasviz.components import SPACES
from nasviz.errors import ConfigError
from nasviz.registry import BUILT_IN, Entry, Registry

REPO = Path(__file__).resolve().parents[1]

#: A plugin module: a chain space of 3 positions x 2 operations, registered on import. Run as a
#: script it registers itself as ``__main__`` and then hands over to the CLI, which imports it again
#: by name through NASVIZ_PLUGINS.
CHAIN_MODULE = textwrap.dedent('''
    import itertools, sys
    import numpy as np
    from nasviz.arch import INPUT, OUTPUT, Architecture
    from nasviz.components import SPACES
    from nasviz.registry import Entry
    from nasviz.spaces.base import LABELLED_DAG, OPERATION_SLOTS, SearchSpace

    OPS = ("a", "b")

    class TinyChain(SearchSpace):
        name = "tiny-chain"
        description = "chains of three operations a / b"
        representations = frozenset({LABELLED_DAG, OPERATION_SLOTS})

        def from_slots(self, ops):
            labels = (INPUT, *ops, OUTPUT)
            return Architecture(labels, tuple((i, i + 1) for i in range(len(labels) - 1)))
        def slots(self, arch): return arch.labels[1:-1]
        def slot_names(self): return ("p0", "p1", "p2")
        def slot_choices(self): return OPS
        def parse(self, text): return self.from_slots(str(text).split("-"))
        def format(self, arch): return "-".join(self.slots(arch))
        def sample(self, rng, n=1): return [self.from_slots(rng.choice(OPS, 3)) for _ in range(n)]
        def neighbours(self, arch):
            ops = list(self.slots(arch))
            return [self.from_slots(ops[:k] + [o] + ops[k + 1:]) for k in range(3) for o in OPS if o != ops[k]]
        def mutate(self, arch, rng):
            options = self.neighbours(arch)
            return options[int(rng.integers(len(options)))]
        @property
        def size(self): return 8
        def enumerate(self): return (self.from_slots(o) for o in itertools.product(OPS, repeat=3))

    SPACES.register(Entry(TinyChain.name, TinyChain.description, TinyChain))

    if __name__ == "__main__":
        import nasviz.cli
        sys.exit(nasviz.cli.main(sys.argv[1:]))
''')


def _nasviz(args, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != plugins.PLUGINS_ENV}
    environment.update(env)
    return subprocess.run([sys.executable, *args], cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture()
def plugin_folder(tmp_path) -> Path:
    (tmp_path / "tinychain.py").write_text(CHAIN_MODULE)
    (tmp_path / "broken.py").write_text("raise RuntimeError('this plugin is broken\\non two lines')\n")
    rows = ["arch,score"] + [f"{a}-{b}-{c},{(a == 'a') + 2 * (b == 'a') + 3 * (c == 'b')}"
                             for a in "ab" for b in "ab" for c in "ab"]
    (tmp_path / "chains.csv").write_text("\n".join(rows) + "\n")
    return tmp_path


@pytest.mark.slow
def test_a_plugin_module_reaches_the_cli_choices_and_components_lists_its_origin(plugin_folder):
    env = {plugins.PLUGINS_ENV: "tinychain", "PYTHONPATH": str(plugin_folder)}
    listed = _nasviz(["-m", "nasviz", "components"], plugin_folder, **env)
    assert listed.returncode == 0, listed.stderr
    assert "tiny-chain  chains of three operations a / b  [NASVIZ_PLUGINS module tinychain]" in listed.stdout
    assert "nb201" in listed.stdout and "[built-in]" not in listed.stdout  # built-ins say nothing
    run = _nasviz(["-m", "nasviz", "run", "--space", "tiny-chain", "--table", "chains.csv", "--strategy",
                   "bo-wl-ei", "--budget", "6", "--n-init", "3", "--json"], plugin_folder, **env)
    assert run.returncode == 0, run.stderr
    assert '"regret"' in run.stdout
    without = _nasviz(["-m", "nasviz", "run", "--space", "tiny-chain", "--table", "chains.csv"], plugin_folder)
    assert without.returncode == 2 and "invalid choice: 'tiny-chain'" in without.stderr  # argparse's own message


@pytest.mark.slow
def test_a_module_run_as_main_and_imported_by_name_registers_once(plugin_folder):
    """Finding 7: the module registers its space as ``__main__`` and, through NASVIZ_PLUGINS, again
    by name; the second registration is the same component and a no-op, not a refusal."""
    env = {plugins.PLUGINS_ENV: "tinychain", "PYTHONPATH": str(plugin_folder)}
    done = _nasviz(["tinychain.py", "run", "--space", "tiny-chain", "--table", "chains.csv", "--budget", "4",
                    "--json"], plugin_folder, **env)
    assert done.returncode == 0, done.stderr
    assert "already registered" not in done.stderr and "warning" not in done.stderr


@pytest.mark.slow
def test_a_broken_plugin_is_one_line_naming_it_and_nothing_else_stops(plugin_folder):
    env = {plugins.PLUGINS_ENV: "broken,tinychain,no_such_module", "PYTHONPATH": str(plugin_folder)}
    listed = _nasviz(["-m", "nasviz", "components"], plugin_folder, **env)
    assert listed.returncode == 0
    warnings = [line for line in listed.stderr.splitlines() if line.strip()]
    assert warnings == [
        "warning: plugin 'broken' (NASVIZ_PLUGINS) was skipped: RuntimeError: this plugin is broken on two lines",
        "warning: plugin 'no_such_module' (NASVIZ_PLUGINS) was skipped: ModuleNotFoundError: No module named "
        "'no_such_module'",
    ]
    assert "Traceback" not in listed.stderr and "tiny-chain" in listed.stdout
    assert "Plugins that could not be loaded:\n  plugin 'broken' (NASVIZ_PLUGINS)" in listed.stdout


def test_registering_the_same_component_twice_is_a_no_op_and_another_one_is_refused():
    registry = Registry("thing")
    first = registry.register(Entry("x", "a thing", "nasviz.spaces.nb201:NB201Space"))
    assert first.origin == BUILT_IN
    assert registry.register(Entry("x", "a thing", "nasviz.spaces.nb201:NB201Space")) is first
    with pytest.raises(ConfigError, match=r"'x' is already registered \(built-in\); module tests\.\S+ registers another"):
        registry.register(Entry("x", "another thing", _Factory))
    assert registry.get("x") is first


class _Factory:
    pass


def test_entries_record_where_they_came_from():
    assert SPACES.get("nb201").origin == BUILT_IN
    registry = Registry("thing")
    assert registry.register(Entry("mine", "mine", _Factory)).origin == f"module {__name__}"
    with plugins.registering_from("entry point mine (pkg==1.0)"):
        assert registry.register(Entry("theirs", "theirs", _Factory)).origin == "entry point mine (pkg==1.0)"


def test_an_entry_point_may_name_a_class_an_entry_or_a_module_and_nothing_else():
    registry = Registry("thing")
    plugins._register(_Factory, "from-class", registry, "entry point from-class (pkg==1)")
    assert registry.get("from-class").factory is _Factory  # no name or description: the entry point's
    plugins._register(Entry("from-entry", "an entry", _Factory), "ignored", registry, "entry point e (pkg==1)")
    assert registry.get("from-entry").origin == "entry point e (pkg==1)"
    with pytest.raises(TypeError, match="names a int; a thing entry point names a class"):
        plugins._register(3, "three", registry, "entry point three (pkg==1)")


@pytest.mark.slow
def test_the_page_shows_a_broken_plugin_once_as_text(monkeypatch, tmp_path):
    """The Streamlit process loads plugins in its sidebar; one that fails is a line of plain text
    (no traceback, no exception on the page)."""
    from streamlit.testing.v1 import AppTest

    from tests_app_helpers import APP

    monkeypatch.setenv("NASVIZ_STORE", str(tmp_path / "store.sqlite"))
    monkeypatch.setenv(plugins.PLUGINS_ENV, "no_such_plugin_module")
    plugins.reset_for_tests()
    try:
        at = AppTest.from_file(APP, default_timeout=120).run()
        assert not at.exception
        assert [e.label for e in at.sidebar.expander] [:1] == ["1 plugin(s) could not be loaded and are skipped"]
        texts = [t.value for t in at.sidebar.text]
        assert texts == ["plugin 'no_such_plugin_module' (NASVIZ_PLUGINS) was skipped: ModuleNotFoundError: No module "
                         "named 'no_such_plugin_module'"]
        assert not any("Traceback" in t for t in texts)
    finally:
        monkeypatch.delenv(plugins.PLUGINS_ENV)
        plugins.reset_for_tests()
