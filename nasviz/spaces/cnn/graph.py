"""The rules of the NASBOT CNN space: DAGs of convolution, residual, pooling and fc layers.

Paper 001 Sec. 2.2 and App. A / B.1. A network is an :class:`~nasviz.arch.Architecture` whose
nodes are layers, written with the string format of the layer spaces (``label[:units][<parents]``,
:func:`nasviz.spaces.layered.graph.format`), e.g. ::

    input;conv3:16<0;max-pool<1;conv5:32<2;fc:64<3;softmax<4;output<5

* node 0 is the *input layer* (``input``): the data's feature map (channels x length for
  signals, channels x height x width for images; the architecture does not know its size);
* the last node is the *output layer* (``output``): it averages its parents, the *decision
  layers* (``softmax``, no units: its size is the number of classes), at least one;
* every other node is a *processing layer*:

  ==============  ==============================================================================
  ``conv3/5/7``   a k x k convolution (k-tap for signals) with ``units`` filters, stride 1,
                  "same" padding, then batch normalisation and ReLU
  ``res3/5/7``    He et al.'s residual block: two k x k convolutions of ``units`` filters whose
                  input, projected by a 1 x 1 convolution, is added before the last ReLU
                  (App. A: "2 concatenated conv k layers ... added ... before the relu")
  ``max-pool``,   2 x 2 pooling at stride 2 (App. B.1: "all pooling operations are done at
  ``avg-pool``    stride 2"): halves the resolution; no units, its channels are its input's
  ``fc``          a fully connected layer of ``units`` with ReLU, reading the flattened feature
                  maps (or fc outputs) of its parents; only after the convolutional part
  ==============  ==============================================================================

A layer with several parents reads their *concatenation* (Sec. 2.2): along the channels for a
convolution or pooling layer, which therefore needs its parents at one resolution (App. B.2,
"Considerations when performing modifications"), flattened for fc and decision layers. The
*level* of a feature-map layer (:func:`levels`) counts the pooling layers on its paths from the
input: one resolution per level (a pool of a map of size 1 keeps size 1, so every network is valid
for every input size).

Deviations, and why:

* Strides: every convolution has stride 1 and only pooling layers halve the resolution. App. B.1
  uses stride 2 in some initial networks; an architecture here carries a label and units per
  layer, and Table 4 (which OTMANN reads) has no stride either, so a stride-2 conv k is written
  as conv k followed by a pool.
* Residual shortcuts are always 1 x 1 projections (He et al.'s option C), also when the input
  has as many channels as the block: then widening a block or its parent (Auto-Keras's ``wide``)
  never has to turn an identity shortcut into a projection or back.
* Domain (App. B.1) as for MLPs (:class:`~nasviz.spaces.layered.graph.Constraints`); the mass is
  OTMANN's (units x incoming channels; twice that for res, 0.1 times for fc, incoming channels
  for a pool), with the input's channels counted as 1 (the data's are unknown to an
  architecture).
"""

from __future__ import annotations

from typing import Sequence

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.spaces.layered import graph as common
from nasviz.spaces.layered.graph import (
    DEFAULT_CONSTRAINTS, Constraints, decision_layers, end_problems, format, normalise, parse_layer_string,
    processing_layers, size_problems,
)

NAME = "cnn"
CONV_LABELS: tuple[str, ...] = ("conv3", "conv5", "conv7")
RES_LABELS: tuple[str, ...] = ("res3", "res5", "res7")
POOL_LABELS: tuple[str, ...] = ("max-pool", "avg-pool")
FC_LABEL = "fc"
DECISION_LABEL = "softmax"
#: Layers that read and write feature maps (the convolutional part).
MAP_LABELS: tuple[str, ...] = CONV_LABELS + RES_LABELS + POOL_LABELS
#: Layers with units (filters or fc units).
UNIT_LABELS: tuple[str, ...] = CONV_LABELS + RES_LABELS + (FC_LABEL,)
PROCESSING_LABELS: tuple[str, ...] = MAP_LABELS + (FC_LABEL,)
#: Every label, in the order of OTMANN's CNN table (paper 001 Table 4 + res).
LABELS: tuple[str, ...] = MAP_LABELS + (FC_LABEL, DECISION_LABEL, INPUT, OUTPUT)
#: Labels a swap_label modifier may exchange: a layer keeps its kind (units mean filters or
#: fc units, a pool has none).
SWAP_GROUPS: tuple[tuple[str, ...], ...] = (CONV_LABELS + RES_LABELS, POOL_LABELS)

__all__ = [
    "CONV_LABELS", "Constraints", "DECISION_LABEL", "DEFAULT_CONSTRAINTS", "FC_LABEL", "LABELS", "MAP_LABELS", "NAME",
    "POOL_LABELS", "PROCESSING_LABELS", "RES_LABELS", "SWAP_GROUPS", "UNIT_LABELS", "build", "channels",
    "decision_layers", "feed_forward", "format", "initial_pool", "is_valid", "kernel_size", "levels", "nonnegative",
    "normalise", "parse", "problems", "processing_layers", "total_mass", "validate",
]


def kernel_size(label: str) -> int:
    """The k of a ``conv k`` / ``res k`` label."""
    if label not in CONV_LABELS + RES_LABELS:
        raise ValueError(f"{label!r} is not a convolution")
    return int(label[-1])


def is_map(label: str) -> bool:
    """Whether a layer with this label writes a feature map (the input included)."""
    return label == INPUT or label in MAP_LABELS


def levels(arch: Architecture) -> dict[int, int]:
    """``{node: level}`` of the input and every feature-map layer whose parents are all feature
    maps at one level: the number of pooling layers between it and the input (the input is 0)."""
    out: dict[int, int] = {}
    pred = arch.predecessors()
    for v in arch.topological_order():
        label = arch.labels[v]
        if label == INPUT:
            out[v] = 0
        elif label in MAP_LABELS and pred[v] and all(p in out for p in pred[v]):
            parent_levels = {out[p] for p in pred[v]}
            if len(parent_levels) == 1:
                out[v] = parent_levels.pop() + (1 if label in POOL_LABELS else 0)
    return out


def channels(arch: Architecture, node: int, in_channels: int = 1) -> int:
    """Channels (or features, for fc) a layer outputs: units for conv / res / fc, the sum of its
    parents' for a pool, ``in_channels`` for the input."""
    label = arch.labels[node]
    if label == INPUT:
        return int(in_channels)
    if label in POOL_LABELS:
        return sum(channels(arch, p, in_channels) for p in arch.predecessors()[node])
    w = arch.widths[node] if arch.widths is not None else None
    if w is None:
        raise ValueError(f"layer {node} ({label!r}) has no units")
    return int(w)


def nonnegative(arch: Architecture) -> dict[int, bool]:
    """Whether each layer's output is non-negative whatever the input: conv, res and fc end in a
    ReLU; a pool is non-negative when all its parents are; the input may be anything."""
    out: dict[int, bool] = {}
    pred = arch.predecessors()
    for v in arch.topological_order():
        label = arch.labels[v]
        if label in UNIT_LABELS:
            out[v] = True
        elif label in POOL_LABELS:
            out[v] = all(out.get(p, False) for p in pred[v])
        else:
            out[v] = False
    return out


def total_mass(arch: Architecture) -> float:
    """OTMANN's processing mass (paper 001 Sec. 3, App. A): ``units x incoming channels`` for a
    conv, twice that for res, 0.1 times for fc, the incoming channels for a pool; the input's
    channels count as 1."""
    pred = arch.predecessors()
    mass = 0.0
    for v in range(1, arch.n_nodes - 1):
        label = arch.labels[v]
        if label not in PROCESSING_LABELS:
            continue
        incoming = float(sum(channels(arch, p) for p in pred[v]))
        if label in POOL_LABELS:
            mass += incoming
        else:
            factor = 2.0 if label in RES_LABELS else 0.1 if label == FC_LABEL else 1.0
            mass += factor * float(arch.widths[v]) * incoming
    return mass


def _layer_problems(arch: Architecture, v: int, decision: set[int], constraints: Constraints) -> list[str]:
    """What is wrong with layer ``v`` alone (label, units, where it may sit)."""
    out: list[str] = []
    last = arch.n_nodes - 1
    label, w = arch.labels[v], arch.widths[v]
    where = f"layer {v} ({label!r})"
    pred, succ = arch.predecessors(), arch.successors()
    if v in (0, last):
        return [f"{where}: the input and output layers have no units, got {w}"] if w is not None else []
    if label in (INPUT, OUTPUT):
        return [f"{where}: only node 0 may be the input and only the last node the output"]
    if v in decision:
        if label != DECISION_LABEL:
            out.append(f"{where}: a parent of the output is a decision layer and must be {DECISION_LABEL!r}")
        if w is not None:
            out.append(f"{where}: a decision layer's size comes from the task; expected no units, got {w}")
        if tuple(succ[v]) != (last,):
            out.append(f"{where}: a decision layer may only feed the output layer, it feeds {list(succ[v])}")
        return out
    if label == DECISION_LABEL:
        return [f"{where}: {DECISION_LABEL!r} is reserved for decision layers (parents of the output)"]
    if label not in PROCESSING_LABELS:
        return [f"{where}: unknown label; expected one of {', '.join(PROCESSING_LABELS)}"]
    if label in POOL_LABELS:
        if w is not None:
            out.append(f"{where}: a pooling layer has no units, got {w}")
    elif w is None or not (constraints.min_units <= w <= constraints.max_units):
        out.append(f"{where}: units must be in [{constraints.min_units}, {constraints.max_units}], got {w}")
    if label in MAP_LABELS:
        flat = [p for p in pred[v] if not is_map(arch.labels[p])]
        if flat:
            out.append(f"{where}: a convolution or pooling layer reads feature maps, not the fc layer(s) {flat} "
                       "(fc layers come after the convolutional part)")
    return out


def problems(arch: Architecture, constraints: Constraints = DEFAULT_CONSTRAINTS) -> list[str]:
    """Every reason ``arch`` is not a valid CNN of this space (empty if it is valid)."""
    if arch.widths is None:
        return ["a CNN needs widths (filters or units per layer); got widths=None"]
    out = end_problems(arch)
    n, last = arch.n_nodes, arch.n_nodes - 1
    pred, succ = arch.predecessors(), arch.successors()
    decision = set(pred[last])
    for v in range(n):
        out += _layer_problems(arch, v, decision, constraints)
        if v not in (0, last):
            if not pred[v]:
                out.append(f"layer {v} ({arch.labels[v]!r}): has no parent (unreachable from the input)")
            if not succ[v]:
                out.append(f"layer {v} ({arch.labels[v]!r}): has no child (does not reach the output)")
        if len(pred[v]) > constraints.max_in_degree:
            out.append(f"layer {v} ({arch.labels[v]!r}): in-degree {len(pred[v])} exceeds {constraints.max_in_degree}")
        if len(succ[v]) > constraints.max_out_degree:
            out.append(f"layer {v} ({arch.labels[v]!r}): out-degree {len(succ[v])} exceeds {constraints.max_out_degree}")
    out += size_problems(arch, constraints)
    if not out:
        level = levels(arch)
        for v in range(1, last):
            if arch.labels[v] in MAP_LABELS and v not in level:
                found = sorted({level.get(p) for p in pred[v]}, key=str)
                out.append(f"layer {v} ({arch.labels[v]!r}): concatenates feature maps of different resolutions "
                           f"(pooling levels {found}); its parents must have passed through as many pools")
        mass = total_mass(arch)
        if not out and mass > constraints.max_mass:
            out.append(f"total mass {mass:g} exceeds the maximum {constraints.max_mass:g}")
    return out


def validate(arch: Architecture, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture:
    """Return ``arch`` if it is a valid CNN, else raise ``ValueError`` listing the problems."""
    found = problems(arch, constraints)
    if found:
        raise ValueError("invalid CNN: " + "; ".join(found))
    return arch


def is_valid(arch: Architecture, constraints: Constraints = DEFAULT_CONSTRAINTS) -> bool:
    return not problems(arch, constraints)


def parse(text: str, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture:
    """Parse :func:`format`'s string; :class:`~nasviz.errors.ArchitectureError` names the bad layer."""
    return parse_layer_string(text, LABELS, constraints.max_layers, lambda arch: validate(normalise(arch), constraints))


def build(labels: Sequence[str], edges: Sequence[tuple[int, int]], widths: Sequence[int | None],
          constraints: Constraints | None = DEFAULT_CONSTRAINTS) -> Architecture:
    """A normalised, validated CNN (``constraints=None`` skips validation)."""
    return common.build(labels, edges, widths, constraints, validate)


def feed_forward(layers: Sequence[str], n_decision: int = 1) -> Architecture:
    """A chain ``input -> layer_1 -> ... -> layer_k -> softmax(es) -> output`` from tokens
    ``"conv3:16"``, ``"max-pool"``, ``"fc:64"`` (one per processing layer)."""
    labels: list[str] = []
    widths: list[int | None] = []
    for token in layers:
        label, _, units = token.partition(":")
        labels.append(label)
        widths.append(int(units) if units else None)
    return build(*common.chain(labels, widths, DECISION_LABEL, n_decision))


def _blocks(label: str, widths: Sequence[int], per_block: Sequence[int], pool: str = "max-pool") -> list[str]:
    """VGG / ResNet-style blocks: ``per_block[i]`` layers of ``label:widths[i]``, a pool between blocks."""
    out: list[str] = []
    for i, (w, k) in enumerate(zip(widths, per_block)):
        out += [f"{label}:{w}"] * k
        if i < len(widths) - 1:
            out.append(pool)
    return out


def initial_pool() -> list[Architecture]:
    """The 10 feed-forward CNNs that seed NASBOT, its EA and every method (paper 001 App. B.1,
    Fig. 16; paper 003 Sec. 5 for the three-layer CNN).

    Fig. 16's drawings are not in our text; B.1 says "the first 3 networks have structure similar
    to the VGG nets and the remaining have blocked feed forward structures as in He et al.". These
    follow it, with widths an eighth of VGG's (8..64 filters, 64-unit fc layers) so that a network
    trains in seconds on the bundled sets on one CPU thread: VGG-11, -16 and -19 layouts (1-1-2-2-2,
    2-2-3-3-3 and 2-2-4-4-4 convolutions per block, five pools, two fc layers), Auto-Keras's initial
    three-layer CNN (three blocks of a 64-filter conv3 and a max-pool, paper 003 App. C) and six
    blocked networks of conv / res layers of 16-64 filters. On inputs smaller than 2^5 the last pools keep size 1.
    """
    vgg_widths = (8, 16, 32, 64, 64)
    specs = [_blocks("conv3", vgg_widths, k) + ["max-pool", "fc:64", "fc:64"]
             for k in ((1, 1, 2, 2, 2), (2, 2, 3, 3, 3), (2, 2, 4, 4, 4))]
    specs += [
        ["conv3:64", "max-pool", "conv3:64", "max-pool", "conv3:64", "max-pool", "fc:64"],
        _blocks("res3", (16, 32, 64), (2, 2, 2)) + ["fc:64"],
        _blocks("conv5", (16, 32), (2, 2), "avg-pool") + ["avg-pool", "fc:64"],
        ["conv7:16", "max-pool", *_blocks("res5", (16, 32), (2, 2)), "avg-pool"],
        _blocks("conv3", (16, 32), (3, 3)) + ["max-pool", "fc:64", "fc:32"],
        _blocks("res3", (16, 32), (3, 3), "avg-pool") + ["avg-pool", "fc:64"],
        ["conv5:16", "max-pool", "conv3:32", "max-pool"],
    ]
    return [feed_forward(s) for s in specs]
