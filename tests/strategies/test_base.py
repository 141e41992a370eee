"""Shared strategy helpers: failed evaluations and outlying scores in the GP, acquisition caps."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.objectives.base import FAILED, Evaluation
from nasviz.spaces import mlp as L
from nasviz.strategies.autokeras import AutoKeras
from nasviz.strategies.base import robust_targets, with_failures
from nasviz.strategies.nasbot import nasbot


def test_with_failures_imputes_the_worst_target():
    a, b, c, d = L.initial_pool()[:4]
    archs, y = with_failures([a, b], [0.9, 0.7], [c, d])
    assert archs == [a, b, c, d]
    np.testing.assert_allclose(y, [0.9, 0.7, 0.7, 0.7])
    archs, y = with_failures([a], [0.5], [])
    assert archs == [a] and y.tolist() == [0.5]
    with pytest.raises(ValueError, match="at least one successful"):
        with_failures([], [], [c])


@pytest.mark.parametrize("make", [lambda: nasbot(L.SPACE, seed=0, n_init=3), lambda: AutoKeras(L.SPACE, seed=0, n_init=3)])
def test_model_based_strategies_fit_their_gp_on_failures_too(make):
    strategy = make()
    first = strategy.ask(3)
    strategy.tell([Evaluation(first[0], 0.9, 1.0), Evaluation(first[1], 0.8, 1.0),
                   Evaluation(first[2], None, 0.1, FAILED, "diverged: the training loss is inf")])
    strategy.ask(1)  # fits the GP
    assert first[2] in strategy.gp.train_archs and len(strategy.gp.train_archs) == 3
    assert first[2] not in [a for a, _ in strategy.observed]  # never an ancestor / incumbent


def test_affordable_items_is_a_fraction_of_the_mean_training_time():
    from nasviz.strategies.base import affordable_items

    assert affordable_items(0.25, [1.0, 3.0], 0.01) == pytest.approx(50.0)  # 0.25 * 2 s / 0.01 s
    assert affordable_items(None, [1.0], 0.01) is None  # uncapped
    assert affordable_items(0.25, [], 0.01) is None and affordable_items(0.25, [1.0], None) is None


def test_robust_targets_clip_failed_trainings_only():
    y = np.array([96.0, 97.0, 95.5, 96.5, 10.0, 97.5, 22.0, 96.2, 94.9, 96.8, 97.2, 95.9])
    r = robust_targets(y)
    q1, q3 = np.quantile(y, [0.25, 0.75])
    assert np.isclose(r.min(), q1 - 1.5 * (q3 - q1)) and r.min() > 90  # failures lifted to the fence
    good = y > 90
    assert np.array_equal(r[good], y[good])  # every other score unchanged, so the order is kept
    assert np.array_equal(robust_targets(y[:3]), y[:3])  # too few to estimate quartiles


@pytest.mark.parametrize("make", [lambda: nasbot(L.SPACE, seed=0, n_init=6), lambda: AutoKeras(L.SPACE, seed=0, n_init=6)])
def test_model_based_strategies_fit_their_gp_on_clipped_scores(make):
    """One network that trained badly (R^2 ~ 0 among ~0.94s) must not set the GP's scale."""
    strategy = make()
    first = strategy.ask(6)
    scores = [0.94, 0.93, 0.945, 0.0, 0.935, 0.94]
    strategy.tell([Evaluation(a, v, 1.0) for a, v in zip(first, scores)])
    seen = {}
    fit = strategy.gp.fit

    def recording_fit(archs, y):
        seen["y"] = np.asarray(y)
        return fit(archs, y)

    strategy.gp.fit = recording_fit
    strategy.ask(1)
    np.testing.assert_allclose(seen["y"], robust_targets(np.array(scores)))
    assert seen["y"].min() > 0.9


def test_take_initial_pops_allowed_architectures_in_order():
    from nasviz.strategies.base import take_initial

    a, b, c, d = L.initial_pool()[:4]
    queue = [a, b, a, c, d]
    assert take_initial(queue, 2, lambda x: x != a) == [b, c]  # a is not allowed: dropped
    assert queue == [d]
    assert take_initial(queue, 5, lambda x: True) == [d] and queue == []
    assert take_initial([a, a], 2, lambda x: True) == [a]  # no repeats within one call
