import numpy as np
import pytest

from nasviz.spaces import get_space, nb201

OPTIMUM = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|"


def test_parse_format_round_trip_and_dag_shape():
    arch = nb201.parse(OPTIMUM)
    assert nb201.format(arch) == OPTIMUM
    assert arch.n_nodes == 8
    assert arch.edges == ((0, 1), (0, 2), (0, 4), (1, 3), (1, 5), (2, 6), (3, 6), (4, 7), (5, 7), (6, 7))
    assert arch.labels[1:-1] == ("nor_conv_3x3",) * 3 + ("skip_connect", "nor_conv_3x3", "nor_conv_1x1")


def test_round_trip_of_every_string_in_the_shared_table(nb201_table_path):
    import csv

    with open(nb201_table_path, newline="") as handle:
        strings = [row["arch"] for row in csv.DictReader(handle)]
    assert len(strings) == 15625
    assert all(nb201.format(nb201.parse(s)) == s for s in strings)


def test_enumeration_covers_the_space_once():
    archs = list(nb201.enumerate_all())
    assert len(archs) == nb201.SPACE_SIZE == 15625
    assert len(set(archs)) == 15625
    assert all(nb201.parse(nb201.format(a)) == a for a in archs[::97])


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty"),
        ("|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|", "2 node group"),
        ("|conv9x9~0|+|none~0|none~1|+|none~0|none~1|none~2|", "node 1, input 0: unknown operation 'conv9x9'"),
        ("|none~0|+|none~0|none~2|+|none~0|none~1|none~2|", "node 2, input 1: bad input index '2'"),
        ("|none~0|+|none~0|+|none~0|none~1|none~2|", "node 2 must have 2 incoming"),
        ("|none~0|+|none~0|none1|+|none~0|none~1|none~2|", "not of the form"),
        ("none~0|+|none~0|none~1|+|none~0|none~1|none~2|", "must start and end"),
    ],
)
def test_malformed_strings_say_what_and_where(text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        nb201.parse(text)


def test_neighbourhood_has_24_distinct_one_edit_members():
    arch = nb201.parse(OPTIMUM)
    nbrs = nb201.neighbours(arch)
    assert len(nbrs) == 24 == len(set(nbrs))
    base = nb201.operations(arch)
    for n in nbrs:
        assert sum(x != y for x, y in zip(base, nb201.operations(n))) == 1


def test_mutation_changes_exactly_one_edge_and_sampling_is_uniform_enough():
    rng = np.random.default_rng(0)
    arch = nb201.parse(OPTIMUM)
    for _ in range(50):
        child = nb201.mutate(arch, rng)
        assert child in set(nb201.neighbours(arch))
    ops = [op for a in nb201.sample(rng, 2000) for op in nb201.operations(a)]
    counts = np.array([ops.count(o) for o in nb201.OPERATIONS])
    assert counts.min() > 0.8 * counts.mean()


def test_reduced_cells_and_equivalence():
    # none on every edge into the output: nothing reaches it
    dead = nb201.parse("|nor_conv_3x3~0|+|nor_conv_3x3~0|none~1|+|none~0|none~1|none~2|")
    assert dead.reduced().labels == ("input", "output") and dead.reduced().edges == ()
    # two cells that differ only in an operation on a dead branch are equivalent
    a = nb201.parse("|avg_pool_3x3~0|+|none~0|none~1|+|nor_conv_3x3~0|none~1|none~2|")
    b = nb201.parse("|nor_conv_1x1~0|+|none~0|none~1|+|nor_conv_3x3~0|none~1|none~2|")
    assert a != b and a.canonical_key() == b.canonical_key()
    # skip connections are bypassed: skip then conv equals conv straight from the input
    c = nb201.parse("|skip_connect~0|+|none~0|none~1|+|none~0|nor_conv_3x3~1|none~2|")
    d = nb201.parse("|none~0|+|none~0|none~1|+|nor_conv_3x3~0|none~1|none~2|")
    assert c.canonical_key() == d.canonical_key()


def test_get_space_by_name():
    assert get_space("nb201") is nb201
    with pytest.raises(ValueError, match="unknown search space"):
        get_space("nb999")
