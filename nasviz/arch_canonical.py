"""The canonical form of an architecture's multigraph: what :meth:`nasviz.arch.Architecture.canonical_key`
returns for its reduced graph.

Colours are refined Weisfeiler-Lehman style to order the nodes and the ties left are broken by
trying the orderings within each colour class, keeping the smallest edge list: an exact key.
Highly symmetric graphs leave factorially many orderings; past :data:`EXACT_ORDERINGS_LIMIT`
they are keyed by their stable colour-refinement certificate instead (prefix ``wl:``).
Other modules read the exact key's format (:mod:`nasviz.kernels.edit_distance` renumbers a
graph by it), so it is written in :func:`canonical_string` only.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from nasviz.arch import Architecture

#: Most node orderings :meth:`Architecture.canonical_key` tries for an exact key (7! = 5040).
EXACT_ORDERINGS_LIMIT = 5040


def canonical_string(arch: "Architecture") -> str:
    """The canonical key of ``arch``, already reduced (:meth:`~nasviz.arch.Architecture.canonical_key`):
    node descriptors ``role|label|width`` in canonical order, ``#``, then the edges ``u>v`` in that
    numbering; or the ``wl:`` certificate when too many orderings tie."""
    n = arch.n_nodes
    pred, succ = arch.predecessors(), arch.successors()
    width = arch.widths or (None,) * n
    # Input and output keep their roles: mark them in the initial colour.
    colour = [
        f"{'I' if i == 0 else 'O' if i == n - 1 else 'M'}|{arch.labels[i]}|{width[i]}" for i in range(n)
    ]
    for _ in range(n):
        new = [
            f"{colour[i]}({','.join(sorted(colour[p] for p in pred[i]))})[{','.join(sorted(colour[s] for s in succ[i]))}]"
            for i in range(n)
        ]
        ranks = {c: r for r, c in enumerate(sorted(set(new)))}
        new_rank = [str(ranks[c]) for c in new]
        if len(set(new_rank)) == len(set(colour)):
            colour = new_rank
            break
        colour = new_rank
    # Order nodes by (refined colour, original colour string); enumerate ties.
    base = [f"{'I' if i == 0 else 'O' if i == n - 1 else 'M'}|{arch.labels[i]}|{width[i]}" for i in range(n)]
    classes: dict[str, list[int]] = {}
    for i in range(n):
        classes.setdefault(colour[i], []).append(i)
    ordered_classes = sorted(classes.items(), key=lambda kv: (base[kv[1][0]], kv[0]))
    orderings = 1
    for members in classes.values():
        orderings *= math.factorial(len(members))
        if orderings > EXACT_ORDERINGS_LIMIT:
            return _refinement_certificate(arch, base)
    best: tuple | None = None
    for perms in itertools.product(*(itertools.permutations(members) for _, members in ordered_classes)):
        order = [node for perm in perms for node in perm]
        pos = {node: i for i, node in enumerate(order)}
        candidate = tuple(sorted((pos[u], pos[v]) for u, v in arch.edges))
        if best is None or candidate < best[0]:
            best = (candidate, order)
    assert best is not None
    edges, order = best
    nodes = ";".join(base[i] for i in order)
    return nodes + "#" + ";".join(f"{u}>{v}" for u, v in edges)


def _refinement_certificate(arch: "Architecture", base: Sequence[str]) -> str:
    """The stable colour refinement of ``arch`` as a string (``wl:`` + MD5): node colours are
    hashed with the sorted colours of their predecessors and successors until the number of
    colours stops growing; the certificate hashes the sorted (colour of u, colour of v) of every
    edge with the colour histogram. Isomorphic graphs get the same certificate."""
    pred, succ = arch.predecessors(), arch.successors()
    colour = [hashlib.md5(b.encode()).hexdigest()[:16] for b in base]
    for _ in range(arch.n_nodes):
        new = [hashlib.md5(f"{colour[i]}({','.join(sorted(colour[p] for p in pred[i]))})"
                           f"[{','.join(sorted(colour[s] for s in succ[i]))}]".encode()).hexdigest()[:16]
               for i in range(arch.n_nodes)]
        stable = len(set(new)) == len(set(colour))
        colour = new
        if stable:
            break
    nodes = ",".join(sorted(colour))
    edges = ",".join(sorted(f"{colour[u]}>{colour[v]}" for u, v in arch.edges))
    return "wl:" + hashlib.md5(f"{nodes}#{edges}".encode()).hexdigest()
