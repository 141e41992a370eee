"""The DARTS space: the genotype text, the graph the kernels read, the moves, the parameters, the shared table."""

from __future__ import annotations

import csv
from collections import Counter

import numpy as np
import pytest

from nasviz.components import SPACES, kernels_for, strategies_for
from nasviz.kernels import make_kernel
from nasviz.objectives import load_table
from nasviz.objectives.table import shared_data_path
from nasviz.spaces import get_space
from nasviz.spaces.darts import EXAMPLE, PARAMETER_CHOICES, parameter_name
from nasviz.spaces.darts import genotype as gt
from nasviz.spaces.darts.graph import CONCAT, FACTORIZED_REDUCE, N_NODES, PREPROCESS, from_architecture, to_architecture

#: DARTS_V2 exactly as the DARTS code's genotypes.py writes it (edge order of the source).
DARTS_V2_REPR = (
    "Genotype(normal=[('sep_conv_3x3', 0), ('sep_conv_3x3', 1), ('sep_conv_3x3', 0), ('sep_conv_3x3', 1), "
    "('sep_conv_3x3', 1), ('skip_connect', 0), ('skip_connect', 0), ('dil_conv_3x3', 2)], normal_concat=[2, 3, 4, 5], "
    "reduce=[('max_pool_3x3', 0), ('max_pool_3x3', 1), ('skip_connect', 2), ('max_pool_3x3', 1), ('max_pool_3x3', 0), "
    "('skip_connect', 2), ('skip_connect', 2), ('max_pool_3x3', 1)], reduce_concat=range(2, 6))")


@pytest.fixture(scope="module")
def space():
    return get_space("darts")


def test_the_dartss_code_repr_and_the_tables_text_are_one_genotype(space):
    arch = space.parse(DARTS_V2_REPR)
    assert space.format(arch) == EXAMPLE and space.parse(EXAMPLE) == arch
    # node 4 of the normal cell was written (sep_conv_3x3, 1), (skip_connect, 0): stored by input
    assert gt.parse(EXAMPLE).normal[2] == (("skip_connect", 0), ("sep_conv_3x3", 1))


@pytest.mark.parametrize("text, message", [
    ("", "empty genotype"),
    ("normal=[(sep_conv_3x3,0)]", "no reduce"),
    (EXAMPLE.replace("(dil_conv_3x3,2)", "(conv_7x7,2)"), "normal cell, node 5: unknown operation 'conv_7x7'"),
    (EXAMPLE.replace("(dil_conv_3x3,2)", "(dil_conv_3x3,5)"), "normal cell, node 5: input 5 is not an earlier node"),
    (EXAMPLE.replace("reduce=[(max_pool_3x3,0),(max_pool_3x3,1)", "reduce=[(max_pool_3x3,0),(max_pool_3x3,0)"),
     "reduce cell, node 2: both edges read node 0"),
    (EXAMPLE.replace(",(dil_conv_3x3,2)]", "]"), "normal cell: needs 8 edges"),
    (EXAMPLE.replace("normal_concat=[2,3,4,5]", "normal_concat=[2,3]"), "normal_concat is \\[2, 3\\]"),
    (EXAMPLE.replace("(dil_conv_3x3,2)", "dil_conv_3x3 2"), "cannot read"),
])
def test_a_bad_genotype_names_the_cell_node_and_edge(space, text, message):
    with pytest.raises(ValueError, match=message):
        space.parse(text)


def test_the_graph_has_the_documented_layout():
    genotype = gt.parse(EXAMPLE)
    arch = to_architecture(genotype)
    assert arch.n_nodes == N_NODES == 23
    assert arch.labels[0] == "input" and arch.labels[-1] == "output" and arch.labels[11] == CONCAT
    assert [arch.labels[i] for i in (1, 2, 12, 13)] == [PREPROCESS] * 4
    preds = arch.predecessors()
    assert preds[1] == preds[2] == (0,) and preds[12] == (0,) and preds[13] == (11,)  # stem twice; stem and normal
    # normal node 5's second edge, dil_conv_3x3 from node 2, reads node 2's two operations (graph nodes 3, 4)
    assert arch.labels[10] == "dil_conv_3x3" and preds[10] == (3, 4)
    assert preds[11] == tuple(range(3, 11)) and preds[22] == tuple(range(14, 22))  # outputs concatenate all eight
    assert from_architecture(arch) == genotype


def test_only_true_identities_are_bypassed():
    """A reduction cell's skip from an input halves the resolution (FactorizedReduce): it stays a node."""
    genotype = gt.make([("skip_connect", 0), ("sep_conv_3x3", 1)] + [("sep_conv_3x3", 0), ("sep_conv_3x3", 1)] * 3,
                       [("skip_connect", 0), ("max_pool_3x3", 1), ("skip_connect", 2), ("max_pool_3x3", 0)]
                       + [("max_pool_3x3", 0), ("max_pool_3x3", 1)] * 2)
    arch = to_architecture(genotype)
    assert arch.labels[3] == "skip_connect" and arch.labels[14] == FACTORIZED_REDUCE
    assert arch.labels[17] == "skip_connect"  # node 3's edge from node 2 (stored second), stride 1: an identity
    reduced = arch.reduced()
    counts = Counter(reduced.labels)
    assert counts["skip_connect"] == 0 and counts[FACTORIZED_REDUCE] == 1
    assert reduced.n_nodes == N_NODES - 2  # the two identities are gone, nothing else


def test_neighbours_are_the_120_one_move_changes(space):
    genotype = gt.parse(EXAMPLE)
    found = gt.neighbours(genotype)
    assert len(found) == len(set(found)) == 96 + 24 and genotype not in found

    for other in found:  # exactly one node changes (its edges matched by input)
        assert sum(a != b for ca, cb in zip(genotype.cells(), other.cells()) for a, b in zip(ca, cb)) == 1
    archs = space.neighbours(space.parse(EXAMPLE))
    assert {from_architecture(a) for a in archs} == set(found)


def test_mutate_draws_every_neighbour_uniformly():
    genotype = gt.parse(EXAMPLE)
    rng = np.random.default_rng(0)
    counts = Counter(gt.mutate(genotype, rng) for _ in range(24_000))
    assert set(counts) == set(gt.neighbours(genotype))
    assert min(counts.values()) > 120 and max(counts.values()) < 290  # 200 expected each


def test_sample_is_valid_and_varied(space):
    archs = space.sample(np.random.default_rng(1), 200)
    assert len(set(archs)) == 200
    for arch in archs[:50]:
        assert space.contains(arch) and space.parse(space.format(arch)) == arch
    inputs = Counter(source for arch in archs for _c, k, _e, (_op, source) in from_architecture(arch).edges() if k == 5)
    assert set(inputs) == {0, 1, 2, 3, 4}


def test_categorical_parameters_round_trip_and_refuse_a_repeated_input(space):
    assert len(PARAMETER_CHOICES) == 32
    assert PARAMETER_CHOICES[parameter_name("reduce", 4, 1, "input")] == ("0", "1", "2", "3")
    for arch in space.sample(np.random.default_rng(2), 20):
        params = space.to_parameters(arch)
        assert space.from_parameters(params) == arch
    params = space.to_parameters(space.parse(EXAMPLE))
    swapped = dict(params)  # the two edges of a node in the other order: the same genotype
    for what in ("op", "input"):
        a, b = parameter_name("normal", 3, 0, what), parameter_name("normal", 3, 1, what)
        swapped[a], swapped[b] = params[b], params[a]
    assert space.from_parameters(swapped) == space.parse(EXAMPLE)
    params[parameter_name("normal", 3, 1, "input")] = params[parameter_name("normal", 3, 0, "input")]
    assert space.from_parameters(params) is None
    params[parameter_name("normal", 3, 1, "input")] = "3"
    with pytest.raises(ValueError, match="normal node 3 edge 1 input"):
        space.from_parameters(params)


def test_the_registry_offers_the_graph_and_parameter_kernels_and_the_default():
    assert "darts" in SPACES
    kernels = set(kernels_for("darts"))
    assert {"wl", "tw2g", "tw2g-hamming", "slots", "path"} <= kernels and "otmann" not in kernels
    assert "bo-tw2g-hamming-ei" in strategies_for("darts") and "optuna-tpe" in strategies_for("darts")
    space = get_space("darts")
    archs = space.sample(np.random.default_rng(3), 6)
    for name in ("wl", "tw2g", "tw2g-hamming", "path"):
        gram = make_kernel(name, space=space).matrix(archs)
        assert gram.shape == (6, 6) and np.allclose(gram, gram.T) and np.all(np.isfinite(gram))


def test_the_shared_table_is_725_distinct_genotypes():
    path = shared_data_path("darts_725.csv")
    if path is None:
        pytest.skip("the shared table darts_725.csv is absent (../shared/data or $NASVIZ_SHARED_DATA)")
    table = load_table(path, space="darts")
    assert len(table) == 725 and "valid_accuracy" in table.metrics
    assert table.info()["duplicates"]["rows_refused"] == 0
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    space = get_space("darts")
    # every row, written in its source's edge order, finds its own value under the space's order
    for row in rows:
        assert table.lookup(space.parse(row["genotype"]), "valid_accuracy") == pytest.approx(float(row["valid_accuracy"]))
    assert sum(space.format(space.parse(r["genotype"])) == r["genotype"] for r in rows) < len(rows)  # reordered


def test_a_bad_row_names_its_line_and_column(tmp_path):
    path = tmp_path / "darts.csv"
    bad = EXAMPLE.replace("(dil_conv_3x3,2)", "(conv_7x7,2)")
    path.write_text(f'genotype,valid_accuracy\n"{EXAMPLE}",93.1\n"{bad}",92.0\n')
    table = load_table(path, space="darts")
    assert len(table) == 1
    (bad_row,) = table.info()["bad_rows"]
    assert bad_row["line"] == 3 and bad_row["column"] == "genotype"
    assert "normal cell, node 5: unknown operation 'conv_7x7'" in bad_row["problem"]


def test_the_space_is_finite_so_a_table_is_a_strict_part_of_it(space):
    from nasviz.candidates.pools import is_strict_subset
    from nasviz.errors import ConfigError

    assert space.size == gt.SPACE_SIZE == (1 * 3 * 6 * 10 * 7 ** 8) ** 2
    rows = space.sample(np.random.default_rng(4), 30)
    assert is_strict_subset(space, rows)
    with pytest.raises(ConfigError, match="too many to enumerate"):
        space.enumerate()


@pytest.mark.slow
def test_a_search_on_a_table_mutates_into_its_rows(space):
    """On a sparse table the default's pool holds mutations and local-search moves that are rows, not
    only random rows (all that blind one-move mutations of a genotype would leave)."""
    import re

    from nasviz.objectives import TableObjective
    from nasviz.runner import run_search
    from nasviz.strategies.factory import make_strategy

    archs = space.sample(np.random.default_rng(5), 400)
    rows = {a: float(sum(op.startswith("sep") for *_, (op, _s) in from_architecture(a).edges())) for a in archs}
    # no row is one move from another, so only the table's nearest rows make mutations that are rows
    table = load_table(["genotype,score\n"] + [f'"{space.format(a)}",{v}\n' for a, v in rows.items()], space="darts")
    strategy = make_strategy("bo-tw2g-hamming-ei", space=space, seed=0, domain=table.archs)
    origins: Counter = Counter()

    def on_step(snap) -> None:
        pool = snap.strategy.get("pool") if isinstance(snap.strategy, dict) else None
        if isinstance(pool, dict):
            origins.update(re.sub(r"-\d+$", "", o) for o in pool.get("origin") or ())

    run_search(strategy, TableObjective(table, "score"), 25, format_arch=space.format, on_step=on_step)
    assert origins["random"] and origins["mutation"] and origins["evolution"] and origins["local-search"]
