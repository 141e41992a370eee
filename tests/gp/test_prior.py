"""MAP fitting under Optuna GPSampler's hyperparameter priors (nasviz.gp.prior)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import check_grad

from nasviz.defaults import DIGITS_TABLE as EMBEDDED_TABLE
from nasviz.errors import ConfigError
from nasviz.gp import GaussianProcess
from nasviz.gp.likelihood import MarginalLikelihood
from nasviz.gp.prior import HYPER_BOXES, OPTUNA_PRIOR, prior_named
from nasviz.kernels import make_kernel
from nasviz.objectives import load_table
from nasviz.spaces import get_space
from nasviz.strategies.factory import make_strategy

def test_the_log_prior_is_optunas_formula_and_its_gradient_is_exact():
    p = np.array([np.log(0.3), np.log(4.0), np.log(2.5), np.log(0.02)])  # two rates, then log a, log s
    value, grad = OPTUNA_PRIOR.packed(p, [True, True])
    by_hand = (-(0.1 / 0.3 + 0.1 * 0.3) - (0.1 / 4.0 + 0.1 * 4.0)  # -(0.1/l + 0.1 l) per rate
               + (2 - 1) * np.log(2.5) - 1.0 * 2.5  # Gamma(2, 1) on a
               + (1.1 - 1) * np.log(0.02) - 30.0 * 0.02)  # Gamma(1.1, 30) on s
    assert value == pytest.approx(by_hand, rel=1e-12)
    assert check_grad(lambda q: OPTUNA_PRIOR.packed(q, [True, True])[0],
                      lambda q: OPTUNA_PRIOR.packed(q, [True, True])[1], p) < 1e-6
    # a coordinate that is not a rate gets no prior
    assert OPTUNA_PRIOR.packed(p, [False, True])[1][0] == 0.0
    assert prior_named("none") is None
    with pytest.raises(ValueError, match="known: none, optuna"):
        prior_named("flat")


@pytest.fixture(scope="module")
def sample():
    table = load_table(EMBEDDED_TABLE)  # the NB201 table in the repository (data/)
    rng = np.random.default_rng(0)
    archs = [table.archs[i] for i in rng.choice(len(table.archs), 60, replace=False)]
    return archs, np.array([table.lookup(a, "valid_accuracy") for a in archs])


@pytest.mark.slow
def test_the_map_objective_has_exact_gradients(sample):
    archs, y = sample
    kernel = make_kernel("tw2g-hamming", space=get_space("nb201"))
    comps = kernel.components(archs[:30], archs[:30])
    z = (y[:30] - y[:30].mean()) / y[:30].std()
    hps = kernel.hyperparameters
    objective = MarginalLikelihood(kernel, comps, z, kernel.default_theta(), list(range(len(hps))), hps,
                                   prior=OPTUNA_PRIOR)
    p = np.array([-1.0, 0.3, -0.5, -2.0, 0.4, -3.0])
    f, g = objective.value_and_grad(p)
    assert objective.value(p) == pytest.approx(f)
    assert check_grad(lambda q: objective.value_and_grad(q)[0], lambda q: objective.value_and_grad(q)[1], p) < 1e-4 * np.linalg.norm(g)


def _fifty(sample, seed):
    """50 of the sample's 60 cells, drawn with ``seed``: ``(archs, y)``."""
    archs, y = sample
    pick = np.random.default_rng(seed).choice(len(archs), 50, replace=False)
    return [archs[i] for i in pick], y[pick]


def _tw2g_hamming_gp(seed, **options):
    """A GP on the default's kernel, three restarts, ``options`` passed on."""
    return GaussianProcess(make_kernel("tw2g-hamming", space=get_space("nb201")), n_restarts=3, seed=seed, **options)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 5])
def test_map_keeps_the_rates_and_the_noise_off_the_bounds_ml2_runs_to(sample, seed):
    archs, y = _fifty(sample, seed)
    ml2 = _tw2g_hamming_gp(seed).fit(archs, y)
    gp = _tw2g_hamming_gp(seed, prior="optuna")
    fit = gp.fit(archs, y)
    lows = {h.name: h.bounds[0] for h in gp.kernel.hyperparameters}
    assert all(fit.theta[name] > 10 * low for name, low in lows.items()), fit.theta
    assert fit.noise > 10 * gp.noise_bounds[0]
    assert fit.amplitude < ml2.amplitude  # pulled towards the prior's mode 1 on standardised targets
    # ML-II maximises L, MAP trades some of it for the prior: the reported L is the likelihood alone
    assert ml2.log_marginal_likelihood >= fit.log_marginal_likelihood - 1e-6


def test_bo_takes_the_prior_by_name_and_refuses_an_unknown_one():
    space = get_space("nb201")
    strategy = make_strategy("bo-tw2g-hamming-ei", space=space, seed=0, hyper_prior="optuna")
    assert strategy.gp.prior is OPTUNA_PRIOR
    assert make_strategy("bo-tw2g-hamming-ei", space=space, seed=0).gp.prior is None
    with pytest.raises(ConfigError, match="hyper_prior"):
        make_strategy("bo-tw2g-hamming-ei", space=space, seed=0, hyper_prior="flat")


def _short_run(**options):
    from nasviz.objectives import TableObjective
    from nasviz.runner import run_search

    table = load_table(EMBEDDED_TABLE)
    objective = TableObjective(table, "valid_accuracy")
    strategy = make_strategy("bo-tw2g-hamming-ei", space=table.space, seed=0, domain=objective.domain(), n_init=5,
                             **options)
    run_search(strategy, objective, 8, format_arch=table.space.format, batch_size=1)
    return strategy


@pytest.mark.slow
def test_a_step_says_its_gp_was_fitted_under_the_prior():
    from nasviz.dashboard.explain import explain_step
    from nasviz.state import StepState

    state = StepState.from_dict(_short_run(hyper_prior="optuna").state().to_dict())  # as the run store keeps it
    assert state.gp is not None and state.gp.prior == "optuna"
    assert "times the optuna prior on its hyperparameters (MAP)" in " ".join(explain_step(8, state, []))
    plain = _short_run().state()
    assert plain.gp.prior == "" and "prior" not in " ".join(explain_step(8, plain, []))


# ---------------------------------------------------------------- the narrower search box (hyper_bounds)

def test_the_boxes_end_where_the_prior_density_is_e_squared_below_its_peak():
    low, high = OPTUNA_PRIOR.rate_box()
    rate_log_p = lambda lam: -(0.1 / lam + 0.1 * lam)  # noqa: E731 - the rate term by hand
    for end in (low, high):
        assert rate_log_p(1.0) - rate_log_p(end) == pytest.approx(2.0, rel=1e-12)
    assert low * high == pytest.approx(1.0)  # symmetric in log l about the mode 1
    assert (low, high) == pytest.approx((0.04555, 21.954), rel=1e-3)
    a_low, a_high = OPTUNA_PRIOR.amplitude_box()
    amp_log_p = lambda a: np.log(a) - a  # noqa: E731 - Gamma(2, 1) up to a constant, mode 1
    for end in (a_low, a_high):
        assert amp_log_p(1.0) - amp_log_p(end) == pytest.approx(2.0, abs=1e-9)
    assert a_low < 1.0 < a_high


@pytest.mark.parametrize("seed", [0, 1, 5])
def test_the_rate_box_keeps_every_rate_inside_it_with_ml2(sample, seed):
    archs, y = _fifty(sample, seed)
    wide = _tw2g_hamming_gp(seed)
    box = HYPER_BOXES["optuna-rates"].rates
    boxed = _tw2g_hamming_gp(seed, rate_bounds=box)
    wide_fit, boxed_fit = wide.fit(archs, y), boxed.fit(archs, y)
    assert min(wide_fit.theta.values()) < box[0]  # the wide box lets ML-II switch a part of the kernel off
    assert all(box[0] * (1 - 1e-9) <= v <= box[1] * (1 + 1e-9) for v in boxed_fit.theta.values()), boxed_fit.theta
    assert boxed.prior is None  # ML-II inside the box, not MAP
    assert wide_fit.log_marginal_likelihood >= boxed_fit.log_marginal_likelihood - 1e-6  # the box is a constraint
    assert boxed.search_box()["l[hamming]"] == box and boxed.search_box()["amplitude"] == boxed.amplitude_bounds


@pytest.mark.slow
def test_bo_takes_the_box_by_name_and_a_step_reports_it():
    from nasviz.dashboard.explain import explain_step
    from nasviz.state import StepState

    space = get_space("nb201")
    both = make_strategy("bo-tw2g-hamming-ei", space=space, seed=0, hyper_bounds="optuna")
    assert both.gp.rate_bounds == OPTUNA_PRIOR.rate_box() and both.gp.amplitude_bounds == OPTUNA_PRIOR.amplitude_box()
    rates = make_strategy("bo-tw2g-hamming-ei", space=space, seed=0, hyper_bounds="optuna-rates")
    assert rates.gp.rate_bounds == OPTUNA_PRIOR.rate_box() and rates.gp.amplitude_bounds == (1e-2, 1e2)
    default = make_strategy("bo-tw2g-hamming-ei", space=space, seed=0)
    assert default.gp.rate_bounds is None and default.gp.search_box()["lambda_1"] == (1e-3, 1e3)
    with pytest.raises(ConfigError, match="'hyper_bounds' must be one of wide, optuna-rates, optuna"):
        make_strategy("bo-tw2g-hamming-ei", space=space, seed=0, hyper_bounds="narrow")
    with pytest.raises(ValueError, match="rate_bounds"):
        GaussianProcess(make_kernel("tw2g-hamming", space=space), rate_bounds=(1.0, 0.5))

    state = StepState.from_dict(_short_run(hyper_bounds="optuna-rates").state().to_dict())  # as the store keeps it
    assert state.gp is not None and state.gp.box == "optuna-rates"
    low = OPTUNA_PRIOR.rate_box()[0]
    assert all(v >= low * (1 - 1e-9) for v in state.gp.hyperparameters.values())
    assert "within the optuna-rates box of its hyperparameters" in " ".join(explain_step(8, state, []))
    assert _short_run().state().gp.box == ""


def test_the_registry_offers_exactly_the_known_priors_boxes_and_schedules():
    # nasviz.components lists the choices without importing the GP module, and the strategy
    # accepts the registry's list: they must not drift from the modules that implement them
    from nasviz.acquisition import SCHEDULES
    from nasviz.components import STRATEGIES
    from nasviz.gp.prior import PRIORS
    from nasviz.strategies.bo import CHOICES

    entry = STRATEGIES.get("bo-tw2g-hamming-ei")
    assert tuple(entry.option("hyper_prior").choices) == tuple(PRIORS) == CHOICES["hyper_prior"]
    assert tuple(entry.option("hyper_bounds").choices) == tuple(HYPER_BOXES) == CHOICES["hyper_bounds"]
    assert tuple(entry.option("schedule").choices) == tuple(SCHEDULES) == CHOICES["schedule"]
    assert CHOICES["stall_action"] == ("ucb", "neighbours") and CHOICES["table_neighbours"] == ("edit", "nearest")
