"""Auto-Keras (paper 003) as BO: edit distance on Fig. 1-like MLPs, the A*/SA tree-search pool, warm starts, a run."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nasviz.kernels import make_kernel
from nasviz.spaces.mlp.morphisms import apply_sequence
from nasviz.objectives.datasets import load_dataset
from nasviz.objectives.training import TrainingObjective
from nasviz.runner import run_search
from nasviz.spaces import mlp as L
from nasviz.state import StepState
from nasviz.strategies.autokeras import AutoKeras
from nasviz.strategies.factory import make_strategy
from nasviz.strategies.tree_search import TreeSearchPool, tree_search

pytestmark = pytest.mark.usefixtures("one_torch_thread")

FIG1 = (
    "input;relu:16<0;relu:16<1;relu:32<2;relu:32<3;relu:16<4;linear<5;output<6",
    "input;relu:16<0;relu:16<1;relu:32<2;relu:32<3;relu:32<4;relu:16<5;linear<6;output<7",
    "input;tanh:128<0;logistic:64<0;tanh:256<1,2;logistic:128<1;tanh:256<3,4;linear<5;linear<3,4;output<6,7",
)


def test_edit_distance_orders_fig1_networks():
    a, b, c = (L.parse(s) for s in FIG1)
    for name, D in make_kernel("edit").distances([a, b, c], [a, b, c]).items():
        assert D[0, 1] < D[0, 2] and D[0, 1] < D[1, 2], name


def _units_cost(archs):
    """A known acquisition cost: more units and layers are better (lower cost)."""
    return np.array([-sum(w or 0 for w in a.widths) / 100.0 - a.n_nodes for a in archs])


def test_tree_search_returns_an_observed_ancestor_and_valid_morphs():
    history = [(a, float(c)) for a, c in zip(L.initial_pool()[:3], _units_cost(L.initial_pool()[:3]))]
    observed = {a for a, _ in history}
    rng = np.random.default_rng(0)
    result = tree_search(history, _units_cost, rng, r=0.8, t_low=0.05)
    best = result.best
    assert best is not None and best.ancestor in observed
    assert best.morphs and best.arch not in observed
    # replaying the morphisms from the ancestor gives the returned network
    assert apply_sequence(best.ancestor, best.morphs)[-1].child == best.arch
    assert best.cost < min(c for _, c in history)  # f_min beat every observed cost
    assert result.n_expanded == int(np.ceil(np.log(0.05) / np.log(0.8)))  # T: 1 -> < t_low
    for cand in result.candidates[:20]:
        assert cand.ancestor in observed
        assert apply_sequence(cand.ancestor, cand.morphs)[-1].child == cand.arch


def test_tree_search_excludes_and_validates():
    history = [(L.initial_pool()[0], 0.0)]
    banned = set()
    rng = np.random.default_rng(1)
    first = tree_search(history, _units_cost, rng, t_low=0.3)
    banned.add(first.best.arch)
    second = tree_search(history, _units_cost, np.random.default_rng(1), t_low=0.3, exclude=banned.__contains__)
    assert second.best.arch not in banned
    with pytest.raises(ValueError, match="at least one observed"):
        tree_search([], _units_cost, rng)
    with pytest.raises(ValueError, match="0 < r < 1"):
        tree_search(history, _units_cost, rng, r=1.5)


def test_tree_search_stops_at_max_scored():
    history = [(a, float(c)) for a, c in zip(L.initial_pool()[:3], _units_cost(L.initial_pool()[:3]))]
    full = tree_search(history, _units_cost, np.random.default_rng(0), r=0.8, t_low=0.05)
    capped = tree_search(history, _units_cost, np.random.default_rng(0), r=0.8, t_low=0.05, max_scored=10)
    # the cap is checked between expansions: at most one expansion (n_children) beyond it
    assert 10 <= len(capped.candidates) < 10 + 8 < len(full.candidates)
    assert capped.n_expanded < full.n_expanded and capped.best is not None


def test_autokeras_is_bo_with_its_papers_parts():
    from nasviz.spaces import nb201
    from nasviz.strategies.bo import BayesianOptimisation

    strategy = make_strategy("autokeras", space=L.SPACE, seed=0, beta="1.0")
    assert isinstance(strategy, BayesianOptimisation) and strategy.name == "autokeras"
    parts = strategy.parts
    assert (parts.model.kernel_name, parts.acquisition.acquisition, parts.pool.pool, parts.batch.batch) == (
        "edit", "ucb", "autokeras-tree", "topk")
    assert (parts.run.init, parts.model.targets, parts.model.failures, parts.run.dedupe) == (
        "pool", "robust", "worst", "canonical")
    assert strategy.parts.acquisition.kappa == 1.0 and isinstance(strategy.pool_generator, TreeSearchPool)
    options = make_strategy("autokeras", space=L.SPACE, acq_fraction="0.5", n_children="4").pool_generator
    assert options.acq_fraction == 0.5 and options.n_children == 4
    with pytest.raises(ValueError, match="'autokeras-tree' needs the morphisms representation"):
        AutoKeras(nb201.SPACE)


def test_exhausted_tree_search_falls_back_to_unseen_children(monkeypatch):
    """A tree search that finds nothing new must not end the run: ask() still proposes."""
    import nasviz.strategies.tree_search as ts
    from nasviz.objectives.base import Evaluation

    strategy = AutoKeras(L.SPACE, seed=0, n_init=3)
    first = strategy.ask(3)
    strategy.tell([Evaluation(a, 90.0 + i, 1.0) for i, a in enumerate(first)])
    monkeypatch.setattr(ts, "tree_search", lambda *a, **k: ts.TreeSearchResult(best=None))
    proposal = strategy.ask(1)
    assert len(proposal) == 1 and proposal[0] not in first
    ancestor, morphs = strategy.lineage[proposal[0]]
    assert ancestor == first[2] and len(morphs) == 1  # the best observed network, one morph
    st = strategy.state()
    assert st.notes["fallback"] is True and st.pool.origin[st.batch.indices[0]] == "fallback-morph"


def test_acquisition_cap_follows_measured_times():
    pool = TreeSearchPool(acq_fraction=0.25, n_children=8)
    assert pool.max_scored([2.0, 2.0]) is None  # nothing measured yet: Alg. 1 unchanged
    pool._sec_per_scored = 0.01
    assert pool.max_scored([2.0, 2.0]) == 50  # 0.25 * 2 s / 0.01 s
    pool._sec_per_scored = 1.0
    assert pool.max_scored([2.0, 2.0]) == 8  # never below one expansion's children
    uncapped = TreeSearchPool(acq_fraction=None)
    uncapped._sec_per_scored = 0.01
    assert uncapped.max_scored([2.0, 2.0]) is None
    with pytest.raises(ValueError, match="acq_fraction"):
        TreeSearchPool(acq_fraction=0.0)


def _trained_parent():
    """A wine objective with Auto-Keras's warm starts attached, and a trained first initial network."""
    data = load_dataset("wine", seed=0, max_train=60)
    objective = TrainingObjective(L.SPACE, data, training={"epochs": 2, "patience": 1}, device="cpu")
    strategy = AutoKeras(L.SPACE, seed=0, n_init=2)
    strategy.attach(objective)
    parent = L.initial_pool()[0]
    assert objective.evaluate([parent])[0].ok and L.format(parent) in strategy.networks
    return data, objective, strategy, parent


def _network(arch, arrays, data):
    from nasviz.spaces.mlp.networks import build_layer_network

    net = build_layer_network(arch, data.input_shape, data.n_outputs)
    net.load_state_dict({k: torch.as_tensor(v) for k, v in arrays.items()})
    return net


def test_trained_networks_are_kept_on_disk_not_in_memory():
    data, objective, strategy, parent = _trained_parent()
    folder = strategy.networks.folder
    assert not hasattr(strategy, "models") and len(strategy.networks.archives()) == 1
    arrays = strategy.network_state(parent)  # read back from the .npz, as the run store does
    assert set(arrays) == set(_network(parent, arrays, data).state_dict())
    notes = strategy.state().notes["network_store"]
    assert notes["networks"] == 1 and notes["bytes"] == strategy.networks.bytes_used() > 0
    strategy.networks.close()
    assert not folder.exists()  # a temporary folder: gone with the strategy


def test_the_network_store_is_bounded_least_recently_used_first(tmp_path):
    from nasviz.objectives.network_store import NetworkStore

    import io

    weights = {"w": np.zeros(1000, dtype=np.float32)}
    buffer = io.BytesIO()
    np.savez(buffer, **weights)
    size = len(buffer.getvalue())  # one archive's bytes
    store = NetworkStore(tmp_path / "nets", max_bytes=3 * size)
    for key in ("a", "b", "c"):
        store.save(key, weights)
    assert store.load("a") is not None  # a use: "b" is now the least recently used
    store.save("d", weights)
    assert "b" not in store and all(k in store for k in "acd") and store.evicted == 1
    assert store.bytes_used() == 3 * size
    with pytest.raises(ValueError, match="not a numeric array"):
        store.save("e", {"w": np.array(["text"])})


def test_warm_start_child_starts_from_the_trained_parent_function():
    data, objective, strategy, parent = _trained_parent()
    trained = _network(parent, strategy.network_state(parent), data)
    child = L.parse("input;relu:64<0;relu:64<1;relu:64<2;linear<1,3;output<4")
    from nasviz.spaces.morphs import Morph

    morphs = (Morph("deep", 2, label="relu"), Morph("add", 1, 4))
    assert apply_sequence(parent, morphs)[-1].child == child
    strategy.lineage[child] = (parent, morphs)
    plan = strategy.training_plan(child)
    assert plan.ancestor == L.format(parent) and [Morph.from_dict(m) for m in plan.morphs] == list(morphs)
    model, warm_from, _ = objective._initial_network(child, plan)
    x = torch.randn(32, 13)
    with torch.no_grad():
        assert warm_from == L.format(parent) and torch.allclose(model(x), trained(x), atol=1e-5)
    ev = objective.evaluate([child])[0]
    strategy.tell([ev])
    assert ev.info["warm_start"] == L.format(parent) and strategy.warm_started[L.format(child)] == L.format(parent)


def test_a_warm_started_child_that_diverges_is_trained_from_scratch():
    data, objective, strategy, parent = _trained_parent()
    arrays = {k: v * 1e30 if v.dtype.kind == "f" else v for k, v in strategy.network_state(parent).items()}
    strategy.networks.save(L.format(parent), arrays)  # a parent whose weights make any child blow up
    child = L.parse("input;relu:64<0;relu:64<1;linear<0,2;output<3")
    from nasviz.spaces.morphs import Morph

    strategy.lineage[child] = (parent, (Morph("add", 0, 3),))
    ev = objective.evaluate([child])[0]
    strategy.tell([ev])
    assert ev.ok and "trained from scratch" in ev.info["notes"][0] and "warm_start" not in ev.info
    assert strategy.scratch_retries == [L.format(child)]
    assert L.format(child) not in strategy.warm_started  # it did not start from the parent
    kept = strategy.network_state(child)  # descendants inherit the retrained, finite weights
    assert all(np.isfinite(v).all() for v in kept.values())


def test_an_evicted_ancestor_means_training_from_scratch_and_says_so():
    data, objective, strategy, parent = _trained_parent()
    strategy.networks.discard(L.format(parent))
    child = L.parse("input;relu:64<0;relu:64<1;linear<0,2;output<3")
    from nasviz.spaces.morphs import Morph

    strategy.lineage[child] = (parent, (Morph("add", 0, 3),))
    ev = objective.evaluate([child])[0]
    assert ev.ok and "evicted" in ev.info["notes"][0] and "warm_start" not in ev.info


@pytest.mark.slow
def test_warm_starts_work_on_worker_processes(tmp_path):
    """The plan travels with the architecture: a worker loads the ancestor from the shared folder."""
    from nasviz.executors import ExecutorObjective, LocalExecutor
    from nasviz.objectives.training import TrainingSpec
    from nasviz.spaces.morphs import Morph

    spec = TrainingSpec(space="layers", dataset="wine", training=(("epochs", 2), ("patience", 1)), device="cpu")
    with LocalExecutor(spec, n_workers=1) as executor:
        objective = ExecutorObjective(spec.build(), executor)
        strategy = AutoKeras(L.SPACE, seed=0, n_init=2)
        strategy.attach(objective)
        parent = L.initial_pool()[0]
        assert objective.evaluate([parent])[0].ok and L.format(parent) in strategy.networks
        child = strategy.space.apply_morphs(parent, [Morph("wide", 1, units=128)])[-1].child
        strategy.lineage[child] = (parent, (Morph("wide", 1, units=128),))
        ev = objective.evaluate([child])[0]
    assert ev.ok and ev.info["warm_start"] == L.format(parent) and L.format(child) in strategy.networks


def test_autokeras_end_to_end_short_run():
    data = load_dataset("wine", seed=0, max_train=60)
    objective = TrainingObjective(L.SPACE, data, training={"epochs": 2, "patience": 1}, device="cpu")
    strategy = make_strategy("autokeras", space=L.SPACE, seed=0, n_init=2, t_low=0.2)
    strategy.attach(objective)
    snaps = []
    result = run_search(strategy, objective, 5, format_arch=L.format, on_step=snaps.append)
    archs = [ev.arch for ev in result.evaluations]
    assert len(set(archs)) == 5 and all(ev.ok for ev in result.evaluations)
    st = StepState.from_dict(snaps[-1].strategy)  # the typed state, read back from its stored form
    assert st.phase == "bo" and st.gp.kernel == "edit" and st.pool.acquisition_name == "ucb"
    assert st.notes["scored"] >= len(st.pool) >= 1 and st.notes["expanded"] >= 1
    assert len(st.pool.mean) == len(st.pool.std) == len(st.pool.acquisition) == len(st.pool)
    # UCB with the fixed beta: the proposal is the pool's best, and the pool says how it was reached
    assert np.allclose(st.pool.acquisition, np.array(st.pool.mean) + 2.5 * np.array(st.pool.std))
    chosen = st.pool.candidates[st.batch.indices[0]]
    assert st.batch.indices == (int(np.argmax(st.pool.acquisition)),) and st.proposals == (chosen,)
    ancestor, morphs = strategy.lineage[archs[-1]]
    assert st.pool.info["lineage"][chosen] == {"ancestor": L.format(ancestor), "morphs": [m.to_dict() for m in morphs]}
    # every searched proposal came from an observed ancestor and was warm-started from it
    assert not hasattr(strategy, "models")
    for a in archs[2:]:
        ancestor, morphs = strategy.lineage[a]
        assert ancestor in archs[: archs.index(a)]
        assert apply_sequence(ancestor, morphs)[-1].child == a
        assert L.format(a) in st.notes["warm_started"]


@pytest.mark.slow
def test_a_resumed_run_warm_starts_from_stored_weights_like_an_uninterrupted_one(tmp_path):
    """Stop after 4 evaluations, resume in a fresh strategy: the trained ancestors come back from
    the run store, so the children after the resume score exactly as in one uninterrupted run
    (and, with the stored weights deleted, they do not)."""
    from nasviz.store import RunStore

    data = load_dataset("wine", seed=0, max_train=60)

    def fresh_search():
        objective = TrainingObjective(L.SPACE, data, training={"epochs": 2, "patience": 1}, device="cpu")
        # acq_fraction "none": the default caps the tree search by measured seconds, which differ
        # between two runs; uncapped, the proposals depend on the seed and the scores alone
        strategy = make_strategy("autokeras", space=L.SPACE, seed=0, n_init=2, t_low=0.2, acq_fraction="none")
        strategy.attach(objective)
        return strategy, objective

    budget = 7
    whole = run_search(*fresh_search(), budget, format_arch=L.format)
    values = [ev.value for ev in whole.evaluations]

    def stopped_run(path):
        store = RunStore(path)
        steps = []
        first = run_search(*fresh_search(), budget, format_arch=L.format, store=store, on_step=steps.append,
                           should_stop=lambda: len(steps) >= 4)
        assert first.stopped and len(first.evaluations) == 4 and store.network_bytes(first.run_id) > 0
        return store, first.run_id

    store, run_id = stopped_run(tmp_path / "runs.sqlite")
    strategy, objective = fresh_search()
    resumed = run_search(strategy, objective, budget, format_arch=L.format, store=store, run_id=run_id, resume=True)
    assert resumed.replayed == 4 and [ev.value for ev in resumed.evaluations] == values
    after = [L.format(ev.arch) for ev in resumed.evaluations[4:]]
    assert any(a in strategy.state().notes["warm_started"] for a in after)  # warm starts did happen after the resume
    # a finished run cannot be resumed: its weights are dropped, but for its best network's (for export)
    kept = [L.format(ev.arch) for ev in resumed.evaluations if store.network(run_id, L.format(ev.arch)) is not None]
    assert kept == [resumed.best_arch] and store.network_bytes(run_id) > 0

    store, run_id = stopped_run(tmp_path / "forgetful.sqlite")
    store._write(lambda conn: conn.execute("DELETE FROM networks"))
    forgetful = run_search(*fresh_search(), budget, format_arch=L.format, store=store, run_id=run_id, resume=True)
    assert [ev.value for ev in forgetful.evaluations][4:] != values[4:]


@pytest.mark.parametrize("stopped", ["observe", "skip"])
@pytest.mark.slow
def test_a_stopped_training_is_gp_data_and_an_ancestor_only_when_observed(stopped):
    """Issue 50: under ``stopped="skip"`` a training an early-stopping rule ended is seen (never
    proposed again, counted among the initial proposals) but neither GP data nor an ancestor."""
    import dataclasses

    from nasviz.fidelity.ladder import FidelityOutcome

    data = load_dataset("wine", seed=0, max_train=60)
    objective = TrainingObjective(L.SPACE, data, training={"epochs": 2, "patience": 1}, device="cpu")
    strategy = AutoKeras(L.SPACE, seed=0, n_init=2, stopped=stopped)
    strategy.attach(objective)
    first, second = strategy.ask(2)
    finished, ended = objective.evaluate([first, second])
    assert L.format(second) in strategy.networks  # the trainer saved it before the strategy heard of it
    ended = dataclasses.replace(ended, fidelity=FidelityOutcome(fidelity=1, top=2, full=False))
    strategy.tell([finished, ended])
    observed = [a for a, _ in strategy.observed]
    if stopped == "skip":
        assert observed == [first] and strategy.stopped == [second]
        assert L.format(second) not in strategy.networks and L.format(first) in strategy.networks
    else:
        assert observed == [first, second] and strategy.stopped == []
        assert L.format(second) in strategy.networks
    assert second in strategy.seen
    nxt = strategy.ask(1)  # n_init proposals made either way, but a GP needs two observations
    assert second not in nxt and (strategy.state().phase == "init") == (stopped == "skip")
    for arch in nxt:
        ancestor = strategy.lineage.get(arch, (None,))[0]
        assert ancestor is None or ancestor in observed
    strategy.networks.close()


def test_the_stopped_option_is_offered_and_checked():
    from nasviz.errors import ConfigError

    assert make_strategy("autokeras", space=L.SPACE, stopped="skip").parts.model.stopped == "skip"
    assert make_strategy("bo", space=L.SPACE).parts.model.stopped == "observe"
    with pytest.raises(ConfigError, match="option 'stopped' must be one of observe, skip"):
        make_strategy("bo", space=L.SPACE, stopped="drop")
