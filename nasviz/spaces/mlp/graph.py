"""The rules of the NASBOT / Auto-Keras layer space: DAGs of fully connected layers with widths.

This module holds what a network *is* (labels, constraints, validity, the string format); the
search moves live in :mod:`.modifiers` (NASBOT) and :mod:`.morphisms` (Auto-Keras), the torch
network in :mod:`.networks`, and :class:`nasviz.spaces.mlp.MLPSpace` puts them together.

A network (paper 001, Sec. 2.2) is an :class:`~nasviz.arch.Architecture` whose nodes are layers:

* node 0 is the *input layer* (label ``"input"``, width ``None``): it feeds a data point in;
* the last node is the *output layer* (label ``"output"``, width ``None``): it averages the
  outputs of its parents, the *decision layers*;
* every parent of the output is a *decision layer*: label ``"linear"``, width ``None`` (its
  width is the task's number of outputs, which the architecture does not know), and its only
  child is the output layer. There is at least one;
* every other node is a *processing layer* with one of the MLP labels of paper 001 App. A
  (:data:`PROCESSING_LABELS`) and a number of units in ``[min_units, max_units]``.

A layer with several parents reads the *concatenation* of their outputs (Sec. 2.2). A ``crelu``
layer with ``u`` units outputs ``2u`` features (``[relu(z), relu(-z)]``), as TensorFlow's crelu
does; every other layer outputs ``u`` features (:func:`output_width`).

Domain constraints (App. B.1): :class:`Constraints`, checked by :func:`validate`.

String format (``parse`` / ``format``): the layers in topological order separated by ``;``, each
``label[:units][<p1,p2,...]`` where ``p_i`` are the indices of its parents, e.g. ::

    input;relu:64<0;tanh:32<1;linear<2;output<3

Architectures built here are always numbered in topological order (:func:`normalise`), so the
same network always has the same string and compares equal.

What the CNN space shares with this one (:class:`Constraints`, :func:`decision_layers`,
:func:`processing_layers`, :func:`normalise`, :func:`format`, :func:`parse_layer_string` and
the checks on a network's ends and size) lives in :mod:`nasviz.spaces.layered.graph` and is
re-exported here.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.spaces.layered import graph as common
# Shared with the CNN space and re-exported here, where they have always been importable from.
from nasviz.spaces.layered.graph import (  # noqa: F401
    DEFAULT_CONSTRAINTS, Constraints, decision_layers, end_problems, format, normalise, parse_layer_string,
    processing_layers, size_problems,
)

NAME = "layers"

#: Labels of processing layers (paper 001, App. A, "MLPs"): five rectifiers and two sigmoids.
PROCESSING_LABELS: tuple[str, ...] = ("relu", "crelu", "leaky-relu", "softplus", "elu", "logistic", "tanh")
RECTIFIERS: frozenset[str] = frozenset({"relu", "crelu", "leaky-relu", "softplus", "elu"})
SIGMOIDS: frozenset[str] = frozenset({"logistic", "tanh"})
#: Label of decision layers: linear maps to the task's outputs. App. A lists ``linear`` with the
#: MLP labels and Table 5 gives it an infinite cost to every other label, like ip / op: it is the
#: label of the decision layers (regression in the paper; here the logits of classification
#: too), never of a processing layer. The OTMANN kernel reads it the same way.
DECISION_LABEL = "linear"
#: All labels of the space (App. A's eight plus ip / op), in the order of :func:`label_mismatch_matrix`.
LABELS: tuple[str, ...] = PROCESSING_LABELS + (DECISION_LABEL, INPUT, OUTPUT)


def label_mismatch_matrix() -> np.ndarray:
    """The MLP label-mismatch cost ``M`` of paper 001, Table 5, over :data:`LABELS`.

    Shape ``(10, 10)``. Each label costs 0 with itself; a rectifier costs 0.1 with another
    rectifier and 0.25 with a sigmoid (and vice versa for sigmoids: 0.1 between logistic and
    tanh, 0.25 to a rectifier); ``linear``, ``input`` and ``output`` cost 0 with themselves and
    ``inf`` with everything else (a blank in Table 5).
    """
    n = len(LABELS)
    M = np.full((n, n), np.inf)
    for i, a in enumerate(LABELS):
        for j, b in enumerate(LABELS):
            if a == b:
                M[i, j] = 0.0
            elif (a in RECTIFIERS and b in RECTIFIERS) or (a in SIGMOIDS and b in SIGMOIDS):
                M[i, j] = 0.1
            elif (a in RECTIFIERS and b in SIGMOIDS) or (a in SIGMOIDS and b in RECTIFIERS):
                M[i, j] = 0.25
    return M


# ---------------------------------------------------------------------- structure helpers
def output_width(arch: Architecture, node: int) -> int | None:
    """Features a processing layer outputs: ``2 * units`` for crelu, ``units`` otherwise.

    ``None`` for the input, output and decision layers (their sizes come from the task).
    """
    w = arch.widths[node] if arch.widths is not None else None
    if w is None:
        return None
    return 2 * w if arch.labels[node] == "crelu" else w


def total_mass(arch: Architecture) -> float:
    """``sum_u units(u) * sum_{p in parents(u)} output_width(p)`` over processing layers.

    The fc-layer mass of paper 001 Sec. 3 (input features and decision outputs count as 0).
    """
    pred = arch.predecessors()
    mass = 0.0
    for v in range(arch.n_nodes):
        w = arch.widths[v] if arch.widths is not None else None
        if w is None:
            continue
        mass += w * sum(output_width(arch, p) or 0 for p in pred[v])
    return mass


def problems(arch: Architecture, constraints: Constraints = DEFAULT_CONSTRAINTS) -> list[str]:
    """Every reason ``arch`` is not a valid network of this space (empty if it is valid)."""
    n = arch.n_nodes
    last = n - 1
    if arch.widths is None:
        return ["a layer network needs widths (units per layer); got widths=None"]
    out = end_problems(arch)
    pred, succ = arch.predecessors(), arch.successors()
    decision = set(pred[last])
    for v in range(n):
        label, w = arch.labels[v], arch.widths[v]
        where = f"layer {v} ({label!r})"
        if v in (0, last):
            if w is not None:
                out.append(f"{where}: the input and output layers have no units, got {w}")
            continue
        if label in (INPUT, OUTPUT):
            out.append(f"{where}: only node 0 may be the input and only the last node the output")
            continue
        if v in decision:
            if label != DECISION_LABEL:
                out.append(f"{where}: a parent of the output is a decision layer and must be {DECISION_LABEL!r}")
            if w is not None:
                out.append(f"{where}: a decision layer's width comes from the task; expected None, got {w}")
            if tuple(succ[v]) != (last,):
                out.append(f"{where}: a decision layer may only feed the output layer, it feeds {list(succ[v])}")
        else:
            if label == DECISION_LABEL:
                out.append(f"{where}: {DECISION_LABEL!r} is reserved for decision layers (parents of the output)")
            elif label not in PROCESSING_LABELS:
                out.append(f"{where}: unknown label; expected one of {', '.join(PROCESSING_LABELS)}")
            if w is None or not (constraints.min_units <= w <= constraints.max_units):
                out.append(
                    f"{where}: units must be in [{constraints.min_units}, {constraints.max_units}], got {w}"
                )
        if not pred[v]:
            out.append(f"{where}: has no parent (unreachable from the input)")
        if not succ[v]:
            out.append(f"{where}: has no child (does not reach the output)")
        if len(pred[v]) > constraints.max_in_degree:
            out.append(f"{where}: in-degree {len(pred[v])} exceeds {constraints.max_in_degree}")
    for v in range(n):
        if len(succ[v]) > constraints.max_out_degree:
            out.append(f"layer {v} ({arch.labels[v]!r}): out-degree {len(succ[v])} exceeds {constraints.max_out_degree}")
    out += size_problems(arch, constraints)
    if not out:
        # Reachability: with every non-input node having a parent and every non-output node a
        # child in a DAG, every node lies on an input->output path unless there are other
        # sources or sinks; those were reported above.
        mass = total_mass(arch)
        if mass > constraints.max_mass:
            out.append(f"total mass {mass:g} exceeds the maximum {constraints.max_mass:g}")
    return out


def validate(arch: Architecture, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture:
    """Return ``arch`` if it is a valid network, else raise ``ValueError`` listing the problems."""
    found = problems(arch, constraints)
    if found:
        raise ValueError("invalid layer network: " + "; ".join(found))
    return arch


def is_valid(arch: Architecture, constraints: Constraints = DEFAULT_CONSTRAINTS) -> bool:
    return not problems(arch, constraints)


def build(
    labels: Sequence[str],
    edges: Sequence[tuple[int, int]],
    widths: Sequence[int | None],
    constraints: Constraints | None = DEFAULT_CONSTRAINTS,
) -> Architecture:
    """A normalised, validated network (``constraints=None`` skips validation)."""
    return common.build(labels, edges, widths, constraints, validate)


def feed_forward(labels: Sequence[str], units: Sequence[int], n_decision: int = 1) -> Architecture:
    """A chain ``input -> layer_1 -> ... -> layer_k -> decision layer(s) -> output``.

    Shape: ``labels`` and ``units`` have one entry per processing layer.
    """
    if len(labels) != len(units):
        raise ValueError(f"labels has {len(labels)} entries but units has {len(units)}")
    if n_decision < 1:
        raise ValueError(f"a network needs at least one decision layer, got n_decision={n_decision}")
    return build(*common.chain(labels, units, DECISION_LABEL, n_decision))


def initial_pool() -> list[Architecture]:
    """The 10 feed-forward networks that seed NASBOT and its EA (paper 001, Sec. 4.2, App. B.1).

    The paper's Fig. 17 (the exact MLPs) is not in our text; App. B.1 says they are feed
    forward with blocked structures and arbitrary labels. These follow that description with
    widths suited to small tabular sets (16..256 units, 1..6 layers).
    """
    spec = [
        (["relu"] * 2, [64, 64]),
        (["tanh"] * 2, [32, 32]),
        (["relu", "relu", "relu", "relu"], [128, 128, 64, 64]),
        (["logistic", "logistic", "relu"], [32, 32, 32]),
        (["elu"] * 3, [128, 128, 128]),
        (["leaky-relu"] * 4, [256, 256, 128, 128]),
        (["softplus", "softplus", "softplus", "softplus"], [64, 64, 32, 32]),
        (["crelu", "crelu", "relu", "relu"], [32, 32, 64, 64]),
        (["relu", "relu", "tanh", "tanh", "relu", "relu"], [128, 128, 64, 64, 32, 32]),
        (["relu"], [16]),
    ]
    return [feed_forward(labels, units) for labels, units in spec]


# ---------------------------------------------------------------------- string format
def canonical_key(arch: Architecture) -> str:
    """Equal for two networks iff they are the same network up to renumbering its layers
    (isomorphic labelled graphs with equal widths): every layer has its own weights."""
    return arch.canonical_key()


def parse(text: str, constraints: Constraints = DEFAULT_CONSTRAINTS) -> Architecture:
    """Parse :func:`format`'s string; raise :class:`~nasviz.errors.ArchitectureError` (a
    ``ValueError``) naming the layer that is wrong."""
    return parse_layer_string(text, LABELS, constraints.max_layers, lambda arch: validate(arch, constraints))

