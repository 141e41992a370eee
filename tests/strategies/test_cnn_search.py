"""Every strategy that fits the CNN space searches it for real; BFS over morphisms (paper 003 Sec. 5)."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.components import default_batch_size, strategies_for
from nasviz.objectives.base import Evaluation
from nasviz.objectives.datasets import load_dataset
from nasviz.objectives.training import TrainingObjective
from vision_fixtures import write_mnist_folder
from nasviz.runner import run_search
from nasviz.spaces import get_space
from nasviz.state import StepState
from nasviz.strategies.factory import make_strategy

S = get_space("cnn")
pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    root = write_mnist_folder(tmp_path_factory.mktemp("mnist"), n_train=60, n_test=20, size=8)
    return load_dataset("mnist", folder=str(root))


def test_the_papers_strategies_fit_the_cnn_space():
    fitting = strategies_for("cnn")
    assert {"nasbot", "autokeras", "bfs-morph", "evolution", "random"} <= set(fitting)
    assert "bfs-morph" not in strategies_for("nb201")  # no morphisms there


@pytest.mark.slow
@pytest.mark.parametrize("name", strategies_for("cnn"))
def test_every_strategy_that_fits_runs_a_short_cnn_search(images, name):
    objective = TrainingObjective(S, images, training={"epochs": 1, "patience": 1, "batch_size": 32}, device="cpu")
    batch = default_batch_size(name)
    options = {"n_init": 2} if make_strategy(name, space=S, batch_size=batch).__dict__.get("n_init") else {}
    strategy = make_strategy(name, space=S, seed=0, batch_size=batch, **options)
    if hasattr(strategy, "attach"):
        strategy.attach(objective)
    snaps = []
    result = run_search(strategy, objective, 2 + batch, format_arch=S.format, batch_size=batch, on_step=snaps.append)
    assert len(result.evaluations) == 2 + batch and all(S.contains(e.arch) for e in result.evaluations)
    assert sum(e.ok for e in result.evaluations) >= 2 and result.best_value is not None
    StepState.from_dict(snaps[-1].strategy)  # every step's state is stored in its typed form


@pytest.mark.slow
def test_bfs_expands_level_by_level_and_warm_starts_children(images):
    objective = TrainingObjective(S, images, training={"epochs": 1, "patience": 1, "batch_size": 32}, device="cpu")
    strategy = make_strategy("bfs-morph", space=S, seed=0, n_init=2)
    strategy.attach(objective)
    first = strategy.ask(2)
    assert first == S.initial_pool()[:2] and strategy.state().phase == "init"
    strategy.tell(objective.evaluate(first))
    queued = [a for a, depth in strategy.queue]
    assert all(depth == 1 for _, depth in strategy.queue) and len(queued) > 50
    # breadth first: every child of the first network before any of the second
    parents = [strategy.lineage[a][0] for a in queued]
    assert parents == sorted(parents, key=first.index)
    child = strategy.ask(1)[0]
    assert strategy.lineage[child][0] == first[0] and strategy.state().notes["queue"] == len(strategy.queue)
    ev = objective.evaluate([child])[0]
    strategy.tell([ev])
    assert ev.info["warm_start"] == S.format(first[0]) and S.format(child) in strategy.warm_started


def test_bfs_without_a_queue_proposes_random_networks_and_skips_failures():
    strategy = make_strategy("bfs-morph", space=S, seed=0, n_init=1)
    first = strategy.ask(1)
    more = strategy.ask(2)  # the first network is still "training": nothing to expand yet
    assert strategy.state().notes["origin"] == ["random", "random"] and not set(more) & set(first)
    strategy.tell([Evaluation(first[0], None, 1.0, "failed", "diverged")])
    assert not strategy.queue  # a failed network is not expanded
    with pytest.raises(ValueError, match="morphisms"):
        make_strategy("bfs-morph", space="nb201")
