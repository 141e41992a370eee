"""The architecture model shared by every space, kernel and strategy.

An :class:`Architecture` is an immutable, hashable, node-labelled directed acyclic graph:
each node is a layer (or, for cell spaces such as NAS-Bench-201, an operation), its label is the
operation, and an optional width gives the number of units for layer spaces (NASBOT,
Auto-Keras). Node 0 is always the input and the last node the output.

Kernels work on :meth:`Architecture.reduced`, the graph after removing operations that compute
nothing (``none``) and bypassing identities (``skip_connect``); :meth:`canonical_key` identifies
architectures whose reduced graphs are isomorphic, i.e. cells that compute the same function.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

import networkx as nx

#: Labels of operations whose output is identically zero: the node and its edges are dropped.
ZERO_LABELS: frozenset[str] = frozenset({"none", "zero"})
#: Labels of identity operations: the node is removed and its inputs wired to its outputs.
IDENTITY_LABELS: frozenset[str] = frozenset({"skip_connect", "identity"})

INPUT = "input"
OUTPUT = "output"


@dataclass(frozen=True)
class Architecture:
    """A labelled DAG with node 0 as input and node ``n - 1`` as output.

    Parameters
    ----------
    labels : tuple of str, length n
        Operation (layer label) of each node.
    edges : tuple of (int, int)
        Directed edges ``(u, v)``; stored sorted and de-duplicated so that equal graphs
        compare and hash equal.
    widths : tuple of int or None, length n, optional
        Units per layer for layer spaces; ``None`` for cell spaces.
    """

    labels: tuple[str, ...]
    edges: tuple[tuple[int, int], ...]
    widths: tuple[int | None, ...] | None = None
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        labels = tuple(str(label) for label in self.labels)
        edges = tuple(sorted({(int(u), int(v)) for u, v in self.edges}))
        n = len(labels)
        if n < 2:
            raise ValueError(f"an architecture needs at least an input and an output node, got {n} node(s)")
        for u, v in edges:
            if not (0 <= u < n and 0 <= v < n):
                raise ValueError(f"edge ({u}, {v}) refers to a node outside 0..{n - 1}")
            if u == v:
                raise ValueError(f"edge ({u}, {v}) is a self-loop")
        widths = self.widths
        if widths is not None:
            widths = tuple(None if w is None else int(w) for w in widths)
            if len(widths) != n:
                raise ValueError(f"widths has {len(widths)} entries for {n} nodes")
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "widths", widths)
        order = _topological_order(n, edges)
        if order is None:
            raise ValueError("the edges contain a cycle: an architecture must be a DAG")
        self._cache["order"] = order

    # ------------------------------------------------------------------ basic views
    @property
    def n_nodes(self) -> int:
        return len(self.labels)

    def topological_order(self) -> tuple[int, ...]:
        """Nodes in a topological order (ties broken by node index, so it is deterministic)."""
        return self._cache["order"]

    def predecessors(self) -> tuple[tuple[int, ...], ...]:
        """``predecessors()[v]`` lists the nodes with an edge into ``v``."""
        if "pred" not in self._cache:
            pred: list[list[int]] = [[] for _ in self.labels]
            for u, v in self.edges:
                pred[v].append(u)
            self._cache["pred"] = tuple(tuple(p) for p in pred)
        return self._cache["pred"]

    def successors(self) -> tuple[tuple[int, ...], ...]:
        """``successors()[u]`` lists the nodes ``u`` has an edge into."""
        if "succ" not in self._cache:
            succ: list[list[int]] = [[] for _ in self.labels]
            for u, v in self.edges:
                succ[u].append(v)
            self._cache["succ"] = tuple(tuple(s) for s in succ)
        return self._cache["succ"]

    def to_networkx(self) -> nx.DiGraph:
        """A new ``networkx.DiGraph`` with node attributes ``label`` (and ``width`` if set)."""
        g = nx.DiGraph()
        for i, label in enumerate(self.labels):
            attrs = {"label": label}
            if self.widths is not None:
                attrs["width"] = self.widths[i]
            g.add_node(i, **attrs)
        g.add_edges_from(self.edges)
        return g

    @classmethod
    def from_networkx(cls, graph: nx.DiGraph) -> "Architecture":
        """Build from a DiGraph whose nodes carry a ``label`` (and optionally ``width``).

        Nodes are renumbered in topological order (input first, output last).
        """
        order = list(nx.lexicographical_topological_sort(graph))
        index = {node: i for i, node in enumerate(order)}
        labels = tuple(graph.nodes[node]["label"] for node in order)
        has_width = any("width" in graph.nodes[node] for node in order)
        widths = tuple(graph.nodes[node].get("width") for node in order) if has_width else None
        edges = tuple((index[u], index[v]) for u, v in graph.edges)
        return cls(labels, edges, widths)

    # ------------------------------------------------------------------ reduction
    def reduced(self) -> "Architecture":
        """The graph the kernels compare: zero operations removed, identities bypassed.

        * nodes labelled in :data:`ZERO_LABELS` are dropped with their edges;
        * nodes labelled in :data:`IDENTITY_LABELS` are removed and each of their
          predecessors is wired to each of their successors (an identity passes its summed
          input on unchanged, so this preserves the function);
        * nodes that no longer lie on a path from the input to the output are dropped.

        The three steps are repeated until nothing changes (a single pass can leave dead
        nodes behind). A cell whose output is unreachable from its input computes zeros; it
        reduces to the two-node graph ``input  output`` with no edge. Layer spaces contain
        neither label, so for them ``reduced()`` is the architecture itself (minus dead nodes).
        """
        if "reduced" in self._cache:
            return self._cache["reduced"]
        # Plain sets, not networkx: this runs once per architecture but for thousands of them.
        first, last = 0, self.n_nodes - 1
        pred = {v: set(p) for v, p in enumerate(self.predecessors())}
        succ = {u: set(s) for u, s in enumerate(self.successors())}

        def remove(node: int) -> None:
            for p in pred.pop(node):
                succ[p].discard(node)
            for s in succ.pop(node):
                pred[s].discard(node)

        while True:
            changed = False
            for node in list(pred):
                if node in (first, last):
                    continue
                label = self.labels[node]
                if label in ZERO_LABELS:
                    remove(node)
                    changed = True
                elif label in IDENTITY_LABELS:
                    for p in pred[node]:
                        for s in succ[node]:
                            succ[p].add(s)
                            pred[s].add(p)
                    remove(node)
                    changed = True
            alive = _reachable(first, succ) & _reachable(last, pred)
            dead = [n for n in pred if n not in alive and n not in (first, last)]
            for node in dead:
                remove(node)
            changed = changed or bool(dead)
            if not changed:
                break
        keep = sorted(pred)
        if last not in _reachable(first, succ):
            edges: list[tuple[int, int]] = []
        else:
            edges = [(u, v) for u in keep for v in succ[u]]
        index = {node: i for i, node in enumerate(keep)}
        widths = None if self.widths is None else tuple(self.widths[n] for n in keep)
        result = Architecture(
            tuple(self.labels[n] for n in keep),
            tuple((index[u], index[v]) for u, v in edges),
            widths,
        )
        if result == self:
            result = self
        self._cache["reduced"] = result
        return result

    # ------------------------------------------------------------------ canonical form
    def canonical_key(self) -> str:
        """A string that is equal for two architectures iff their reduced graphs are isomorphic.

        Exact (not a hash that may collide): colours are refined Weisfeiler-Lehman style to
        order the nodes, and the remaining ties are broken by trying the permutations within
        each colour class and keeping the lexicographically smallest edge list. Graphs in the
        supported spaces are small (at most tens of nodes with few ties), so this is fast.
        """
        if "key" not in self._cache:
            self._cache["key"] = _canonical_string(self.reduced())
        return self._cache["key"]

    def __repr__(self) -> str:  # compact, readable in logs and tracebacks
        w = "" if self.widths is None else f", widths={list(self.widths)}"
        return f"Architecture(labels={list(self.labels)}, edges={list(self.edges)}{w})"


def _reachable(start: int, neighbours: dict[int, set[int]]) -> set[int]:
    """Nodes reachable from ``start`` (itself included) following ``neighbours``."""
    seen, stack = {start}, [start]
    while stack:
        for nxt in neighbours[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _topological_order(n: int, edges: Sequence[tuple[int, int]]) -> tuple[int, ...] | None:
    """Kahn's algorithm with a smallest-index tie break; ``None`` if there is a cycle."""
    import heapq

    indeg = [0] * n
    succ: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        indeg[v] += 1
        succ[u].append(v)
    heap = [i for i in range(n) if indeg[i] == 0]
    heapq.heapify(heap)
    order: list[int] = []
    while heap:
        u = heapq.heappop(heap)
        order.append(u)
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                heapq.heappush(heap, v)
    return tuple(order) if len(order) == n else None


def _canonical_string(arch: Architecture) -> str:
    n = arch.n_nodes
    pred, succ = arch.predecessors(), arch.successors()
    width = arch.widths or (None,) * n
    # Input and output keep their roles: mark them in the initial colour.
    colour = [
        f"{'I' if i == 0 else 'O' if i == n - 1 else 'M'}|{arch.labels[i]}|{width[i]}" for i in range(n)
    ]
    for _ in range(n):
        new = [
            f"{colour[i]}({','.join(sorted(colour[p] for p in pred[i]))})[{','.join(sorted(colour[s] for s in succ[i]))}]"
            for i in range(n)
        ]
        ranks = {c: r for r, c in enumerate(sorted(set(new)))}
        new_rank = [str(ranks[c]) for c in new]
        if len(set(new_rank)) == len(set(colour)):
            colour = new_rank
            break
        colour = new_rank
    # Order nodes by (refined colour, original colour string); enumerate ties.
    base = [f"{'I' if i == 0 else 'O' if i == n - 1 else 'M'}|{arch.labels[i]}|{width[i]}" for i in range(n)]
    classes: dict[str, list[int]] = {}
    for i in range(n):
        classes.setdefault(colour[i], []).append(i)
    ordered_classes = sorted(classes.items(), key=lambda kv: (base[kv[1][0]], kv[0]))
    best: tuple | None = None
    for perms in itertools.product(*(itertools.permutations(members) for _, members in ordered_classes)):
        order = [node for perm in perms for node in perm]
        pos = {node: i for i, node in enumerate(order)}
        candidate = tuple(sorted((pos[u], pos[v]) for u, v in arch.edges))
        if best is None or candidate < best[0]:
            best = (candidate, order)
    assert best is not None
    edges, order = best
    nodes = ";".join(base[i] for i in order)
    return nodes + "#" + ";".join(f"{u}>{v}" for u, v in edges)

