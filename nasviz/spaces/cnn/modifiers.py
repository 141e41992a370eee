"""NASBOT's nine modifiers on CNNs and its compound mutation (paper 001 App. B.2, Table 6).

The modifiers of :mod:`nasviz.spaces.mlp.modifiers`, with App. B.2's "considerations when
performing modifications" for CNNs: a modification that makes a layer concatenate feature maps
of different resolutions is disallowed (the result is checked by
:func:`~nasviz.spaces.cnn.graph.is_valid`; a skipped draw is redrawn), and a ``skip`` from a
layer at a finer resolution to one at a coarser one goes through as many ``avg-pool`` layers as
the resolutions differ. What the two spaces' modifiers do alike is in
:mod:`nasviz.spaces.layered.modifiers`; this module says which layers have units, what may
be swapped or wedged, and how a skip is made.

================  ========================================================================
dec_single        a random conv / res / fc layer loses 1/8 of its units (pools have none)
dec_en_masse      a block of such layers, consecutive in topological order (1/2, 1/4 or 1/8
                  of them for networks of <= 4, <= 8 or more), loses 1/8
inc_single        as dec_single, gaining 1/8
inc_en_masse      as dec_en_masse, gaining 1/8
dup_path          a random path u_1..u_k is duplicated: copies of u_2..u_{k-1}
remove_layer      a layer is removed, parents / children left alone are rewired (Table 6)
skip              an edge (u, v) with u topologically before v is added (through pools)
swap_label        a layer gets another label of its kind: conv3/5/7 and res3/5/7 exchange, and
                  max-pool / avg-pool (a pool has no units, an fc layer no alternative)
wedge_layer       an edge (u, v) is replaced by u -> w -> v; ``w`` has a random label that may
                  sit there (a conv / res / pool layer inside the convolutional part, also fc
                  before a flat reader, fc after an fc layer) and (units(u) + units(v)) / 2
================  ========================================================================
"""

from __future__ import annotations

import numpy as np

from nasviz.arch import Architecture
from nasviz.spaces.cnn import graph as G
from nasviz.spaces.layered import modifiers as common
from nasviz.spaces.layered.graph import DEFAULT_CONSTRAINTS, Constraints
from nasviz.spaces.layered.modifiers import STEP_PROBABILITIES, Graph, Modifier, unit_step  # noqa: F401


def _finish(g: Graph, constraints: Constraints) -> Architecture | None:
    return g.finish(constraints, G.is_valid)


def _unit_layers(arch: Architecture) -> list[int]:
    return [v for v in G.processing_layers(arch) if arch.labels[v] in G.UNIT_LABELS]


def dec_single(arch: Architecture, rng: np.random.Generator,
               constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Pick a layer with units at random and decrease them by 1/8 (Table 6)."""
    layers = _unit_layers(arch)
    return common.change_units(arch, [common.pick(rng, layers)], -1, constraints, G.is_valid) if layers else None


def inc_single(arch: Architecture, rng: np.random.Generator,
               constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Pick a layer with units at random and increase them by 1/8 (Table 6)."""
    layers = _unit_layers(arch)
    return common.change_units(arch, [common.pick(rng, layers)], +1, constraints, G.is_valid) if layers else None


def dec_en_masse(arch: Architecture, rng: np.random.Generator,
                 constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Decrease the units of a block of layers (consecutive in topological order) by 1/8."""
    return common.change_units(arch, common.en_masse_block(_unit_layers(arch), rng), -1, constraints, G.is_valid)


def inc_en_masse(arch: Architecture, rng: np.random.Generator,
                 constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Increase the units of a block of layers (consecutive in topological order) by 1/8."""
    return common.change_units(arch, common.en_masse_block(_unit_layers(arch), rng), +1, constraints, G.is_valid)


def dup_path(arch: Architecture, rng: np.random.Generator,
             constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Duplicate a random path ``u_1 .. u_k`` (Table 6): copies of ``u_2..u_{k-1}`` wired
    ``u_1 -> ~u_2 -> ... -> ~u_{k-1} -> u_k``; the walk stops at the output or, once it has an
    interior layer, with probability 1/2 after each hop."""
    return common.dup_path(arch, rng, constraints, G.is_valid)


def remove_layer(arch: Architecture, rng: np.random.Generator,
                 constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Remove a random layer; a parent left without children gets an edge to one of the removed
    layer's children, a child left without parents one from its parents (Table 6). A decision
    layer is removed only when another remains; removing a pool must keep resolutions consistent."""
    return common.remove_layer(arch, rng, constraints, G.is_valid)


def connect(g: Graph, arch: Architecture, u: int, v: int) -> bool:
    """Add the connection ``u -> v`` to ``g`` (a copy of ``arch``), through ``avg-pool`` layers when
    ``v`` reads coarser feature maps than ``u`` writes (App. B.2); ``False`` if it cannot be made."""
    level = G.levels(arch)
    if arch.labels[v] not in G.MAP_LABELS:
        g.edges.add((u, v))
        return True
    parents = arch.predecessors()[v]
    if u not in level or not parents or parents[0] not in level or level[parents[0]] < level[u]:
        return False
    source = u
    for _ in range(level[parents[0]] - level[u]):
        pool = g.add_node("avg-pool", None)
        g.edges.add((source, pool))
        source = pool
    g.edges.add((source, v))
    return True


def skip(arch: Architecture, rng: np.random.Generator,
         constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Add an edge ``(u, v)``, ``u`` topologically before ``v``, not yet an edge (through pools)."""
    return common.skip(arch, rng, constraints, G.is_valid, connect)


def swap_label(arch: Architecture, rng: np.random.Generator,
               constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Pick a layer that has another label of its kind and give it one (module docstring)."""
    layers = [v for v in G.processing_layers(arch) if arch.labels[v] != G.FC_LABEL]
    if not layers:
        return None
    v = common.pick(rng, layers)
    group = next(grp for grp in G.SWAP_GROUPS if arch.labels[v] in grp)
    g = Graph(arch)
    g.labels[v] = common.pick(rng, [lab for lab in group if lab != arch.labels[v]])
    return _finish(g, constraints)


def wedge_labels(arch: Architecture, u: int, v: int) -> tuple[str, ...]:
    """Labels a layer wedged into the edge ``(u, v)`` may have (module docstring)."""
    if not G.is_map(arch.labels[u]):
        return (G.FC_LABEL,)
    return G.MAP_LABELS if arch.labels[v] in G.MAP_LABELS else G.MAP_LABELS + (G.FC_LABEL,)


def wedge_units(arch: Architecture, u: int, v: int, constraints: Constraints) -> int:
    """``(units(u) + units(v)) / 2`` where both have units, else the one that has, else the
    network's mean units (64 for a network without any), within the domain."""
    return common.wedge_units(arch, u, v, constraints, _unit_layers(arch))


def _wedge(arch: Architecture, u: int, v: int, label: str, constraints: Constraints) -> Architecture | None:
    width = None if label in G.POOL_LABELS else wedge_units(arch, u, v, constraints)
    return common.wedge(arch, u, v, label, width, constraints, G.is_valid)


def wedge_layer(arch: Architecture, rng: np.random.Generator,
                constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Replace a random edge ``(u, v)`` (not into the output) by ``u -> w -> v`` (Table 6)."""
    last = arch.n_nodes - 1
    edges = [e for e in arch.edges if e[1] != last]
    if not edges:
        return None
    u, v = common.pick(rng, edges)
    return _wedge(arch, u, v, common.pick(rng, wedge_labels(arch, u, v)), constraints)


#: The nine modifiers of Table 6 by name.
MODIFIERS: dict[str, Modifier] = {
    "dec_single": dec_single, "dec_en_masse": dec_en_masse, "inc_single": inc_single, "inc_en_masse": inc_en_masse,
    "dup_path": dup_path, "remove_layer": remove_layer, "skip": skip, "swap_label": swap_label,
    "wedge_layer": wedge_layer,
}


def one_step(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS,
             max_tries: int = 50) -> tuple[Architecture, str] | None:
    """A uniformly random modifier; skipped (disallowed) draws are redrawn. ``(child, name)`` or ``None``."""
    return common.one_step(arch, rng, constraints, max_tries, MODIFIERS)


def mutate(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS,
           probabilities: tuple[float, ...] = STEP_PROBABILITIES) -> Architecture:
    """App. B.2's compound mutation: ``k ~ probabilities`` one-step mutations (0.5, 0.25, 0.125,
    0.075, 0.05 for k = 1..5); ``ValueError`` if no modifier applies."""
    return common.mutate(arch, rng, constraints, probabilities, one_step)


def one_step_neighbours(arch: Architecture, constraints: Constraints = DEFAULT_CONSTRAINTS) -> list[Architecture]:
    """Every distinct valid network one deterministic modifier application away: dec / inc of each
    layer with units, every swap, the removal of each layer (first parent / child rewired), every
    skip, a wedge into every edge (the first label that may sit there) and the duplication of
    every single interior layer. En-masse blocks are random and not enumerated."""
    out: dict[Architecture, None] = {}

    def add(child: Architecture | None) -> None:
        if child is not None and child != arch:
            out[child] = None

    for v in _unit_layers(arch):
        add(common.change_units(arch, [v], -1, constraints, G.is_valid))
        add(common.change_units(arch, [v], +1, constraints, G.is_valid))
    for v in G.processing_layers(arch):
        for group in G.SWAP_GROUPS:
            for label in group if arch.labels[v] in group else ():
                if label != arch.labels[v]:
                    g = Graph(arch)
                    g.labels[v] = label
                    add(_finish(g, constraints))
    for v in common.removable_layers(arch):
        add(_finish(common.without_layer(arch, v, lambda nodes: nodes[0]), constraints))
    for u, v in common.skip_pairs(arch):
        add(common.skip_to(arch, u, v, constraints, G.is_valid, connect))
    last = arch.n_nodes - 1
    decision = set(G.decision_layers(arch))
    for u, v in arch.edges:
        if v == last:
            continue
        add(_wedge(arch, u, v, wedge_labels(arch, u, v)[0], constraints))
        if u not in decision:
            for c in arch.successors()[v]:
                add(_finish(common.duplicate(arch, (u, v, c)), constraints))
    return list(out)
