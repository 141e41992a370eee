"""OTMANN layer masses ``lm(u)`` (paper 001 Sec. 3 and App. A, "Other details").

The mass of a layer is the amount of computation it does; OTMANN moves mass between the layers of
two networks. Processing layers (the rule is the label's kind: :data:`~nasviz.spaces.label_costs.LAYER_KINDS` or a space's
:class:`~nasviz.kernels.otmann.labels.LabelTable`):

* ``unit`` (convolutions, MLP layers): ``units x incoming units``;
* ``res`` blocks: twice a convolution's; ``fc``: 0.1 times (App. A);
* ``pool``: the incoming units.

Cells without widths (NAS-Bench-201) give every operation ``cell_channels`` channels and *sum*
their inputs, so incoming units = ``cell_channels`` (a convolution weighs ``C * C``, a pooling
layer ``C``). Layer spaces *concatenate* their inputs (Sec. 2.2), so incoming units = the sum of
the parents' units; the input layer's units are its width if given, else 1 (the data dimension is
problem dependent).

Non-processing layers get the zeta rule of Sec. 3: ``lm(ip) = lm(op) = zeta * sum(processing
masses)`` and each of the ``|DL|`` decision layers ``zeta / |DL|`` of it. Deviation: a network with
no processing mass at all (an NB201 cell that is only skip connections, or all ``none``) would have
zero total mass and an undefined ``dbar``; its non-processing layers get unit mass instead.

Parallel edges (the multiplicity ``reduced()`` keeps, ``x + x``) do not change a cell's masses: a
node sums its inputs into ``C`` channels.
"""

from __future__ import annotations

import math

import numpy as np

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.kernels.otmann.labels import BUILTIN, LabelTable

#: The paper's zeta (Sec. 3): input/output/decision mass as a fraction of processing mass.
ZETA = 0.1

#: Multiple of ``units x incoming units`` per processing kind (App. A, "Other details").
_UNIT_FACTOR: dict[str, float] = {"unit": 1.0, "res": 2.0, "fc": 0.1}


def check_labels(arch: Architecture, table: LabelTable = BUILTIN) -> None:
    """Raise ``ValueError`` unless every label of ``arch`` has a kind in ``table`` (a space's, or
    the built-in one) and node 0 / the last node are the input / output layers."""
    labels = arch.labels
    for u, label in enumerate(labels):
        table.kind(label, u)
    if labels[0] != INPUT or labels[-1] != OUTPUT:
        raise ValueError(f"OTMANN: node 0 must be labelled {INPUT!r} and the last node {OUTPUT!r}, got {labels[0]!r} and {labels[-1]!r}")


def processing_masses(arch: Architecture, cell_channels: int = 16, table: LabelTable = BUILTIN) -> np.ndarray:
    """Masses of the processing layers, 0 for input / output / decision layers, shape ``(n_nodes,)``.

    Walks the layers in topological order, tracking each layer's output units (the module
    docstring gives the rules).
    """
    labels, widths = arch.labels, arch.widths
    pred = arch.predecessors()
    out_units = np.zeros(arch.n_nodes)
    masses = np.zeros(arch.n_nodes)
    for u in arch.topological_order():
        kind = table.kinds[labels[u]]
        if widths is None:  # cells sum their inputs: C channels in, C out
            incoming = float(cell_channels) if pred[u] else 0.0
            own = float(cell_channels)
        else:  # layer spaces concatenate their inputs
            incoming = float(sum(out_units[p] for p in pred[u]))
            own = widths[u]
        if kind == "input":
            # Cells: the input carries C channels. Layer spaces: the input layer's width if
            # given (the data dimension), else 1.
            out_units[u] = own if own is not None else 1.0
        elif kind in _UNIT_FACTOR:
            if own is None or own <= 0:
                raise ValueError(f"OTMANN: layer {u} ({labels[u]!r}) needs a positive width (units), got {own!r}")
            masses[u] = _UNIT_FACTOR[kind] * float(own) * incoming
            out_units[u] = float(own)
        elif kind == "pool":
            masses[u] = incoming
            out_units[u] = incoming
    return masses


def layer_masses(arch: Architecture, *, zeta: float = ZETA, cell_channels: int = 16,
                 table: LabelTable = BUILTIN) -> np.ndarray:
    """Layer masses ``lm(u)`` of paper 001 Sec. 3, shape ``(n_nodes,)``.

    :func:`processing_masses` for processing layers; input / output get ``zeta * sum(processing)``
    and the decision layers share ``zeta * sum(processing)`` equally. If the processing mass is 0
    the non-processing layers get unit mass (deviation: keeps ``dbar`` defined for empty cells).
    ``table`` gives each label's kind (the space's, or the built-in one).
    """
    check_labels(arch, table)
    masses = processing_masses(arch, cell_channels, table)
    processing = math.fsum(masses)  # exactly rounded: the same for every numbering of the graph
    base = zeta * processing if processing > 0 else 1.0
    kinds = [table.kinds[label] for label in arch.labels]
    n_decision = kinds.count("decision")
    for u, kind in enumerate(kinds):
        if kind in ("input", "output"):
            masses[u] = base
        elif kind == "decision":
            masses[u] = base / n_decision
    return masses


__all__ = ["ZETA", "check_labels", "layer_masses", "processing_masses"]
