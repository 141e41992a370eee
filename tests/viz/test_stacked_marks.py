"""Charts that draw fewer marks than data say so (issue 46): the late candidate pool showed 2
circles for 100 candidates, learning curves 2 lines for 15, and three hyperparameters at 0.001
one line; the history marks the step a replay shows; the progress counts the pause."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from nasviz import viz
from nasviz.viz._embedding import positions_shared


def test_a_pool_whose_candidates_share_spots_says_how_many():
    n = 100
    # 100 candidates, 98 of them equivalent: every distance between them is 0
    D = np.zeros((n, n))
    D[0, 1:] = D[1:, 0] = 1.0
    D[1, 2:] = D[2:, 1] = 1.0
    D[0, 1] = D[1, 0] = 1.5
    archs = [f"a{i}" for i in range(n)]
    fig = viz.plot_pool(archs, D, mean=np.linspace(0, 1, n), std=np.full(n, 0.1), selected=[2])
    assert "100 candidates drawn as 3 spots" in fig.layout.title.subtitle.text
    assert "98 candidates on this spot" in fig.data[0].text[5]
    apart = viz.plot_pool(archs[:3], D[:3, :3] + 0.0, mean=[0, 1, 2], std=[1, 1, 1])
    assert "drawn as" not in (apart.layout.title.subtitle.text or "")
    assert list(positions_shared(np.array([0.0, 0.0, 1.0]), np.array([0.0, 1e-9, 0.0]))) == [2, 2, 1]


def test_identical_learning_curves_are_counted():
    curves = {f"cell {i}": [50.0, 60.0, 70.0] for i in range(13)}
    curves.update({"x": [40.0, 45.0, 48.0], "y": [30.0, 31.0, 32.0]})
    fig = viz.plot_learning_curves(curves)
    assert len(fig.data) == 3
    assert "15 curves drawn as 3 lines" in fig.layout.title.subtitle.text
    assert any("and 12 more with this curve" in trace.name for trace in fig.data)


def test_hyperparameters_with_equal_values_are_one_labelled_line():
    snaps = [{"step": s, "strategy": {"hyperparameters": {"lambda_1": 0.5 + s, "lambda_3": 1e-3, "l[hamming]": 1e-3,
                                                          "noise": 1e-3, "amplitude": 2.0}}} for s in range(1, 6)]
    fig = viz.plot_hyperparameters(snaps)
    names = [t.name for t in fig.data]
    assert "lambda_3 = l[hamming] = noise (one line)" in names and len(fig.data) == 3
    assert "5 hyperparameters drawn as 3 lines" in fig.layout.title.subtitle.text


def test_the_history_marks_the_replayed_step():
    evals = [{"index": i, "step": 1 + i // 2, "arch": str(i), "value": float(i), "status": "ok"} for i in range(10)]
    fig = viz.plot_history(evals, optimum=10.0, marked_step=3, decimals=2)
    (band,) = [s for s in fig.layout.shapes if s.type == "rect"]
    assert (band.x0, band.x1) == (4.5, 6.5)  # evaluations 5 and 6 belong to step 3
    assert any(a.text == "step 3" for a in fig.layout.annotations)
    assert not [s for s in viz.plot_history(evals, optimum=10.0).layout.shapes if s.type == "rect"]


def test_time_per_step_counts_the_pause():
    steps = [SimpleNamespace(step=s, n_evaluations=s, budget=10, elapsed=2.0 * s, step_seconds=0.006, best_value=None,
                             best_arch=None) for s in range(1, 4)]
    info = viz.get_progress_info("running", steps, budget=10, pause=2.0)
    assert viz.step_time_text(info) == "2.0 s"  # it read 6 ms during a 2 s pause
    assert "6 ms computing + 2.0 s pause per step" in info.status_line
