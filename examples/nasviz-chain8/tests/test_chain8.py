"""The example plugin's own test: the space keeps nasviz's contract, and once installed it is
registered through its entry point."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz_chain8 import Chain8Space, write_synthetic_table


def test_strings_parameters_and_moves_agree():
    space, rng = Chain8Space(), np.random.default_rng(0)
    for arch in space.sample(rng, 20):
        assert space.parse(space.format(arch)) == arch
        assert space.from_parameters(space.to_parameters(arch)) == arch
        neighbours = space.neighbours(arch)
        assert len(neighbours) == 16 and len(set(neighbours)) == 16
        assert space.mutate(arch, rng) in neighbours
    assert space.size == 6561 and len(set(space.enumerate())) == 6561
    with pytest.raises(ValueError):
        space.parse("conv3x3-maxpool")


def test_installed_it_is_a_registered_space_with_its_origin():
    from nasviz.components import SPACES, kernels_for, strategies_for

    entry = SPACES.get("chain8")
    assert entry.origin.startswith("entry point chain8 (nasviz-chain8==")
    assert {"tw2g-hamming", "wl", "slots"} <= set(kernels_for("chain8"))
    assert {"bo-tw2g-hamming-ei", "bo-wl-ei", "optuna-tpe"} <= set(strategies_for("chain8"))


def test_the_synthetic_table_loads_with_its_schema(tmp_path):
    from nasviz.objectives import load_table

    path = tmp_path / "chain8.csv"
    assert write_synthetic_table(str(path)) == 6561
    table = load_table(path, space="chain8")
    assert table.metrics == ["valid_accuracy", "test_accuracy", "latency_ms"] and len(table) == 6561
    assert table.direction("latency_ms") == "minimise"
