"""How a GP fit is reported: bounds the data left the fit on, and floors the strategy chose."""

from __future__ import annotations

from nasviz.dashboard.explain import explain_step
from nasviz.dashboard.views.hyperparameters import bounds_message, floor_message
from nasviz.gp import FitResult, GaussianProcess
from nasviz.kernels import make_kernel
from nasviz.spaces import nb201
from nasviz.state import GPFit, StepState, bound_side, gp_fit_state


def _fit(noise: float, amplitude: float = 1.0) -> FitResult:
    return FitResult(theta={}, amplitude=amplitude, noise=noise, log_marginal_likelihood=0.0, jitter=0.0, seconds=0.0,
                     n_obs=12)


def _gp(min_noise: float | None) -> GaussianProcess:
    options = {} if min_noise is None else {"noise_bounds": (min_noise, 2.0)}
    return GaussianProcess(make_kernel("tw2g-hamming", space=nb201.SPACE), **options)


def test_bound_side_names_the_end_on_a_log_scale():
    assert bound_side(1e-3, 1e-3, 2.0) == "low" and bound_side(1.05e-3, 1e-3, 2.0) == "low"
    assert bound_side(1.99, 1e-3, 2.0) == "high"
    assert bound_side(0.05, 1e-3, 2.0) is None
    assert bound_side(float("nan"), 1e-3, 2.0) is None


def test_a_noise_on_a_chosen_floor_is_reported_apart_from_the_bounds_hit():
    """A raised noise floor (the default strategy's min_noise=1e-3) that the fit rests on is a
    chosen value: floors_hit, not bounds_hit. The numerical floor (1e-6) and the upper bound stay
    bounds the data left the fit on."""
    assert _gp(None).floors() == {} and _gp(1e-6).floors() == {}
    assert _gp(1e-3).floors() == {"noise": 1e-3}

    chosen = gp_fit_state(_fit(noise=1e-3), _gp(1e-3), "hamming")
    assert chosen.floors_hit == ("noise",) and "noise" not in chosen.bounds_hit

    numerical = gp_fit_state(_fit(noise=1e-6), _gp(None), "hamming")
    assert numerical.bounds_hit == ("noise",) and numerical.floors_hit == ()

    top = gp_fit_state(_fit(noise=2.0, amplitude=1e-2), _gp(1e-3), "hamming")  # all noise: the upper bound
    assert set(top.bounds_hit) == {"amplitude", "noise"} and top.floors_hit == ()

    inside = gp_fit_state(_fit(noise=0.05), _gp(1e-3), "hamming")
    assert inside.bounds_hit == () and inside.floors_hit == ()


def test_floors_hit_survives_the_store_round_trip_and_old_states_read_without_it():
    fit = GPFit(kernel="hamming", hyperparameters={}, amplitude=1.0, noise=1e-3, log_likelihood=0.0, n_observations=12,
                floors_hit=("noise",))
    state = StepState(strategy="bo", phase="bo", gp=fit)
    assert StepState.from_dict(state.to_dict()).gp == fit
    older = state.to_dict()
    del older["gp"]["floors_hit"]  # a state stored before the field existed
    assert StepState.from_dict(older).gp.floors_hit == ()


def test_the_dashboard_names_a_floor_without_the_bound_warning():
    fit = GPFit(kernel="hamming", hyperparameters={}, amplitude=1.0, noise=1e-3, log_likelihood=0.0, n_observations=12,
                floors_hit=("noise",))
    assert bounds_message(fit) is None  # no warning on the Search page
    assert "noise = 0.001 on the floor the strategy sets" in floor_message(fit)
    text = "\n".join(explain_step(5, StepState(strategy="bo", phase="bo", gp=fit), []))
    assert "noise rests on the floor the strategy chose" in text and "ended on a bound" not in text
    both = GPFit(kernel="hamming", hyperparameters={}, amplitude=1e-2, noise=1e-3, log_likelihood=0.0,
                 n_observations=12, bounds_hit=("amplitude",), floors_hit=("noise",))
    assert "amplitude = 0.01 on a bound" in bounds_message(both) and "noise" not in bounds_message(both)


def test_a_component_rate_at_its_low_end_is_switched_off_not_a_warning():
    """Issue 46: on NAS-Bench-201 the default's Hamming rate l[hamming] (and often TW's lambda_3)
    ends at the low end of its box in every fit: the factor is switched off, an expected outcome
    the Hyperparameters view says in plain words; a rate at its high end or the amplitude on a
    bound stays a warning."""
    from nasviz.dashboard.views.hyperparameters import switched_off_message

    gp = _gp(1e-3)
    low = gp.search_box()["l[hamming]"][0]
    theta = {"lambda_1": 0.5, "lambda_2": 0.3, "lambda_3": gp.search_box()["lambda_3"][0], "l[hamming]": low}
    fit = FitResult(theta=theta, amplitude=1.0, noise=1e-3, log_marginal_likelihood=0.0, jitter=0.0, seconds=0.0,
                    n_obs=40)
    state = gp_fit_state(fit, gp, "tw2g-hamming")
    assert state.switched_off == ("lambda_3", "l[hamming]") and state.bounds_hit == ()
    assert bounds_message(state) is None  # no warning on the Search page
    assert "switched these parts of its kernel off: lambda_3, l[hamming]" in switched_off_message(state)
    assert "switched that part of its kernel off" in " ".join(explain_step(12, StepState("bo", "bo", gp=state), []))
    assert StepState.from_dict(StepState("bo", "bo", gp=state).to_dict()).gp == state

    high = gp.search_box()["l[hamming]"][1]
    upper = gp_fit_state(FitResult(theta={**theta, "l[hamming]": high}, amplitude=1.0, noise=0.05,
                                   log_marginal_likelihood=0.0, jitter=0.0, seconds=0.0, n_obs=40), gp, "tw2g-hamming")
    assert upper.bounds_hit == ("l[hamming]",) and upper.switched_off == ("lambda_3",)
    assert "l[hamming]" in bounds_message(upper)


def test_the_explainer_names_a_prediction_above_100_and_a_spread_below_resolution():
    """Issue 46: the step explainer said "predicted 100.8 ± 0" for an accuracy."""
    from nasviz.state import BatchChoice, PoolState

    pool = PoolState(candidates=("a", "b"), mean=(100.8, 93.614), std=(0.00002, 1.2513), acquisition=(2.0, 1.0),
                     acquisition_name="ei", origin=("mutation", "mutation"))
    state = StepState("bo", "bo", pool=pool, batch=BatchChoice(method="topk", indices=(0, 1)))
    text = "\n".join(explain_step(12, state, [], decimals=2, metric="valid_accuracy"))
    assert "predicted 100.8 ± 0" not in text
    assert "predicted above the largest possible value (100.00; the GP's mean, 100.80, is not bounded) ± < 0.01" in text
    assert "predicted 93.61 ± 1.25" in text


def test_a_stalled_step_says_what_the_stall_rule_did():
    from nasviz.dashboard.explain import _stall_line

    near = _stall_line({"since_best": 12, "action": "neighbours", "neighbours": 7})
    assert near.startswith("No new best in the last 12 evaluations") and "the 7 one-edit neighbours" in near
    assert "no one-edit neighbour of the best cell is left" in _stall_line({"since_best": 3, "action": "neighbours"})
    assert "exploration weight raised to 4" in _stall_line({"since_best": 3, "action": "kappa", "kappa": 4.0})
