"""Randomly wired graphs (RWNN §3): ER, BA and WS generators, their orientation, the string form.

A graph of this space has :data:`N_NODES` = 32 operation nodes, generated as an undirected
graph by one of three networkx models and turned into a DAG as RWNN §3.2 does:

* **ER** (Erdos-Renyi, ``P``): every pair is an edge with probability ``P``
  (``networkx.erdos_renyi_graph``); nodes get indices in a *random order*;
* **BA** (Barabasi-Albert, ``M``): each new node attaches to ``M`` existing nodes with
  probability proportional to their degree (``networkx.barabasi_albert_graph``); indices follow
  the order in which nodes were added (networkx numbers them so);
* **WS** (Watts-Strogatz, ``K``, ``P``): a ring where each node joins its ``K / 2`` neighbours on
  either side, each edge rewired with probability ``P`` (``networkx.watts_strogatz_graph``);
  indices run clockwise round the ring (networkx's node numbers).

Every edge then points from the lower to the higher index, so the graph is acyclic. RWNN adds a
unique input node feeding every source (a node without in-edges) and a unique output node that
averages every sink (a node without out-edges): :func:`to_architecture` does the same, so an
architecture has 34 nodes, node 0 ``input`` and node 33 ``output``, and every operation node
carries :data:`OPERATION` (``relu-conv3x3-bn``, NAS-BOWL App. E.1's node type).

The hyperparameter grids (:data:`GRIDS`) have NAS-BOWL App. E.1's sizes: 8 ER values, 6 BA values
and 55 WS combinations (the paper does not list the values; RWNN's best settings ER(0.2) and
BA(5) are on the grids, WS(4, 0.75) is not: its P grid is 0, 0.1, ..., 1).

String form (:func:`format_graph` / :func:`parse_graph`): ``"ws:K=4,P=0.7,seed=12,rewired=1|0-1,0-2,..."``:
the generator, its hyperparameters, the seed it was drawn with and how many edges were rewired
since, then the edges ``u-v`` (``u < v``, indices 0..31) of the 32 operation nodes. The header is
provenance only (the graph is the edge list): a bare edge list, or ``custom|...``, is a graph of
unknown origin.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Iterable

import networkx as nx
import numpy as np

from nasviz.arch import INPUT, OUTPUT, Architecture

#: Operation nodes per graph (NAS-BOWL's Flowers102 space: 32).
N_NODES = 32
#: The operation of every node (NAS-BOWL App. E.1).
OPERATION = "relu-conv3x3-bn"

#: Hyperparameter grids per generator: 8 ER, 6 BA and 5 x 11 = 55 WS settings (module docstring).
GRIDS: dict[str, dict[str, tuple[float, ...]]] = {
    "er": {"P": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)},
    "ba": {"M": (1, 2, 3, 4, 5, 6)},
    "ws": {"K": (2, 4, 6, 8, 10), "P": tuple(round(0.1 * i, 1) for i in range(11))},
}
GENERATORS: tuple[str, ...] = tuple(GRIDS)
CUSTOM = "custom"

_EDGE = re.compile(r"(\d+)-(\d+)")
_PARAM = re.compile(r"([A-Za-z]+)=([-+0-9.eE]+)")


@dataclass(frozen=True)
class Provenance:
    """Where a graph came from: generator, hyperparameters, seed, edges rewired since."""

    generator: str = CUSTOM
    params: tuple[tuple[str, float], ...] = ()
    seed: int | None = None
    rewired: int = 0

    def header(self) -> str:
        items = [f"{k}={_number(v)}" for k, v in self.params]
        if self.seed is not None:
            items.append(f"seed={self.seed}")
        if self.rewired:
            items.append(f"rewired={self.rewired}")
        return self.generator + (":" + ",".join(items) if items else "")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


@dataclass(frozen=True)
class WiredGraph:
    """A DAG on the 32 operation nodes (edges ``u < v``) and its provenance."""

    edges: tuple[tuple[int, int], ...]
    provenance: Provenance = field(default_factory=Provenance)

    def __post_init__(self) -> None:
        edges = tuple(sorted({(int(u), int(v)) for u, v in self.edges}))
        for u, v in edges:
            if not 0 <= u < v < N_NODES:
                raise ValueError(f"edge {u}-{v}: a wired graph's edges go from a lower to a higher index in 0..{N_NODES - 1}")
        object.__setattr__(self, "edges", edges)


def generate(generator: str, params: dict[str, float], seed: int) -> WiredGraph:
    """The oriented graph one generator draws with ``seed`` (module docstring)."""
    rng = np.random.default_rng(seed)
    graph_seed = int(rng.integers(2**31))
    if generator == "er":
        g = nx.erdos_renyi_graph(N_NODES, float(params["P"]), seed=graph_seed)
        order = rng.permutation(N_NODES)  # ER: indices in a random order
        edges = [tuple(sorted((int(order[u]), int(order[v])))) for u, v in g.edges]
    elif generator == "ba":
        g = nx.barabasi_albert_graph(N_NODES, int(params["M"]), seed=graph_seed)
        edges = [tuple(sorted(e)) for e in g.edges]
    elif generator == "ws":
        g = nx.watts_strogatz_graph(N_NODES, int(params["K"]), float(params["P"]), seed=graph_seed)
        edges = [tuple(sorted(e)) for e in g.edges]
    else:
        raise ValueError(f"unknown generator {generator!r}; expected one of {', '.join(GENERATORS)}")
    names = tuple(GRIDS[generator])
    return WiredGraph(tuple(edges), Provenance(generator, tuple((k, float(params[k])) for k in names), int(seed)))


def to_architecture(graph: WiredGraph) -> Architecture:
    """The 34-node DAG: ``input`` (node 0) -> sources, the operation nodes 1..32, sinks -> ``output`` (33)."""
    has_in = {v for _, v in graph.edges}
    has_out = {u for u, _ in graph.edges}
    edges = [(u + 1, v + 1) for u, v in graph.edges]
    edges += [(0, v + 1) for v in range(N_NODES) if v not in has_in]
    edges += [(u + 1, N_NODES + 1) for u in range(N_NODES) if u not in has_out]
    return Architecture((INPUT, *([OPERATION] * N_NODES), OUTPUT), tuple(edges))


def from_architecture(arch: Architecture, provenance: Provenance | None = None) -> WiredGraph:
    """The graph of a 34-node architecture; ``ValueError`` unless it is :func:`to_architecture` of one."""
    if arch.n_nodes != N_NODES + 2 or arch.labels != (INPUT, *([OPERATION] * N_NODES), OUTPUT):
        raise ValueError(f"a wired architecture has {N_NODES + 2} nodes: {INPUT!r}, {N_NODES} x {OPERATION!r}, "
                         f"{OUTPUT!r}; got {arch.n_nodes} nodes")
    inner = [(u - 1, v - 1) for u, v in arch.edges if 0 < u and v <= N_NODES]
    graph = WiredGraph(tuple(inner), provenance or Provenance())
    if to_architecture(graph) != arch:
        raise ValueError("not a wired architecture: the input must feed exactly the sources and the output read "
                         "exactly the sinks of the operation nodes, once each")
    return graph


def format_graph(graph: WiredGraph) -> str:
    return graph.provenance.header() + "|" + ",".join(f"{u}-{v}" for u, v in graph.edges)


def parse_graph(text: str) -> WiredGraph:
    """Read :func:`format_graph`'s form; ``ValueError`` naming the bad part."""
    if not isinstance(text, str):
        raise ValueError(f"expected a wired-graph string, got {type(text).__name__}")
    head, bar, body = text.strip().rpartition("|")
    if not bar:
        head, body = CUSTOM, text.strip()
    edges = []
    for k, item in enumerate(p.strip() for p in body.split(",") if p.strip()):
        m = _EDGE.fullmatch(item)
        if m is None:
            raise ValueError(f"edge {k + 1} {item[:20]!r} is not of the form u-v")
        edges.append((int(m.group(1)), int(m.group(2))))
    return WiredGraph(tuple(edges), _parse_header(head.strip() or CUSTOM))


def _parse_header(head: str) -> Provenance:
    name, _, rest = head.partition(":")
    name = name.strip().lower()
    if name not in (*GENERATORS, CUSTOM):
        raise ValueError(f"unknown generator {name!r}; expected one of {', '.join((*GENERATORS, CUSTOM))}")
    values: dict[str, float] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        m = _PARAM.fullmatch(item)
        if m is None:
            raise ValueError(f"generator setting {item[:20]!r} is not of the form name=number")
        value = float(m.group(2))
        if not math.isfinite(value):  # 1e999 reads as inf: it would be written back as 'inf', which no parse reads
            raise ValueError(f"generator setting {item[:20]!r} is not a finite number")
        values[m.group(1)] = value
    seed = values.pop("seed", None)
    rewired = int(values.pop("rewired", 0))
    expected = tuple(GRIDS.get(name, {}))
    if set(values) != set(expected):
        raise ValueError(f"generator {name!r} takes {', '.join(expected) or 'no'} hyperparameter(s), got "
                         f"{', '.join(values) or 'none'}")
    return Provenance(name, tuple((k, values[k]) for k in expected), None if seed is None else int(seed), rewired)


def grid_neighbours(provenance: Provenance) -> list[dict[str, float]]:
    """The settings one grid step from ``provenance``'s (one hyperparameter moved to an adjacent value)."""
    grid = GRIDS.get(provenance.generator)
    if not grid:
        return []
    current = dict(provenance.params)
    out = []
    for name, values in grid.items():
        pos = min(range(len(values)), key=lambda i: abs(values[i] - current.get(name, values[0])))
        for step in (-1, 1):
            if 0 <= pos + step < len(values):
                out.append({**current, name: float(values[pos + step])})
    return out


def settings() -> list[tuple[str, dict[str, float]]]:
    """All 69 (generator, hyperparameters) settings of :data:`GRIDS`."""
    out = []
    for name, grid in GRIDS.items():
        keys = list(grid)
        for combo in np.array(np.meshgrid(*grid.values(), indexing="ij")).reshape(len(keys), -1).T:
            out.append((name, {k: float(v) for k, v in zip(keys, combo)}))
    return out


def rewirings(graph: WiredGraph) -> Iterable[tuple[tuple[int, int], tuple[int, int]]]:
    """Every single rewiring ``(old edge, new edge)``: an edge ``u -> v`` moved to ``u -> w``
    (``w > u``, not already a successor); with no edge at all, every edge addition ``(None, e)``."""
    if not graph.edges:
        yield from ((None, (u, v)) for u in range(N_NODES) for v in range(u + 1, N_NODES))
        return
    succ: dict[int, set[int]] = {}
    for u, v in graph.edges:
        succ.setdefault(u, set()).add(v)
    for u, v in graph.edges:
        for w in range(u + 1, N_NODES):
            if w not in succ[u]:
                yield (u, v), (u, w)


def rewire(graph: WiredGraph, old: tuple[int, int] | None, new: tuple[int, int]) -> WiredGraph:
    edges = [e for e in graph.edges if e != old] + [new]
    p = graph.provenance
    return WiredGraph(tuple(edges), Provenance(p.generator, p.params, p.seed, p.rewired + 1))
