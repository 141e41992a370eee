"""The figure builders' data functions: what a user reads off each plot."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from nasviz import viz
from nasviz.spaces import nb201
from nasviz.viz._distances import _get_distance_matrix_info
from nasviz.viz._embedding import _get_pool_info
from nasviz.viz._features import _get_feature_gradient_info
from nasviz.viz._graph import _get_graph_info
from nasviz.viz._history import _get_history_info
from nasviz.viz._hyperparameters import _get_hyperparameter_info, flatten_hyperparameters


def evals(values):
    return [{"arch": f"a{i}", "value": v, "status": "ok" if v is not None else "failed"} for i, v in enumerate(values)]


# ----------------------------------------------------------------------------- history
def test_history_best_so_far_steps_at_improvements_and_skips_failures():
    info = _get_history_info(evals([3.0, None, 1.0, 5.0, 4.0, 6.0]), optimum=7.0)
    assert info.n_total == 6 and info.n_ok == 5 and info.n_failed == 1
    assert info.x.tolist() == [1, 3, 4, 5, 6]  # the failed 2nd evaluation is not plotted
    assert info.best_x.tolist() == [1, 4, 6]
    assert info.best.tolist() == [3.0, 5.0, 6.0]
    assert info.optimum == 7.0 and info.note is None


def test_history_extends_the_best_line_to_the_last_evaluation():
    info = _get_history_info(evals([5.0, 1.0, 2.0]))
    assert info.best_x.tolist() == [1, 3] and info.best.tolist() == [5.0, 5.0]


def test_history_downsampling_keeps_every_improvement_and_says_so():
    rng = np.random.default_rng(0)
    values = rng.normal(size=10_000)
    values[[123, 4567, 9998]] = [10.0, 11.0, 12.0]
    info = _get_history_info(evals(values.tolist()), max_points=500)
    assert len(info.x) < 700
    assert {124, 4568, 9999} <= set(info.x.tolist())
    assert info.note == f"showing {len(info.x):,} of 10,000 evaluations"
    # the best-so-far line is exact, not downsampled
    assert info.best[-1] == 12.0 and info.best_x[-1] == 10_000


def test_history_with_no_successful_evaluation_draws_a_message():
    info = _get_history_info(evals([None, None]))
    assert info.n_ok == 0 and len(info.best) == 0
    fig = viz.plot_history(evals([None]))
    assert "no successful evaluation" in fig.layout.annotations[0].text


def test_history_ignores_non_finite_values():
    info = _get_history_info([{"arch": "a", "value": float("nan")}, {"arch": "b", "value": "x"}, {"arch": "c", "value": 2}])
    assert info.x.tolist() == [3] and info.best.tolist() == [2.0]


# ----------------------------------------------------------------------------- progress
def _steps(n: int, **fields) -> list[SimpleNamespace]:
    """``n`` steps as the progress reads them (:class:`nasviz.viz.StepProgress`)."""
    base = {"budget": 0, "elapsed": 0.0, "step_seconds": None, "best_value": None, "best_arch": None}
    return [SimpleNamespace(**{**base, "step": s, "n_evaluations": s,
                               **{k: (v(s) if callable(v) else v) for k, v in fields.items()}})
            for s in range(1, n + 1)]


def test_progress_info_from_run_and_snapshots():
    steps = _steps(3, n_evaluations=lambda s: 2 * s, budget=10, elapsed=lambda s: 0.5 * s, step_seconds=0.5,
                   best_value=lambda s: 90.0 + s)
    info = viz.get_progress_info("running", steps, budget=10, n_evaluations=7)
    assert (info.step, info.n_evaluations, info.budget) == (3, 7, 10)
    assert info.fraction == pytest.approx(0.7)
    assert info.seconds_per_step == pytest.approx(0.5)
    assert info.best_value == 93.0
    assert info.status_line.startswith("running · step 3 · 7/10 evaluations")


def test_progress_before_the_first_step():
    info = viz.get_progress_info("running", [], budget=5)
    assert (info.step, info.n_evaluations, info.budget, info.fraction, info.seconds_per_step) == (0, 0, 5, 0.0, None)


def test_a_minimised_metrics_progress_shows_its_value_not_the_stored_score():
    """Runs store scores (minus a minimised metric); the status line once read "best -0.23" for a
    loss of 0.23. The page passes the run's ``shown``, and the best reads as the metric's value."""
    steps = _steps(2, budget=4, best_value=-0.23)
    info = viz.get_progress_info("running", steps, decimals=2, shown=lambda score: None if score is None else -score)
    assert info.best_value == pytest.approx(0.23)
    assert info.status_line.endswith("best 0.23")


@pytest.mark.parametrize("s, text", [(None, "-"), (0.0123, "12 ms"), (3.21, "3.2 s"), (301, "5 min 01 s")])
def test_format_seconds(s, text):
    assert viz.format_seconds(s) == text


# ----------------------------------------------------------------------------- MDS / pool
def test_classical_mds_recovers_planar_distances_exactly():
    rng = np.random.default_rng(1)
    points = rng.normal(size=(30, 2))
    D = np.linalg.norm(points[:, None] - points[None], axis=-1)
    emb = viz.classical_mds(D)
    D2 = np.linalg.norm(emb[:, None] - emb[None], axis=-1)
    np.testing.assert_allclose(D2, D, atol=1e-9)


def test_classical_mds_handles_tiny_and_degenerate_inputs():
    assert viz.classical_mds(np.zeros((1, 1))).shape == (1, 2)
    assert viz.classical_mds(np.zeros((4, 4))).tolist() == [[0.0, 0.0]] * 4
    with pytest.raises(ValueError, match="square"):
        viz.classical_mds(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        viz.classical_mds(np.array([[0, np.nan], [np.nan, 0]]))


def test_pool_info_marks_the_selected_batch_and_checks_lengths():
    D = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]], dtype=float)
    info = _get_pool_info(["a", "b", "c"], D, mean=[1, 2, 3], std=[0.1, 0.2, 0.3], selected=[2], qualities=[1, 1, 5])
    assert info.selected.tolist() == [False, False, True]
    assert info.mean.tolist() == [1, 2, 3] and info.qualities.tolist() == [1, 1, 5]
    # collinear points embed on a line with their spacing
    assert abs(info.x[0] - info.x[2]) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="std has 2 entries for a pool of 3"):
        _get_pool_info(["a", "b", "c"], D, std=[1, 2])
    with pytest.raises(ValueError, match="selected index 3"):
        _get_pool_info(["a", "b", "c"], D, selected=[3])
    fig = viz.plot_pool(["a", "b", "c"], D, mean=[1, 2, 3], std=[0.1, 0.2, 0.3], selected=[2])
    assert [t.name for t in fig.data] == ["pool", "selected batch"]


def test_evaluated_architectures_share_the_pool_embedding():
    """Pool and evaluated points are embedded together: distances between a pool member and an
    evaluated architecture are kept, and the evaluated ones are their own trace with values."""
    D = np.array([[0, 1, 3, 2], [1, 0, 2, 1], [3, 2, 0, 1], [2, 1, 1, 0]], dtype=float)  # points on a line 0,1,3,2
    info = _get_pool_info(["a", "b"], D, mean=[1, 2], evaluated=["c", "d"], evaluated_values=[0.5, 0.7])
    assert len(info.x) == 2 and info.evaluated_archs == ["c", "d"] and info.evaluated_values.tolist() == [0.5, 0.7]
    assert abs(info.x[0] - info.evaluated_x[0]) == pytest.approx(3.0)  # a to c, across the two sets
    with pytest.raises(ValueError, match=r"shape \(3, 3\) for a pool of 2 and 2 evaluated"):
        _get_pool_info(["a", "b"], D[:3, :3], evaluated=["c"] * 2)
    fig = viz.plot_pool(["a", "b"], D, mean=[1, 2], selected=[0], evaluated=["c", "d"], evaluated_values=[0.5, 0.7])
    assert [t.name for t in fig.data] == ["pool", "evaluated so far", "selected batch"]
    assert "measured 0.5" in fig.data[1].text[0]


# ----------------------------------------------------------------------------- hyperparameters
def test_flatten_hyperparameters_keeps_theta_amplitude_noise():
    hp = {"theta": {"lambda_1": 0.1, "lambda_2": 0.2}, "amplitude": 2.0, "noise": 0.01, "seconds": 0.3,
          "n_obs": 10, "transform": "standardize", "candidates": {"h": [1, 2]}}
    assert flatten_hyperparameters(hp) == {"lambda_1": 0.1, "lambda_2": 0.2, "amplitude": 2.0, "noise": 0.01}


def test_hyperparameter_traces_have_gaps_before_the_gp_is_fitted():
    snaps = [{"step": 1, "strategy": {}}, {"step": 2, "strategy": {"hyperparameters": {"theta": {"h": 1}}}},
             {"step": 3, "strategy": {"hyperparameters": {"theta": {"h": 2}, "noise": 0.1}}}]
    info = _get_hyperparameter_info(snaps)
    assert info.steps.tolist() == [2, 3]
    assert info.series["h"].tolist() == [1.0, 2.0]
    assert math.isnan(info.series["noise"][0]) and info.series["noise"][1] == 0.1


# ----------------------------------------------------------------------------- distances
def test_heatmap_indices_orders_by_value_best_first_failures_last_and_caps():
    idx = viz.heatmap_indices([1.0, None, 3.0, 2.0], order="value")
    assert idx.tolist() == [2, 3, 0, 1]
    assert viz.heatmap_indices([1.0, 2.0], order="evaluation").tolist() == [0, 1]
    capped = viz.heatmap_indices(list(range(1000)), order="value", max_size=100)
    assert len(capped) == 100 and capped[0] == 999 and capped[-1] == 0
    with pytest.raises(ValueError, match="order must be one of"):
        viz.heatmap_indices([1.0], order="random")


def test_distance_matrix_info_validates_shapes_and_notes_the_cap():
    comps = {"operations": np.zeros((2, 2)), "in_degree": np.ones((2, 2))}
    info = _get_distance_matrix_info(comps, ["a", "b"], [1.0, None], n_total=10)
    assert list(info.components) == ["operations", "in_degree"]
    assert info.note == "showing 2 of 10 evaluated architectures"
    with pytest.raises(ValueError, match="component 'x' has shape"):
        _get_distance_matrix_info({"x": np.zeros((3, 3))}, ["a", "b"], [1.0, 2.0])
    panels = viz.plot_distance_panels(comps, ["a", "b"], [1.0, 2.0])
    assert [name for name, _ in panels] == ["operations", "in_degree"]
    assert all(len(f.data) == 1 and f.data[0].type == "heatmap" for _, f in panels)


def test_each_distance_component_is_its_own_square_panel_with_its_own_colour_bar():
    """OTMANN's eight components in one figure were ~120 px each at 1280 px and ~40 px on a phone:
    one figure per component, for page columns that a narrow screen stacks."""
    comps = {f"c{k}": np.full((2, 2), float(k)) for k in range(8)}
    panels = viz.plot_distance_panels(comps, ["a", "b"], [1.0, 2.0])
    assert len(panels) == 8
    for name, fig in panels:
        assert fig.layout.title.text == name and fig.layout.yaxis.scaleanchor == "x"
        assert fig.data[0].colorbar.title.text == "far"
    assert viz.distance_note(2, 2, "value") == "rows and columns: the evaluated architectures best value first"
    assert "an evenly spaced 150 of 400" in viz.distance_note(150, 400, "evaluation")
    empty = viz.plot_distance_panels({}, [], [])
    assert empty[0][1].layout.annotations


# ----------------------------------------------------------------------------- WL features
def test_feature_gradient_info_splits_top_positive_and_negative():
    info = _get_feature_gradient_info(["a", "b", "c", "d", "e"], [0.5, -2.0, 0.0, 3.0, -0.1], top=1)
    assert (info.positive, info.negative) == (["d"], ["b"])
    info = _get_feature_gradient_info(["a", "b", "c", "d", "e"], [0.5, -2.0, 0.0, 3.0, -0.1], top=10)
    assert info.positive == ["d", "a"] and info.negative == ["b", "e"]  # zero is neither
    with pytest.raises(ValueError, match="2 gradients for 3 features"):
        _get_feature_gradient_info(["a", "b", "c"], [1.0, 2.0])


def test_features_of_two_wl_iterations_with_one_tree_read_apart():
    """``input -> (output)`` is the unfolding tree of the input node at h = 1 and at h = 2 (the
    output has no out-neighbour): two features, labelled with their depth when it is known."""
    from nasviz.kernels.wl import wl_labels
    from nasviz.viz._features import depth_labelled

    labels = wl_labels(nb201.parse("|none~0|+|none~0|none~1|+|skip_connect~0|none~1|none~2|").reduced(), 2)
    assert labels[1][0] == labels[2][0] == "input -> (output)"
    assert depth_labelled([labels[1][0], labels[2][0]], [1, 2]) == ["h=1: input -> (output)", "h=2: input -> (output)"]
    assert depth_labelled(["a"], None) == ["a"]  # a snapshot stored without depths
    with pytest.raises(ValueError, match="1 depths for 2 features"):
        depth_labelled(["a", "b"], [0])


# ----------------------------------------------------------------------------- graphs
def test_graph_layout_puts_the_input_first_and_the_output_last():
    arch = nb201.parse("|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|none~2|")
    info = _get_graph_info(arch, "t")
    assert len(info.x) == 8 and len(info.edges) == 10
    assert info.x[0] == info.x.min() and info.x[7] == info.x.max()
    assert info.labels[0] == "input" and info.labels[7] == "output"
    # a node sits strictly right of each of its predecessors
    assert all(info.x[v] > info.x[u] for u, v in info.edges)
    fig = viz.plot_architecture(arch, "t")
    assert len(fig.layout.annotations) == 10  # one arrow per edge


def test_legends_sit_under_the_plots_not_under_the_chart_toolbar():
    """The chart toolbar appears in the top right corner: legends of the figures that have them
    go below the plot area."""
    from nasviz.viz._common import LEGEND_BELOW
    from nasviz.dashboard.explorer.comparison import RunCurve

    history = viz.plot_history([{"index": i, "step": i + 1, "arch": str(i), "value": float(i), "status": "ok"}
                                for i in range(5)], optimum=5.0)
    curve = RunCurve(1, "r", "random", 0, "acc", np.array([1.0, 2.0, 3.0]), ["a", "b", "c"], 4.0, 3)
    for fig in (history, viz.plot_curves([curve]), viz.plot_final_values([curve])):
        # at the figure's bottom edge, under the x axis's title, with room for both (issue 46)
        assert fig.layout.legend.orientation == "h" and fig.layout.legend.yref == "container"
        assert fig.layout.legend.y == LEGEND_BELOW["y"] == 0 and fig.layout.legend.yanchor == "bottom"
        assert fig.layout.margin.b >= 80


def test_large_graphs_show_their_labels_on_hover_only():
    """A cell's labels are written beside its nodes; a 32-node randomly wired graph's would
    overlap, so they move to the hover text."""
    from nasviz.spaces import get_space

    cell = viz.plot_architecture(nb201.parse("|nor_conv_3x3~0|+|skip_connect~0|none~1|+|avg_pool_3x3~0|none~1|nor_conv_1x1~2|"))
    wired = viz.plot_architecture(get_space("wired").sample(np.random.default_rng(0), 1)[0])
    assert cell.data[-1].mode == "markers+text" and wired.data[-1].mode == "markers"
    assert list(wired.data[-1].hovertext)  # the labels are still there, on hover


def test_log_axes_label_only_decades_over_a_wide_span():
    """Over several decades Plotly's 2-and-5 labels ran together; a short span keeps them."""
    from nasviz.viz._common import log_axis

    wide = log_axis([1e-6, 0.3, 1000.0])
    assert wide["type"] == "log" and wide["dtick"] == 1 and wide["exponentformat"] == "power"
    assert log_axis([np.nan, -1.0]) == {"type": "log"}  # nothing positive to span
    fig = viz.plot_hyperparameters([{"step": s, "strategy": {"hyperparameters": {"lam": 10.0 ** -s}}} for s in range(1, 6)])
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.dtick == 1


def test_a_short_log_axis_labels_its_ticks_with_their_whole_value():
    """Under two decades Plotly labelled 0.2, 0.3 ... by their first digit ("2", "3"), so a regret
    axis from 0.15 to 1.2 read as if it rose from 2 to 9 (seen on Compare): the ticks carry their
    value ("0.2", "0.5", "1")."""
    from nasviz.viz._common import log_axis

    axis = log_axis([0.15, 0.4, 1.2])
    shown = {text for value, text in zip(axis["tickvals"], axis["ticktext"]) if 0.15 <= value <= 1.2}
    assert shown == {"0.2", "0.5", "1"}
    narrow = log_axis([2.5, 3.8])  # no 1-2-5 tick inside twice: every digit
    assert {t for v, t in zip(narrow["tickvals"], narrow["ticktext"]) if 2.5 <= v <= 3.8} == {"3"}
    assert all(float(t) == v for v, t in zip(axis["tickvals"], axis["ticktext"]))
    flat = log_axis([1.0833, 1.0833])  # one run whose regret has not moved: Plotly spans 0.2-10 itself
    assert set(flat["ticktext"]) <= {f"{m * 10.0 ** k:.3g}" for k in range(-2, 3) for m in (1, 2, 5)}
    from nasviz.dashboard.explorer.comparison import RunCurve

    run = RunCurve(1, "r", "random", 0, "acc", np.array([0.6, 0.8, 0.85]), ["a", "b", "c"], 1.0, 3)
    curves = viz.plot_curves([run], True, "evaluations")  # regret 0.4 -> 0.15
    assert curves.layout.yaxis.ticktext is not None and "0.2" in curves.layout.yaxis.ticktext


def test_a_lesson_bars_value_sits_above_its_error_bar_not_across_it():
    # Seen on the Learn page: Plotly's outside text sits just above the bar, where the error bar's
    # whisker crossed "0.23 ± 0.23". Each value is now written above the whisker's top.
    fig = viz.plot_lesson_bars(["random", "evolution", "BO"], [0.66, 0.23, 0.14], [0.06, 0.23, 0.14])
    labels = {a.x: a for a in fig.layout.annotations}
    assert [labels[k].text for k in ("random", "evolution", "BO")] == ["0.66 ± 0.06", "0.23 ± 0.23", "0.14 ± 0.14"]
    for name, top in (("random", 0.72), ("evolution", 0.46), ("BO", 0.28)):
        assert labels[name].y == pytest.approx(top) and labels[name].yanchor == "bottom"
    assert not fig.data[0].text  # no second copy on the bar itself
    assert fig.layout.yaxis.range[1] > 0.72  # room above the highest label
    plain = viz.plot_lesson_bars(["a", "b"], [1.0, 2.0])  # no errors: the value above the bar, no "±"
    assert [(a.text, a.y) for a in plain.layout.annotations] == [("1.00", 1.0), ("2.00", 2.0)]


def test_counts_take_their_nouns_number():
    from nasviz.rounding import counted

    assert [counted(n, "search", "searches") for n in (0, 1, 6, 1200)] == ["0 searches", "1 search", "6 searches",
                                                                          "1,200 searches"]
    assert counted(1, "run") == "1 run" and counted(2, "run") == "2 runs"
