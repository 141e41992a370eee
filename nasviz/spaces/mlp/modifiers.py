"""NASBOT's modifiers and mutation operator on layer networks (paper 001, Table 6, App. B.2).

Every modifier has the signature ``modifier(arch, rng, constraints) -> Architecture | None``
and returns ``None`` when it does not apply to ``arch`` or when its result violates the domain
constraints of App. B.1 ("If the EA modifier generates a network that violates these
constraints, we simply skip it"). Results are normalised (numbered in topological order) and
valid (:func:`nasviz.spaces.mlp.validate`).

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

What these modifiers share with the CNN space's (the editing copy :class:`Graph`, path
duplication, layer removal, skip pairs, wedging, the one-step and compound mutations) is in
:mod:`nasviz.spaces.layered.modifiers`.
"""

from __future__ import annotations

import numpy as np

from nasviz.arch import Architecture
from nasviz.spaces.layered import modifiers as common
# Shared with the CNN space and re-exported here, where they have always been importable from.
from nasviz.spaces.layered.modifiers import STEP_PROBABILITIES, IsValid, Modifier, unit_step  # noqa: F401
from nasviz.spaces.mlp import graph as L
from nasviz.spaces.mlp.graph import DEFAULT_CONSTRAINTS, Constraints


class Graph(common.Graph):
    """A mutable copy of a network used while a modifier edits it (any layer space: ``finish``
    checks the result with the space's ``is_valid``, this space's unless told otherwise)."""

    def finish(self, constraints: Constraints, is_valid: IsValid = L.is_valid) -> Architecture | None:
        """The normalised network, or ``None`` if it is not a valid DAG within ``constraints``."""
        return super().finish(constraints, is_valid)


def _finish(g: common.Graph, constraints: Constraints) -> Architecture | None:
    return g.finish(constraints, L.is_valid)


def dec_single(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Pick a layer at random and decrease its units by 1/8 (Table 6)."""
    layers = L.processing_layers(arch)
    return common.change_units(arch, [common.pick(rng, layers)], -1, constraints, L.is_valid) if layers else None


def inc_single(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Pick a layer at random and increase its units by 1/8 (Table 6)."""
    layers = L.processing_layers(arch)
    return common.change_units(arch, [common.pick(rng, layers)], +1, constraints, L.is_valid) if layers else None


def dec_en_masse(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Decrease the units of a block of layers (consecutive in topological order) by 1/8."""
    block = common.en_masse_block(L.processing_layers(arch), rng)
    return common.change_units(arch, block, -1, constraints, L.is_valid)


def inc_en_masse(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Increase the units of a block of layers (consecutive in topological order) by 1/8."""
    block = common.en_masse_block(L.processing_layers(arch), rng)
    return common.change_units(arch, block, +1, constraints, L.is_valid)


def dup_path(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Duplicate a random path (Table 6).

    Start at a random layer ``u_1`` (not a decision layer or the output), walk to random
    children, stopping at the output or, once the path has an interior layer, with probability
    1/2 after each hop; add copies of ``u_2..u_{k-1}`` wired ``u_1 -> ~u_2 -> ... -> ~u_{k-1} -> u_k``.
    """
    return common.dup_path(arch, rng, constraints, L.is_valid)


def remove_layer(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Remove a random layer, keeping every other layer connected (Table 6).

    If the layer was the only child of a parent ``u``, ``u`` gets an edge to one of the removed
    layer's children; if it was the only parent of a child ``u``, one of its parents gets an
    edge to ``u``. A decision layer is removed only when another decision layer remains.
    """
    return common.remove_layer(arch, rng, constraints, L.is_valid)


def skip(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Add an edge ``(u, v)`` with ``u`` topologically before ``v`` and ``(u, v)`` not yet an edge.

    ``u`` is neither the output nor a decision layer (they feed only the output) and ``v`` is
    neither the input nor the output (the output's parents must be decision layers).
    """
    return common.skip(arch, rng, constraints, L.is_valid)


def swap_label(arch: Architecture, rng: np.random.Generator, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture | None:
    """Pick a processing layer at random and give it a different label."""
    layers = L.processing_layers(arch)
    if not layers:
        return None
    v = common.pick(rng, layers)
    g = common.Graph(arch)
    g.labels[v] = common.pick(rng, [lab for lab in L.PROCESSING_LABELS if lab != arch.labels[v]])
    return _finish(g, constraints)


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
    u, v = common.pick(rng, edges)
    units = common.wedge_units(arch, u, v, constraints, L.processing_layers(arch))
    return common.wedge(arch, u, v, common.pick(rng, L.PROCESSING_LABELS), units, constraints, L.is_valid)


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
    return common.one_step(arch, rng, constraints, max_tries, MODIFIERS)


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
    return common.mutate(arch, rng, constraints, probabilities, one_step)


def one_step_neighbours(arch: Architecture, constraints: Constraints = DEFAULT_CONSTRAINTS) -> list[Architecture]:
    """Every distinct valid network one deterministic modifier application away.

    Enumerates: dec/inc_single on each processing layer, swap_label to every other label,
    remove_layer of each removable layer (first parent / child wired when needed), skip for
    every allowed pair, wedge_layer on every allowed edge with the label of the edge's source
    (or relu), and dup_path for every path of one interior layer. En-masse changes are random
    blocks and are not enumerated.
    """
    out: dict[Architecture, None] = {}

    def add(child: Architecture | None) -> None:
        if child is not None and child != arch:
            out[child] = None

    last = arch.n_nodes - 1
    succ = arch.successors()
    decision = set(L.decision_layers(arch))
    procs = L.processing_layers(arch)
    for v in procs:
        for sign in (-1, +1):
            add(common.change_units(arch, [v], sign, constraints, L.is_valid))
        for lab in L.PROCESSING_LABELS:
            if lab != arch.labels[v]:
                g = common.Graph(arch)
                g.labels[v] = lab
                add(_finish(g, constraints))
    for v in common.removable_layers(arch):
        add(_finish(common.without_layer(arch, v, lambda nodes: nodes[0]), constraints))
    for u, v in common.skip_pairs(arch):
        add(common.skip_to(arch, u, v, constraints, L.is_valid))
    for u, v in arch.edges:
        if v == last:
            continue
        units = common.wedge_units(arch, u, v, constraints, procs)
        label = arch.labels[u] if arch.labels[u] in L.PROCESSING_LABELS and u not in decision else "relu"
        add(common.wedge(arch, u, v, label, units, constraints, L.is_valid))
        if u not in decision:
            # dup_path u -> v -> (child of v): duplicate v alone
            for c in succ[v]:
                add(_finish(common.duplicate(arch, (u, v, c)), constraints))
    return list(out)
