"""Multi-fidelity strategies on tables whose fidelity structure is known: the promotion order by hand."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from nasviz.components import package_available
from nasviz.errors import ConfigError
from nasviz.fidelity import FidelityRequest
from nasviz.objectives import load_table
from nasviz.objectives.fidelity_table import FidelityTableObjective
from nasviz.runner import build_search, resume_run, run_search, start_run
from nasviz.spaces import nb201
from nasviz.store import RunStore
from nasviz.strategies.factory import make_strategy

CELLS = list(itertools.islice(nb201.enumerate_all(), 9))
#: Values of the nine cells after 1, 3 and 9 epochs: the ranking changes from budget to budget.
ACC_1 = [10, 80, 30, 70, 60, 20, 90, 40, 50]
ACC_3 = [15, 60, 35, 85, 65, 25, 75, 45, 55]
ACC_9 = [20, 70, 40, 95, 72, 30, 88, 50, 60]


@pytest.fixture
def nine(tmp_path) -> Path:
    """Nine cells with NAS-Bench-101-style budget columns acc_1, acc_3, acc_9 (separate runs: restart)."""
    path = tmp_path / "nine.csv"
    rows = [f"{nb201.format(c)},{a},{b},{d}" for c, a, b, d in zip(CELLS, ACC_1, ACC_3, ACC_9)]
    path.write_text("arch,acc_1,acc_3,acc_9\n" + "\n".join(rows) + "\n")
    return path


def setup(path: Path, strategy: str, seed: int = 0, **options):
    table = load_table(path)
    objective = FidelityTableObjective(table, table.metrics[-1])
    chosen = make_strategy(strategy, space=table.space, seed=seed, domain=objective.domain(), **options)
    chosen.attach(objective)
    return objective, chosen


def test_successive_halving_promotes_in_the_order_computed_by_hand(nine):
    """eta = 3, nine cells: at 1 epoch the best three by acc_1 are cells 6 (90), 1 (80), 3 (70), in
    that order; at 3 epochs cell 3 (85) beats 6 (75) and 1 (60) and alone goes on to 9 epochs."""
    objective, strategy = setup(nine, "successive-halving", eta=3)
    assert objective.ladder.values == (1.0, 3.0, 9.0) and objective.cost_model.continuation == "restart"
    result = run_search(strategy, objective, 13, format_arch=nb201.format)
    done = [(CELLS.index(e.arch), e.fidelity.fidelity, e.fidelity.previous) for e in result.evaluations]
    assert sorted(c for c, f, _ in done[:9]) == list(range(9)) and {f for _, f, _ in done[:9]} == {1.0}
    assert done[9:] == [(6, 3.0, 1.0), (1, 3.0, 1.0), (3, 3.0, 1.0), (3, 9.0, 3.0)]
    assert result.best_value == 95.0 and result.regret == 0.0
    # nothing below the full budget is ever the best: no best until the 13th evaluation
    assert all(math.isnan(v) for v in result.trajectory[:12]) and result.trajectory[12] == 95.0
    # restart: each budget paid in full, in epochs (no cost column): 9 x 1 + 3 x 3 + 9
    assert sum(e.cost for e in result.evaluations) == pytest.approx(27.0)


def test_rung_decisions_say_rank_cut_and_rule(nine):
    objective, strategy = setup(nine, "successive-halving", eta=3)
    decisions = []
    run_search(strategy, objective, 13, format_arch=nb201.format,
               on_step=lambda snap: decisions.extend(snap.strategy["decisions"]))
    first = [d for d in decisions if d["fidelity"] == 1.0]
    assert [(CELLS.index(nb201.parse(d["arch"])), d["rank"], d["action"]) for d in first[:4]] == [
        (6, 1, "promote"), (1, 2, "promote"), (3, 3, "promote"), (4, 4, "stop")]
    assert all(d["threshold"] == 70 and d["keep"] == 3 and d["of"] == 9 for d in first)
    second = [d for d in decisions if d["fidelity"] == 3.0]
    assert [(CELLS.index(nb201.parse(d["arch"])), d["action"], d.get("to")) for d in second] == [
        (3, "promote", 9.0), (6, "stop", None), (1, "stop", None)]


def test_hyperband_runs_every_bracket_in_turn(tmp_path):
    cells = list(itertools.islice(nb201.enumerate_all(), 60))
    rng = np.random.default_rng(0)
    base = rng.uniform(20, 90, len(cells))
    path = tmp_path / "sixty.csv"
    path.write_text("arch,acc_1,acc_3,acc_9\n" + "\n".join(
        f"{nb201.format(c)},{b - 10 + rng.normal()},{b - 5 + rng.normal()},{b}" for c, b in zip(cells, base)) + "\n")
    objective, strategy = setup(path, "hyperband", eta=3)
    result = run_search(strategy, objective, 22, format_arch=nb201.format)
    budgets = [e.fidelity.fidelity for e in result.evaluations]
    # bracket s=2: 9 at 1, 3 at 3, 1 at 9; s=1: 5 at 3, 1 at 9; s=0: 3 at 9 (Li et al. Alg. 1)
    assert budgets == [1.0] * 9 + [3.0] * 3 + [9.0] + [3.0] * 5 + [9.0] + [9.0] * 3
    assert len({e.arch for e in result.evaluations}) == 9 + 5 + 3


def test_per_epoch_columns_resume_and_cost_column(tmp_path):
    """``<metric>_epoch_<E>`` columns are one run's curve: continuing resumes and pays the epochs added."""
    path = tmp_path / "curve.csv"
    path.write_text("arch,acc,acc_epoch_1,acc_epoch_2,acc_epoch_3,train_seconds\n" + "\n".join(
        f"{nb201.format(c)},{50 + i},{20 + i},{35 + i},{49 + i},6.0" for i, c in enumerate(CELLS)) + "\n")
    table = load_table(path)
    objective = FidelityTableObjective(table, "acc")
    assert objective.ladder.values == (1.0, 2.0, 3.0) and objective.cost_model.continuation == "resume"
    low, high = objective.evaluate([FidelityRequest(CELLS[2], 1.0), FidelityRequest(CELLS[2], 3.0, 1.0)])
    assert (low.value, low.cost, low.full) == (22.0, 2.0, False)
    assert (high.value, high.cost, high.full) == (52.0, 4.0, True)
    assert objective.full_cost_unit() == 6.0


def test_explicit_rungs_from_another_table(tmp_path, nine):
    other = tmp_path / "short.csv"
    other.write_text("arch,quick\n" + "\n".join(f"{nb201.format(c)},{v}" for c, v in zip(CELLS[:5], ACC_1)) + "\n")
    table = load_table(nine)
    objective = FidelityTableObjective(table, "acc_9", f"2=quick@{other},9=acc_9")
    assert objective.ladder.values == (2.0, 9.0) and objective.cost_model.continuation == "restart"
    assert len(objective.domain()) == 5  # the rows every rung has
    assert objective.evaluate([FidelityRequest(CELLS[1], 2.0)])[0].value == 80
    with pytest.raises(ConfigError, match="last rung"):
        FidelityTableObjective(table, "acc_9", f"2=quick@{other},9=acc_3")
    with pytest.raises(ConfigError, match="no fidelity columns"):
        FidelityTableObjective(load_table(other), "quick")


def test_stored_run_keeps_budgets_and_resumes_exactly(tmp_path, nine):
    store = RunStore(tmp_path / "runs.sqlite")
    config = {"table": str(nine), "metric": "acc_9", "strategy": "successive-halving", "seed": 3, "budget": 13,
              "fidelity": "auto", "strategy_options": {"eta": 3}}
    whole = start_run(store, config)
    stored = store.evaluations(whole.run_id)
    assert [e.info["fidelity"]["fidelity"] for e in stored][9:] == [3.0, 3.0, 3.0, 9.0]
    assert stored[-1].info["fidelity"]["full"] is True
    steps = []
    part = start_run(store, config, on_step=steps.append, should_stop=lambda: len(steps) >= 10)
    assert part.stopped and len(part.evaluations) == 10
    resumed = resume_run(store, part.run_id)  # replays ten (budgets restored), evaluates three
    assert resumed.replayed == 10
    assert [(e.arch, e.fidelity, e.value) for e in resumed.evaluations] == [
        (e.arch, e.fidelity, e.value) for e in whole.evaluations]


def test_cost_budget_stops_the_search(nine):
    setup_ = build_search({"table": str(nine), "metric": "acc_9", "strategy": "successive-halving", "budget": 1000,
                           "fidelity": "auto", "cost_budget": 2.0, "strategy_options": {"eta": 3}})
    result = run_search(setup_.strategy, setup_.objective, 1000, format_arch=nb201.format,
                        cost_budget=setup_.cost_budget())
    costs = np.cumsum([e.cost for e in result.evaluations])
    assert costs[-1] >= 18.0 and costs[-2] < 18.0  # two full evaluations of 9 epochs


def test_multi_fidelity_strategies_need_a_ladder(nine):
    table = load_table(nine)
    from nasviz.objectives import TableObjective

    for name in ("hyperband", "bohb", "mf-gp"):
        strategy = make_strategy(name, space=table.space, seed=0, domain=table.archs)
        with pytest.raises(ConfigError, match="fidelity ladder"):
            strategy.attach(TableObjective(table, "acc_9"))
    with pytest.raises(ConfigError, match="table searches"):
        build_search({"objective": "train", "strategy": "hyperband", "fidelity": "auto"})


@pytest.fixture
def correlated(tmp_path) -> Path:
    """120 cells whose 1- and 3-epoch values follow their 9-epoch value with noise."""
    cells = list(itertools.islice(nb201.enumerate_all(), 0, 2400, 20))
    rng = np.random.default_rng(1)
    base = rng.uniform(20, 90, len(cells))
    path = tmp_path / "corr.csv"
    path.write_text("arch,acc_1,acc_3,acc_9\n" + "\n".join(
        f"{nb201.format(c)},{b / 2 + rng.normal(0, 3)},{b - 8 + rng.normal(0, 2)},{b}" for c, b in zip(cells, base))
        + "\n")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("name", ["bohb", "mf-gp"])
def test_model_based_strategies_ask_legal_budgets(correlated, name):
    objective, strategy = setup(correlated, name, seed=2, eta=3, **({"n_min": 5} if name == "bohb" else {}))
    result = run_search(strategy, objective, 10**6, format_arch=nb201.format, cost_budget=8 * 9.0)
    pairs = [(e.arch, e.fidelity.fidelity) for e in result.evaluations]
    assert len(pairs) == len(set(pairs))  # never the same cell at the same budget twice
    reached: dict = {}
    for e in result.evaluations:
        assert e.fidelity.fidelity in objective.ladder.values
        assert e.fidelity.previous == reached.get(e.arch)  # continues from what it reached
        reached[e.arch] = e.fidelity.fidelity
    assert result.best_value is not None and result.regret < 15
    state = strategy.state()
    if name == "mf-gp":
        assert state.phase == "mf-gp" and state.gp is not None
        assert {"fidelity_rate", "fidelity_offset"} <= set(state.gp.hyperparameters)


def test_optuna_pruned_peer_is_a_real_study(correlated):
    objective, strategy = setup(correlated, "optuna-tpe-sh", seed=0, eta=3)
    result = run_search(strategy, objective, 60, format_arch=nb201.format)
    states = {t.state.name for t in strategy.study.trials}
    assert "PRUNED" in states and "COMPLETE" in states
    complete = [t for t in strategy.study.trials if t.state.name == "COMPLETE"]
    assert all(set(t.intermediate_values) == {1, 3, 9} for t in complete)
    assert result.best_value == max(t.value for t in complete)
    assert type(strategy.pruner).__name__ == "SuccessiveHalvingPruner"


@pytest.mark.slow
@pytest.mark.parametrize("name,package", [("smac-mf", "smac"), ("dehb", "dehb")])
def test_smac_and_dehb_peers(correlated, name, package):
    if not package_available(package):
        pytest.skip(f"the optional package {package} is not installed (pip install \"nasviz[mf-peers]\")")
    objective, strategy = setup(correlated, name, seed=0, eta=3)
    result = run_search(strategy, objective, 30, format_arch=nb201.format)
    assert {e.fidelity.fidelity for e in result.evaluations} <= {1.0, 3.0, 9.0}
    assert len({e.fidelity.fidelity for e in result.evaluations}) >= 2
