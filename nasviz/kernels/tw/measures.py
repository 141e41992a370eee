"""The three measures of an architecture (paper 000 Sec. 2.2): n-gram operations (Eq. (3)) and
in/out-degrees on the chain of layer depths (Eq. (4)), and univariate OT on that chain."""

from __future__ import annotations

from collections import Counter

import numpy as np

from nasviz.arch import Architecture
from nasviz.kernels.tw.trees import Leaf


def _operation_paths(arch: Architecture, n: int, anchored: bool = False) -> Counter:
    """Counts of label sequences along directed paths of ``n`` nodes of ``arch``.

    Without ``anchored`` every node of a path is an operation node (App. F). With ``anchored``
    and ``n >= 2`` a path may also start at the input or end at the output, as long as it holds
    at least one operation node (so the bare ``(input, output)`` edge is not a gram).
    """
    last = arch.n_nodes - 1
    labels, succ = arch.labels, arch.successors()
    anchor = anchored and n >= 2
    paths = [(v,) for v in range(0 if anchor else 1, last)]
    for _ in range(n - 1):  # the output has no successors, so a path ends there
        paths = [p + (w,) for p in paths for w in succ[p[-1]] if anchor or w != last]
    if anchor:
        paths = [p for p in paths if any(0 < v < last for v in p)]
    return Counter(tuple(labels[v] for v in p) for p in paths)


def ngram_measure(arch: Architecture, n: int, anchored: bool = False) -> dict[Leaf, float]:
    """The normalised n-gram measure ``omega^o`` of Eq. (3) on ``arch.reduced()``.

    Returns ``{n-gram (tuple of labels): probability}``; ``{(): 1.0}`` when the reduced graph has
    no such path (see the module docstring). ``anchored`` lets grams of order ``n >= 2`` start at
    the input or end at the output (module docstring; ``False`` is App. F's definition).
    """
    if int(n) < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    return reduced_ngram_measure(arch.reduced(), int(n), anchored)


def reduced_ngram_measure(r: Architecture, n: int, anchored: bool = False) -> dict[Leaf, float]:
    """:func:`ngram_measure` of an already reduced graph ``r``."""
    counts = _operation_paths(r, n, anchored)
    total = sum(counts.values())
    if total == 0:
        return {(): 1.0}
    return {gram: c / total for gram, c in counts.items()}


def degree_measures(arch: Architecture) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """In- and out-degree measures of Eq. (4) on ``arch.reduced()``.

    Returns ``(positions, in_mass, out_mass)``, three arrays of shape ``(n_layers,)`` over the
    layers ``L_x`` reachable from the input: ``positions = (eta + 1) / (M + 1)`` and the
    normalised in-/out-degrees. A graph without edges gives ``([0.], [1.], [1.])``.
    """
    return reduced_degree_measures(arch.reduced())


def reduced_degree_measures(r: Architecture) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`degree_measures` of an already reduced graph ``r``."""
    if not r.edges:
        return np.zeros(1), np.ones(1), np.ones(1)
    n, last = r.n_nodes, r.n_nodes - 1
    succ = r.successors()
    # Plain lists: these graphs have a handful of nodes, where numpy's per-call cost dominates.
    eta = [-1] * n  # longest path from the input; -1 = unreachable
    eta[0] = 0
    for u in r.topological_order():
        if eta[u] >= 0:
            for v in succ[u]:
                if eta[u] + 1 > eta[v]:
                    eta[v] = eta[u] + 1
    # M: longest path to the output; the reduced graph always reaches it when it has edges.
    m = eta[last] if eta[last] >= 0 else max(eta)
    indeg = [0] * n
    outdeg = [0] * n
    n_edges = 0
    for u, v in r.edges:
        if eta[u] >= 0:
            outdeg[u] += 1
            indeg[v] += 1
            n_edges += 1
    keep = [v for v in range(n) if eta[v] >= 0]
    positions = np.array([(eta[v] + 1) / (m + 1) for v in keep])
    return (
        positions,
        np.array([indeg[v] for v in keep], dtype=float) / n_edges,
        np.array([outdeg[v] for v in keep], dtype=float) / n_edges,
    )


def chain_wasserstein(pos_a: np.ndarray, mass_a: np.ndarray, pos_b: np.ndarray, mass_b: np.ndarray) -> float:
    """TW on a chain = univariate OT (footnote 2): ``int |F_a(t) - F_b(t)| dt`` for one pair.

    Parameters: supports and masses of shapes ``(n_a,)`` and ``(n_b,)``; masses sum to 1.
    """
    grid = np.unique(np.concatenate([pos_a, pos_b]))
    if grid.size < 2:
        return 0.0
    fa = np.cumsum(np.bincount(np.searchsorted(grid, pos_a), weights=mass_a, minlength=grid.size))
    fb = np.cumsum(np.bincount(np.searchsorted(grid, pos_b), weights=mass_b, minlength=grid.size))
    return float(np.sum(np.abs(fa - fb)[:-1] * np.diff(grid)))
