"""Figure data of the explorer pages (nasviz.viz._kernels, _pair, _interpret, _compare)."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz import viz
from nasviz.dashboard.explorer.comparison import RunCurve, slot_axes
from nasviz.dashboard.explorer.interpretation import mutation_probabilities, parse_wl_feature
from nasviz.dashboard.explorer.kernels import SurrogateQuality
from nasviz.dashboard.explorer.pairs import TreeEdgeMass
from nasviz.interpret import OperationProfile
from nasviz.kernels.otmann import transport_plan
from nasviz.spaces import nb201
from nasviz.viz._compare import MAX_PARALLEL_LINES, _corners, _get_curves_info, _get_final_values_info, _get_parallel_info, best_so_far, final_table
from nasviz.viz._interpret import _get_feature_graph_info, _get_mutation_info, _get_operation_profile_info
from nasviz.viz._kernels import _get_distance_performance_info, _get_kernel_quality_info, scale_to_unit
from nasviz.viz._pair import _get_transport_plan_info, _get_tree_mass_info


# ----------------------------------------------------------------------------- kernels
def test_a_distance_equal_to_the_value_gap_has_rank_correlation_one():
    y = np.random.default_rng(0).normal(size=30)
    D = np.abs(y[:, None] - y[None, :]) ** 2  # monotone in |dy|
    info = _get_distance_performance_info("k", D, y)
    assert info.rho == pytest.approx(1.0) and info.n_pairs == 435 and info.note is None
    info = _get_distance_performance_info("k", D, y, max_points=100)
    assert len(info.distance) == 100 and info.rho == pytest.approx(1.0) and info.note == "showing 100 of 435 pairs"
    assert np.isnan(_get_distance_performance_info("k", np.zeros((5, 5)), y[:5]).rho)  # constant: undefined
    with pytest.raises(ValueError, match="shape"):
        _get_distance_performance_info("k", D[:3], y)


def test_kernel_quality_scales_both_matrices_and_scores_their_difference():
    y = np.array([1.0, 2.0, 4.0])
    assert scale_to_unit(np.array([[2.0, 4.0], [6.0, 6.0]])).tolist() == [[-1.0, 0.0], [1.0, 1.0]]
    assert not scale_to_unit(np.ones((2, 2))).any()
    perfect = _get_kernel_quality_info("k", 3.0 - np.abs(y[:, None] - y[None, :]), y)  # affine in P
    assert perfect.mse == pytest.approx(0.0) and perfect.P.min() == -1 and perfect.P.max() == 1
    inverted = _get_kernel_quality_info("k", np.abs(y[:, None] - y[None, :]), y)
    assert inverted.mse == pytest.approx(np.mean((2 * perfect.P) ** 2))


# ----------------------------------------------------------------------------- pair views
def test_transport_plan_info_labels_rows_and_its_costs_reproduce_the_distance():
    rng = np.random.default_rng(4)
    a, b = nb201.sample(rng, 2)
    tp = transport_plan(a, b, 0.3)
    info = _get_transport_plan_info(tp)
    assert info.rows[-1] == "A: unassigned" and info.cols[-1] == "B: unassigned"
    assert len(info.rows) == len(tp.labels_a) + 1 and info.rows[0].startswith("A0: input")
    assert float((info.plan * info.cost).sum()) == pytest.approx(tp.distance, rel=1e-9)
    assert sum(info.terms.values()) == pytest.approx(tp.distance, rel=1e-9)


def test_tree_mass_info_keeps_the_edges_that_differ():
    rows = [TreeEdgeMass(1, "conv", "group", 0.9, 1.0, 0.5, 0.45), TreeEdgeMass(1, "x", "leaf", 0.1, 0.2, 0.2, 0.0)]
    info = _get_tree_mass_info(rows)
    assert info.labels == ["n=1 · group conv"] and info.total == pytest.approx(0.45)


# ----------------------------------------------------------------------------- interpretability
def test_operation_profile_needs_true_values():
    p = OperationProfile("nor_conv_3x3", [1, 2], [0.5, 0.2], [10, 4], [90.0, 91.0], [1.0, 0.5])
    info = _get_operation_profile_info([p])
    assert info.operations == ["nor_conv_3x3"] and info.value_std == [[1.0, 0.5]] and info.n == [[10, 4]]
    with pytest.raises(ValueError, match="no true values"):
        _get_operation_profile_info([OperationProfile("x", [1], [0.1], [3])])


def test_feature_graph_edges_follow_the_data_flow():
    tree = parse_wl_feature("nor_conv_3x3 <- (input) -> (output)")
    info = _get_feature_graph_info(tree, 1.5)
    assert info.labels == ["nor_conv_3x3", "input", "output"]
    assert info.edges == [(1, 0), (0, 2)]  # input -> conv -> output
    assert info.x.tolist() == [0.0, -1.0, 1.0] and info.title == "gradient +1.5"


def test_mutation_info_rows_name_the_current_operation():
    cell = nb201.from_operations(["none"] * 6)
    probs = mutation_probabilities(cell, {"nor_conv_3x3": 1.0, "avg_pool_3x3": -1.0})
    info = _get_mutation_info(probs)
    assert info.rows[0] == "edge 1: none" and info.joint.sum() == pytest.approx(1.0)
    assert np.argmax(info.joint[0]) == nb201.OPERATIONS.index("nor_conv_3x3")
    with pytest.raises(ValueError, match="sum to"):
        _get_mutation_info({**probs, "joint": probs["joint"] * 2})


# ----------------------------------------------------------------------------- comparing runs
def curve(values, strategy="s", seed=0, optimum=10.0, archs=None):
    values = np.array(values, dtype=float)
    return RunCurve(seed, f"r{seed}", strategy, seed, "acc", values,
                            archs or [nb201.format(nb201.sample(np.random.default_rng(i), 1)[0]) for i in range(len(values))],
                            optimum, len(values))


def test_best_so_far_skips_failures():
    assert np.allclose(best_so_far([np.nan, 2.0, 1.0, np.nan, 5.0]), [np.nan, 2.0, 2.0, 2.0, 5.0], equal_nan=True)


def test_curves_average_seeds_with_standard_error_and_regret():
    curves = [curve([1, 3, 2]), curve([2, 2, 6], seed=1), curve([4], strategy="t")]
    info = _get_curves_info(curves)
    assert info.groups == ["s", "t"]
    assert info.mean[0].tolist() == [1.5, 2.5, 4.5]
    assert info.se[0] == pytest.approx([0.5, 0.5, 1.5])  # std(ddof=1)/sqrt(2)
    assert info.n[0].tolist() == [2, 2, 2] and info.se[1].tolist() == [0.0]
    regret = _get_curves_info(curves, regret=True)
    assert regret.mean[0].tolist() == [8.5, 7.5, 5.5]
    frame = regret.to_frame()
    assert list(frame.columns) == ["strategy", "evaluations", "mean_regret", "se_regret", "runs"] and len(frame) == 4
    with pytest.raises(ValueError, match="no known optimum"):
        _get_curves_info([curve([1], optimum=None)], regret=True)


def test_curves_against_cumulative_cost_on_a_shared_grid():
    """Two runs, one cheap evaluations first: at cost x each contributes the best it had by then."""
    cheap, dear = curve([np.nan, 5, 7], seed=0), curve([6, 8], seed=1)
    cheap.costs, dear.costs = np.array([1.0, 2.0, 10.0]), np.array([5.0, 10.0])
    info = _get_curves_info([cheap, dear], regret=True, axis="cost")
    x, mean, n = info.x[0], info.mean[0], info.n[0]
    assert x[-1] == pytest.approx(10.0) and len(x) <= 200
    at = {round(float(v), 6): (m, k) for v, m, k in zip(x, mean, n)}
    assert at[2.0] == (5.0, 1)          # only the cheap run has a result by cost 2 (regret 10 - 5)
    assert at[5.0] == (4.5, 2)          # then both: regrets 5 and 4
    assert at[10.0] == (2.5, 2)         # 3 and 2
    assert info.to_frame().columns[1] == "cost"
    with pytest.raises(ValueError, match="x axis"):
        _get_curves_info([cheap], axis="steps")


def test_curves_draw_only_the_corners_of_flat_stretches_and_lose_nothing():
    """A 5,000-evaluation run drew 5,000 points per trace; the drawn line must be the same line."""
    rng = np.random.default_rng(0)
    values = rng.normal(size=600)
    curves = [curve(values), curve(values[::-1].copy(), seed=1)]
    info = _get_curves_info(curves)
    line = viz.plot_curves(curves).data[1]
    x, y = np.asarray(line.x, dtype=float), np.asarray(line.y, dtype=float)
    assert len(x) < 100  # best-so-far curves are flat almost everywhere
    assert np.allclose(np.interp(info.x[0], x, y), info.mean[0])  # the full curve, interpolated back
    band = viz.plot_curves(curves).data[0]
    assert len(band.x) == 2 * len(x)
    assert np.array_equal(_corners(np.array([1.0, 1.0, 1.0])), [0, 2])
    assert np.array_equal(_corners(np.array([1.0, np.nan, np.nan, 2.0])), [0, 1, 2, 3])


def test_runs_of_different_lengths_count_only_the_runs_reaching_each_evaluation():
    info = _get_curves_info([curve([1, 2, 3]), curve([5], seed=1)])
    assert info.n[0].tolist() == [2, 1, 1] and info.mean[0].tolist() == [3.0, 2.0, 3.0]


def test_final_table_and_distribution():
    curves = [curve([1, 3]), curve([2, 5], seed=1), curve([np.nan, 4], strategy="t")]
    df = final_table(curves)
    row = df[df.strategy == "s"].iloc[0]
    assert row["runs"] == 2 and row["final best (mean)"] == 4.0 and row["final regret (mean)"] == 6.0
    assert row["final best (s.e.)"] == pytest.approx(1.0)
    fv = _get_final_values_info(curves)
    assert fv.values[0].tolist() == [3.0, 5.0] and fv.ecdf[0].tolist() == [0.5, 1.0]


def test_runs_without_an_evaluation_yet_are_left_out_of_the_curves():
    """A study's runs that wait for their worker: the Compare page raised on them."""
    waiting = [curve([]), curve([], seed=1, strategy="t")]
    info = _get_curves_info([curve([1, 2]), *waiting])
    assert info.groups == ["s"] and info.n[0].tolist() == [1, 1]
    assert not _get_curves_info(waiting).groups
    assert viz.plot_curves(waiting).layout.annotations  # an empty figure saying so
    assert final_table(waiting)["final best (mean)"].isna().all()


def test_parallel_coordinates_need_a_space_with_operation_slots():
    with pytest.raises(ValueError, match="'layers' has no operation slots"):
        slot_axes([curve([1.0])], "layers")
    assert slot_axes([curve([1.0])], None) is None
    frame = viz.evaluations_table([curve([1.0, np.nan])], None)  # runs of several spaces: no slot columns
    assert list(frame.columns) == ["value", "strategy", "run", "arch"] and len(frame) == 1


def test_parallel_coordinates_have_one_row_per_successful_evaluation():
    archs = [nb201.format(a) for a in nb201.sample(np.random.default_rng(5), 3)]
    info = _get_parallel_info([curve([1.0, np.nan, 3.0], archs=archs)], slot_axes([curve([1.0, np.nan, 3.0], archs=archs)], "nb201"))
    assert len(info.frame) == 2 and info.edges[0] == "edge 0→1" and len(info.edges) == 6
    assert tuple(info.frame.iloc[1][info.edges]) == nb201.operations(nb201.parse(archs[2]))
    curves = [curve([1.0, np.nan, 3.0], archs=archs)]
    fig = viz.plot_parallel(curves, slot_axes(curves, "nb201"))
    assert [d.label for d in fig.data[0].dimensions][-1] == "acc"


def test_parallel_coordinates_draw_a_random_sample_of_a_long_run_and_say_so():
    n = MAX_PARALLEL_LINES + 200
    archs = [nb201.format(a) for a in nb201.sample(np.random.default_rng(6), n)]
    curves = [curve(np.arange(n, dtype=float), archs=archs)]
    fig = viz.plot_parallel(curves, slot_axes(curves, "nb201"))
    assert len(fig.data[0].dimensions[-1].values) == MAX_PARALLEL_LINES
    assert f"a random {MAX_PARALLEL_LINES:,} of {n:,}" in fig.layout.title.text
    assert len(viz.evaluations_table(curves, slot_axes(curves, "nb201"))) == n  # the export keeps all


def test_surrogate_panel_shows_errors_on_log_axes_for_percent_accuracies():
    r = SurrogateQuality("wl", np.array([0.8, 0.9]), 0.85, 0.05, 0.9, np.array([90.0, 80.0]),
                                 np.array([89.0, 85.0]), np.array([1.0, 2.0]), "log_error")
    from nasviz.viz._kernels import _get_surrogate_info

    info = _get_surrogate_info([r])
    assert info.error_scale and info.truth[0].tolist() == [10.0, 20.0] and info.mean[0].tolist() == [11.0, 15.0]
    fig = viz.plot_surrogate_quality([r], "acc")
    assert fig.layout.xaxis2.type == "log" and "error" in fig.layout.xaxis2.title.text
    other = SurrogateQuality("wl", np.array([0.5]), 0.5, 0.0, 0.9, np.array([-3.0, 120.0]),
                                     np.array([0.0, 100.0]), np.array([1.0, 1.0]), "standardize")
    assert not _get_surrogate_info([other]).error_scale


def test_runs_whose_every_evaluation_failed_are_left_out_of_the_curves():
    """A run with only failed evaluations (cells a table lacks): the Compare page raised on it."""
    failed = curve([np.nan, np.nan], strategy="t")
    info = _get_curves_info([curve([1, 2]), failed])
    assert info.groups == ["s"]
    assert viz.plot_curves([failed]).layout.annotations  # an empty figure saying so
