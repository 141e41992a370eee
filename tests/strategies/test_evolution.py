"""Regularised evolution: random or initial-pool start, tournament + aging, no repeats, domain, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.objectives import TableObjective
from nasviz.runner import run_search
from nasviz.objectives import Evaluation
from nasviz.spaces import mlp, nb201
from nasviz.strategies.evolution import RegularizedEvolution
from nasviz.strategies.factory import make_strategy


class ConvObjective:
    """Counts 3x3 convolutions: a cheap objective with a known optimum (6)."""

    name = "conv-count"
    metric = "convs"

    def evaluate(self, archs):
        from nasviz.objectives import Evaluation

        return [Evaluation(a, float(sum(op == "nor_conv_3x3" for op in nb201.operations(a))), 0.0) for a in archs]

    def optimum(self):
        return 6.0

    def domain(self):
        return None


def test_population_ages_and_children_are_mutations_of_members():
    s = RegularizedEvolution(nb201.SPACE, seed=0, population_size=5, sample_size=2)
    obj = ConvObjective()
    first = s.ask(5)
    assert s.state().notes["parents"] == [None] * 5  # random phase
    s.tell(obj.evaluate(first))
    members = {a for a, _ in s.population}
    child = s.ask(1)[0]
    parent = nb201.parse(s.state().notes["parents"][0])
    assert parent in members and child in nb201.neighbours(parent)
    s.tell(obj.evaluate([child]))
    assert len(s.population) == 5 and s.population[-1][0] == child  # oldest died, child joined
    assert first[0] not in {a for a, _ in s.population}


def test_evolution_improves_on_a_simple_objective_and_never_repeats():
    obj = ConvObjective()
    result = run_search(RegularizedEvolution(nb201.SPACE, seed=1), obj, 150, format_arch=nb201.format, batch_size=3)
    archs = [ev.arch for ev in result.evaluations]
    assert len(set(archs)) == len(archs) == 150
    assert result.best_value >= 5


def test_evolution_is_deterministic_and_stays_in_the_domain(nb201_table):
    domain = nb201_table.archs[::2]
    dset = set(domain)
    runs = []
    for _ in range(2):
        s = make_strategy("evolution", space=nb201.SPACE, seed=4, domain=domain)
        r = run_search(s, TableObjective(nb201_table, "cifar10"), 60, format_arch=nb201.format)
        runs.append([ev.arch for ev in r.evaluations])
    assert runs[0] == runs[1]
    assert set(runs[0]) <= dset and len(set(runs[0])) == 60


def test_bad_options_are_clear_errors():
    with pytest.raises(ValueError, match="sample_size"):
        RegularizedEvolution(nb201.SPACE, population_size=5, sample_size=6)
    with pytest.raises(ValueError, match="does not take option"):
        make_strategy("evolution", space=nb201.SPACE, kernel="tw")
    with pytest.raises(ValueError, match="option 'init' must be one of pool, random"):
        make_strategy("evolution", space=mlp.SPACE, init="best")
    with pytest.raises(ValueError, match="has no initial pool"):
        make_strategy("random", space=nb201.SPACE, init="pool")


@pytest.mark.parametrize("name", ["evolution", "random"])
def test_layer_space_baselines_start_from_the_same_initial_networks_as_nasbot(name):
    """Paper 001 Sec. 5 bootstraps NASBOT "and other methods" with the same 10 networks."""
    pool = mlp.initial_pool()
    strategy = make_strategy(name, space=mlp.SPACE, seed=0)
    first = strategy.ask(4) + strategy.ask(6)
    assert first == pool
    strategy.tell([Evaluation(a, float(i), 1.0) for i, a in enumerate(first)])
    later = strategy.ask(5)
    assert len(later) == 5 and not set(later) & set(pool)
    random_start = make_strategy(name, space=mlp.SPACE, seed=0, init="random").ask(10)
    assert random_start != pool and len(set(random_start)) == 10
    # NB201 has no initial pool: the baselines start at random there, as before.
    assert len(make_strategy(name, space=nb201.SPACE, seed=0).ask(3)) == 3

