"""Hyperband's bracket arithmetic (Li et al. 2018, Alg. 1 and its worked example) and the top-k rule."""

from __future__ import annotations

import math

import pytest

from nasviz.fidelity import RungDecision
from nasviz.fidelity.hyperband import (bracket_plan, hyperband_brackets, successive_halving_bracket,
                                       top_k_decisions)


def stages(plan):
    return [(s.rung, s.n, s.keep) for s in plan.stages]


def test_li_et_al_table_1_r81_eta3():
    """Li et al. 2018, Table 1: R = 81, eta = 3 gives five brackets with these (n_i, r_i)."""
    plans = hyperband_brackets(5, 3)  # budgets 1, 3, 9, 27, 81: five rungs
    assert [p.s for p in plans] == [4, 3, 2, 1, 0]
    assert [[s.n for s in p.stages] for p in plans] == [
        [81, 27, 9, 3, 1], [34, 11, 3, 1], [15, 5, 1], [8, 2], [5]]
    # r_i = r eta^i: bracket s starts at rung s_max - s and climbs one rung per stage
    assert [[s.rung for s in p.stages] for p in plans] == [
        [0, 1, 2, 3, 4], [1, 2, 3, 4], [2, 3, 4], [3, 4], [4]]


def test_nb101_ladder_brackets():
    """NAS-Bench-101's 4 -> 12 -> 36 -> 108 epochs with eta 3 (each stage keeps floor(n_i / eta))."""
    assert [stages(p) for p in hyperband_brackets(4, 3)] == [
        [(0, 27, 9), (1, 9, 3), (2, 3, 1), (3, 1, 0)],
        [(1, 12, 4), (2, 4, 1), (3, 1, 0)],
        [(2, 6, 2), (3, 2, 0)],
        [(3, 4, 0)]]


def test_two_rung_ladder_with_its_ratio():
    """NAS-Bench-201's 12 -> 200 epochs with eta 16: 16 cells screened, one promoted; then 2 full."""
    assert [stages(p) for p in hyperband_brackets(2, 16)] == [[(0, 16, 1), (1, 1, 0)], [(1, 2, 0)]]


def test_successive_halving_bracket_with_a_given_width():
    assert stages(successive_halving_bracket(3, 3)) == [(0, 9, 3), (1, 3, 1), (2, 1, 0)]
    assert stages(successive_halving_bracket(3, 3, n_configs=10)) == [(0, 10, 3), (1, 3, 1), (2, 1, 0)]
    with pytest.raises(ValueError):
        bracket_plan(3, 1.0, 0)
    with pytest.raises(ValueError):
        bracket_plan(3, 3, 3)


def test_top_k_ranks_ties_and_failures():
    results = [("a", 50.0), ("b", 70.0), ("c", None), ("d", 70.0), ("e", 10.0)]
    decisions = top_k_decisions(results, 2, 4.0, 12.0, eta=3.0, name="hyperband", bracket=3)
    assert [(d.arch, d.rank, d.action) for d in decisions] == [
        ("b", 1, "promote"), ("d", 2, "promote"), ("a", 3, "stop"), ("e", 4, "stop"), ("c", 5, "stop")]
    assert all(d.threshold == 70.0 and d.of == 5 and d.keep == 2 for d in decisions)
    assert decisions[0].to == 12.0 and decisions[2].to is None
    assert math.isnan(decisions[-1].value)


def test_decision_round_trip_and_plain_words():
    d = RungDecision("a", 4.0, "stop", "top-k", 5, 9, 51.2, threshold=60.1, keep=3, eta=3.0, name="hyperband",
                     bracket=3)
    assert RungDecision.from_dict(d.to_dict()) == d
    text = d.describe()
    assert "stopped at 4 epochs" in text and "ranked 5 of 9" in text and "best 3 of the 9" in text
    assert "below the cut 60.1" in text and "bracket s = 3" in text
    with pytest.raises(ValueError):
        RungDecision("a", 4.0, "maybe", "top-k", 1, 1, 0.0)
