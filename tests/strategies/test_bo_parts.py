"""The parts BayesianOptimisation is composed of (nasviz.strategies.bo_parts, issue 49): one place
for each default, validated once when created, built from the registry's flat options."""

from __future__ import annotations

import dataclasses

import pytest

from nasviz.components import STRATEGIES
from nasviz.errors import ConfigError
from nasviz.spaces import nb201
from nasviz.strategies.bo import bayesian_optimisation
from nasviz.strategies.bo_parts import (PARTS, AcquisitionPart, BatchPart, BOParts, ModelPart, PoolPart, RunSettings,
                                        parts_from_options)
from nasviz.strategies.factory import make_strategy


def _field_defaults() -> dict[str, object]:
    return {f.name: f.default for part in PARTS.values() for f in dataclasses.fields(part)}


def test_every_registered_option_is_the_field_of_exactly_one_part():
    names = [f.name for part in PARTS.values() for f in dataclasses.fields(part)]
    assert len(names) == len(set(names))
    assert {o.name for o in STRATEGIES.get("bo").options} <= set(names)


def test_the_registry_reads_its_defaults_from_the_parts():
    # Entry.defaults() reads the factory's signature: the parts' defaults, not a second copy
    entry = STRATEGIES.get("bo")
    own = _field_defaults()
    assert entry.defaults() == {o.name: entry.preset.get(o.name, own[o.name]) for o in entry.options}
    assert STRATEGIES.get("bo-tw2g-hamming-ei").defaults()["min_noise"] == 1e-3  # the preset wins
    assert STRATEGIES.get("bo-tw2g-hamming-ei").defaults()["n_init"] == RunSettings().n_init == 10


def test_flat_options_go_to_the_part_that_names_them():
    parts = parts_from_options({"kernel": "wl", "beta0": 2.0, "pool_size": 7, "batch_size": 3, "n_init": 4})
    assert parts == BOParts(model=ModelPart(kernel="wl"), acquisition=AcquisitionPart(beta0=2.0),
                            pool=PoolPart(pool_size=7), batch=BatchPart(batch_size=3), run=RunSettings(n_init=4))
    assert parts_from_options({}) == BOParts()
    with pytest.raises(TypeError, match="'beta'"):
        parts_from_options({"beta": 1.0})
    strategy = make_strategy("bo-wl-ei", space=nb201.SPACE, n_init=5)
    assert strategy.parts.run.n_init == 5 and strategy.parts.model.kernel == "wl"
    assert strategy.name == "bo-wl-ei"
    built = bayesian_optimisation(nb201.SPACE, 0, kernel="tw1g", batch="kdpp", batch_size=2)
    assert built.name == "bo-tw1g-ucb-evolution-kdpp2"


@pytest.mark.parametrize(("part", "values", "message"), [
    (PoolPart, {"pool_size": 0}, "pool_size must be at least 1"),
    (PoolPart, {"top_parents": 0}, "top_parents must be at least 1"),
    (PoolPart, {"local_search": -1}, "local_search must be >= 0"),
    (PoolPart, {"table_neighbours": "far"}, "table_neighbours must be one of"),
    (BatchPart, {"batch_size": 0}, "batch_size must be at least 1"),
    (BatchPart, {"quality": "variance"}, "quality must be one of"),
    (RunSettings, {"n_init": 0}, "n_init must be at least 1"),
    (RunSettings, {"dedupe": "fuzzy"}, "dedupe must be one of"),
    (AcquisitionPart, {"kappa": -1.0}, "kappa must be >= 0"),
    (AcquisitionPart, {"stall_boost": 0.5}, "stall_boost >= 1"),
    (AcquisitionPart, {"delta": 1.0}, "0 < delta < 1"),
    (ModelPart, {"min_noise": 3.0}, "0 < min_noise <= 2"),
    (ModelPart, {"failures": "retry"}, "failures must be one of"),
])
def test_a_part_refuses_what_cannot_run_when_it_is_created(part, values, message):
    with pytest.raises(ConfigError, match=message):
        part(**values)


def test_parts_are_frozen_and_normalised():
    pool = PoolPart(pool_size="50", pool_options={"max_candidates": 5})  # type: ignore[arg-type]
    assert pool.pool_size == 50 and pool.pool_options == {"max_candidates": 5}
    with pytest.raises(TypeError):
        pool.pool_options["max_candidates"] = 6  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        pool.pool_size = 5  # type: ignore[misc]


def test_a_pool_the_space_cannot_feed_is_refused():
    with pytest.raises(ConfigError, match="'nasbot-ea' needs the modifiers representation"):
        PoolPart(pool="nasbot-ea").check(nb201.SPACE)
    PoolPart(table_neighbours="nearest").check(nb201.SPACE)  # NB201 has categorical parameters
