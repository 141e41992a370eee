"""Exact acquisition maximisation (pool ``exhaustive``), cached candidate sets, GP-UCB's
Srinivas schedule and stall detection."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.acquisition import exploration_weight, srinivas_beta, ucb
from nasviz.errors import ConfigError
from nasviz.gp import GaussianProcess
from nasviz.kernels import make_kernel
from nasviz.objectives import Evaluation
from nasviz.spaces import get_space, nb201
from nasviz.strategies.bo import BayesianOptimisation, PoolPart
from nasviz.strategies.factory import make_strategy


def _toy_values(archs):
    """A deterministic landscape on NB201 cells: conv3x3 counts, with an edge-specific term."""
    out = []
    for a in archs:
        ops = nb201.SPACE.slots(a)
        out.append(sum(op == "nor_conv_3x3" for op in ops) + 0.5 * (ops[3] == "skip_connect") - 0.3 * (ops[0] == "none"))
    return np.array(out, dtype=float)


def _domain(n=600, seed=0):
    rng = np.random.default_rng(seed)
    archs = list(nb201.enumerate_all())
    return [archs[i] for i in rng.choice(len(archs), n, replace=False)]


@pytest.mark.parametrize("kernel", ["tw2g", "wl"])
def test_candidate_set_matches_plain_prediction(kernel):
    domain = _domain(400)
    gp = GaussianProcess(make_kernel(kernel, space=nb201.SPACE), seed=0)
    y = _toy_values(domain)
    for n in (12, 13, 30):  # growing training sets reuse the cached columns
        gp.fit(domain[:n], y[:n])
        mean, std = gp.predict_set(gp.candidate_set(domain))
        ref_mean, ref_std = gp.predict(domain, full_cov=False)
        np.testing.assert_allclose(mean, ref_mean, atol=1e-9)
        np.testing.assert_allclose(std, ref_std, atol=1e-9)
    assert gp.candidate_set(domain) is gp.candidate_set(domain)  # one cache per sequence object
    assert gp.candidate_set(domain).n_rows < len(domain)  # cells with equal reduced graphs share a row


def test_exhaustive_step_proposes_the_exact_argmax_of_the_domain():
    domain = _domain(500)
    values = dict(zip(domain, _toy_values(domain)))
    bo = make_strategy("bo", space=nb201.SPACE, seed=3, domain=domain, kernel="tw2g", pool="exhaustive",
                       acquisition="ucb", n_init=8)
    bo.tell([Evaluation(a, values[a], 0.0) for a in bo.ask(8)])
    proposal = bo.ask(1)[0]
    state = bo.state()
    assert state.phase == "bo" and state.notes["scored"] == 492 and state.notes["source"] == "domain"
    # brute force: the acquisition of every unevaluated domain member, from the fitted GP
    rest = [a for a in domain if a not in bo.seen or a == proposal]
    mean, std = bo.gp.predict(rest, full_cov=False)
    acq = ucb(mean, std, state.batch.info["kappa"])
    assert np.isclose(acq[rest.index(proposal)], acq.max(), atol=1e-9)
    assert set(state.pool.origin) == {"exhaustive"} and len(state.pool.candidates) == 100


def test_exhaustive_pool_scores_a_finite_space_and_falls_back_on_an_infinite_one():
    space = get_space("layers")
    bo = make_strategy("bo", space=space, seed=0, kernel="otmann", pool="exhaustive", n_init=3, pool_size=10)
    from nasviz.objectives.base import Evaluation as Ev

    first = bo.ask(3)
    bo.tell([Ev(a, float(len(a.labels)), 0.0) for a in first])
    assert bo.ask(1)
    assert "exhaustive_fallback" in bo.state().notes  # the layer space is not finite


def test_exhaustive_fallback_cannot_be_itself():
    from nasviz.exhaustive import exhaustive_generator

    with pytest.raises(ValueError, match="itself"):
        exhaustive_generator(fallback="exhaustive")


def test_srinivas_beta_is_theorem_1():
    # beta_t = 2 log(|D| t^2 pi^2 / (6 delta))
    assert srinivas_beta(1, 15625, 0.1) == pytest.approx(2 * np.log(15625 * np.pi**2 / 0.6))
    assert srinivas_beta(100, 15625, 0.1) > srinivas_beta(10, 15625, 0.1)
    kappa = exploration_weight("srinivas", step=0, t=4, n_candidates=100, beta0=1.5, beta_scale=0.2, delta=0.1)
    assert kappa == pytest.approx(np.sqrt(0.2 * 2 * np.log(100 * 16 * np.pi**2 / 0.6)))
    with pytest.raises(ValueError):
        srinivas_beta(0, 10)
    with pytest.raises(ValueError, match="schedule"):
        exploration_weight("linear", step=0, t=1, n_candidates=1, beta0=1, beta_scale=1, delta=0.1)


def test_bo_uses_the_srinivas_weight_of_the_domain():
    domain = _domain(300)
    values = dict(zip(domain, _toy_values(domain)))
    bo = make_strategy("bo", space=nb201.SPACE, seed=1, domain=domain, pool="exhaustive", schedule="srinivas",
                       beta_scale=0.5, n_init=6)
    bo.tell([Evaluation(a, values[a], 0.0) for a in bo.ask(6)])
    bo.ask(1)
    assert bo.state().batch.info["kappa"] == pytest.approx(np.sqrt(0.5 * srinivas_beta(7, 300, 0.1)))


def test_a_stalled_search_explores_more_until_it_improves():
    domain = _domain(300)
    bo = make_strategy("bo", space=nb201.SPACE, seed=2, domain=domain, pool="exhaustive", acquisition="ei",
                       stall_patience=3, stall_boost=3.0, n_init=5)
    first = bo.ask(5)
    bo.tell([Evaluation(a, float(i), 0.0) for i, a in enumerate(first)])  # best is the last one
    bo.ask(1)
    assert "stalled" not in bo.state().notes and bo.state().batch.info["kappa"] == 0.0  # plain EI
    assert bo.state().pool.acquisition_name == "ei"
    for _ in range(3):  # three evaluations without a new best
        arch = bo.ask(1)[0]
        bo.tell([Evaluation(arch, -1.0, 0.0)])
    bo.ask(1)
    stalled = bo.state().notes["stalled"]
    assert stalled["since_best"] == 3 and bo.state().batch.info["kappa"] == pytest.approx(3.0 * bo._kappa(4))
    from nasviz.dashboard.explain import explain_step  # the teaching panel reads the same notes

    assert "No new best in the last 3 evaluations" in " ".join(explain_step(9, bo.state(), []))
    assert bo.state().pool.acquisition_name == "ucb"  # the values the pool shows are UCB's while stalled
    arch = bo.state().proposals
    bo.tell([Evaluation(nb201.parse(arch[0]), 100.0, 0.0)])  # a new best ends the stall
    bo.ask(1)
    assert "stalled" not in bo.state().notes


def _stall(bo, n_init: int = 5):
    """Evaluate the initial cells (the last is best), then three proposals that are worse."""
    first = bo.ask(n_init)
    bo.tell([Evaluation(a, float(i), 0.0) for i, a in enumerate(first)])
    for _ in range(3):
        bo.tell([Evaluation(bo.ask(1)[0], -1.0, 0.0)])
    return first[-1]


def test_a_stalled_search_can_look_at_the_best_cells_unevaluated_neighbours():
    from nasviz.dashboard.explain import explain_step

    bo = make_strategy("bo", space=nb201.SPACE, seed=2, acquisition="ei", stall_patience=3,
                       stall_action="neighbours", n_init=5)
    best = _stall(bo)
    proposal = bo.ask(1)[0]
    state = bo.state()
    stalled = state.notes["stalled"]
    around = {nb201.SPACE.canonical_key(c) for c in nb201.SPACE.neighbours(best)}
    assert stalled["action"] == "neighbours" and stalled["neighbours"] == len(state.pool.candidates) > 0
    assert set(state.pool.origin) == {"neighbour of the best"}
    assert {nb201.SPACE.canonical_key(nb201.parse(c)) for c in state.pool.candidates} <= around
    assert nb201.SPACE.canonical_key(proposal) in around
    assert state.pool.acquisition_name == "ei" and state.batch.info["kappa"] == 0.0  # its own acquisition
    assert "one-edit neighbours of the best cell that were never evaluated" in " ".join(explain_step(9, state, []))


def test_a_stalled_search_whose_best_has_no_unevaluated_neighbours_uses_the_usual_pool():
    from nasviz.dashboard.explain import explain_step

    domain = _domain(300)  # 300 of 15,625 cells: the best's neighbours are not among them
    bo = make_strategy("bo", space=nb201.SPACE, seed=2, domain=domain, pool="exhaustive", acquisition="ei",
                       stall_patience=3, stall_action="neighbours", n_init=5)
    best = _stall(bo)
    assert not set(nb201.SPACE.neighbours(best)) & set(domain)
    bo.ask(1)
    state = bo.state()
    assert state.notes["stalled"] == {"since_best": 3, "action": "neighbours", "neighbours": 0}
    assert "neighbour of the best" not in state.pool.origin and state.pool.info["scored"] == 300 - 8  # all unseen
    assert "no one-edit neighbour of the best cell is left to evaluate" in " ".join(explain_step(9, state, []))


def test_new_options_are_validated():
    with pytest.raises(ConfigError, match="schedule"):
        make_strategy("bo", space=nb201.SPACE, schedule="linear")
    with pytest.raises(ConfigError, match="stall_boost"):
        make_strategy("bo", space=nb201.SPACE, stall_boost=0.5)
    with pytest.raises(ConfigError, match="stall_action"):
        make_strategy("bo", space=nb201.SPACE, stall_action="restart")
    with pytest.raises(ConfigError, match="max_candidates"):
        BayesianOptimisation(nb201.SPACE, pool=PoolPart(pool="exhaustive", pool_options={"max_candidates": 0}))


def test_exhaustive_search_is_deterministic_given_its_seed():
    domain = _domain(400)
    values = dict(zip(domain, _toy_values(domain)))

    def run(seed):
        bo = make_strategy("bo", space=nb201.SPACE, seed=seed, domain=domain, pool="exhaustive", n_init=5)
        out = []
        for _ in range(12):
            props = bo.ask(1)
            bo.tell([Evaluation(a, values[a], 0.0) for a in props])
            out += props
        return out

    assert run(4) == run(4)
