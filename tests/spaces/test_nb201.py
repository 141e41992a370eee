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
    assert a != b and a.canonical_key() == b.canonical_key() and nb201.canonical_key(a) == nb201.canonical_key(b)
    # skip connections are bypassed: skip then conv equals conv straight from the input
    c = nb201.parse("|skip_connect~0|+|none~0|none~1|+|none~0|nor_conv_3x3~1|none~2|")
    d = nb201.parse("|none~0|+|none~0|none~1|+|nor_conv_3x3~0|none~1|none~2|")
    assert c.canonical_key() == d.canonical_key() and nb201.canonical_key(c) == nb201.canonical_key(d)


def test_parallel_identity_paths_are_not_merged():
    # The all-skip cell outputs 4x, the cell with only the direct skip edge outputs x: different
    # functions (their CIFAR-10 accuracies differ by tens of points), so different classes.
    all_skip = nb201.from_operations(["skip_connect"] * 6)
    direct = nb201.from_operations(["none", "none", "none", "skip_connect", "none", "none"])
    assert all_skip.reduced().edges == ((0, 1),) * 4 and direct.reduced().edges == ((0, 1),)
    assert nb201.canonical_key(all_skip) == "x+x+x+x" and nb201.canonical_key(direct) == "x"
    assert all_skip.canonical_key() != direct.canonical_key()


# ----------------------------------------------------------------------------- equivalence classes
# Two implementations written here, independent of nasviz.arch: a numeric one (the cell evaluated
# on numbers with one generic nonlinear function per operation) and NAS-Bench-201's own rule.

_CELLS = [tuple(ops) for ops in __import__("itertools").product(nb201.OPERATIONS, repeat=6)]


def _numeric_class(ops: tuple[str, ...], xs: np.ndarray) -> tuple:
    """The cell's output for inputs ``xs`` when every operation is a fixed generic function.

    A node is a sum over its incoming edges; ``none`` and an edge whose source received nothing
    contribute nothing (``None`` marks "received nothing", which is not the number 0: an
    operation of a zero input is dropped, as the network builder does). Different sums of terms
    give different numbers with probability one, so rounding gives the class.
    """
    functions = {
        "nor_conv_1x1": lambda z: np.tanh(0.9 * z + 0.3),
        "nor_conv_3x3": lambda z: np.sin(1.7 * z - 0.2) + 0.05 * z * z,
        "avg_pool_3x3": lambda z: np.exp(-0.4 * z) - 0.6,
    }
    nodes: list[np.ndarray | None] = [xs, None, None, None]
    for op, (src, dst) in zip(ops, nb201.CELL_EDGES):
        if op == "none" or nodes[src] is None:
            continue
        term = nodes[src] if op == "skip_connect" else functions[op](nodes[src])
        nodes[dst] = term if nodes[dst] is None else nodes[dst] + term
    return ("zero",) if nodes[3] is None else tuple(np.round(nodes[3], 9))


def _reference_unique_str(ops: tuple[str, ...]) -> str:
    """NAS-Bench-201's ``to_unique_str(consider_zero=True)``, from its description: a node is the
    sorted ``+``-join of its incoming terms; ``none`` or a source equal to ``#`` gives ``#``,
    ``skip_connect`` passes the source's string, any other op gives ``(source)@op``."""
    nodes, k = {0: "0"}, 0
    for j in (1, 2, 3):
        terms = []
        for i in range(j):
            op = ops[k]
            k += 1
            if op == "none" or nodes[i] == "#":
                terms.append("#")
            elif op == "skip_connect":
                terms.append(nodes[i])
            else:
                terms.append(f"({nodes[i]})@{op}")
        nodes[j] = "+".join(sorted(terms))
    return nodes[3]


def _partition(keys: list) -> set[frozenset[int]]:
    groups: dict = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    return {frozenset(g) for g in groups.values()}


@pytest.fixture(scope="module")
def class_keys():
    ours = [nb201.canonical_key(nb201.from_operations(ops)) for ops in _CELLS]
    xs = np.random.default_rng(0).uniform(-2.0, 2.0, size=3)
    numeric = [_numeric_class(ops, xs) for ops in _CELLS]
    reference = [_reference_unique_str(ops) for ops in _CELLS]
    graph = [nb201.from_operations(ops).canonical_key() for ops in _CELLS]
    return ours, numeric, reference, graph


@pytest.mark.slow
def test_canonical_key_gives_4930_classes_equal_to_an_independent_implementation(class_keys):
    ours, numeric, _, _ = class_keys
    assert len(set(ours)) == 4930
    assert _partition(ours) == _partition(numeric)  # the same classes, not just the same count


@pytest.mark.slow
def test_every_reference_class_lies_inside_one_class(class_keys):
    ours, _, reference, _ = class_keys
    assert len(set(reference)) == 6466
    inside: dict[str, set[str]] = {}
    for ref, key in zip(reference, ours):
        inside.setdefault(ref, set()).add(key)
    assert all(len(keys) == 1 for keys in inside.values())


@pytest.mark.slow
def test_reduced_graph_isomorphism_refines_the_expression_classes(class_keys):
    # Isomorphic reduced multigraphs compute the same function even without tied weights, so
    # each graph class lies inside one expression class (5,425 graph classes: a term computed
    # once and used twice is a different graph from the same term computed twice).
    ours, _, _, graph = class_keys
    assert len(set(graph)) == 5425
    inside: dict[str, set[str]] = {}
    for g, key in zip(graph, ours):
        inside.setdefault(g, set()).add(key)
    assert all(len(keys) == 1 for keys in inside.values())


def test_get_space_by_name():
    space = get_space("nb201")
    assert isinstance(space, nb201.NB201Space) and get_space("nb201") is space
    assert space.parse(OPTIMUM) == nb201.parse(OPTIMUM) and space.size == 15625
    with pytest.raises(ValueError, match="unknown search space"):
        get_space("nb999")
