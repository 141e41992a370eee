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
