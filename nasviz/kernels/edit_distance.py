"""Auto-Keras's edit distance between two networks (paper 003, Sec. 3.1, Eqs. (4)-(9)).

Auto-Keras sees a network as a *sequence of layers* plus a set of *skip connections* and
approximates the graph edit distance by (Eq. (4))::

    d(f_a, f_b) = D_l(L_a, L_b) + lambda * D_s(S_a, S_b)

* ``D_l`` (Eqs. (5)-(7)): an order-preserving matching of the two layer sequences found by
  dynamic programming, ``A[i, j] = min(A[i-1, j] + 1, A[i, j-1] + 1, A[i-1, j-1] + d_l)``
  with ``A[i, 0] = i``, ``A[0, j] = j`` (an unmatched layer is one insertion). The text prints
  ``max`` in Eq. (7), but defines ``A[i, j]`` as the *minimum* of ``D_l`` over prefixes: the
  recursion is the usual min. ``d_l`` is the widening cost of Eq. (6),
  ``|w_a - w_b| / max(w_a, w_b)``, for layers of the same type; two layers of different types
  cost 1 (deviation: Eq. (6) only covers widths because the paper's layers of one kind differ
  only in width; a type change is one edit, the largest ``d_l`` can be, as in Auto-Keras's
  implementation). The combined cost is still a metric on (type, width) pairs, so ``D_l`` is a
  metric edit distance.
* ``D_s`` (Eqs. (8), (9)): the skip connections are matched by the Hungarian algorithm
  (``scipy.optimize.linear_sum_assignment``) with cost
  ``d_s = (|u_a - u_b| + |delta_a - delta_b|) / (max(u_a, u_b) + max(delta_a, delta_b))``, plus
  1 per unmatched skip connection (``||S_b| - |S_a||``).

From an :class:`~nasviz.arch.Architecture` (see :func:`layer_sequence`): the graph is
``arch.reduced()`` renumbered canonically (isomorphic graphs give the same sequence, so their
distance is 0); its topological order is the layer sequence, without the input and output
nodes (they are common to every network); labels are layer types and widths the units (cells
without widths, NB201, use ``cell_width`` for every layer, so only types and structure count).
An edge ``u -> v`` that jumps over layers of that order (``pos(v) > pos(u) + 1``) is a skip
connection with ``u(s) = pos(u)`` (topological rank of its start, the input having rank 0) and
``delta(s) = pos(v) - pos(u) - 1`` (layers between its ends). Edges between consecutive
positions are the main path and are not compared; ``d`` is a metric on this (sequence, skip
set) representation, i.e. a pseudo-metric on graphs. Parallel edges (the multiplicity the
reduction keeps, ``x + x``) are one skip connection per copy when they jump over layers, and
invisible between consecutive positions (the all-``skip_connect`` NB201 cell and the direct skip
are both the empty sequence: distance 0).

The kernel built on this distance (a Bourgain embedding, App. F) is
:class:`nasviz.kernels.edit.EditDistanceKernel`, which batches ``D_l`` over many pairs with
:func:`layer_distance_batch` and caches the distances; :func:`edit_distance` is the plain
one-pair computation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from nasviz.arch import Architecture

#: The paper's lambda (Sec. 5: "lambda is set to 1 according to the parameter sensitivity analysis").
DEFAULT_LAMBDA = 1.0


@dataclass(frozen=True)
class LayerSequence:
    """Auto-Keras view of a network.

    ``labels`` (L,) layer types and ``widths`` (L,) units in topological order, without input
    and output; ``skips`` (m, 2) rows ``(u, delta)``, sorted.
    """

    labels: tuple[str, ...]
    widths: np.ndarray
    skips: np.ndarray


def _canonical_graph(arch: Architecture) -> Architecture:
    """``arch.reduced()`` renumbered in the canonical order of :meth:`Architecture.canonical_key`.

    The key lists node descriptors ``role|label|width`` in canonical order, then ``#`` and the
    edges ``u>v`` in that numbering. If the key cannot be read (its format is private to
    ``nasviz.arch``), the reduced graph's own numbering is used.
    """
    red = arch.reduced()
    try:
        head, tail = arch.canonical_key().split("#", 1)
        nodes = [part.split("|") for part in head.split(";")]
        labels = tuple("|".join(p[1:-1]) for p in nodes)
        widths_raw = [p[-1] for p in nodes]
        widths = None if all(w == "None" for w in widths_raw) else tuple(None if w == "None" else int(w) for w in widths_raw)
        edges = tuple(tuple(int(x) for x in e.split(">")) for e in tail.split(";")) if tail else ()
        roles = [p[0] for p in nodes]
        if roles[0] != "I" or roles[-1] != "O" or len(labels) != red.n_nodes or len(edges) != len(red.edges):
            return red
        return Architecture(labels, edges, widths)
    except (ValueError, IndexError):
        return red


def layer_sequence(arch: Architecture, cell_width: int = 16) -> LayerSequence:
    """The layer sequence and skip connections of ``arch`` (module docstring), for Eqs. (5)-(9)."""
    g = _canonical_graph(arch)
    order = g.topological_order()
    pos = {node: i for i, node in enumerate(order)}
    inner = order[1:-1]
    labels = tuple(g.labels[v] for v in inner)
    if g.widths is None:
        widths = np.full(len(inner), float(cell_width))
    else:
        widths = np.array([float(cell_width) if g.widths[v] is None else float(g.widths[v]) for v in inner])
    if np.any(widths <= 0):
        raise ValueError(f"edit distance: layer widths must be positive, got {widths.tolist()} for {arch!r}")
    skips = sorted((pos[u], pos[v] - pos[u] - 1) for u, v in g.edges if pos[v] - pos[u] > 1)
    return LayerSequence(labels, widths, np.array(skips, dtype=float).reshape(-1, 2))


# ---------------------------------------------------------------------------- D_l and D_s
def layer_distance_batch(
    labels_a: np.ndarray, widths_a: np.ndarray, len_a: np.ndarray,
    labels_b: np.ndarray, widths_b: np.ndarray, len_b: np.ndarray,
) -> np.ndarray:
    """``D_l`` of Eqs. (5)-(7) for ``P`` pairs at once, shape ``(P,)``.

    Inputs are padded to common lengths: ``labels_*`` int ``(P, La)`` / ``(P, Lb)``, ``widths_*``
    float of the same shapes, ``len_*`` ``(P,)`` true lengths. The DP runs over the padded
    grid, vectorised over pairs; ``A[p, len_a[p], len_b[p]]`` only depends on real entries.
    """
    P, La = labels_a.shape
    Lb = labels_b.shape[1]
    wa, wb = widths_a[:, :, None], widths_b[:, None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        d_l = np.abs(wa - wb) / np.maximum(wa, wb)  # Eq. (6)
    d_l = np.where(labels_a[:, :, None] == labels_b[:, None, :], np.nan_to_num(d_l), 1.0)
    A = np.empty((P, La + 1, Lb + 1))
    A[:, :, 0] = np.arange(La + 1)
    A[:, 0, :] = np.arange(Lb + 1)
    for i in range(1, La + 1):
        for j in range(1, Lb + 1):  # Eq. (7) (with min: see the module docstring)
            A[:, i, j] = np.minimum(np.minimum(A[:, i - 1, j], A[:, i, j - 1]) + 1.0, A[:, i - 1, j - 1] + d_l[:, i - 1, j - 1])
    return A[np.arange(P), len_a, len_b]


def skip_distance(skips_a: np.ndarray, skips_b: np.ndarray) -> float:
    """``D_s`` of Eqs. (8), (9): Hungarian matching of skip connections ``(m, 2)`` rows ``(u, delta)``."""
    m_a, m_b = len(skips_a), len(skips_b)
    if m_a == 0 or m_b == 0:
        return float(abs(m_a - m_b))
    ua, da = skips_a[:, 0][:, None], skips_a[:, 1][:, None]
    ub, db = skips_b[:, 0][None, :], skips_b[:, 1][None, :]
    cost = (np.abs(ua - ub) + np.abs(da - db)) / (np.maximum(ua, ub) + np.maximum(da, db))  # Eq. (9)
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].sum()) + abs(m_a - m_b)


def edit_distance(arch_a: Architecture, arch_b: Architecture, lam: float = DEFAULT_LAMBDA, cell_width: int = 16) -> float:
    """Eq. (4) for one pair (the plain, one-pair-at-a-time computation)."""
    sa, sb = layer_sequence(arch_a, cell_width), layer_sequence(arch_b, cell_width)
    vocab = {label: i for i, label in enumerate(sorted(set(sa.labels) | set(sb.labels)))}
    la = np.array([[vocab[x] for x in sa.labels]], dtype=np.intp).reshape(1, -1)
    lb = np.array([[vocab[x] for x in sb.labels]], dtype=np.intp).reshape(1, -1)
    d_l = layer_distance_batch(la, sa.widths[None, :], np.array([len(sa.labels)]), lb, sb.widths[None, :], np.array([len(sb.labels)]))[0]
    return float(d_l + lam * skip_distance(sa.skips, sb.skips))


__all__ = ["DEFAULT_LAMBDA", "LayerSequence", "edit_distance", "layer_distance_batch", "layer_sequence", "skip_distance"]
