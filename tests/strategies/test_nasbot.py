"""NASBOT (paper 001) as BO: the EA acquisition optimiser as a pool, OTMANN on Fig. 1-like MLPs, a run."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from nasviz.errors import ConfigError
from nasviz.kernels import make_kernel
from nasviz.objectives.datasets import load_dataset
from nasviz.objectives.training import TrainingObjective
from nasviz.runner import run_search
from nasviz.spaces import mlp as L
from nasviz.state import StepState
from nasviz.strategies.bo import BayesianOptimisation
from nasviz.strategies.factory import make_strategy
from nasviz.strategies.nasbot import EAPool, ea_optimise, ea_schedule, nasbot, selection_probabilities

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


def test_nasbot_is_bo_with_its_papers_parts():
    strategy = make_strategy("nasbot", space=L.SPACE, seed=0)
    assert isinstance(strategy, BayesianOptimisation) and strategy.name == "nasbot"
    parts = strategy.parts
    assert (parts.model.kernel_name, parts.acquisition.acquisition, parts.pool.pool, parts.batch.batch) == (
        "otmann", "ei", "nasbot-ea", "topk")
    assert (parts.run.init, parts.model.targets, parts.model.failures, parts.run.dedupe) == (
        "pool", "robust", "worst", "canonical")
    assert list(strategy.initial) == L.initial_pool() and isinstance(strategy.pool_generator, EAPool)
    # the parts are frozen: what the strategy was built from cannot change under it
    with pytest.raises(dataclasses.FrozenInstanceError):
        strategy.parts.pool.pool = "evolution"  # type: ignore[misc]


def test_nasbot_rejects_other_spaces_and_options():
    from nasviz.spaces import nb201

    with pytest.raises(ConfigError, match="'nasbot-ea' needs the modifiers representation"):
        nasbot(nb201.SPACE)
    with pytest.raises(ConfigError, match="candidate pool 'nasbot-ea' needs the modifiers representation"):
        make_strategy("nasbot", space=nb201.SPACE)  # refused by what its pool needs, not by name
    with pytest.raises(ConfigError, match="'nasbot-ea' needs the modifiers representation, which 'nb201' lacks"):
        make_strategy("bo", space=nb201.SPACE, pool="nasbot-ea")
    with pytest.raises(ValueError, match="does not take option"):
        make_strategy("nasbot", space=L.SPACE, seed=0, beta=2)


def test_nasbot_end_to_end_short_run():
    data = load_dataset("wine", seed=0, max_train=60)
    objective = TrainingObjective(L.SPACE, data, training={"epochs": 2, "patience": 1}, device="cpu")
    strategy = make_strategy("nasbot", space=L.SPACE, seed=0, n_init=3, ea_base=10)
    snaps = []
    result = run_search(strategy, objective, 5, format_arch=L.format, on_step=snaps.append)
    archs = [ev.arch for ev in result.evaluations]
    assert len(archs) == 5 and len({a.canonical_key() for a in archs}) == 5
    assert archs[:3] == L.initial_pool()[:3]
    assert all(ev.ok for ev in result.evaluations)
    assert result.best_value is not None
    st = StepState.from_dict(snaps[-1].strategy)  # the typed state, read back from its stored form
    assert st.phase == "bo" and st.gp.kernel == "otmann" and st.gp.n_observations == 4
    pool = st.pool
    assert pool.acquisition_name == "ei" and len(pool) >= 1
    assert len(pool.mean) == len(pool.std) == len(pool.acquisition) == len(pool.origin) == len(pool)
    assert set(pool.origin) <= {"ea", "ea-init", "mutation"}
    assert not set(pool.candidates) & {L.format(a) for a in archs[:4]}  # only networks not evaluated yet
    # the proposal is the pool's best EI, and the EA's schedule travels with the step
    assert st.batch.indices == (int(np.argmax(pool.acquisition)),) and st.proposals == (pool.candidates[st.batch.indices[0]],)
    assert st.notes["n_ea"] >= st.notes["n_mut"] >= 1 and st.notes["ea_scored"] >= len(pool)


def test_acquisition_budget_is_capped_by_measured_training_time():
    pool = EAPool(acq_fraction=0.25)
    assert ea_schedule(16) == (40, 7)
    assert pool.budget(16, [1.0, 1.0]) == (40, 7)  # nothing measured yet: the paper's schedule
    pool._sec_per_candidate = 0.01  # 0.25 s of acquisition affords 25 candidates
    assert pool.budget(16, [1.0, 1.0]) == (25, 7)
    assert pool.budget(16, []) == (40, 7)  # no training time measured yet
    pool._sec_per_candidate = 1.0  # very slow acquisition: still N_mut candidates
    assert pool.budget(16, [1.0, 1.0]) == (7, 7)
    uncapped = EAPool(acq_fraction=None)
    uncapped._sec_per_candidate = 1.0
    assert uncapped.budget(16, [1.0, 1.0]) == (40, 7)
    with pytest.raises(ValueError, match="acq_fraction"):
        EAPool(acq_fraction=0)
    with pytest.raises(ValueError, match="ea_init"):
        EAPool(ea_init="best")


def test_factory_passes_nasbot_options_through_to_its_pool():
    strategy = make_strategy("nasbot", space=L.SPACE, ea_init="observed", acq_fraction="none", ea_base="5")
    assert strategy.parts.pool.pool_options == {"ea_base": 5, "ea_cap": 150, "acq_fraction": None, "ea_init": "observed"}
    ea = strategy.pool_generator
    assert ea.ea_init == "observed" and ea.acq_fraction is None and ea.ea_base == 5
    with pytest.raises(ValueError, match="does not take option"):
        make_strategy("nasbot", space=L.SPACE, bogus=1)
