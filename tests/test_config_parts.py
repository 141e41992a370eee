"""Issue 49: a search's settings are one typed, frozen configuration made of parts (the objective,
the strategy with its BO parts, the run plan), written flat to the store and read back losslessly."""

from __future__ import annotations

import json

import pytest

from nasviz.config import FLAT, ObjectiveSettings, RunPlan, SearchConfig, StrategySettings
from nasviz.errors import ConfigError
from nasviz.strategies.bo_parts import BOParts

#: The flat keys the run store has kept since before the parts, in their order.
STORED_KEYS = ["objective", "space", "strategy", "strategy_options", "budget", "batch_size", "seed", "metric", "table",
               "dataset", "train_seed", "dataset_seed", "model_options", "training", "workers", "dask", "step_delay",
               "data_folder", "overlap", "fidelity", "cost_budget", "early_stopping", "kernel"]

CONFIGS = {
    "table BO": dict(table="t.csv", strategy="bo-wl-ei", strategy_options={"n_init": 4, "pool_size": 50}, budget=30,
                     seed=3, metric="acc", step_delay=0.5),
    "training": dict(objective="train", dataset="digits", strategy="bo-tw2g-ucb", budget=6, seed=1, train_seed=2,
                     dataset_seed=5, model_options={"channels": 8}, training={"epochs": 2, "lr": 0.01}, workers=2,
                     early_stopping="median", overlap=True),
    "fidelity": dict(table="t.csv", strategy="hyperband", fidelity="auto", cost_budget=12.5, budget=40),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_a_config_goes_to_the_store_flat_and_comes_back_as_it_was(name):
    config = SearchConfig.create(**CONFIGS[name])
    stored = json.loads(json.dumps(config.to_dict()))  # what the run store writes and reads
    assert list(stored) == STORED_KEYS == list(FLAT)
    back = SearchConfig.from_dict(stored)
    assert back == config and back.to_dict() == config.to_dict()
    assert isinstance(back.objective, ObjectiveSettings) and isinstance(back.strategy, StrategySettings)
    assert isinstance(back.run, RunPlan)


def test_the_settings_are_read_from_their_parts():
    config = SearchConfig.create(**CONFIGS["training"])
    assert (config.objective.kind, config.objective.metric, dict(config.objective.training)) == \
        ("train", "valid_accuracy", {"epochs": 2, "lr": 0.01})
    assert (config.run.budget, config.run.workers, config.run.overlap) == (6, 2, True)
    assert (config.strategy.name, config.strategy.kernel) == ("bo-tw2g-ucb", "tw2g")
    assert not hasattr(config, "budget") and not hasattr(config, "kernel")  # one path: no flat aliases


def test_a_bo_strategy_part_gives_its_typed_bo_parts():
    config = SearchConfig.create(table="t.csv", strategy="bo-wl-ei", strategy_options={"n_init": 4}, batch_size=1)
    parts = config.strategy.bo_parts(config.run.batch_size)
    assert isinstance(parts, BOParts)
    assert (parts.model.kernel, parts.acquisition.acquisition, parts.run.n_init, parts.run.name) == \
        ("wl", "ei", 4, "bo-wl-ei")
    assert parts.batch.batch_size == 1
    assert SearchConfig.create(table="t.csv", strategy="random").strategy.bo_parts() is None


def test_each_part_names_the_setting_that_is_wrong():
    for settings, message in [(dict(table="t.csv", budget=0), "budget must be at least 1"),
                              (dict(objective="train", fidelity="auto"), "fidelity applies to table searches"),
                              (dict(table="t.csv", cost_budget=-1), "cost_budget must be a positive"),
                              (dict(table="t.csv", workers=2), "workers / dask apply to training objectives"),
                              (dict(table="t.csv", colour="red"), "unknown search setting"),
                              (dict(objective="lookup", table="t.csv"), "objective must be")]:
        with pytest.raises(ConfigError, match=message):
            SearchConfig.create(**settings)


def test_a_stored_run_hands_back_its_config_typed(tmp_path):
    from nasviz.store import RunStore

    store = RunStore(tmp_path / "runs.sqlite")
    config = SearchConfig.create(**CONFIGS["table BO"])
    run = store.get_run(store.create_run({**config.to_dict(), "skipped_rows": {"count": 0, "first": []}}))
    assert run.search == config and run.search is run.search  # read once
    assert run.config["skipped_rows"] == {"count": 0, "first": []}  # what the store adds stays plain data
    assert run.to_dict()["config"] == run.config  # the record's plain form is unchanged


def test_a_config_this_installation_cannot_read_is_shown_as_stored(tmp_path):
    """An older config (no kernel stored) naming a plugin strategy that is no longer installed
    cannot be validated: the pages read what was stored, with the parts' defaults elsewhere."""
    from nasviz.dashboard.explorer import comparison
    from nasviz.dashboard.watching import RunWatcher
    from nasviz.store import RunStore

    old = {"objective": "table", "table": "t.csv", "space": "nb201", "strategy": "gone-plugin", "budget": 9,
           "seed": 4, "metric": "acc", "strategy_options": {"depth": 3}}
    with pytest.raises(ConfigError, match="gone-plugin"):
        SearchConfig.from_dict(old)
    path = tmp_path / "runs.sqlite"
    run = RunStore(path).get_run(RunStore(path).create_run(old))
    search = run.search
    assert (search.strategy.name, dict(search.strategy.options), search.strategy.kernel) == ("gone-plugin", {"depth": 3}, None)
    assert (search.space, search.run.budget, search.run.seed, search.objective.metric) == ("nb201", 9, 4, "acc")
    watcher = RunWatcher(path, run.id).refresh()
    assert (watcher.strategy, watcher.model_kernel, watcher.space_name, watcher.optimum()) == ("gone-plugin", None, "nb201", None)
    (curve,) = comparison.run_curves(path, [run.id])
    assert (curve.strategy, curve.seed, curve.budget, curve.space) == ("gone-plugin", 4, 9, "nb201")
