"""Auto-Keras's network morphisms on CNNs, with function-preserving weight inheritance.

Paper 003 Sec. 3.3 and App. B on the networks of :mod:`nasviz.spaces.cnn` (a layer reads the
concatenation of its parents, :mod:`.networks`):

``deep(u, label)``
    Insert a layer ``w`` after ``u``: ``u -> w`` and ``w`` takes over all of ``u``'s out-edges.
    After a feature-map layer ``w`` is a conv-BN-ReLU block (``conv3/5/7``) with as many filters
    as ``u`` has channels, initialised to the identity: a Dirac kernel, BN with scale
    ``sqrt(1 + eps)`` and zero shift over the initial running statistics (mean 0, variance 1), so
    that in eval mode ``BN(conv(x)) = x``; after an fc layer it is an fc layer with weight ``I``.
    ``relu(x) = x`` needs ``x >= 0``: ``deep`` follows only layers whose output is non-negative
    (conv, res and fc end in a ReLU, a pool of such layers; not the input, nor a pool of it).
``wide(u, units)``
    Give a conv, res or fc layer more filters / units. Every layer that reads ``u``'s channels,
    directly or through pooling layers (the paper's effective area: pools are not in ``L_s``),
    gains zero weights for the new channels; the new filters get random incoming weights
    (``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``, a fresh layer's) and default BN statistics.
``add(u, v)``
    Add ``u``'s features to the input of ``v`` (a layer with weights): the edge ``(u, v)`` whose
    block of ``v``'s weights is zero (the paper's width-matching ``L_c`` is that block). When ``v``
    reads feature maps at a coarser resolution, average-pooling layers are inserted on the new
    connection (the paper's ``L_o``; NASBOT's skip modifier does the same, App. B.2).
``concat(u, v)``
    Concatenate ``u``'s output to ``v``'s: every child of ``v`` also reads ``u`` (through pools
    when needed), with zero weights; each child's weights absorb the paper's ``L_c``.

Every morphism keeps the network's function exactly in eval mode (tested per kind,
``tests/spaces/test_cnn_morphisms.py``). Deviation: ``deep`` inserts only conv-BN-ReLU and fc
layers (the issue's definition), not the bare activation, BN or dropout layers Auto-Keras's
implementation also samples (App. B): this space's labels have no such layers.

The checks, child bookkeeping, enumeration and sampling shared with the MLP space are in
:mod:`nasviz.spaces.layered.morphisms`.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import torch

from nasviz.arch import INPUT, Architecture
from nasviz.spaces.cnn import graph as G
from nasviz.spaces.cnn.networks import CNNNet, ConvLayer, ResLayer, input_blocks
from nasviz.spaces.layered import morphisms as common
from nasviz.spaces.layered.graph import DEFAULT_CONSTRAINTS, Constraints, forward_pairs
from nasviz.spaces.morphs import Morph, MorphResult

#: The pool inserted on skip connections that cross a resolution change (App. B.2).
BRIDGE_POOL = "avg-pool"


def deep_labels(arch: Architecture, u: int) -> tuple[str, ...]:
    """Labels a layer inserted after ``u`` may have and stay function-preserving (module rule)."""
    label = arch.labels[u]
    if u in G.decision_layers(arch) or label not in G.PROCESSING_LABELS or not G.nonnegative(arch)[u]:
        return ()
    return G.CONV_LABELS if label in G.MAP_LABELS else (G.FC_LABEL,)


def _has_weights(arch: Architecture, v: int) -> bool:
    return arch.labels[v] in G.UNIT_LABELS or arch.labels[v] == G.DECISION_LABEL


def _reads_maps(arch: Architecture, v: int) -> bool:
    return arch.labels[v] in G.MAP_LABELS


def _bridge_length(arch: Architecture, u: int, v: int, level: dict[int, int]) -> int | None:
    """Pools needed to feed ``u`` into ``v``: 0 for a flat reader (fc, decision), the level
    difference for a feature-map reader, ``None`` if impossible (finer reader, or ``u`` flat)."""
    if not _reads_maps(arch, v):
        return 0
    if not G.is_map(arch.labels[u]) or u not in level:
        return None
    target = level.get(arch.predecessors()[v][0]) if arch.predecessors()[v] else None
    if target is None or target < level[u]:
        return None
    return target - level[u]


def _targets(arch: Architecture, m: Morph) -> list[int]:
    """The layers that gain ``u`` as an input: ``[v]`` for add, ``v``'s children for concat."""
    if m.kind == "add":
        return [m.v]
    edges = set(arch.edges)
    return [c for c in arch.successors()[m.v] if (m.u, c) not in edges]


def _check(arch: Architecture, m: Morph) -> None:
    """Raise ``ValueError`` if ``m`` is not a morphism of ``arch`` (domain limits are checked later)."""
    last = arch.n_nodes - 1
    common.check_kind(arch, m)
    decision = set(G.decision_layers(arch))
    if m.kind == "deep" and m.label not in deep_labels(arch, m.u):
        raise ValueError(f"{m}: inserting {m.label!r} after layer {m.u} ({arch.labels[m.u]!r}) is not function-"
                         f"preserving; allowed: {', '.join(deep_labels(arch, m.u)) or 'none'}")
    if m.kind == "wide":
        if arch.labels[m.u] not in G.UNIT_LABELS or m.u in decision:
            raise ValueError(f"{m}: layer {m.u} ({arch.labels[m.u]!r}) has no filters or units to widen")
        if m.units is None or m.units <= arch.widths[m.u]:
            raise ValueError(f"{m}: a wider layer needs more than its {arch.widths[m.u]} units")
    if m.kind in ("add", "concat"):
        _check_skip(arch, m, decision, last)


def _check_skip(arch: Architecture, m: Morph, decision: set[int], last: int) -> None:
    common.check_skip_ends(arch, m, decision)
    if m.kind == "add":
        if not _has_weights(arch, m.v):
            raise ValueError(f"{m}: v={m.v} ({arch.labels[m.v]!r}) has no weights to add into")
        if (m.u, m.v) in set(arch.edges):
            raise ValueError(f"{m}: the edge ({m.u}, {m.v}) already exists")
    elif m.v in decision or m.v == last or m.v == 0:
        raise ValueError(f"{m}: v={m.v} must be a processing layer")
    targets = _targets(arch, m)
    if not targets:
        raise ValueError(f"{m}: every child of v={m.v} already reads u={m.u}")
    level = G.levels(arch)
    for c in targets:
        if _bridge_length(arch, m.u, c, level) is None:
            raise ValueError(f"{m}: layer {c} reads feature maps that layer {m.u} cannot be pooled to")


def apply_morph(arch: Architecture, m: Morph, constraints: Constraints = DEFAULT_CONSTRAINTS) -> MorphResult:
    """The child network of ``m`` (normalised) and its layer correspondence; ``ValueError`` if invalid."""
    _check(arch, m)
    edit = common.MorphEdit(arch)
    if m.kind == "deep":
        width = G.channels(arch, m.u) if arch.labels[m.u] in G.MAP_LABELS else arch.widths[m.u]
        edit.insert_after(m.u, m.label, width)
    elif m.kind == "wide":
        edit.widths[m.u] = int(m.units)
    else:
        level = G.levels(arch)
        chains: dict[int, int] = {0: m.u}  # pools inserted -> end of the chain
        for c in _targets(arch, m):
            k = _bridge_length(arch, m.u, c, level)
            for i in range(1, k + 1):
                if i not in chains:
                    chains[i] = edit.add_node(BRIDGE_POOL, None, None)
                    edit.edges.add((chains[i - 1], chains[i]))
            edit.edges.add((chains[k], c))
    return edit.finish(m, G.problems, constraints)


def apply_sequence(arch: Architecture, morphs: Sequence[Morph], constraints: Constraints = DEFAULT_CONSTRAINTS) -> list[MorphResult]:
    """Apply ``morphs`` in turn (each refers to the previous result's numbering)."""
    return common.apply_sequence(arch, morphs, constraints, apply_morph)


def _candidate_morphs(arch: Architecture, constraints: Constraints) -> dict[str, list[Morph]]:
    """Structurally allowed morphs by type, before the domain constraints are checked."""
    decision = set(G.decision_layers(arch))
    out: dict[str, list[Morph]] = {"deep": [], "wide": [], "skip": []}
    for u in G.processing_layers(arch):
        out["deep"] += [Morph("deep", u, label=lab) for lab in deep_labels(arch, u)]
        if arch.labels[u] in G.UNIT_LABELS:
            target = min(2 * arch.widths[u], constraints.max_units)
            if target > arch.widths[u]:
                out["wide"].append(Morph("wide", u, units=target))
    edges, succ, level = set(arch.edges), arch.successors(), G.levels(arch)
    for u, v in forward_pairs(arch):
        if _has_weights(arch, v) and (u, v) not in edges and _bridge_length(arch, u, v, level) is not None:
            out["skip"].append(Morph("add", u, v))
        if v not in decision:
            targets = [c for c in succ[v] if (u, c) not in edges]
            if targets and all(_bridge_length(arch, u, c, level) is not None for c in targets):
                out["skip"].append(Morph("concat", u, v))
    return out


def possible_morphs(arch: Architecture, constraints: Constraints = DEFAULT_CONSTRAINTS) -> dict[str, list[Morph]]:
    """Omega(f) of Alg. 1 by type (``deep``, ``wide``, ``skip``: add and concat); ``wide``
    doubles a layer (capped at ``max_units``); morphs that break the domain are left out."""
    return common.possible_morphs(arch, constraints, _candidate_morphs, apply_morph)


def sample_morphs(arch: Architecture, rng: np.random.Generator, n: int = 8,
                  constraints: Constraints = DEFAULT_CONSTRAINTS) -> list[MorphResult]:
    """Up to ``n`` distinct children of ``arch`` sampled as in paper 003 App. B: a type drawn
    uniformly from deep / wide / skip, then a morph of that type uniformly; a draw that breaks
    the domain is redrawn (types with no valid morph left drop out)."""
    return common.sample_morphs(arch, rng, n, constraints, _candidate_morphs, apply_morph)


# ---------------------------------------------------------------------- weight inheritance
def channel_maps(result: MorphResult, old_shapes: dict, new_shapes: dict) -> dict[int, np.ndarray]:
    """For each child layer with features, the parent channel (of ``feature_origin``) each of
    its output channels reproduces, ``-1`` for a new one. Shape ``(channels,)`` per layer."""
    parent, child = result.parent, result.child
    maps: dict[int, np.ndarray] = {}
    pred = child.predecessors()
    for v in child.topological_order():
        label, origin = child.labels[v], result.node_origin[v]
        if v not in new_shapes:
            continue
        size = new_shapes[v][0]
        if label == INPUT:
            maps[v] = np.arange(size)
        elif origin is None:  # deep: the parent's channels unchanged; a bridge pool: new features
            maps[v] = maps[pred[v][0]] if result.feature_origin[v] is not None else np.full(size, -1)
        elif label in G.POOL_LABELS:
            old = input_blocks(parent, origin, old_shapes)
            parts = []
            for q in sorted(pred[v]):
                fq = result.feature_origin[q]
                m = maps[q]
                parts.append(np.where(m >= 0, m + old[fq][0], -1) if fq in old else np.full(len(m), -1))
            maps[v] = np.concatenate(parts)
        else:
            kept = old_shapes[origin][0]
            maps[v] = np.concatenate([np.arange(kept), np.full(size - kept, -1)])
    return maps


def column_map(result: MorphResult, v: int, maps: dict, old_shapes: dict, new_shapes: dict) -> np.ndarray:
    """For child layer ``v``'s input positions, the parent layer's input position each copies
    (``-1``: a new connection or channel, whose weights are zero). Shape ``(fan_in,)``."""
    old_blocks = input_blocks(result.parent, result.node_origin[v], old_shapes)
    new_blocks = input_blocks(result.child, v, new_shapes)
    out = np.full(max(stop for _, stop, _ in new_blocks.values()), -1)
    for q, (start, _, per) in new_blocks.items():
        fq = result.feature_origin[q]
        if fq is None or fq not in old_blocks:
            continue
        old_start = old_blocks[fq][0]
        m = maps[q]
        keep = np.flatnonzero(m >= 0)
        offsets = np.arange(per)
        out[(start + keep[:, None] * per + offsets).ravel()] = (old_start + m[keep][:, None] * per + offsets).ravel()
    return out


def _copy(new: torch.Tensor, old: torch.Tensor, rows: np.ndarray, cols: np.ndarray | None,
          gen: torch.Generator, random_new_rows: bool) -> None:
    """``new[r, c] = old[rows[r], cols[c]]`` where both are >= 0, zero elsewhere; rows with
    ``rows[r] = -1`` random (``U(-b, b)``, ``b = 1/sqrt(fan_in)``) when ``random_new_rows``."""
    new.zero_()
    old = old.detach().cpu().to(new.dtype)
    r_new = torch.as_tensor(np.flatnonzero(rows >= 0))
    r_old = torch.as_tensor(rows[rows >= 0])
    if cols is None:
        new[r_new] = old[r_old]
    else:
        c_new = torch.as_tensor(np.flatnonzero(cols >= 0))
        c_old = torch.as_tensor(cols[cols >= 0])
        new[r_new[:, None], c_new[None, :]] = old[r_old[:, None], c_old[None, :]]
    fresh = np.flatnonzero(rows < 0)
    if random_new_rows and len(fresh):
        bound = 1.0 / math.sqrt(max(1, new[0].numel()))
        noise = (torch.rand((len(fresh), *new.shape[1:]), generator=gen) * 2 - 1) * bound
        new[torch.as_tensor(fresh)] = noise.to(new.dtype)


def _copy_bn(new: torch.nn.Module, old: torch.nn.Module, rows: np.ndarray) -> None:
    """Per-channel BN state for kept channels; new channels keep their defaults (1, 0, 0, 1)."""
    r_new = torch.as_tensor(np.flatnonzero(rows >= 0))
    r_old = torch.as_tensor(rows[rows >= 0])
    for name in ("weight", "bias", "running_mean", "running_var"):
        getattr(new, name)[r_new] = getattr(old, name).detach().cpu()[r_old]
    new.num_batches_tracked.copy_(old.num_batches_tracked.detach().cpu())


def _identity(module: torch.nn.Module) -> None:
    """A deep layer: Dirac conv + BN that is the identity in eval mode, or an fc with weight I."""
    if isinstance(module, ConvLayer):
        weight = module.conv.weight
        weight.zero_()
        centre = tuple(k // 2 for k in weight.shape[2:])
        idx = torch.arange(weight.shape[0])
        weight[(idx, idx, *centre)] = 1.0
        module.bn.weight.fill_(math.sqrt(1.0 + module.bn.eps))  # (x - 0) / sqrt(1 + eps) * scale = x
        module.bn.bias.zero_()
    else:
        module.weight.copy_(torch.eye(*module.weight.shape))
        module.bias.zero_()


@torch.no_grad()
def inherit_weights(parent_net: CNNNet, result: MorphResult, seed: int | None = None) -> CNNNet:
    """A :class:`CNNNet` for ``result.child`` computing exactly ``parent_net``'s function in eval
    mode: kept weights copied to the positions of the features they multiplied, zero for new
    connections and channels, the identity for a ``deep`` layer, random incoming weights for new
    filters / units (module docstring)."""
    if parent_net.arch != result.parent:
        raise ValueError("parent_net was not built for this morphism's parent network")
    gen = torch.Generator().manual_seed(0 if seed is None else int(seed))
    net = CNNNet(result.child, parent_net.input_shape, parent_net.out_features)
    old_shapes, new_shapes = parent_net.shapes, net.shapes
    maps = channel_maps(result, old_shapes, new_shapes)
    decision = set(G.decision_layers(result.child))
    for v in net.order:
        module, origin = net.layers[str(v)], result.node_origin[v]
        if result.child.labels[v] in G.POOL_LABELS:
            continue
        if origin is None:
            _identity(module)
            continue
        old = parent_net.layers[str(origin)]
        cols = column_map(result, v, maps, old_shapes, new_shapes)
        rows = np.arange(net.out_features) if v in decision else maps[v]
        if isinstance(module, ConvLayer):
            _copy(module.conv.weight, old.conv.weight, rows, cols, gen, True)
            _copy_bn(module.bn, old.bn, rows)
        elif isinstance(module, ResLayer):
            _copy(module.conv1.weight, old.conv1.weight, rows, cols, gen, True)
            _copy_bn(module.bn1, old.bn1, rows)
            _copy(module.conv2.weight, old.conv2.weight, rows, rows, gen, True)
            _copy_bn(module.bn2, old.bn2, rows)
            _copy(module.proj.weight, old.proj.weight, rows, cols, gen, True)
        else:
            _copy(module.weight, old.weight, rows, cols, gen, True)
            _copy(module.bias, old.bias, rows, None, gen, False)
    return net


def morph_network(parent_net: CNNNet, morphs: Sequence[Morph], constraints: Constraints = DEFAULT_CONSTRAINTS,
                  seed: int | None = None) -> CNNNet:
    """Apply ``morphs`` in turn to ``parent_net``'s network, inheriting weights at every step."""
    return common.morph_network(parent_net, morphs, constraints, seed, apply_morph, inherit_weights)
