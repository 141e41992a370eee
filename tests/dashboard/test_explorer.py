"""nasviz.dashboard.explorer: the computations behind the explorer pages, on a synthetic table and real kernels."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.dashboard import launching
from nasviz.dashboard.explorer import comparison, interpretation, kernels, pairs, samples
from nasviz.dashboard.kernels import KernelSet, induced_distance
from nasviz.dashboard.sources import DataSource, table_from_path
from nasviz.kernels.wl import wl_labels
from nasviz.spaces import nb201
from stored_records import evaluation  # tests/helpers
from tests_app_helpers import write_synthetic_table  # tests/app


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    return table_from_path(write_synthetic_table(tmp_path_factory.mktemp("t") / "synthetic.csv"))


def test_sample_table_is_distinct_finite_and_best_first(table):
    s = samples.sample_table(table, "acc", 50, seed=3)
    assert len(set(s.strings)) == 50 and np.all(np.diff(s.values) <= 0)
    assert all(table.lookup(a, "acc") == v for a, v in zip(s.archs, s.values))
    assert len(samples.sample_table(table, "acc", 10_000).archs) == len(table)  # capped
    with pytest.raises(ValueError, match="at least 2"):
        samples.sample_table(table, "acc", 1)
    with pytest.raises(ValueError, match="metric 'nope'"):
        samples.sample_table(table, "nope", 10)


def test_sample_run_keeps_successful_distinct_architectures(table):
    evals = [evaluation(table.strings[i], float(i), index=i) for i in range(5)]
    evals += [evaluation(table.strings[9], None, index=5), evaluation(table.strings[0], 7.0, index=6)]
    s = samples.sample_run(evals, "acc", 3)
    assert s.strings == [table.strings[0], table.strings[4], table.strings[3]]
    assert s.values.tolist() == [7.0, 4.0, 3.0]
    with pytest.raises(ValueError, match="fewer than 2"):
        samples.sample_run(evals[:1], "acc", 3)


def test_tw_edge_contributions_sum_to_the_operation_distance(table):
    rng = np.random.default_rng(0)
    for _ in range(20):
        a, b = nb201.sample(rng, 2)
        for spec in ("tw1g", "tw2g"):
            rows = pairs.tw_edge_masses(a, b, spec)
            w_o = KernelSet().get(spec).distances([a], [b])["operations"][0, 0]
            assert sum(r.contribution for r in rows) == pytest.approx(w_o, abs=1e-12)
            assert all(0 <= r.mass_a <= 1 + 1e-12 and 0 <= r.mass_b <= 1 + 1e-12 for r in rows)
    with pytest.raises(ValueError, match="not a tree-Wasserstein"):
        pairs.tw_edge_masses(a, b, "wl")


def test_otmann_plan_matches_the_kernel_and_pair_distances_cover_every_component():
    rng = np.random.default_rng(1)
    a, b = nb201.sample(rng, 2)
    plan = pairs.otmann_plan(a, b)
    d = KernelSet().get("otmann").distances([a], [b])
    assert plan.distance == pytest.approx(d["d_0.1"][0, 0], rel=1e-9)
    rows = pairs.pair_distances(["tw2g", "wl"], a, b)
    assert [(r["kernel"], r["component"]) for r in rows] == [
        ("tw2g", "operations"), ("tw2g", "in_degree"), ("tw2g", "out_degree"), ("wl", "h0"), ("wl", "h1"), ("wl", "h2")]
    assert all(r["distance"] == 0 for r in pairs.pair_distances(["tw2g", "wl"], a, a))


def test_neighbours_change_one_edge_and_carry_table_values(table):
    arch = table.archs[0]
    rows = pairs.neighbour_values(arch, table, "acc")
    assert len(rows) == 24
    for r in rows:
        ops_a, ops_b = nb201.operations(arch), nb201.operations(nb201.parse(r["arch"]))
        assert sum(x != y for x, y in zip(ops_a, ops_b)) == 1 and r["change"].startswith("edge ")
        nb = nb201.parse(r["arch"])
        assert r["value"] == (table.lookup(nb, "acc") if nb in table else None)
    known = [r["value"] for r in rows if r["value"] is not None]
    assert known == sorted(known, reverse=True) and all(r["value"] is None for r in rows[len(known):])


def test_parse_wl_feature_reads_back_every_label_of_real_cells():
    rng = np.random.default_rng(2)
    for arch in nb201.sample(rng, 20):
        for depth in wl_labels(arch.reduced(), 2):
            for name in depth:
                tree = interpretation.parse_wl_feature(name)
                assert tree.parent[0] == -1 and tree.labels[0] == name.split(" ")[0]
                assert all(0 <= p < i for i, p in enumerate(tree.parent) if i)
    t = interpretation.parse_wl_feature("nor_conv_3x3 -> (output, avg_pool_3x3 -> (output))")
    assert t.labels == ["nor_conv_3x3", "output", "avg_pool_3x3", "output"] and t.parent == [-1, 0, 0, 2]
    for bad in ("", "a -> b", "a -> (b", "a -> (b))"):
        with pytest.raises(ValueError, match="not a WL feature"):
            interpretation.parse_wl_feature(bad)


def test_interpretation_finds_the_convolutions_that_drive_the_synthetic_value(table):
    # value = 50 + 5 * (number of convolutions) + noise
    it = interpretation.interpret_sample(samples.sample_table(table, "acc", 150, seed=0), top=3)
    g = it.op_gradients
    assert g["nor_conv_3x3"] > 0 and g["nor_conv_1x1"] > 0 and g["avg_pool_3x3"] < min(g["nor_conv_3x3"], g["nor_conv_1x1"])
    assert {p.operation for p in it.profiles} == {"nor_conv_3x3", "nor_conv_1x1", "avg_pool_3x3"}
    assert all(v > 0 for _, v, _ in it.top_positive) and all(v < 0 for _, v, _ in it.top_negative)
    assert all(0 <= d <= it.h for *_, d in it.top_positive + it.top_negative)
    cell = nb201.from_operations(["avg_pool_3x3", "nor_conv_3x3", "none", "skip_connect", "nor_conv_1x1", "avg_pool_3x3"])
    m = interpretation.mutation_probabilities(cell, g)
    assert m["joint"].shape == (6, 5) and m["joint"].sum() == pytest.approx(1.0)
    assert m["where"][0] > m["where"][1]  # a pooling edge is likelier to change than a convolution edge
    assert all(m["to"][k, nb201.OPERATIONS.index(op)] == 0 for k, op in enumerate(m["ops"]))


def test_surrogate_quality_runs_the_protocol_with_progress(table):
    seen = []
    q = kernels.surrogate_quality(table, "acc", "wl", n_train=30, n_test=60, trials=3, on_trial=seen.append)
    assert seen == [0, 1, 2] and q.spearman.shape == (3,)
    assert q.spearman_mean > 0.5 and q.spearman_se >= 0
    assert q.truth.shape == q.mean.shape == q.std.shape == (60,) and np.all(q.std > 0)
    with pytest.raises(ValueError, match="exceed the 300 rows"):
        kernels.surrogate_quality(table, "acc", "wl", n_train=250, n_test=60)


def test_study_runs_every_strategy_and_seed_and_curves_read_them(tmp_path, table):
    path = write_synthetic_table(tmp_path / "s.csv")
    source = DataSource.from_table(path, table_from_path(path))
    store = tmp_path / "store.sqlite"
    ids = launching.start_study(store, source, "acc", ["random", "evolution"], [0, 1], 6, background=False)
    curves = comparison.run_curves(store, ids)
    assert [(c.strategy, c.seed) for c in curves] == [("random", 0), ("random", 1), ("evolution", 0), ("evolution", 1)]
    assert all(len(c.values) == 6 and c.optimum == table_from_path(path).optimum("acc") for c in curves)
    with pytest.raises(ValueError, match="at least one strategy"):
        launching.start_study(store, source, "acc", [], [0], 6)
    with pytest.raises(ValueError, match="unknown strategy"):
        launching.start_study(store, source, "acc", ["nope"], [0], 6)
    with pytest.raises(ValueError, match="run 999 is not in the store"):
        comparison.run_curves(store, [999])


def test_compare_groups_runs_by_their_whole_configuration(tmp_path, table):
    """Runs of one strategy on two tables, or with two batch sizes, are different groups; seeds of
    one configuration are one group, and the labels name only what differs."""
    from nasviz import viz

    paths = [write_synthetic_table(tmp_path / name) for name in ("a.csv", "b.csv")]
    sources = [DataSource.from_table(p, table_from_path(p)) for p in paths]
    store = tmp_path / "store.sqlite"
    ids = []
    for source, batch_size in ((sources[0], 1), (sources[0], 2), (sources[1], 1)):
        for seed in (0, 1):
            config = launching.search_config(source, metric="acc", strategy="random", budget=4, batch_size=batch_size,
                                             seed=seed)
            ids.append(launching.start_run(store, config, background=False))
    curves = comparison.run_curves(store, ids)
    groups = [c.group for c in curves]
    assert groups[0] == groups[1] != groups[2] == groups[3] != groups[4] == groups[5] != groups[0]
    assert groups[0] == "random · batch_size=1 · table=a.csv" and groups[4] == "random · batch_size=1 · table=b.csv"
    final = viz.final_table(curves)
    assert sorted(final["strategy"]) == sorted(set(groups)) and set(final["runs"]) == {2}
    # among runs of one configuration the label is the strategy alone
    assert comparison.configuration_groups([{"strategy": "bo", "seed": 0}, {"strategy": "bo", "seed": 3}]) == ["bo", "bo"]
    assert comparison.configuration_groups([
        {"strategy": "bo", "strategy_options": {"batch": "kdpp", "pool": "random"}},
        {"strategy": "bo", "strategy_options": {"batch": "topk", "pool": "random"}},
    ]) == ["bo · strategy_options=batch=kdpp", "bo · strategy_options=batch=topk"]


def test_kernel_views_match_the_kernels_own_distances_and_matrix(table):
    archs = samples.sample_table(table, "acc", 12, seed=5).archs
    for spec in ("tw2g", "wl", "path"):
        dist, K = kernels.kernel_views(spec, archs)
        k = KernelSet().get(spec)
        ref = k.distances(archs, archs)
        assert dist.keys() == ref.keys() and all(np.allclose(dist[c], ref[c]) for c in ref)
        assert np.allclose(K, k.matrix(archs, archs))
        D = induced_distance(K)
        assert np.allclose(np.diag(D), 0) and np.allclose(D, D.T)


def test_explain_step_in_plain_language():
    """The teaching panel's sentences: the initial design, a fit with its bound warning, the
    selector's choice with each pick's prediction and rank, and what was measured."""
    from nasviz.dashboard.explain import explain_step
    from nasviz.state import BatchChoice, GPFit, PoolState, StepState

    init = explain_step(1, StepState(strategy="bo", phase="init"), [{"arch": "a", "value": 1.0, "status": "ok"}])
    assert "initial design" in init[0] and init[-1] == "Measured: 1 value, the best 1 (`a`) — the first measurement."
    fit = GPFit(kernel="tw2g", hyperparameters={"lambda_1": 1000.0}, amplitude=1.0, noise=1e-6, log_likelihood=0.0,
                n_observations=8, bounds_hit=("lambda_1",))
    pool = PoolState(candidates=("p", "q", "r"), mean=(1.0, 2.0, 3.0), std=(0.1, 0.2, 0.3), acquisition=(1.0, 3.0, 2.0),
                     acquisition_name="ucb", origin=("mutation", "mutation", "random"))
    state = StepState(strategy="bo", phase="bo", gp=fit, pool=pool, batch=BatchChoice(method="topk", indices=(1, 2)))
    lines = explain_step(4, state, [{"arch": "q", "value": 0.5, "status": "ok"}, {"arch": "r", "value": None,
                                                                               "status": "failed"}], best_before=0.9)
    text = "\n".join(lines)
    assert "fitted to 8 measured architectures" in text and "lambda_1 ended on a bound" in text
    assert "3 candidates (2 by mutation, 1 by random)" in text and "took the 2 candidates with the highest UCB" in text
    assert "- `q`: predicted 2 ± 0.2, UCB 3 (rank 1 of 3)" in text and "- `r`: predicted 3 ± 0.3, UCB 2 (rank 2 of 3)" in text
    assert lines[-1] == "Measured: 1 value, the best 0.5 (`q`); the best so far stays 0.9; 1 evaluation failed."


def test_epoch_columns_are_found_in_epoch_order_for_the_runs_metric():
    from nasviz.dashboard.views.curves import epoch_columns

    metrics = ["valid_accuracy", "test_accuracy", "valid_accuracy_epoch_10", "valid_accuracy_epoch_2",
               "loss_epoch_1", "valid_accuracy_epoch_1"]
    assert epoch_columns(metrics, "valid_accuracy") == (
        "valid_accuracy", ["valid_accuracy_epoch_1", "valid_accuracy_epoch_2", "valid_accuracy_epoch_10"])
    assert epoch_columns(metrics, "test_accuracy")[0] == "loss"  # no curve of its own: the first that has one
    assert epoch_columns(["acc", "cost"], "acc") is None


def test_slot_importance_finds_the_slots_the_value_depends_on(tmp_path):
    """A table whose value depends only on the operation of edge 1 (``e1``) and edge 4: shuffling
    those slots costs the GP's rank correlation, shuffling the others costs nearly nothing."""
    from nasviz.dashboard.explorer.samples import sample_table

    rng = np.random.default_rng(1)
    space = nb201.NB201Space()
    cells = list({nb201.format(a): a for a in nb201.sample(rng, 400)}.values())[:150]
    score = {"nor_conv_3x3": 3.0, "nor_conv_1x1": 2.0, "avg_pool_3x3": 1.0, "skip_connect": 0.5, "none": 0.0}
    lines = ["arch,acc"]
    for a in cells:
        ops = space.slots(a)
        lines.append(f"{nb201.format(a)},{60 + 4 * score[ops[1]] + 3 * score[ops[4]] + rng.normal(0, 0.1):.3f}")
    path = tmp_path / "two_slots.csv"
    path.write_text("\n".join(lines) + "\n")
    imp = interpretation.slot_importance(sample_table(table_from_path(path), "acc", 150, 0), kernel="slots", repeats=3)
    assert imp.baseline > 0.8
    top_two = {imp.slots[i] for i in np.argsort(-imp.drop)[:2]}
    assert top_two == {space.slot_names()[1], space.slot_names()[4]}, dict(zip(imp.slots, imp.drop.round(3)))
    others = [d for s, d in zip(imp.slots, imp.drop) if s not in top_two]
    assert max(others) < 0.5 * min(d for s, d in zip(imp.slots, imp.drop) if s in top_two)


def test_explanation_groups_pool_origins_by_generator():
    """Evolution rounds count as one origin; the climb's cells read "local search"."""
    from nasviz.dashboard.explain import explain_step
    from nasviz.state import BatchChoice, PoolState, StepState

    pool = PoolState(candidates=("p", "q", "r", "s"), mean=(1.0,) * 4, std=(0.1,) * 4, acquisition=(1.0, 2.0, 3.0, 4.0),
                     acquisition_name="ei", origin=("evolution-1", "evolution-3", "local-search", "random"))
    state = StepState(strategy="bo", phase="bo", pool=pool, batch=BatchChoice(method="topk", indices=(3,)))
    text = "\n".join(explain_step(2, state, [{"arch": "s", "value": 0.5, "status": "ok"}]))
    assert "4 candidates (2 by evolution, 1 by local search, 1 by random)" in text


def test_explanation_says_when_a_stalled_search_switched_to_ucb():
    """``stall_patience``: the step's notes record the stall, and the panel says why it explored."""
    from nasviz.dashboard.explain import explain_step
    from nasviz.state import BatchChoice, PoolState, StepState

    pool = PoolState(candidates=("p", "q"), mean=(1.0, 2.0), std=(0.1, 0.2), acquisition=(1.0, 2.0),
                     acquisition_name="ucb", origin=("evolution-1", "random"))
    state = StepState(strategy="bo", phase="bo", pool=pool, batch=BatchChoice(method="topk", indices=(1,)),
                      notes={"stalled": {"since_best": 20, "kappa": 4.5}})
    text = "\n".join(explain_step(31, state, []))
    assert "No new best in the last 20 evaluations" in text and "exploration weight raised to 4.5" in text
    calm = StepState(strategy="bo", phase="bo", pool=pool, batch=BatchChoice(method="topk", indices=(1,)))
    assert "stalled" not in "\n".join(explain_step(31, calm, []))
