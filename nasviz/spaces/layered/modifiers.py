"""What NASBOT's modifiers and compound mutation do alike in every layer space (paper 001 Table 6, App. B.2).

Each space's modifiers (:mod:`nasviz.spaces.mlp.modifiers`, :mod:`nasviz.spaces.cnn.modifiers`)
keep their own registry, docstrings and the parts that depend on the space's labels (which layers
have units, what ``swap_label`` may exchange, what a wedged layer may be, how a skip connection is
made); the editing copy of a network (:class:`Graph`) and the moves that only rewire layers live
here. Functions that finish a network take the space's ``is_valid`` (App. B.1: "If the EA modifier
generates a network that violates these constraints, we simply skip it": ``None``).

Keep the order of the random draws in these functions: a seed must keep giving the same
networks, or recorded searches no longer replay.
"""

from __future__ import annotations

import math
from typing import Callable, Iterable, Mapping, Sequence, TypeVar

import numpy as np

from nasviz.arch import Architecture
from nasviz.spaces.layered.graph import Constraints, decision_layers, forward_pairs, normalise, processing_layers
from nasviz.spaces.layered.graph import format as format_network

Modifier = Callable[[Architecture, np.random.Generator, Constraints], "Architecture | None"]
#: A space's validity check, ``is_valid(arch, constraints)``.
IsValid = Callable[[Architecture, Constraints], bool]
#: How a space makes the connection ``u -> v`` in an editing copy (``False`` if it cannot):
#: ``connect(g, arch, u, v)``.
Connect = Callable[["Graph", Architecture, int, int], bool]

#: Probabilities of a 1..5-step mutation in NASBOT's compound operator (App. B.2).
STEP_PROBABILITIES: tuple[float, ...] = (0.5, 0.25, 0.125, 0.075, 0.05)

_T = TypeVar("_T")


class Graph:
    """A mutable copy of a network used while a modifier edits it (any layer space: ``finish``
    checks the result with the space's ``is_valid``)."""

    def __init__(self, arch: Architecture) -> None:
        self.labels = list(arch.labels)
        self.widths = list(arch.widths)
        self.edges = set(arch.edges)

    def add_node(self, label: str, width: int | None) -> int:
        self.labels.append(label)
        self.widths.append(width)
        return len(self.labels) - 1

    def remove_node(self, v: int) -> None:
        keep = [i for i in range(len(self.labels)) if i != v]
        index = {old: new for new, old in enumerate(keep)}
        self.edges = {(index[a], index[b]) for a, b in self.edges if a != v and b != v}
        self.labels = [self.labels[i] for i in keep]
        self.widths = [self.widths[i] for i in keep]

    def finish(self, constraints: Constraints, is_valid: IsValid) -> Architecture | None:
        """The normalised network, or ``None`` if it is not a valid DAG within ``constraints``."""
        try:
            arch = normalise(Architecture(tuple(self.labels), tuple(self.edges), tuple(self.widths)))
        except ValueError:
            return None  # a cycle
        return arch if is_valid(arch, constraints) else None


def unit_step(units: int) -> int:
    """1/8 of the units, at least one (so that small layers still change)."""
    return max(1, int(round(units / 8)))


def pick(rng: np.random.Generator, items: Sequence[_T]) -> _T:
    """A uniformly random item (one ``rng.integers`` draw)."""
    return items[int(rng.integers(len(items)))]


# ---------------------------------------------------------------------- units
def en_masse_block(layers: Sequence[int], rng: np.random.Generator) -> list[int]:
    """A random block of ``layers`` (the space's layers with units, in topological order),
    consecutive in that order: 1/2 of them for <= 4, 1/4 for <= 8, 1/8 for more (Table 6)."""
    layers = list(layers)
    n = len(layers)
    if n == 0:
        return []
    fraction = 0.5 if n <= 4 else 0.25 if n <= 8 else 0.125
    size = max(1, int(round(fraction * n)))
    start = int(rng.integers(n - size + 1))
    return layers[start : start + size]


def change_units(arch: Architecture, nodes: Sequence[int], sign: int, constraints: Constraints,
                 is_valid: IsValid) -> Architecture | None:
    """``arch`` with each of ``nodes`` gaining (``sign = +1``) or losing (``-1``) 1/8 of its units
    (Table 6's inc / dec modifiers); ``None`` if ``nodes`` is empty or the result is invalid."""
    if not nodes:
        return None
    g = Graph(arch)
    for v in nodes:
        g.widths[v] = g.widths[v] + sign * unit_step(g.widths[v])
    return g.finish(constraints, is_valid)


def mean_units(arch: Architecture, layers: Iterable[int]) -> int:
    """The mean units of ``layers`` (the space's layers with units), 64 if there are none."""
    ws = [arch.widths[v] for v in layers]
    return int(round(float(np.mean(ws)))) if ws else 64


def wedge_units(arch: Architecture, u: int, v: int, constraints: Constraints, layers: Iterable[int]) -> int:
    """Units of a layer wedged into the edge ``(u, v)`` (Table 6): ``(units(u) + units(v)) / 2``
    where both have units, else the one that has, else the mean units of ``layers``, within the
    domain."""
    ends = [w for w in (arch.widths[u], arch.widths[v]) if w is not None]
    units = int(round(sum(ends) / len(ends))) if ends else mean_units(arch, layers)
    return min(max(units, constraints.min_units), constraints.max_units)


# ---------------------------------------------------------------------- structure
def duplicate(arch: Architecture, path: Sequence[int]) -> Graph:
    """An editing copy of ``arch`` with the interior of ``path`` = ``u_1 .. u_k`` duplicated:
    copies of ``u_2..u_{k-1}`` wired ``u_1 -> ~u_2 -> ... -> ~u_{k-1} -> u_k`` (Table 6's dup_path)."""
    g = Graph(arch)
    copies = [g.add_node(g.labels[v], g.widths[v]) for v in path[1:-1]]
    chain = [path[0], *copies, path[-1]]
    g.edges.update(zip(chain[:-1], chain[1:]))
    return g


def dup_path(arch: Architecture, rng: np.random.Generator, constraints: Constraints,
             is_valid: IsValid) -> Architecture | None:
    """Duplicate a random path (Table 6).

    Start at a random layer ``u_1`` (not a decision layer or the output), walk to random
    children, stopping at the output or, once the path has an interior layer, with probability
    1/2 after each hop; add copies of ``u_2..u_{k-1}`` wired ``u_1 -> ~u_2 -> ... -> ~u_{k-1} -> u_k``.
    """
    last = arch.n_nodes - 1
    decision = set(decision_layers(arch))
    succ = arch.successors()
    path = [pick(rng, [v for v in range(last) if v not in decision])]
    while True:
        path.append(pick(rng, succ[path[-1]]))
        if path[-1] == last or (len(path) >= 3 and rng.random() < 0.5):
            break
    if len(path) < 3:
        return None
    return duplicate(arch, path).finish(constraints, is_valid)


def removable_layers(arch: Architecture) -> list[int]:
    """The layers ``remove_layer`` may remove: every processing layer, and the decision layers
    when there is more than one (the output needs a parent)."""
    decision = decision_layers(arch)
    return list(processing_layers(arch)) + (list(decision) if len(decision) > 1 else [])


def without_layer(arch: Architecture, v: int, choose: Callable[[Sequence[int]], int]) -> Graph:
    """An editing copy of ``arch`` without layer ``v``, every other layer kept connected (Table 6):
    a parent left without children gets an edge to ``choose(children of v)``, a child left without
    parents one from ``choose(parents of v)``."""
    pred, succ = arch.predecessors(), arch.successors()
    g = Graph(arch)
    for p in pred[v]:
        if tuple(succ[p]) == (v,):
            g.edges.add((p, choose(succ[v])))
    for c in succ[v]:
        if tuple(pred[c]) == (v,):
            g.edges.add((choose(pred[v]), c))
    g.remove_node(v)
    return g


def remove_layer(arch: Architecture, rng: np.random.Generator, constraints: Constraints,
                 is_valid: IsValid) -> Architecture | None:
    """Remove a random layer of :func:`removable_layers`, rewiring to random children / parents
    (:func:`without_layer`, Table 6)."""
    candidates = removable_layers(arch)
    if not candidates:
        return None
    v = pick(rng, candidates)
    return without_layer(arch, v, lambda nodes: pick(rng, nodes)).finish(constraints, is_valid)


def skip_pairs(arch: Architecture) -> list[tuple[int, int]]:
    """Every ``(u, v)`` a skip may add: a :func:`~nasviz.spaces.layered.graph.forward_pairs`
    pair that is not yet an edge."""
    existing = set(arch.edges)
    return [(u, v) for u, v in forward_pairs(arch) if (u, v) not in existing]


def add_edge(g: Graph, arch: Architecture, u: int, v: int) -> bool:
    """The plain connection ``u -> v`` (the MLP space's; a :data:`Connect`)."""
    g.edges.add((u, v))
    return True


def skip_to(arch: Architecture, u: int, v: int, constraints: Constraints, is_valid: IsValid,
            connect: Connect = add_edge) -> Architecture | None:
    """``arch`` with the connection ``u -> v`` made by the space's ``connect`` (Table 6's skip);
    ``None`` if it cannot be made or the result is invalid."""
    g = Graph(arch)
    return g.finish(constraints, is_valid) if connect(g, arch, u, v) else None


def skip(arch: Architecture, rng: np.random.Generator, constraints: Constraints, is_valid: IsValid,
         connect: Connect = add_edge) -> Architecture | None:
    """Add a random connection of :func:`skip_pairs` (:func:`skip_to`, Table 6)."""
    pairs = skip_pairs(arch)
    if not pairs:
        return None
    u, v = pick(rng, pairs)
    return skip_to(arch, u, v, constraints, is_valid, connect)


def wedge(arch: Architecture, u: int, v: int, label: str, width: int | None, constraints: Constraints,
          is_valid: IsValid) -> Architecture | None:
    """``arch`` with the edge ``(u, v)`` replaced by ``u -> w -> v`` through a new layer ``w``
    (Table 6's wedge_layer); ``None`` if invalid."""
    g = Graph(arch)
    w = g.add_node(label, width)
    g.edges.discard((u, v))
    g.edges.update({(u, w), (w, v)})
    return g.finish(constraints, is_valid)


# ---------------------------------------------------------------------- mutation
def one_step(arch: Architecture, rng: np.random.Generator, constraints: Constraints, max_tries: int,
             modifiers: Mapping[str, Modifier]) -> tuple[Architecture, str] | None:
    """NASBOT's one-step mutation: a uniformly random modifier of the space's ``modifiers``;
    skipped ones are redrawn. ``(child, modifier name)``, or ``None`` if ``max_tries`` draws all failed."""
    names = list(modifiers)
    for _ in range(max_tries):
        name = names[int(rng.integers(len(names)))]
        child = modifiers[name](arch, rng, constraints)
        if child is not None and child != arch:
            return child, name
    return None


#: A space's one-step mutation, ``one_step(arch, rng, constraints) -> (child, modifier name) | None``.
OneStep = Callable[[Architecture, np.random.Generator, Constraints], "tuple[Architecture, str] | None"]


def mutate(arch: Architecture, rng: np.random.Generator, constraints: Constraints, probabilities: Sequence[float],
           one_step: OneStep) -> Architecture:
    """The compound mutation of paper 001 App. B.2: ``k`` one-step mutations, ``k ~ probabilities``.

    ``P(k = i) = probabilities[i - 1]``; ``one_step`` is the space's one-step mutation. Raises
    ``ValueError`` if no modifier applies.
    """
    p = np.asarray(probabilities, dtype=float)
    if p.ndim != 1 or len(p) == 0 or np.any(p < 0) or not math.isclose(p.sum(), 1.0, abs_tol=1e-9):
        raise ValueError(f"step probabilities must be non-negative and sum to 1, got {probabilities}")
    for _ in range(20):  # steps can cancel out (inc then dec): redraw until the network changed
        k = int(rng.choice(len(p), p=p)) + 1
        child = arch
        for _ in range(k):
            result = one_step(child, rng, constraints)
            if result is None:
                break
            child = result[0]
        if child != arch:
            return child
    raise ValueError(f"no modifier applies to {format_network(arch)!r} within the constraints")
