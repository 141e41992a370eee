"""Candidate pools: distinct, unseen, inside the domain; evolution climbs the acquisition."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.candidates import (
    evolutionary_pool,
    gradient_mutate,
    gradient_mutation_probabilities,
    gradient_pool,
    mixed_pool,
    mutation_pool,
    random_pool,
)
from nasviz.candidates.nearest import TableNeighbourhood
from nasviz.spaces import nb201


def _conv_count_score(archs):
    # A stand-in acquisition: number of 3x3 convolutions (max 6).
    return np.array([sum(op == "nor_conv_3x3" for op in nb201.operations(a)) for a in archs], dtype=float)


def _assert_clean(archs, exclude, domain=None):
    assert len(set(archs)) == len(archs), "duplicates in the pool"
    assert not set(archs) & set(exclude), "pool contains excluded architectures"
    if domain is not None:
        assert set(archs) <= set(domain)


def test_random_pool_respects_exclude_and_domain():
    rng = np.random.default_rng(0)
    domain = nb201.sample(np.random.default_rng(1), 60)
    domain = list(dict.fromkeys(domain))
    exclude = set(domain[:20])
    pool = random_pool(nb201.SPACE, rng, 30, exclude=exclude, domain=domain)
    assert len(pool) == 30
    _assert_clean(pool, exclude, domain)
    # Asking for more than is left returns exactly what is left.
    rest = random_pool(nb201.SPACE, rng, 1000, exclude=exclude, domain=domain)
    assert set(rest) == set(domain) - exclude
    with pytest.raises(ValueError, match="non-negative"):
        random_pool(nb201.SPACE, rng, -1)


def test_random_pool_without_domain_samples_the_space():
    pool = random_pool(nb201.SPACE, np.random.default_rng(0), 50)
    assert len(pool) == 50 and len(set(pool)) == 50


def test_mutation_pool_children_are_one_step_neighbours():
    rng = np.random.default_rng(0)
    parents = nb201.sample(np.random.default_rng(2), 3)
    kids = mutation_pool(nb201.SPACE, rng, parents, 40, exclude=set(parents))
    _assert_clean(kids, parents)
    neighbourhood = {n for p in parents for n in nb201.neighbours(p)}
    assert set(kids) <= neighbourhood
    # independent mutations of each parent (not a random walk): all parents are used
    used = {p for p in parents if set(nb201.neighbours(p)) & set(kids)}
    assert used == set(parents)


def test_evolutionary_pool_climbs_the_acquisition():
    rng = np.random.default_rng(0)
    parents = nb201.sample(np.random.default_rng(3), 10)
    pool, scores = evolutionary_pool(nb201.SPACE, rng, _conv_count_score, parents, 100, exclude=set(parents), n_rounds=4)
    _assert_clean(pool.archs, parents)
    assert len(pool.archs) == 100
    assert np.allclose(scores, _conv_count_score(pool.archs))
    assert np.all(np.diff(scores) <= 0)  # sorted by acquisition
    random_scores = _conv_count_score(random_pool(nb201.SPACE, np.random.default_rng(4), 100))
    assert scores.mean() > random_scores.mean() + 1.0
    assert any(o.startswith("evolution-") for o in pool.origin)


def test_evolutionary_pool_is_deterministic_and_stays_in_domain():
    domain = list(nb201.enumerate_all())[::3]
    dset = set(domain)
    parents = [a for a in nb201.sample(np.random.default_rng(5), 40) if a in dset][:5]
    runs = [
        evolutionary_pool(nb201.SPACE, np.random.default_rng(9), _conv_count_score, parents, 50, exclude=set(parents), domain=domain)[0].archs
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    _assert_clean(runs[0], parents, domain)


def test_mutations_on_a_partial_table_are_the_parents_neighbours_in_it():
    """On a table holding part of the space, a mutation is a neighbour of its parent that is a row
    (each drawn at most once), not a blind mutant that has no value; without neighbours in the
    table a parent gives nothing, and a custom mutation (the gradient pool's) stays blind."""
    rng = np.random.default_rng(2)
    parent = nb201.sample(rng, 1)[0]
    near = nb201.SPACE.neighbours(parent)
    domain = set(near[:3]) | set(nb201.sample(rng, 300)) | {parent}
    children = mutation_pool(nb201.SPACE, np.random.default_rng(0), [parent], 10, exclude={parent}, domain=domain)
    assert set(children) == set(near) & domain - {parent} and len(children) == len(set(children))
    lonely = next(a for a in nb201.sample(rng, 50) if not set(nb201.SPACE.neighbours(a)) & domain)
    assert mutation_pool(nb201.SPACE, np.random.default_rng(0), [lonely], 5, domain=domain) == []
    calls = []

    def blind(arch, generator):
        calls.append(arch)
        return nb201.SPACE.mutate(arch, generator)

    mutation_pool(nb201.SPACE, np.random.default_rng(0), [lonely], 5, domain=domain, mutate=blind, max_tries=2)
    assert len(calls) == 10  # max_tries x n blind tries, none of them in the table
    full = set(nb201.enumerate_all())  # a table of the whole space: the usual blind mutation, unchanged
    assert mutation_pool(nb201.SPACE, np.random.default_rng(4), [parent], 8, domain=full) == \
        mutation_pool(nb201.SPACE, np.random.default_rng(4), [parent], 8)


def _hamming(a, b) -> int:
    pa, pb = nb201.SPACE.to_parameters(a), nb201.SPACE.to_parameters(b)
    return sum(pa[k] != pb[k] for k in pa)


def test_nearest_table_members_are_ordered_by_hamming_distance():
    """A cell's nearest table members: the k rows with the fewest differing parameters (itself
    excluded), nearest first; a one-edit neighbour in the table is among them at distance 1."""
    rng = np.random.default_rng(5)
    parent = nb201.sample(rng, 1)[0]
    near = nb201.SPACE.neighbours(parent)[:2]
    domain = list(dict.fromkeys([parent, *near, *nb201.sample(rng, 400)]))
    found = TableNeighbourhood(nb201.SPACE, domain, k=10).nearest(parent)
    assert len(found) == 10 and parent not in found and set(near) <= set(found)
    distances = [_hamming(parent, a) for a in found]
    assert distances == sorted(distances) and distances[0] == 1
    rest = [a for a in domain if a != parent and a not in found]
    assert min(_hamming(parent, a) for a in rest) >= distances[-1]


def test_ties_at_the_kth_distance_go_to_the_earlier_rows():
    """The k members are the first k rows in (distance, table order), whatever k: the rows a
    search mutates to do not depend on how a selection algorithm orders ties."""
    rng = np.random.default_rng(11)
    domain = list(dict.fromkeys(nb201.sample(rng, 600)))
    parents = domain[:15]
    for k in (1, 7, 24, 60):
        neighbourhood = TableNeighbourhood(nb201.SPACE, domain, k=k)
        for parent in parents:
            by_hand = sorted((i for i, a in enumerate(domain) if a != parent),
                             key=lambda i: (_hamming(parent, domain[i]), i))[:k]
            assert neighbourhood.nearest(parent) == [domain[i] for i in by_hand], (k, parent)


def test_nearest_table_members_need_categorical_parameters():
    from nasviz.components import SPACES
    from nasviz.errors import ConfigError

    layers = SPACES.create("layers")
    with pytest.raises(ConfigError, match="categorical-parameters"):
        TableNeighbourhood(layers, layers.sample(np.random.default_rng(0), 3))


def test_mixed_pool_is_half_mutations():
    parents = nb201.sample(np.random.default_rng(6), 10)
    pool = mixed_pool(nb201.SPACE, np.random.default_rng(0), parents, 100, exclude=set(parents))
    _assert_clean(pool.archs, parents)
    assert len(pool.archs) == 100
    assert pool.origin.count("mutation") == 50 and pool.origin.count("random") == 50


def test_gradient_probabilities_follow_the_sign_of_the_gradients():
    ops = ("nor_conv_3x3", "avg_pool_3x3", "nor_conv_1x1", "skip_connect", "none", "nor_conv_3x3")
    grads = {"nor_conv_3x3": 2.0, "avg_pool_3x3": -2.0, "nor_conv_1x1": 0.1}
    where, to = gradient_mutation_probabilities(ops, nb201.OPERATIONS, grads)
    assert where.sum() == pytest.approx(1.0) and np.allclose(to.sum(axis=1), 1.0)
    # the harmful pooling is the most likely position to mutate, the helpful convolutions the least
    assert np.argmax(where) == 1 and where[0] == where.min()
    conv3 = nb201.OPERATIONS.index("nor_conv_3x3")
    pool_ = nb201.OPERATIONS.index("avg_pool_3x3")
    assert to[1, conv3] == to[1].max() and to[1, pool_] == 0.0  # never "mutate" to itself
    assert to[2, conv3] > to[2, pool_]


def test_gradient_mutation_moves_towards_good_operations():
    rng = np.random.default_rng(0)
    arch = nb201.from_operations(["avg_pool_3x3"] * 6)
    grads = {"nor_conv_3x3": 3.0, "avg_pool_3x3": -3.0, "nor_conv_1x1": -1.0}
    kids = [gradient_mutate(nb201.SPACE, arch, rng, grads) for _ in range(600)]
    new_ops = [next(o for o in nb201.operations(k) if o != "avg_pool_3x3") for k in kids]
    _, to = gradient_mutation_probabilities(nb201.operations(arch), nb201.OPERATIONS, grads)
    for op in ("nor_conv_3x3", "nor_conv_1x1", "none"):
        assert new_ops.count(op) / 600 == pytest.approx(to[0, nb201.OPERATIONS.index(op)], abs=0.06)
    assert new_ops.count("nor_conv_3x3") > 1.4 * new_ops.count("nor_conv_1x1")


def test_gradient_pool_falls_back_and_says_so():
    parents = nb201.sample(np.random.default_rng(7), 10)
    pool = gradient_pool(nb201.SPACE, np.random.default_rng(0), parents, 60, op_gradients=None, exclude=set(parents))
    _assert_clean(pool.archs, parents)
    assert "no WL feature gradients" in pool.info["fallback"]
    guided = gradient_pool(nb201.SPACE, np.random.default_rng(0), parents, 60, op_gradients={"nor_conv_3x3": 1.0}, exclude=set(parents))
    assert "fallback" not in guided.info and set(guided.origin) <= {"gradient", "random"}


def test_nearly_equal_gradients_give_finite_probabilities_issue_48():
    """Issue 48, finding 3: two nearly equal gradients (s.d. 3.4e-4) divided by their standard
    deviation became about 1000, every sigmoid(-g) underflowed to 0 and the normalisation was
    0 / 0. Scaled by their root mean square they stay near 1: finite, and (being equal in effect)
    nearly uniform over the positions."""
    grads = {"nor_conv_3x3": 0.33516, "nor_conv_1x1": 0.33584}
    ops = ("nor_conv_3x3", "nor_conv_1x1", "nor_conv_3x3", "nor_conv_1x1", "nor_conv_3x3", "nor_conv_3x3")
    where, to = gradient_mutation_probabilities(ops, nb201.OPERATIONS, grads)
    assert np.all(np.isfinite(where)) and np.all(np.isfinite(to))
    assert where.sum() == pytest.approx(1.0) and np.allclose(to.sum(axis=1), 1.0)
    assert where.max() - where.min() < 1e-3  # equal gradients in effect: each position alike
    rng = np.random.default_rng(0)
    arch = nb201.from_operations(list(ops))
    kids = [gradient_mutate(nb201.SPACE, arch, rng, grads) for _ in range(200)]  # raised ValueError (NaN) before
    assert all(k != arch for k in kids)


def test_gradient_scaling_keeps_the_sign_and_ignores_the_units():
    """Scaling by the root mean square keeps what App. C reads (a helpful feature is kept) and is
    independent of the metric's units; centring would have made the smaller of two helpful
    gradients a harmful one."""
    from nasviz.candidates.gradient import scale_gradients

    known = np.array([True, True, False])
    g = scale_gradients(np.array([0.2, 0.1, 0.0]), known)
    assert g[0] > g[1] > 0 and g[2] == 0
    assert np.allclose(scale_gradients(np.array([20.0, 10.0, 0.0]), known), g)
    assert np.abs(scale_gradients(np.array([1e-9, 5.0, 0.0]), known)).max() <= np.sqrt(2) + 1e-12


def test_gradient_mutation_reads_nb101_vertex_operations():
    """NAS-Bench-101's categorical parameters: the vertex operations name node labels, the edge
    bits none; gradient-guided mutation changes operations by their gradients (and edges at the
    neutral rate), and every child is a valid cell."""
    from nasviz.candidates.gradient import parameter_mutation_probabilities
    from nasviz.spaces import get_space

    space = get_space("nb101")
    arch = space.parse("0110000|0001000|0000100|0000010|0000010|0000001|0000000;"
                       "input,maxpool3x3,conv3x3-bn-relu,conv1x1-bn-relu,conv3x3-bn-relu,maxpool3x3,output")
    grads = {"conv3x3-bn-relu": 1.0, "maxpool3x3": -1.0, "conv1x1-bn-relu": 0.2}
    probs = parameter_mutation_probabilities(space, arch, grads)
    assert probs.guided and probs.where.sum() == pytest.approx(1.0)
    ops = {p: w for p, w in zip(probs.parameters, probs.where) if p.startswith("op ")}
    pooling = [p for p, c in zip(probs.parameters, probs.current) if c == "maxpool3x3" and p.startswith("op ")]
    convs = [p for p, c in zip(probs.parameters, probs.current) if c == "conv3x3-bn-relu" and p.startswith("op ")]
    assert min(ops[p] for p in pooling) > max(ops[p] for p in convs)  # the harmful pooling changes first
    rng = np.random.default_rng(0)
    kids = {gradient_mutate(space, arch, rng, grads) for _ in range(40)}
    assert arch not in kids and all(space.contains(k) for k in kids)


def test_the_gradient_pool_falls_back_on_a_space_without_parameters_and_the_registry_lets_it():
    """Issue 48, finding 7: the fallback for spaces without operation slots was unreachable, the
    registry refused the combination first. Now ``bo-wl-ei`` searches the layer space with the
    space's own mutation, and the pool says why."""
    from nasviz.components import problems
    from nasviz.spaces import get_space

    assert problems("layers", "bo-wl-ei") == []
    space = get_space("layers")
    parents = space.sample(np.random.default_rng(0), 4)
    pool = gradient_pool(space, np.random.default_rng(1), parents, 10, op_gradients={"relu": 1.0})
    assert "has no categorical parameters" in pool.info["fallback"] and set(pool.origin) <= {"mutation", "random"}
    assert len(pool.archs) == 10


def test_climbing_the_acquisition_reaches_the_local_maximum_and_scores_each_cell_once():
    """Best-improvement hill climbing over NB201's one-edit neighbours: from an evaluated start
    (no acquisition value of its own) the climb reaches the cell of six 3x3 convolutions, the
    maximum of the stand-in acquisition, each move gaining one convolution; no cell is scored twice."""
    from nasviz.candidates import climb_acquisition

    start = nb201.parse("|skip_connect~0|+|none~0|avg_pool_3x3~1|+|none~0|none~1|skip_connect~2|")
    calls: list = []

    def score(archs):
        calls.extend(archs)
        return _conv_count_score(archs)

    climbs = climb_acquisition([start], [-np.inf], score, nb201.neighbours, lambda a: a != start)
    assert climbs.ends == [nb201.parse("|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|")]
    assert climbs.moves == 6  # one convolution per move: best improvement never wastes a move here
    assert len(calls) == len(set(calls)) == len(climbs.scores)
    assert start not in climbs.scores  # the evaluated start is never scored or proposed
    # a start already at a local maximum stays there; a disallowed neighbourhood stops the climb
    top = climbs.ends[0]
    again = climb_acquisition([top], [6.0], _conv_count_score, nb201.neighbours, lambda a: True)
    assert again.ends == [top] and again.moves == 0
    blocked = climb_acquisition([start], [-np.inf], _conv_count_score, nb201.neighbours, lambda a: False)
    assert blocked.ends == [start] and not blocked.scores
    # the cap on cells scored ends every climb: bounded work however many neighbours or starts
    capped = climb_acquisition([start, top], [-np.inf, 6.0], _conv_count_score, nb201.neighbours, lambda a: a != start,
                               max_scored=30)
    # 24 cells for the first move, the 6 left for the second; the second start never climbs
    assert capped.capped and len(capped.scores) == 30 and capped.moves == 2 and capped.ends[1] == top
    assert not climbs.capped


def test_local_search_adds_the_incumbents_best_neighbour_to_a_pool_that_lacked_it():
    """A random pool rarely holds the best cell next to the incumbent; after ``extend_pool`` the
    pool's best member is at least as good as every allowed neighbour of the incumbent, the pool
    keeps its size, and the notes count what the climbs did."""
    from nasviz.candidates import Pool, extend_pool

    rng = np.random.default_rng(3)
    incumbent = nb201.parse("|nor_conv_3x3~0|+|none~0|nor_conv_3x3~1|+|none~0|none~1|skip_connect~2|")
    seen = {incumbent}
    archs = random_pool(nb201.SPACE, rng, 20, exclude=seen)
    pool = extend_pool(Pool(archs, ["random"] * 20), 20, 1, incumbent, _conv_count_score, nb201.neighbours,
                       lambda a: a not in seen)
    assert len(pool.archs) == 20 and len(set(pool.archs)) == 20 and incumbent not in pool.archs
    best_neighbour = max(_conv_count_score(nb201.neighbours(incumbent)))
    assert max(_conv_count_score(pool.archs)) >= best_neighbour
    assert "local-search" in pool.origin
    notes = pool.notes["local_search"]
    assert notes["starts"] == 1 and notes["moves"] >= 1 and notes["kept"] == pool.origin.count("local-search")
    assert list(_conv_count_score(pool.archs)) == sorted(_conv_count_score(pool.archs), reverse=True)


def test_local_search_leaves_the_pool_alone_where_there_are_no_neighbours():
    from nasviz.candidates import Pool, extend_pool

    def no_neighbours(arch):
        raise NotImplementedError("this space has no neighbours")

    archs = random_pool(nb201.SPACE, np.random.default_rng(0), 5)
    pool = extend_pool(Pool(archs, ["random"] * 5), 5, 3, None, _conv_count_score, no_neighbours, lambda a: True)
    assert pool.archs == archs and "no neighbours" in pool.notes["local_search"]["skipped"]
