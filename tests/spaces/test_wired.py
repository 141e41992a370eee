"""Randomly wired networks: generators, RWNN's orientation, the string form, moves, the network, the registry."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nasviz.arch import Architecture
from nasviz.components import SPACES, kernels_for, problems
from nasviz.errors import ConfigError
from nasviz.kernels import make_kernel
from nasviz.spaces import get_space
from nasviz.spaces.wired import N_NODES, OPERATION, generate, parse_graph, to_architecture
from nasviz.spaces.wired.graphs import GRIDS, from_architecture, grid_neighbours, settings
from nasviz.spaces.wired.network import expected_parameter_count


@pytest.fixture(scope="module")
def space():
    return get_space("wired")


def test_grids_have_nas_bowls_sizes():
    assert sum(1 for name, _ in settings() if name == "er") == 8
    assert sum(1 for name, _ in settings() if name == "ba") == 6
    assert sum(1 for name, _ in settings() if name == "ws") == 55 and len(settings()) == 69


def test_ba_indices_follow_the_order_nodes_were_added():
    graph = generate("ba", {"M": 2}, seed=3)
    assert len(graph.edges) == 2 * (N_NODES - 2)  # networkx: a star of M + 1 nodes, then M edges per node
    indegree = np.bincount([v for _, v in graph.edges], minlength=N_NODES)
    assert (indegree[3:] == 2).all()  # each later node attached to 2 earlier (lower-index) nodes


def test_ws_ring_is_oriented_clockwise_with_one_source_and_one_sink():
    graph = generate("ws", {"K": 4, "P": 0.0}, seed=0)
    assert len(graph.edges) == N_NODES * 2 and all(u < v for u, v in graph.edges)
    arch = to_architecture(graph)
    assert arch.n_nodes == N_NODES + 2 and arch.labels[1:-1] == (OPERATION,) * N_NODES
    assert arch.successors()[0] == (1,) and arch.predecessors()[N_NODES + 1] == (N_NODES,)


def test_every_generator_gives_a_dag_whose_sources_and_sinks_are_wired():
    rng = np.random.default_rng(0)
    for name, params in settings()[::7]:
        graph = generate(name, params, seed=int(rng.integers(1000)))
        arch = to_architecture(graph)  # Architecture refuses a cycle
        pred, succ = arch.predecessors(), arch.successors()
        assert all(pred[v] for v in range(1, N_NODES + 1)) and all(succ[v] for v in range(1, N_NODES + 1))
        assert generate(name, params, graph.provenance.seed).edges == graph.edges  # the seed reproduces it


def test_string_round_trip_records_the_generator(space):
    for arch in space.sample(np.random.default_rng(1), 6):
        text = space.format(arch)
        assert text.split(":")[0] in GRIDS and "seed=" in text
        assert space.parse(text) == arch and space.format(space.parse(text)) == text and space.contains(arch)
    bare = space.parse("0-1,1-2")
    assert space.format(bare) == "custom|0-1,1-2" and len(bare.edges) == 2 + (N_NODES - 2) + (N_NODES - 2)


@pytest.mark.parametrize("text, message", [
    ("er:P=0.2|0-1,1-x", "not of the form u-v"),
    ("er:P=0.2|3-1", "from a lower to a higher index"),
    ("er:P=0.2|0-40", "from a lower to a higher index"),
    ("ring:P=0.2|0-1", "unknown generator 'ring'"),
    ("ws:K=4|0-1", "takes K, P hyperparameter"),
    ("ba:M=two|0-1", "not of the form name=number"),
])
def test_bad_strings_say_what_is_wrong(space, text, message):
    with pytest.raises(ValueError, match=message):
        space.parse(text)


def test_an_architecture_with_other_wiring_is_refused():
    arch = to_architecture(parse_graph("0-1"))
    extra = Architecture(arch.labels, arch.edges + ((0, 2),))  # the input also feeds a non-source
    with pytest.raises(ValueError, match="exactly the sources"):
        from_architecture(extra)
    with pytest.raises(ValueError, match="34 nodes"):
        from_architecture(Architecture(("input", "output"), ((0, 1),)))


def test_mutation_rewires_one_edge_or_regenerates_nearby(space):
    rng = np.random.default_rng(4)
    parent = space.sample(rng, 1)[0]
    graph = space.graph(parent)
    kinds = set()
    neighbours = set(space.neighbours(parent))
    for _ in range(30):
        child = space.mutate(parent, rng)
        cg = space.graph(child)
        if cg.provenance.rewired == graph.provenance.rewired + 1:
            kinds.add("rewire")
            assert len(cg.edges) == len(graph.edges) and len(set(cg.edges) ^ set(graph.edges)) == 2
            assert child in neighbours
        else:
            kinds.add("regenerate")
            assert cg.provenance.generator == graph.provenance.generator
            assert dict(cg.provenance.params) in grid_neighbours(graph.provenance)
    assert kinds == {"rewire", "regenerate"}


def test_network_forward_pass_and_parameter_count(space):
    arch = space.sample(np.random.default_rng(2), 1)[0]
    net = space.build_network(arch, (1, 8, 8), 10, **space.network_defaults())
    assert net(torch.randn(4, 1, 8, 8)).shape == (4, 10)
    assert sum(p.numel() for p in net.parameters()) == expected_parameter_count(arch, 8, 10, 1)
    with pytest.raises(ConfigError, match="image inputs"):
        space.build_network(arch, (13,), 3)


def test_registry_offers_the_graph_kernels_but_not_paths():
    assert "wired" in SPACES
    kernels = kernels_for("wired")
    assert {"wl", "tw2g", "otmann", "edit", "rw", "sp", "mlg", "wl+mlg"} <= set(kernels) and "path" not in kernels
    assert any("paths" in p for p in problems("wired", "bo", {"kernel": "path"}))
    with pytest.raises(ConfigError, match="needs paths"):
        make_kernel("path", space=get_space("wired"))


def test_canonical_key_of_a_symmetric_graph_is_fast_and_invariant():
    """A BA(M=1) graph is a tree with factorially many automorphisms: the exhaustive tie-breaking
    of Architecture.canonical_key took 150 s on one; the refinement certificate keys it at once."""
    import time

    import networkx as nx

    arch = to_architecture(generate("ba", {"M": 1}, seed=1))
    start = time.perf_counter()
    key = arch.canonical_key()
    assert time.perf_counter() - start < 5.0 and key.startswith("wl:")
    rng = np.random.default_rng(0)
    g = nx.DiGraph(list(arch.edges))
    g.add_nodes_from(range(arch.n_nodes))
    for _ in range(3):  # renumber the operation nodes in another topological order
        order = list(nx.lexicographical_topological_sort(g, key=lambda v: rng.random()))
        pos = {v: i for i, v in enumerate(order)}
        renumbered = Architecture(tuple(arch.labels[v] for v in order), tuple((pos[u], pos[v]) for u, v in arch.edges))
        assert renumbered.canonical_key() == key
    other = to_architecture(generate("ba", {"M": 1}, seed=2))
    assert other.canonical_key() != key
    small = to_architecture(generate("ws", {"K": 4, "P": 0.3}, seed=0))
    assert not small.canonical_key().startswith("wl:")  # few ties: the exact key


@pytest.mark.slow
def test_every_graph_kernel_reads_wired_graphs(space):
    """Each kernel the registry offers gives a finite symmetric Gram matrix on wired graphs. The
    GraKeL random-walk kernel (``rw``) is left out: ~30 s for 8 graphs of 34 nodes on one core."""
    archs = space.sample(np.random.default_rng(5), 5)
    for name in sorted(set(kernels_for("wired")) - {"rw"}):
        K = np.asarray(make_kernel(name, space=space).matrix(archs, archs))
        assert K.shape == (5, 5) and np.isfinite(K).all(), name
        assert np.allclose(K, K.T, atol=1e-8), name


@pytest.mark.slow
def test_a_wired_network_trains_on_digits(space):
    """Live training on the bundled image data (no table exists for this space): an ER(0.2) graph
    learns above chance in the space's default 4 epochs (about 8 s of CPU; 35.6 % here)."""
    from nasviz.objectives.datasets import load_dataset
    from nasviz.objectives.trainer import train_model

    data = load_dataset("digits", seed=0)
    arch = space.parse(space.format(to_architecture(generate("er", {"P": 0.2}, seed=0))))
    torch.manual_seed(0)
    net = space.build_network(arch, tuple(data.input_shape), data.n_outputs, **space.network_defaults())
    result = train_model(net, data, **space.training_defaults(), device="cpu")
    assert result.ok and result.epochs_run == 4
    assert result.valid_score > 20  # percent; chance is 10
