"""OTMANN path lengths: the structural term (paper 001 Sec. 2, Sec. 3, App. A.3, Algorithm 1).

Each layer ``u`` is described by six path lengths: the shortest, longest and random-walk number
of hops from the input to ``u`` and from ``u`` to the output. The structural penalty ``phi_str``
between layer ``i`` of one network and layer ``j`` of another is the mean absolute difference of
these vectors (``C_str`` of Sec. 3).

App. A's *grouped* variant averages the structural penalty over "all layers" and over each layer
group (MLP: rectifiers, sigmoids; CNN: convolutions, pooling, fc), where a group's path lengths
count only hops through that group's layers. Averaging the six columns of each block equals one
mean over all concatenated columns, so :func:`structural_features` simply concatenates the blocks.

Parallel edges (the multiplicity ``reduced()`` keeps) leave the shortest / longest lengths as they
are; the random-walk lengths average over incoming / outgoing edges once per copy.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from nasviz.arch import Architecture
from nasviz.spaces.label_costs import LAYER_GROUPS, MLP_RECTIFIERS, MLP_SIGMOIDS

#: ``"paths"``: the six path lengths of Sec. 3; ``"grouped"``: App. A's average over groups.
STRUCTURES: tuple[str, ...] = ("paths", "grouped")


def check_structure(structure: str) -> None:
    """Raise ``ValueError`` unless ``structure`` is one of :data:`STRUCTURES`."""
    if structure not in STRUCTURES:
        raise ValueError(f"structure must be 'paths' (Sec. 3) or 'grouped' (App. A), got {structure!r}")


def _sweep(order: tuple[int, ...], parents: tuple[tuple[int, ...], ...], start: int, hop: np.ndarray) -> np.ndarray:
    """Shortest / longest / random-walk hops from ``start`` along ``order``, shape ``(n, 3)``.

    ``parents[v]`` are the nodes a walk reaches ``v`` from (with one entry per parallel edge);
    NaN marks nodes ``start`` does not reach.
    """
    out = np.full((len(parents), 3), np.nan)
    out[start] = 0.0
    for v in order:
        reached = [p for p in parents[v] if not np.isnan(out[p, 0])]
        if v == start or not reached:
            continue
        vals = out[reached]
        # exactly rounded sum / count: the same mean whatever order the graph lists parents in
        walk = math.fsum(vals[:, 2]) / len(vals)
        out[v] = (vals[:, 0].min() + hop[v], vals[:, 1].max() + hop[v], walk + hop[v])
    return out


def path_lengths(arch: Architecture, hop: np.ndarray | None = None) -> np.ndarray:
    """The six path lengths of paper 001 Sec. 2 / App. A.3 (Algorithm 1), shape ``(n, 6)``.

    Columns: ``[ip-sp, ip-lp, ip-rw, op-sp, op-lp, op-rw]``: shortest / longest / random-walk
    number of hops from the input to each layer and from each layer to the output. The
    random walk from the input averages over parents (walking back), the one to the output
    over children, as Algorithm 1 does. ``hop`` (shape ``(n,)``) weights the hops for App. A's
    grouped variant: a hop towards the output out of ``u`` counts ``hop[u]``, a hop from the
    input into ``v`` counts ``hop[v]`` (1 everywhere by default). Lengths with no path (only in
    an empty, edge-less cell) are 0.
    """
    n = arch.n_nodes
    hop = np.ones(n) if hop is None else np.asarray(hop, dtype=float)
    order = arch.topological_order()
    ip = _sweep(order, arch.predecessors(), 0, hop)
    op = _sweep(tuple(reversed(order)), arch.successors(), n - 1, hop)
    return np.nan_to_num(np.hstack([ip, op]), nan=0.0)


def groups_for(arch: Architecture) -> tuple[str, ...]:
    """The App. A groups of the label family of ``arch`` (the same for every architecture of a
    family, so the structural features of two architectures always have the same columns)."""
    labels = set(arch.labels)
    if labels & set(MLP_RECTIFIERS + MLP_SIGMOIDS) or "linear" in labels:
        return ("rectifier", "sigmoid")
    if labels & {"nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3"} or arch.widths is None:
        return ("conv", "pool")
    return ("conv", "pool", "fc")


def structural_features(arch: Architecture, structure: str = "paths", groups: Mapping[str, str] = LAYER_GROUPS) -> np.ndarray:
    """Per-layer features whose mean absolute difference is ``phi_str``, shape ``(n, 6 * B)``.

    ``"paths"``: the six path lengths (``B = 1``). ``"grouped"``: those and, per group of
    :func:`groups_for`, the path lengths counting only hops through that group (``B = 1 +
    number of groups``); ``groups`` maps labels to their group (a space's table, or the built-in one).
    """
    check_structure(structure)
    paths = path_lengths(arch)
    if structure == "paths":
        return paths
    blocks = [paths]
    for group in groups_for(arch):
        hop = np.array([1.0 if groups.get(label) == group else 0.0 for label in arch.labels])
        blocks.append(path_lengths(arch, hop))
    return np.hstack(blocks)


__all__ = ["STRUCTURES", "check_structure", "groups_for", "path_lengths", "structural_features"]
