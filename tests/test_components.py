"""The catalogue: the README's component tables are generated from the registries and current."""

from __future__ import annotations

from pathlib import Path

import pytest

from nasviz.components import CATALOGUE, README_BEGIN, README_END, catalogue_markdown, readme_with_catalogue

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_component_tables_are_the_registries():
    text = README.read_text(encoding="utf-8")
    assert readme_with_catalogue(text) == text, (
        "the README's component tables are out of date: run `python -m nasviz components --readme README.md`")


def test_every_registered_component_is_in_the_tables():
    tables = catalogue_markdown()
    for _, registry in CATALOGUE:
        for name in registry.names():
            assert f"| `{name}` |" in tables, f"{registry.kind} {name!r} is missing from the generated tables"


def test_a_readme_without_the_section_is_refused():
    with pytest.raises(ValueError, match="no component section"):
        readme_with_catalogue("# a README\n")
    stale = f"intro\n{README_BEGIN}\n| old | table |\n{README_END}\noutro\n"
    fresh = readme_with_catalogue(stale)
    assert "| old | table |" not in fresh and fresh.startswith("intro\n") and fresh.endswith(f"{README_END}\noutro\n")


def test_the_declared_reads_of_every_kernel_match_its_class():
    """``kernel_reads`` answers from a table for the built-in kernels (no kernel module imported
    to offer the kernels of a space); the table must say what each class says."""
    from nasviz import components

    for name in components.KERNELS.names():
        assert components.kernel_reads(name) == frozenset(components.KERNELS.get(name).load().reads), name


def test_offering_the_strategies_of_a_space_imports_no_kernel_module():
    import subprocess
    import sys

    script = ("import sys\nfrom nasviz import components as c\n"
              "c.strategies_for('nb201'); c.kernels_for('nb201'); c.problems('nb201', 'bo-tw2g-hamming-ei', {}, 1)\n"
              "print(sorted(m for m in sys.modules if m.startswith('nasviz.kernels.') or m in ('scipy.spatial', 'grakel')))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"
