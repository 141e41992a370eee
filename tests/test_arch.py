import networkx as nx
import pytest

from nasviz.arch import Architecture


def test_architecture_is_immutable_and_hashable():
    a = Architecture(("input", "conv", "output"), ((1, 2), (0, 1)))
    b = Architecture(("input", "conv", "output"), ((0, 1), (1, 2), (0, 1)))
    assert a == b and hash(a) == hash(b)
    assert a.edges == ((0, 1), (1, 2))
    with pytest.raises(AttributeError):
        a.labels = ("x",)  # type: ignore[misc]


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
