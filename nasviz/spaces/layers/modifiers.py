"""NASBOT's modifiers and mutation operator on layer networks (paper 001, Table 6, App. B.2).

Every modifier has the signature ``modifier(arch, rng, constraints) -> Architecture | None``
and returns ``None`` when it does not apply to ``arch`` or when its result violates the domain
constraints of App. B.1 ("If the EA modifier generates a network that violates these
constraints, we simply skip it"). Results are normalised (numbered in topological order) and
valid (:func:`nasviz.spaces.layers.validate`).

The first four change units only; the last five change the architecture:

================  ========================================================================
dec_single        one processing layer loses 1/8 of its units
dec_en_masse      a block of layers, consecutive in topological order, loses 1/8 of its units
                  (1/8 of the layers; 1/4 for networks of <= 8 layers, 1/2 for <= 4)
inc_single        one processing layer gains 1/8 of its units
inc_en_masse      as dec_en_masse, gaining 1/8
dup_path          a random path u_1..u_k is duplicated: copies of u_2..u_{k-1} wired u_1 -> ... -> u_k
remove_layer      a layer is removed; a parent (child) left without children (parents) is wired
                  to one of the removed layer's children (parents)
skip              an edge (u, v) with u topologically before v is added
swap_label        a processing layer gets a different label
wedge_layer       an edge (u, v) is replaced by u -> w -> v through a new layer w with a random
                  label and (units(u) + units(v)) / 2 units
================  ========================================================================

"Layers" here are processing layers: the input and output never change, and decision layers
(the output's parents, whose size the task fixes) are only duplicated by ``dup_path`` or
removed by ``remove_layer`` when another one remains.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from nasviz.arch import Architecture
from nasviz.spaces.layers import graph as L
from nasviz.spaces.layers.graph import DEFAULT_CONSTRAINTS, Constraints

Modifier = Callable[[Architecture, np.random.Generator, Constraints], "Architecture | None"]

#: Probabilities of a 1..5-step mutation in NASBOT's compound operator (App. B.2).
STEP_PROBABILITIES: tuple[float, ...] = (0.5, 0.25, 0.125, 0.075, 0.05)


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

    def finish(self, constraints: Constraints,
               is_valid: Callable[[Architecture, Constraints], bool] = L.is_valid) -> Architecture | None:
        """The normalised network, or ``None`` if it is not a valid DAG within ``constraints``."""
        try:
            arch = L.normalise(Architecture(tuple(self.labels), tuple(self.edges), tuple(self.widths)))
        except ValueError:
            return None  # a cycle
        return arch if is_valid(arch, constraints) else None


def unit_step(units: int) -> int:
    """1/8 of the units, at least one (so that small layers still change)."""
    return max(1, int(round(units / 8)))


def _pick(rng: np.random.Generator, items):
    return items[int(rng.integers(len(items)))]


def _en_masse_block(arch: Architecture, rng: np.random.Generator) -> list[int]:
    """A random block of processing layers, consecutive in topological order (Table 6)."""
    layers = list(L.processing_layers(arch))
    n = len(layers)
    if n == 0:
        return []
    fraction = 0.5 if n <= 4 else 0.25 if n <= 8 else 0.125
    size = max(1, int(round(fraction * n)))
    start = int(rng.integers(n - size + 1))
    return layers[start : start + size]


def _change_units(arch: Architecture, nodes: list[int], sign: int, constraints: Constraints) -> Architecture | None:
    if not nodes:
        return None
    g = Graph(arch)
    for v in nodes:
        g.widths[v] = g.widths[v] + sign * unit_step(g.widths[v])
    return g.finish(constraints)


def dec_single(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Pick a layer at random and decrease its units by 1/8 (Table 6)."""
    layers = L.processing_layers(arch)
    return _change_units(arch, [_pick(rng, layers)], -1, constraints) if layers else None


def inc_single(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Pick a layer at random and increase its units by 1/8 (Table 6)."""
    layers = L.processing_layers(arch)
    return _change_units(arch, [_pick(rng, layers)], +1, constraints) if layers else None


def dec_en_masse(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Decrease the units of a block of layers (consecutive in topological order) by 1/8."""
    return _change_units(arch, _en_masse_block(arch, rng), -1, constraints)


def inc_en_masse(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Increase the units of a block of layers (consecutive in topological order) by 1/8."""
    return _change_units(arch, _en_masse_block(arch, rng), +1, constraints)


def dup_path(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Duplicate a random path (Table 6).

    Start at a random layer ``u_1`` (not a decision layer or the output), walk to random
    children, stopping at the output or, once the path has an interior layer, with probability
    1/2 after each hop; add copies of ``u_2..u_{k-1}`` wired ``u_1 -> ~u_2 -> ... -> ~u_{k-1} -> u_k``.
    """
    last = arch.n_nodes - 1
    decision = set(L.decision_layers(arch))
    succ = arch.successors()
    starts = [v for v in range(last) if v not in decision]
    path = [_pick(rng, starts)]
    while True:
        nxt = _pick(rng, succ[path[-1]])
        path.append(nxt)
        if nxt == last or (len(path) >= 3 and rng.random() < 0.5):
            break
    if len(path) < 3:
        return None
    g = Graph(arch)
    copies = [g.add_node(g.labels[v], g.widths[v]) for v in path[1:-1]]
    chain = [path[0], *copies, path[-1]]
    g.edges.update(zip(chain[:-1], chain[1:]))
    return g.finish(constraints)


def remove_layer(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Remove a random layer, keeping every other layer connected (Table 6).

    If the layer was the only child of a parent ``u``, ``u`` gets an edge to one of the removed
    layer's children; if it was the only parent of a child ``u``, one of its parents gets an
    edge to ``u``. A decision layer is removed only when another decision layer remains.
    """
    decision = L.decision_layers(arch)
    candidates = list(L.processing_layers(arch)) + (list(decision) if len(decision) > 1 else [])
    if not candidates:
        return None
    v = _pick(rng, candidates)
    pred, succ = arch.predecessors(), arch.successors()
    g = Graph(arch)
    for p in pred[v]:
        if tuple(succ[p]) == (v,):
            g.edges.add((p, _pick(rng, succ[v])))
    for c in succ[v]:
        if tuple(pred[c]) == (v,):
            g.edges.add((_pick(rng, pred[v]), c))
    g.remove_node(v)
    return g.finish(constraints)


def skip(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Add an edge ``(u, v)`` with ``u`` topologically before ``v`` and ``(u, v)`` not yet an edge.

    ``u`` is neither the output nor a decision layer (they feed only the output) and ``v`` is
    neither the input nor the output (the output's parents must be decision layers).
    """
    last = arch.n_nodes - 1
    decision = set(L.decision_layers(arch))
    order = arch.topological_order()
    position = {v: i for i, v in enumerate(order)}
    existing = set(arch.edges)
    pairs = np.array(
        [
            (u, v)
            for u in range(last)
            if u not in decision
            for v in range(1, last)
            if position[u] < position[v] and (u, v) not in existing
        ],
        dtype=int,
    ).reshape(-1, 2)
    if len(pairs) == 0:
        return None
    u, v = pairs[int(rng.integers(len(pairs)))]
    g = Graph(arch)
    g.edges.add((int(u), int(v)))
    return g.finish(constraints)


def swap_label(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Pick a processing layer at random and give it a different label."""
    layers = L.processing_layers(arch)
    if not layers:
        return None
    v = _pick(rng, layers)
    g = Graph(arch)
    g.labels[v] = _pick(rng, [lab for lab in L.PROCESSING_LABELS if lab != arch.labels[v]])
    return g.finish(constraints)


def _mean_units(arch: Architecture) -> int:
    ws = [arch.widths[v] for v in L.processing_layers(arch)]
    return int(round(float(np.mean(ws)))) if ws else 64


def wedge_layer(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Replace a random edge ``(u, v)`` by ``u -> w -> v`` through a new layer ``w`` (Table 6).

    ``w`` gets a random label and ``(units(u) + units(v)) / 2`` units; when one end has no
    units (the input, a decision layer) the other end's units are used, and when neither has
    (input -> decision) the network's mean units. Edges into the output are not wedged: the
    output's parents must stay decision layers.
    """
    last = arch.n_nodes - 1
    edges = [e for e in arch.edges if e[1] != last]
    if not edges:
        return None
    u, v = _pick(rng, edges)
    ends = [w for w in (arch.widths[u], arch.widths[v]) if w is not None]
    units = int(round(sum(ends) / len(ends))) if ends else _mean_units(arch)
    units = min(max(units, constraints.min_units), constraints.max_units)
    g = Graph(arch)
    w = g.add_node(_pick(rng, L.PROCESSING_LABELS), units)
    g.edges.discard((u, v))
    g.edges.update({(u, w), (w, v)})
    return g.finish(constraints)


#: The nine modifiers of Table 6 by name.
MODIFIERS: dict[str, Modifier] = {
    "dec_single": dec_single,
    "dec_en_masse": dec_en_masse,
    "inc_single": inc_single,
    "inc_en_masse": inc_en_masse,
    "dup_path": dup_path,
    "remove_layer": remove_layer,
    "skip": skip,
    "swap_label": swap_label,
    "wedge_layer": wedge_layer,
}


def one_step(
    arch: Architecture,
    rng: np.random.Generator,
    constraints: Constraints = DEFAULT_CONSTRAINTS,
    max_tries: int = 50,
) -> tuple[Architecture, str] | None:
    """NASBOT's one-step mutation: a uniformly random modifier; skipped ones are redrawn.

    Returns ``(child, modifier name)``, or ``None`` if ``max_tries`` draws all failed.
    """
    names = list(MODIFIERS)
    for _ in range(max_tries):
        name = names[int(rng.integers(len(names)))]
        child = MODIFIERS[name](arch, rng, constraints)
        if child is not None and child != arch:
            return child, name
    return None


def mutate(
    arch: Architecture,
    rng: np.random.Generator,
    constraints: Constraints = DEFAULT_CONSTRAINTS,
    probabilities: tuple[float, ...] = STEP_PROBABILITIES,
) -> Architecture:
    """The compound mutation of paper 001 App. B.2: ``k`` one-step mutations, ``k ~ probabilities``.

    ``P(k = i) = probabilities[i - 1]`` (0.5, 0.25, 0.125, 0.075, 0.05 for k = 1..5).
    Raises ``ValueError`` if no modifier applies to ``arch`` at all.
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
    raise ValueError(f"no modifier applies to {L.format(arch)!r} within the constraints")


def one_step_neighbours(arch: Architecture, constraints: Constraints = DEFAULT_CONSTRAINTS) -> list[Architecture]:
    """Every distinct valid network one deterministic modifier application away.

    Enumerates: dec/inc_single on each processing layer, swap_label to every other label,
    remove_layer of each removable layer (first parent / child wired when needed), skip for
    every allowed pair, wedge_layer on every allowed edge with the label of the edge's source
    (or relu), and dup_path for every path of one interior layer. En-masse changes are random
    blocks and are not enumerated.
    """
    out: dict[Architecture, None] = {}

    def add(g: Graph) -> None:
        child = g.finish(constraints)
        if child is not None and child != arch:
            out[child] = None

    last = arch.n_nodes - 1
    pred, succ = arch.predecessors(), arch.successors()
    decision = set(L.decision_layers(arch))
    procs = L.processing_layers(arch)
    for v in procs:
        for sign in (-1, +1):
            g = Graph(arch)
            g.widths[v] += sign * unit_step(g.widths[v])
            add(g)
        for lab in L.PROCESSING_LABELS:
            if lab != arch.labels[v]:
                g = Graph(arch)
                g.labels[v] = lab
                add(g)
    for v in list(procs) + (sorted(decision) if len(decision) > 1 else []):
        g = Graph(arch)
        for p in pred[v]:
            if tuple(succ[p]) == (v,):
                g.edges.add((p, succ[v][0]))
        for c in succ[v]:
            if tuple(pred[c]) == (v,):
                g.edges.add((pred[v][0], c))
        g.remove_node(v)
        add(g)
    order = arch.topological_order()
    position = {v: i for i, v in enumerate(order)}
    for u in range(last):
        if u in decision:
            continue
        for v in range(1, last):
            if position[u] < position[v] and (u, v) not in arch.edges:
                g = Graph(arch)
                g.edges.add((u, v))
                add(g)
    for u, v in arch.edges:
        if v == last:
            continue
        ends = [w for w in (arch.widths[u], arch.widths[v]) if w is not None]
        units = int(round(sum(ends) / len(ends))) if ends else _mean_units(arch)
        label = arch.labels[u] if arch.labels[u] in L.PROCESSING_LABELS and u not in decision else "relu"
        g = Graph(arch)
        w = g.add_node(label, min(max(units, constraints.min_units), constraints.max_units))
        g.edges.discard((u, v))
        g.edges.update({(u, w), (w, v)})
        add(g)
        if u not in decision:
            # dup_path u -> v -> (child of v): duplicate v alone
            for c in succ[v]:
                g = Graph(arch)
                copy = g.add_node(arch.labels[v], arch.widths[v])
                g.edges.update({(u, copy), (copy, c)})
                add(g)
    return list(out)
