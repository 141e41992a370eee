"""The architecture model shared by every space, kernel and strategy.

An :class:`Architecture` is an immutable, hashable, node-labelled directed acyclic *multigraph*:
each node is a layer (or, for cell spaces such as NAS-Bench-201, an operation), its label is the
operation, and an optional width gives the number of units for layer spaces (NASBOT,
Auto-Keras). Node 0 is always the input and the last node the output. Edges may repeat: two
parallel edges ``u -> v`` mean that ``v`` receives ``u``'s output twice (``x + x``), which is
what bypassing identities produces when two paths of skip connections meet again.

Kernels work on :meth:`Architecture.reduced`, the multigraph after removing operations that
compute nothing (``none``) and bypassing identities (``skip_connect``). Every remaining operation
node keeps its inputs with their multiplicities, so evaluating the reduced graph with each node's
own function gives the cell's output (tested numerically on NAS-Bench-201 cells in
``tests/test_arch.py``). :meth:`canonical_key` identifies architectures whose reduced
multigraphs are isomorphic. Cell spaces whose equivalence ties weights term by term (NAS-Bench-201:
two cells are equivalent when their outputs are equal as sums of terms) group cells with the
space's own key (:func:`nasviz.spaces.nb201.canonical_key`), which is coarser: it also merges a
cell that computes ``conv(x)`` once and feeds it twice with one that computes it twice.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import networkx as nx

from nasviz.arch_canonical import canonical_string

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
        Directed edges ``(u, v)``, stored sorted so that equal graphs compare and hash equal.
        A repeated edge is a parallel edge (multiplicity): ``v`` sums ``u``'s output once per
        copy. Spaces that never produce parallel edges (layer networks) simply never repeat one.
    widths : tuple of int or None, length n, optional
        Units per layer for layer spaces; ``None`` for cell spaces.
    """

    labels: tuple[str, ...]
    edges: tuple[tuple[int, int], ...]
    widths: tuple[int | None, ...] | None = None
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        labels = tuple(str(label) for label in self.labels)
        edges = tuple(sorted((int(u), int(v)) for u, v in self.edges))
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

    def relabelled(self, labels: Sequence[str]) -> Architecture:
        """The same graph (edges, widths) with other node labels, ``len(labels) == n_nodes``.

        Equal to ``Architecture(labels, self.edges, self.widths)`` but skips re-validating a graph
        that was validated when ``self`` was built: fixed-graph spaces (NAS-Bench-201 parses
        15,625 table rows on a cold first page) build every cell from one template.
        """
        labels = tuple(str(label) for label in labels)
        if len(labels) != len(self.labels):
            raise ValueError(f"{len(labels)} labels for an architecture of {len(self.labels)} nodes")
        new = object.__new__(Architecture)
        object.__setattr__(new, "labels", labels)
        object.__setattr__(new, "edges", self.edges)
        object.__setattr__(new, "widths", self.widths)
        object.__setattr__(new, "_cache", {"order": self._cache["order"]})
        return new

    # ------------------------------------------------------------------ basic views
    @property
    def n_nodes(self) -> int:
        return len(self.labels)

    def topological_order(self) -> tuple[int, ...]:
        """Nodes in a topological order (ties broken by node index, so it is deterministic)."""
        return self._cache["order"]

    def predecessors(self) -> tuple[tuple[int, ...], ...]:
        """``predecessors()[v]`` lists the nodes with an edge into ``v`` (once per parallel edge)."""
        if "pred" not in self._cache:
            pred: list[list[int]] = [[] for _ in self.labels]
            for u, v in self.edges:
                pred[v].append(u)
            self._cache["pred"] = tuple(tuple(p) for p in pred)
        return self._cache["pred"]

    def successors(self) -> tuple[tuple[int, ...], ...]:
        """``successors()[u]`` lists the nodes ``u`` has an edge into (once per parallel edge)."""
        if "succ" not in self._cache:
            succ: list[list[int]] = [[] for _ in self.labels]
            for u, v in self.edges:
                succ[u].append(v)
            self._cache["succ"] = tuple(tuple(s) for s in succ)
        return self._cache["succ"]

    @property
    def has_parallel_edges(self) -> bool:
        """Whether some edge is repeated (a multiplicity above one)."""
        return len(set(self.edges)) != len(self.edges)

    def edge_multiplicities(self) -> dict[tuple[int, int], int]:
        """``{(u, v): number of parallel edges u -> v}`` for every distinct edge."""
        if "mult" not in self._cache:
            self._cache["mult"] = dict(Counter(self.edges))
        return self._cache["mult"]

    def to_networkx(self) -> nx.DiGraph:
        """A new ``networkx.DiGraph`` with node attributes ``label`` (and ``width`` if set) and
        edge attribute ``multiplicity`` (the number of parallel edges)."""
        g = nx.DiGraph()
        for i, label in enumerate(self.labels):
            attrs = {"label": label}
            if self.widths is not None:
                attrs["width"] = self.widths[i]
            g.add_node(i, **attrs)
        for (u, v), m in self.edge_multiplicities().items():
            g.add_edge(u, v, multiplicity=m)
        return g

    @classmethod
    def from_networkx(cls, graph: nx.DiGraph) -> "Architecture":
        """Build from a DiGraph whose nodes carry a ``label`` (and optionally ``width``) and whose
        edges may carry a ``multiplicity`` (default 1).

        Nodes are renumbered in topological order (input first, output last).
        """
        order = list(nx.lexicographical_topological_sort(graph))
        index = {node: i for i, node in enumerate(order)}
        labels = tuple(graph.nodes[node]["label"] for node in order)
        has_width = any("width" in graph.nodes[node] for node in order)
        widths = tuple(graph.nodes[node].get("width") for node in order) if has_width else None
        edges = tuple(
            (index[u], index[v]) for u, v, m in graph.edges(data="multiplicity", default=1) for _ in range(int(m))
        )
        return cls(labels, edges, widths)

    # ------------------------------------------------------------------ reduction
    def reduced(self) -> "Architecture":
        """The multigraph the kernels compare: zero operations removed, identities bypassed.

        * nodes labelled in :data:`ZERO_LABELS` are dropped with their edges;
        * nodes labelled in :data:`IDENTITY_LABELS` are removed, and each predecessor is wired to
          each successor with multiplicity ``m(p -> node) * m(node -> s)``: an identity passes its
          summed input on unchanged, so two paths of identities that meet again deliver their
          source twice (``x + x``), and the parallel edges say so;
        * nodes that no longer lie on a path from the input to the output are dropped (an
          operation whose input is identically zero contributes nothing; this is also what the
          NAS-Bench-201 network builder computes).

        The steps are repeated until nothing changes (a single pass can leave dead nodes behind).
        Every remaining operation node keeps its own inputs with their multiplicities, so the
        reduced graph evaluates to the cell's output (module docstring). A cell whose output is unreachable from its input
        computes zeros; it reduces to the two-node graph ``input  output`` with no edge. Layer
        spaces contain neither label, so for them ``reduced()`` is the architecture itself
        (minus dead nodes).
        """
        if "reduced" in self._cache:
            return self._cache["reduced"]
        keep, edges = _reduce(self)
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
        """A string that is equal for two architectures iff their reduced multigraphs are isomorphic
        (labels, widths and edge multiplicities included).

        Exact (not a hash that may collide) whenever the refined colour classes leave at most
        :data:`~nasviz.arch_canonical.EXACT_ORDERINGS_LIMIT` node orderings: colours are refined Weisfeiler-Lehman style to
        order the nodes, and the remaining ties are broken by trying the permutations within
        each colour class and keeping the lexicographically smallest edge list (parallel edges
        appear once per copy). Highly symmetric graphs leave factorially many orderings (a
        32-node randomly wired tree: a 150 s search); they are keyed instead by their stable
        colour-refinement certificate (prefix ``wl:``), equal for isomorphic graphs and shared
        only by non-isomorphic graphs colour refinement cannot tell apart (never two trees).
        Isomorphic reduced graphs compute the same function; a space may group architectures
        more coarsely (NAS-Bench-201's expression key).
        """
        if "key" not in self._cache:
            self._cache["key"] = canonical_string(self.reduced())
        return self._cache["key"]

    def __repr__(self) -> str:  # compact, readable in logs and tracebacks
        w = "" if self.widths is None else f", widths={list(self.widths)}"
        return f"Architecture(labels={list(self.labels)}, edges={list(self.edges)}{w})"


def _reduce(arch: Architecture) -> tuple[list[int], list[tuple[int, int]]]:
    """The nodes :meth:`Architecture.reduced` keeps (sorted) and its edges, one per copy, both in
    ``arch``'s numbering: reduction passes (:func:`_reduction_pass`) until one changes nothing."""
    # Plain counters, not networkx: this runs once per architecture but for thousands of them.
    first, last = 0, arch.n_nodes - 1
    pred: dict[int, Counter] = {v: Counter() for v in range(arch.n_nodes)}
    succ: dict[int, Counter] = {u: Counter() for u in range(arch.n_nodes)}
    for u, v in arch.edges:
        succ[u][v] += 1
        pred[v][u] += 1
    while _reduction_pass(arch.labels, pred, succ, first, last):
        pass
    keep = sorted(pred)
    if last not in _reachable(first, succ):
        return keep, []
    return keep, [(u, v) for u in keep for v, m in succ[u].items() for _ in range(m)]


def _reduction_pass(labels: Sequence[str], pred: dict[int, Counter], succ: dict[int, Counter], first: int,
                    last: int) -> bool:
    """One pass over the multigraph ``pred`` / ``succ`` (edge multiplicities per node, changed in
    place): drop zero operations, bypass identities, then drop nodes off every input-to-output
    path. True when it changed something (a single pass can leave dead nodes behind)."""
    changed = False
    for node in list(pred):
        if node in (first, last):
            continue
        label = labels[node]
        if label in ZERO_LABELS:
            _remove_node(pred, succ, node)
            changed = True
        elif label in IDENTITY_LABELS:
            for p, m_in in pred[node].items():
                for s, m_out in succ[node].items():
                    succ[p][s] += m_in * m_out
                    pred[s][p] += m_in * m_out
            _remove_node(pred, succ, node)
            changed = True
    alive = _reachable(first, succ) & _reachable(last, pred)
    dead = [n for n in pred if n not in alive and n not in (first, last)]
    for node in dead:
        _remove_node(pred, succ, node)
    return changed or bool(dead)


def _remove_node(pred: dict[int, Counter], succ: dict[int, Counter], node: int) -> None:
    for p in pred.pop(node):
        del succ[p][node]
    for s in succ.pop(node):
        del pred[s][node]


def _reachable(start: int, neighbours: Mapping[int, Iterable[int]]) -> set[int]:
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


def term_expression(arch: Architecture) -> str:
    """The output of a sum-cell written as a canonical sum of terms.

    Reads ``arch`` as a cell in which every node sums its inputs (with multiplicity) and then
    applies its operation: the input is the term ``x``; a node in :data:`ZERO_LABELS`, and any
    node whose summed input is identically zero, contributes nothing; a node in
    :data:`IDENTITY_LABELS` passes its input's terms on unchanged; any other node adds one term
    ``label(sum of its input's terms)`` (``label:width`` for layer architectures). The output
    node's value is the sum of its inputs. Sums are multisets, written sorted, so ``x + x`` and
    ``x`` differ while ``a + b`` and ``b + a`` do not.

    Two cells have equal expressions exactly when they compute the same function once the
    weights are tied term by term (each distinct term gets one set of weights). This is the
    equivalence NAS-Bench-201 means by "isomorphic cells": it gives 4,930 classes on its
    15,625 cells (tested against an independent implementation in ``tests/spaces/test_nb201.py``).
    It is coarser than :meth:`Architecture.canonical_key`, which also tells apart a cell that
    computes ``conv(x)`` once and uses it twice from one that computes it twice.
    """
    node_terms: list[Counter] = []
    pred = arch.predecessors()
    widths = arch.widths or (None,) * arch.n_nodes
    for v in range(arch.n_nodes):  # node indices are a topological order for every space's graphs
        if v == 0:
            node_terms.append(Counter({"x": 1}))
            continue
        summed: Counter = Counter()
        for u in pred[v]:
            if u > v:
                raise ValueError("term_expression needs nodes numbered in topological order")
            summed.update(node_terms[u])
        label = arch.labels[v]
        if v == arch.n_nodes - 1 or label in IDENTITY_LABELS:
            node_terms.append(summed)
        elif label in ZERO_LABELS or not summed:
            node_terms.append(Counter())
        else:
            name = label if widths[v] is None else f"{label}:{widths[v]}"
            node_terms.append(Counter({f"{name}({_sum_string(summed)})": 1}))
    return _sum_string(node_terms[-1])


def _sum_string(terms: Counter) -> str:
    """A multiset of terms as ``a+a+b`` (sorted; ``0`` for the empty sum)."""
    return "+".join(sorted(terms.elements())) or "0"
