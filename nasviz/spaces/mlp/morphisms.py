"""Auto-Keras graph-level network morphisms with function-preserving weight inheritance.

Paper 003, Sec. 3.3 and App. B, on the layer networks of :mod:`nasviz.spaces.mlp`, where a
layer reads the concatenation of its parents through a ``Linear``:

``deep(u, label)``
    Insert a layer ``w`` after processing layer ``u``: ``u -> w`` and ``w`` takes over all of
    ``u``'s out-edges. ``w`` has ``output_width(u)`` units and is initialised to the identity
    (weight ``I``, bias 0). **Rule** (why only some labels): ``act(I x) = x`` must hold on every
    value ``u`` can output. ``relu``, ``leaky-relu`` and ``elu`` equal the identity on
    ``x >= 0``, so they qualify exactly when ``u``'s activation is non-negative (``relu``,
    ``crelu``, ``softplus``, ``logistic``). After ``leaky-relu``, ``elu`` or ``tanh`` (negative
    outputs) no label of the space is the identity (``linear`` is reserved for decision
    layers), so ``deep`` is not offered there. Nor after the input: the new layer's width would
    be the data's, which an architecture does not know.
``wide(u, units)``
    Give processing layer ``u`` more units. Graph-level consistency: every child of ``u`` reads
    a wider concatenation, so its weight gains columns (the "next layer set" L_n; the effective
    area is ``{u}`` because every layer here is fully connected).
``add(u, v)``
    Add ``u``'s features into ``v``'s pre-activation: ``W_v [x; u] = W_v x + W_c u``, i.e. the
    edge ``(u, v)`` whose new block ``W_c`` of ``v``'s weight is the projection ``L_c`` of the
    paper that matches ``u`` to ``v``'s width.
``concat(u, v)``
    Concatenate ``u``'s output to ``v``'s output tensor: every child ``c`` of ``v`` also reads
    ``u`` (edges ``(u, c)``); each ``c``'s ``Linear`` absorbs the paper's width-restoring ``L_c``.

Weight inheritance (App. B, Net2Net style): weights the child shares with the parent are
copied; every *new* weight that multiplies an existing signal is zero, so the child computes
exactly the parent's function; new units (``wide``) get random incoming weights as a fresh layer
would (``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``) -- the symmetry-breaking noise -- which cannot
change the output because their outgoing weights are zero ("the largest noise possible not
changing the output").

The checks, child bookkeeping, enumeration and sampling shared with the CNN space are in
:mod:`nasviz.spaces.layered.morphisms`.
"""

from __future__ import annotations

from typing import Sequence

import math

import numpy as np
import torch

from nasviz.arch import Architecture
from nasviz.spaces.layered import morphisms as common
from nasviz.spaces.layered.graph import forward_pairs
from nasviz.spaces.mlp.networks import LayerNet, feature_width, input_layout
from nasviz.spaces.mlp import graph as L
from nasviz.spaces.mlp.graph import DEFAULT_CONSTRAINTS, Constraints
from nasviz.spaces.morphs import Morph, MorphResult

NONNEGATIVE_LABELS: frozenset[str] = frozenset({"relu", "crelu", "softplus", "logistic"})
IDENTITY_ON_NONNEGATIVE: tuple[str, ...] = ("relu", "leaky-relu", "elu")


def deep_labels(arch: Architecture, u: int) -> tuple[str, ...]:
    """Labels a layer inserted after ``u`` may have and stay function-preserving (module rule)."""
    if arch.labels[u] in NONNEGATIVE_LABELS:
        return IDENTITY_ON_NONNEGATIVE
    return ()


def _check(arch: Architecture, m: Morph) -> None:
    """Raise ``ValueError`` if ``m`` is not a morphism of ``arch`` (domain limits are checked later)."""
    procs = set(L.processing_layers(arch))
    decision = set(L.decision_layers(arch))
    common.check_kind(arch, m)
    if m.kind in ("deep", "wide") and m.u not in procs:
        raise ValueError(f"{m}: u={m.u} ({arch.labels[m.u]!r}) is not a processing layer")
    if m.kind == "deep" and m.label not in deep_labels(arch, m.u):
        raise ValueError(
            f"{m}: inserting {m.label!r} after a {arch.labels[m.u]!r} layer is not function-preserving; "
            f"allowed: {', '.join(deep_labels(arch, m.u))}"
        )
    if m.kind == "wide" and (m.units is None or m.units <= arch.widths[m.u]):
        raise ValueError(f"{m}: a wider layer needs more than its {arch.widths[m.u]} units")
    if m.kind in ("add", "concat"):
        common.check_skip_ends(arch, m, decision)
        if m.kind == "add":
            if m.v not in procs and m.v not in decision:
                raise ValueError(f"{m}: v={m.v} ({arch.labels[m.v]!r}) has no weights to add into")
            if (m.u, m.v) in set(arch.edges):
                raise ValueError(f"{m}: the edge ({m.u}, {m.v}) already exists")
        else:
            if m.v not in procs:
                raise ValueError(f"{m}: v={m.v} must be a processing layer")
            if all((m.u, c) in set(arch.edges) for c in arch.successors()[m.v]):
                raise ValueError(f"{m}: every child of v={m.v} already reads u={m.u}")


def apply_morph(arch: Architecture, m: Morph, constraints: Constraints = DEFAULT_CONSTRAINTS) -> MorphResult:
    """The child network of ``m`` (normalised) and its layer correspondence; ``ValueError`` if invalid."""
    _check(arch, m)
    edit = common.MorphEdit(arch)
    if m.kind == "deep":
        edit.insert_after(m.u, m.label, L.output_width(arch, m.u))
    elif m.kind == "wide":
        edit.widths[m.u] = int(m.units)
    elif m.kind == "add":
        edit.edges.add((m.u, m.v))
    else:
        edit.edges.update((m.u, c) for c in arch.successors()[m.v])
    return edit.finish(m, L.problems, constraints)


def apply_sequence(arch: Architecture, morphs: Sequence[Morph], constraints: Constraints = DEFAULT_CONSTRAINTS) -> list[MorphResult]:
    """Apply ``morphs`` in turn (each refers to the previous result's numbering)."""
    return common.apply_sequence(arch, morphs, constraints, apply_morph)


def _candidate_morphs(arch: Architecture, constraints: Constraints) -> dict[str, list[Morph]]:
    """Structurally allowed morphs by type, before the domain constraints are checked."""
    procs = L.processing_layers(arch)
    decision = set(L.decision_layers(arch))
    candidates: dict[str, list[Morph]] = {"deep": [], "wide": [], "skip": []}
    for u in procs:
        candidates["deep"] += [Morph("deep", u, label=lab) for lab in deep_labels(arch, u)]
        target = min(2 * arch.widths[u], constraints.max_units)
        if target > arch.widths[u]:
            candidates["wide"].append(Morph("wide", u, units=target))
    edges = set(arch.edges)
    succ = arch.successors()
    for u, v in forward_pairs(arch):
        if (u, v) not in edges:
            candidates["skip"].append(Morph("add", u, v))
        if v not in decision and any((u, c) not in edges for c in succ[v]):
            candidates["skip"].append(Morph("concat", u, v))
    return candidates


def possible_morphs(arch: Architecture, constraints: Constraints = DEFAULT_CONSTRAINTS) -> dict[str, list[Morph]]:
    """Omega(f) of Alg. 1 by type: ``{"deep": [...], "wide": [...], "skip": [add and concat]}``.

    ``wide`` doubles a layer's units (capped at ``max_units``). Morphs whose result would break
    the domain constraints are left out.
    """
    return common.possible_morphs(arch, constraints, _candidate_morphs, apply_morph)


def sample_morphs(
    arch: Architecture,
    rng: np.random.Generator,
    n: int = 8,
    constraints: Constraints = DEFAULT_CONSTRAINTS,
) -> list[MorphResult]:
    """Up to ``n`` distinct children of ``arch`` sampled as in paper 003 App. B.

    The type is drawn uniformly from deep / wide / skip, then a morph of that type uniformly
    (for skip: add and concat tuples alike); a draw that breaks the domain constraints is
    discarded and redrawn (types with no valid morph left drop out).
    """
    return common.sample_morphs(arch, rng, n, constraints, _candidate_morphs, apply_morph)


# ---------------------------------------------------------------------- weight inheritance
def _feature_positions(parent: Architecture, child: Architecture, pf: int, c: int, r: MorphResult, in_features: int) -> np.ndarray:
    """Child feature positions (in ``c``'s output) of the features parent layer ``pf`` outputs."""
    n_old = feature_width(parent, pf, in_features)
    if pf != 0 and r.node_origin[c] == pf and parent.labels[pf] == "crelu":
        old_units, new_units = parent.widths[pf], child.widths[c]
        return np.concatenate([np.arange(old_units), new_units + np.arange(old_units)])
    return np.arange(n_old)


@torch.no_grad()
def inherit_weights(parent_net: LayerNet, result: MorphResult, seed: int | None = None) -> LayerNet:
    """A :class:`LayerNet` for ``result.child`` computing exactly ``parent_net``'s function.

    Copied: every weight and bias of a layer the child keeps, placed at the columns of the
    features it multiplied (:func:`~nasviz.spaces.mlp.networks.input_layout`). Zero: columns for new
    connections (add / concat / the new features of a widened parent). Identity: a ``deep``
    layer. Random (``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``): the incoming weights of new units,
    whose outgoing weights are zero.
    """
    if parent_net.arch != result.parent:
        raise ValueError("parent_net was not built for this morphism's parent network")
    gen = torch.Generator().manual_seed(0 if seed is None else int(seed))
    in_features = parent_net.in_features
    parent, child = result.parent, result.child
    net = LayerNet(child, in_features, parent_net.out_features)
    for key, lin in net.linears.items():
        c = int(key)
        weight = torch.zeros_like(lin.weight)
        bias = torch.zeros_like(lin.bias)
        pc = result.node_origin[c]
        if pc is None:  # deep: identity on the single parent's features
            weight.copy_(torch.eye(weight.shape[0], weight.shape[1]))
        else:
            old = parent_net.linears[str(pc)]
            old_w, old_b = old.weight.detach().cpu(), old.bias.detach().cpu()  # parent may sit on a GPU
            n_old = old_w.shape[0]
            p_layout = input_layout(parent, pc, in_features)
            for p, (cs, _) in input_layout(child, c, in_features).items():
                pf = result.feature_origin[p]
                if pf is None or pf not in p_layout:
                    continue  # a new connection: zero columns
                ps, pe = p_layout[pf]
                cols = cs + torch.as_tensor(_feature_positions(parent, child, pf, p, result, in_features))
                weight[:n_old, cols] = old_w[:, ps:pe]
            bias[:n_old] = old_b
            if weight.shape[0] > n_old:  # wide: new units, random in, zero out (set in children)
                # PyTorch's default Linear initialisation U(-1/sqrt(fan_in), 1/sqrt(fan_in)):
                # what the units would get in a fresh layer. Any value keeps the function (the
                # outgoing weights are zero); larger trained-weight scales made warm-started
                # children diverge under a fresh learning-rate schedule.
                bound = 1.0 / math.sqrt(weight.shape[1])
                noise = (torch.rand(weight.shape[0] - n_old, weight.shape[1], generator=gen) * 2 - 1) * bound
                weight[n_old:] = noise.to(weight.dtype)
        lin.weight.copy_(weight)
        lin.bias.copy_(bias)
    return net


def morph_network(parent_net: LayerNet, morphs: Sequence[Morph], constraints: Constraints = DEFAULT_CONSTRAINTS, seed: int | None = None) -> LayerNet:
    """Apply ``morphs`` in turn to ``parent_net``'s network, inheriting weights at every step."""
    return common.morph_network(parent_net, morphs, constraints, seed, apply_morph, inherit_weights)
