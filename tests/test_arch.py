import networkx as nx
import numpy as np
import pytest

from nasviz.arch import Architecture, term_expression


def test_architecture_is_immutable_and_hashable():
    a = Architecture(("input", "conv", "output"), ((1, 2), (0, 1)))
    b = Architecture(("input", "conv", "output"), ((0, 1), (1, 2)))
    assert a == b and hash(a) == hash(b)
    assert a.edges == ((0, 1), (1, 2))
    with pytest.raises(AttributeError):
        a.labels = ("x",)  # type: ignore[misc]


def test_repeated_edges_are_parallel_edges_not_duplicates():
    single = Architecture(("input", "conv", "output"), ((0, 1), (1, 2)))
    double = Architecture(("input", "conv", "output"), ((0, 1), (1, 2), (0, 1)))
    assert double != single and double.edges == ((0, 1), (0, 1), (1, 2))
    assert double.has_parallel_edges and not single.has_parallel_edges
    assert double.edge_multiplicities() == {(0, 1): 2, (1, 2): 1}
    assert double.predecessors()[1] == (0, 0)
    assert double.canonical_key() != single.canonical_key()
    back = Architecture.from_networkx(double.to_networkx())
    assert back == double and back.to_networkx().edges[0, 1]["multiplicity"] == 2


def test_cycle_and_bad_edges_are_rejected_with_a_reason():
    with pytest.raises(ValueError, match="cycle"):
        Architecture(("input", "a", "b", "output"), ((0, 1), (1, 2), (2, 1), (2, 3)))
    with pytest.raises(ValueError, match="outside"):
        Architecture(("input", "output"), ((0, 5),))
    with pytest.raises(ValueError, match="widths"):
        Architecture(("input", "output"), ((0, 1),), widths=(1, 2, 3))


def test_networkx_round_trip_and_topological_order():
    a = Architecture(("input", "relu", "tanh", "output"), ((0, 2), (2, 1), (1, 3)), widths=(None, 16, 32, None))
    g = a.to_networkx()
    assert nx.is_directed_acyclic_graph(g)
    assert g.nodes[1]["width"] == 16
    order = a.topological_order()
    assert order.index(2) < order.index(1)
    b = Architecture.from_networkx(g)
    assert b.labels[0] == "input" and b.labels[-1] == "output"
    assert b.canonical_key() == a.canonical_key()


def test_canonical_key_identifies_isomorphic_graphs_only():
    a = Architecture(("input", "conv", "pool", "output"), ((0, 1), (0, 2), (1, 3), (2, 3)))
    b = Architecture(("input", "pool", "conv", "output"), ((0, 1), (0, 2), (1, 3), (2, 3)))
    c = Architecture(("input", "conv", "pool", "output"), ((0, 1), (1, 2), (2, 3)))
    assert a.canonical_key() == b.canonical_key()
    assert a.canonical_key() != c.canonical_key()


def test_reduced_removes_zero_bypasses_identity_and_prunes_dead_nodes():
    # input -> skip -> conv -> output, plus input -> none -> output, plus a dead-end pool
    a = Architecture(
        ("input", "skip_connect", "conv", "none", "pool", "output"),
        ((0, 1), (1, 2), (2, 5), (0, 3), (3, 5), (0, 4)),
    )
    r = a.reduced()
    assert r.labels == ("input", "conv", "output")
    assert r.edges == ((0, 1), (1, 2))


def test_disconnected_cell_reduces_to_input_output_without_edges():
    a = Architecture(("input", "none", "output"), ((0, 1), (1, 2)))
    r = a.reduced()
    assert r.labels == ("input", "output") and r.edges == ()


def test_identity_paths_that_meet_again_keep_their_multiplicity():
    # x -> skip -> output and x -> output: the output receives x twice (2x), not x.
    two = Architecture(("input", "skip_connect", "output"), ((0, 1), (1, 2), (0, 2)))
    one = Architecture(("input", "skip_connect", "output"), ((0, 1), (1, 2)))
    assert two.reduced().edges == ((0, 1), (0, 1))
    assert one.reduced().edges == ((0, 1),)
    assert two.canonical_key() != one.canonical_key()
    assert term_expression(two) == "x+x" and term_expression(one) == "x"


def test_multiplicities_multiply_through_chained_identities():
    # input =2=> skip =3=> conv: conv reads 6x.
    a = Architecture(("input", "skip_connect", "conv", "output"), ((0, 1), (0, 1), (1, 2), (1, 2), (1, 2), (2, 3)))
    assert a.reduced().edge_multiplicities() == {(0, 1): 6, (1, 2): 1}
    assert term_expression(a) == "conv(x+x+x+x+x+x)"


def test_term_expression_ties_shared_and_repeated_terms():
    # conv(x) computed once and used twice vs computed twice: one expression, two graphs.
    shared = Architecture(("input", "conv", "skip_connect", "skip_connect", "output"),
                          ((0, 1), (1, 2), (1, 3), (2, 4), (3, 4)))
    twice = Architecture(("input", "conv", "conv", "output"), ((0, 1), (0, 2), (1, 3), (2, 3)))
    assert term_expression(shared) == term_expression(twice) == "conv(x)+conv(x)"
    assert shared.canonical_key() != twice.canonical_key()
    # an operation whose input is identically zero contributes nothing
    dead = Architecture(("input", "none", "conv", "output"), ((0, 1), (1, 2), (2, 3), (0, 3)))
    assert term_expression(dead) == "x"
    empty = Architecture(("input", "none", "output"), ((0, 1), (1, 2)))
    assert term_expression(empty) == "0"


def _evaluate(arch: Architecture, x: float, functions: dict[str, "object"]) -> float | None:
    """Evaluate a sum-cell numerically: a node sums its inputs (one term per parallel edge) and
    applies its own function; ``None`` is "received nothing" (an operation on it is dropped)."""
    values: list[float | None] = [x]
    pred = arch.predecessors()
    for v in range(1, arch.n_nodes):
        inputs = [values[u] for u in pred[v] if values[u] is not None]
        total = sum(inputs) if inputs else None
        label = arch.labels[v]
        if v == arch.n_nodes - 1 or label == "skip_connect":
            values.append(total)
        elif label == "none" or total is None:
            values.append(None)
        else:
            values.append(functions[label](total))
    return values[-1]


def test_reduced_graph_evaluates_to_the_cells_output_with_per_node_functions():
    import itertools

    import numpy as np

    from nasviz.spaces import nb201

    rng = np.random.default_rng(0)
    cells = list(itertools.product(nb201.OPERATIONS, repeat=6))
    for k in rng.choice(len(cells), 3000, replace=False):
        ops = cells[k]
        # every operation node gets a name of its own, so the reduced graph's nodes are traceable
        named = [op if op in ("none", "skip_connect") else f"{op}#{i}" for i, op in enumerate(ops)]
        arch = Architecture(("input", *named, "output"), nb201.DAG_EDGES)
        coef = {name: rng.normal(size=2) for name in named}
        functions = {name: (lambda z, c=c: float(np.tanh(c[0] * z + c[1]))) for name, c in coef.items()}
        for x in (0.3, -1.1):
            full, reduced = _evaluate(arch, x, functions), _evaluate(arch.reduced(), x, functions)
            assert (full is None and reduced is None) or abs(full - reduced) < 1e-12, ops


def test_relabelled_equals_building_the_same_graph_anew():
    from nasviz.spaces import nb201

    rng = np.random.default_rng(3)
    for cell in nb201.sample(rng, 20):
        anew = Architecture(cell.labels, cell.edges, cell.widths)
        assert cell == anew and hash(cell) == hash(anew)
        assert cell.topological_order() == anew.topological_order()
        assert cell.predecessors() == anew.predecessors()
    base = nb201.parse(nb201.format(nb201.sample(rng, 1)[0]))
    other = base.relabelled(("input", *["skip_connect"] * 6, "output"))
    assert other.labels[1:-1] == ("skip_connect",) * 6 and base.labels != other.labels  # base untouched
    with pytest.raises(ValueError, match="3 labels for an architecture of 8 nodes"):
        base.relabelled(("a", "b", "c"))
