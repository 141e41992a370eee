"""NASBOT (paper 001): the EA acquisition optimiser, OTMANN on Fig. 1-like MLPs, an end-to-end run."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.kernels import make_kernel
from nasviz.objectives.datasets import load_dataset
from nasviz.objectives.trainer import TrainingObjective
from nasviz.runner import run_search
from nasviz.spaces import layers as L
from nasviz.strategies.factory import make_strategy
from nasviz.strategies.nasbot import NASBOT, ea_optimise, ea_schedule, selection_probabilities

#: Paper 001 Fig. 1 as MLPs: a and b are similar chains (b has one more layer), c is wide,
#: sigmoidal and branched.
FIG1_A = "input;relu:16<0;relu:16<1;relu:32<2;relu:32<3;relu:16<4;linear<5;output<6"
FIG1_B = "input;relu:16<0;relu:16<1;relu:32<2;relu:32<3;relu:32<4;relu:16<5;linear<6;output<7"
FIG1_C = "input;tanh:128<0;logistic:64<0;tanh:256<1,2;logistic:128<1;tanh:256<3,4;linear<5;linear<3,4;output<6,7"


def test_otmann_orders_fig1_networks():
    a, b, c = (L.parse(s) for s in (FIG1_A, FIG1_B, FIG1_C))
    comps = make_kernel("otmann").distances([a, b, c], [a, b, c])
    for name, D in comps.items():
        assert D[0, 1] < D[0, 2] and D[0, 1] < D[1, 2], name


def test_ea_schedule_grows_like_sqrt():
    n1, m1 = ea_schedule(1, base=20)
    n4, m4 = ea_schedule(4, base=20)
    n16, _ = ea_schedule(16, base=20)
    assert (n1, m1) == (20, 5) and n4 == 40 and n16 == 80 and m4 == 7
    assert ea_schedule(9) == (30, 6)  # defaults: base 10
    assert ea_schedule(10_000, cap=300)[0] == 300
    with pytest.raises(ValueError, match="t must be >= 1"):
        ea_schedule(0)


def test_selection_probabilities_follow_exp_g_over_sigma():
    g = np.array([0.0, 1.0, 2.0])
    p = selection_probabilities(g)
    sigma = np.std(g)
    expected = np.exp(g / sigma) / np.exp(g / sigma).sum()
    assert np.allclose(p, expected)
    assert np.allclose(selection_probabilities(np.ones(4)), 0.25)
    with pytest.raises(ValueError, match="finite"):
        selection_probabilities(np.array([np.nan]))


def test_ea_climbs_a_known_acquisition():
    # acquisition = number of decision layers + depth: the EA must find networks beyond the pool
    def acquisition(archs):
        return np.array([a.n_nodes + 3 * len(L.decision_layers(a)) for a in archs], dtype=float)

    rng = np.random.default_rng(0)
    init = L.initial_pool()
    pool, values = ea_optimise(acquisition, init, rng, n_evals=120, n_mut=11)
    assert len(pool) == len(set(pool)) == len(values) == len(init) + 120
    assert values[len(init):].max() > values[: len(init)].max()
    assert all(L.is_valid(a) for a in pool)
    # selection favours good parents: children are on average better than the initial pool
    assert values[len(init):].mean() > values[: len(init)].mean()


def test_nasbot_rejects_other_spaces_and_options():
    from nasviz.spaces import nb201

    with pytest.raises(ValueError, match="layers"):
        NASBOT(nb201.SPACE)
    with pytest.raises(ValueError, match="does not take option"):
        make_strategy("nasbot", space=L.SPACE, seed=0, beta=2)


def test_nasbot_end_to_end_short_run():
    data = load_dataset("wine", seed=0, max_train=60)
    objective = TrainingObjective(L.SPACE, data, training={"epochs": 2, "patience": 1}, device="cpu")
    strategy = make_strategy("nasbot", space=L.SPACE, seed=0, n_init=3, ea_base=10)
    result = run_search(strategy, objective, 5, format_arch=L.format)
    archs = [ev.arch for ev in result.evaluations]
    assert len(archs) == 5 and len({a.canonical_key() for a in archs}) == 5
    assert archs[:3] == L.initial_pool()[:3]
    assert all(ev.ok for ev in result.evaluations)
    state = strategy.state()
    assert state["phase"] == "bo" and state["acquisition"] == "ei" and state["pool_size"] > 3
    assert result.best_value is not None


def test_acquisition_budget_is_capped_by_measured_training_time():
    s = NASBOT(L.SPACE, seed=0, acq_fraction=0.25)
    assert s._ea_budget(40, 7) == (40, 7)  # nothing measured yet: the paper's schedule
    s._costs, s._sec_per_candidate = [1.0, 1.0], 0.01  # 0.25 s of acquisition affords 25 candidates
    assert s._ea_budget(40, 7) == (25, 7)
    s._sec_per_candidate = 1.0  # very slow acquisition: still N_mut candidates
    assert s._ea_budget(40, 7) == (7, 7)
    assert NASBOT(L.SPACE, seed=0, acq_fraction=None)._ea_budget(40, 7) == (40, 7)
    with pytest.raises(ValueError, match="acq_fraction"):
        NASBOT(L.SPACE, acq_fraction=0)


def test_factory_passes_nasbot_and_autokeras_options_through():
    from nasviz.strategies.factory import make_strategy

    nasbot = make_strategy("nasbot", space=L.SPACE, ea_init="observed", acq_fraction="none", ea_base="5")
    assert nasbot.ea_init == "observed" and nasbot.acq_fraction is None and nasbot.ea_base == 5
    autokeras = make_strategy("autokeras", space=L.SPACE, acq_fraction="0.5", beta="1.5")
    assert autokeras.acq_fraction == 0.5 and autokeras.beta == 1.5
    with pytest.raises(ValueError, match="does not take option"):
        make_strategy("nasbot", space=L.SPACE, bogus=1)
