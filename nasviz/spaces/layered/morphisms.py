"""What Auto-Keras's network morphisms do alike in every layer space (paper 003 Sec. 3.3, App. B).

Each space's morphisms (:mod:`nasviz.spaces.mlp.morphisms`, :mod:`nasviz.spaces.cnn.morphisms`)
decide which morphs are allowed where and how weights are inherited; the bookkeeping of a child
network and where its layers and features come from (:class:`MorphEdit`, read by weight
inheritance through :class:`~nasviz.spaces.morphs.MorphResult`), the checks every morph passes,
and Omega(f) of Alg. 1 with its sampling live here, taking the space's functions as arguments.
No torch here: the spaces import it only for weight inheritance.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.spaces.layered.graph import Constraints, normalise
from nasviz.spaces.morphs import KINDS, Morph, MorphResult

#: A space's ``apply_morph(arch, m, constraints) -> MorphResult`` (``ValueError`` if invalid).
ApplyMorph = Callable[[Architecture, Morph, Constraints], MorphResult]
#: A space's structurally allowed morphs by type, ``candidates(arch, constraints)``, before the
#: domain constraints are checked.
Candidates = Callable[[Architecture, Constraints], "dict[str, list[Morph]]"]


def check_kind(arch: Architecture, m: Morph) -> None:
    """Raise ``ValueError`` unless ``m`` is one of the four kinds and its ``u`` a layer of ``arch``."""
    n = arch.n_nodes
    if m.kind not in KINDS:
        raise ValueError(f"unknown morphism kind {m.kind!r}; expected one of {', '.join(KINDS)}")
    if not 0 <= m.u < n:
        raise ValueError(f"{m}: layer u={m.u} is outside 0..{n - 1}")


def check_skip_ends(arch: Architecture, m: Morph, decision: set[int]) -> None:
    """Raise ``ValueError`` unless the skip ``m`` (add / concat) joins a layer ``v`` of ``arch`` from a
    ``u`` that is neither a decision layer nor the output and comes before ``v`` in topological order."""
    n = arch.n_nodes
    if m.v is None or not 0 <= m.v < n:
        raise ValueError(f"{m}: layer v={m.v} is outside 0..{n - 1}")
    if m.u in decision or m.u == n - 1:
        raise ValueError(f"{m}: u={m.u} must not be a decision or the output layer")
    order = {x: i for i, x in enumerate(arch.topological_order())}
    if order[m.u] >= order[m.v]:
        raise ValueError(f"{m}: u={m.u} must come before v={m.v} in topological order")


class MorphEdit:
    """A mutable copy of a network while a morphism edits it, with where each layer comes from:
    ``node_origin[w]`` is the parent's layer that ``w`` is (``None`` for a new one) and
    ``feature_origin[w]`` the parent's layer whose features ``w`` outputs (``None`` for new
    features), which weight inheritance reads (:class:`~nasviz.spaces.morphs.MorphResult`)."""

    def __init__(self, arch: Architecture) -> None:
        self.arch = arch
        self.labels, self.widths, self.edges = list(arch.labels), list(arch.widths), set(arch.edges)
        n = arch.n_nodes
        self.node_origin: list[int | None] = list(range(n))
        self.feature_origin: list[int | None] = list(range(n))

    def add_node(self, label: str, width: int | None, feature: int | None) -> int:
        """A new layer outputting the features of the parent's layer ``feature`` (``None``: new ones)."""
        self.labels.append(label)
        self.widths.append(width)
        self.node_origin.append(None)
        self.feature_origin.append(feature)
        return len(self.labels) - 1

    def insert_after(self, u: int, label: str, width: int | None) -> int:
        """``deep``: a new layer ``w`` after ``u`` (``u -> w``) that takes over all of ``u``'s
        out-edges and outputs ``u``'s features (it is initialised to the identity)."""
        w = self.add_node(label, width, u)
        for c in self.arch.successors()[u]:
            self.edges.discard((u, c))
            self.edges.add((w, c))
        self.edges.add((u, w))
        return w

    def finish(self, m: Morph, problems: Callable[[Architecture, Constraints], list[str]],
               constraints: Constraints) -> MorphResult:
        """The normalised child and its layer correspondence; ``ValueError`` listing the space's
        ``problems`` if it breaks the domain."""
        raw = Architecture(tuple(self.labels), tuple(self.edges), tuple(self.widths))
        order = raw.topological_order()
        child = normalise(raw)
        found = problems(child, constraints)
        if found:
            raise ValueError(f"{m} violates the domain: " + "; ".join(found))
        return MorphResult(parent=self.arch, child=child, morph=m,
                           node_origin=tuple(self.node_origin[o] for o in order),
                           feature_origin=tuple(self.feature_origin[o] for o in order))


def apply_sequence(arch: Architecture, morphs: Sequence[Morph], constraints: Constraints,
                   apply_morph: ApplyMorph) -> list[MorphResult]:
    """Apply ``morphs`` in turn with the space's ``apply_morph`` (each refers to the previous
    result's numbering)."""
    results = []
    for m in morphs:
        results.append(apply_morph(arch, m, constraints))
        arch = results[-1].child
    return results


def possible_morphs(arch: Architecture, constraints: Constraints, candidates: Candidates,
                    apply_morph: ApplyMorph) -> dict[str, list[Morph]]:
    """Omega(f) of Alg. 1 by type: the space's ``candidates`` whose result stays in the domain."""
    out: dict[str, list[Morph]] = {}
    for kind, ms in candidates(arch, constraints).items():
        out[kind] = []
        for m in ms:
            try:
                apply_morph(arch, m, constraints)
            except ValueError:
                continue
            out[kind].append(m)
    return out


def sample_morphs(arch: Architecture, rng: np.random.Generator, n: int, constraints: Constraints,
                  candidates: Candidates, apply_morph: ApplyMorph) -> list[MorphResult]:
    """Up to ``n`` distinct children of ``arch`` sampled as in paper 003 App. B.

    The type is drawn uniformly from the space's ``candidates`` (deep / wide / skip), then a morph
    of that type uniformly (for skip: add and concat tuples alike); a draw that breaks the domain
    constraints is discarded and redrawn (types with no valid morph left drop out).
    """
    options = {k: list(v) for k, v in candidates(arch, constraints).items() if v}
    results: dict[Architecture, MorphResult] = {}
    tries = 0
    while options and len(results) < n and tries < 20 * n:
        tries += 1
        kinds = list(options)
        kind = kinds[int(rng.integers(len(kinds)))]
        m = options[kind].pop(int(rng.integers(len(options[kind]))))
        if not options[kind]:
            del options[kind]
        try:
            r = apply_morph(arch, m, constraints)
        except ValueError:
            continue
        results.setdefault(r.child, r)
    return list(results.values())


def morph_network(parent_net: Any, morphs: Sequence[Morph], constraints: Constraints, seed: int | None,
                  apply_morph: ApplyMorph, inherit_weights: Callable[[Any, MorphResult, int | None], Any]) -> Any:
    """Apply ``morphs`` in turn to ``parent_net``'s network (its ``arch``), inheriting weights at every
    step with the space's ``inherit_weights`` (step ``i`` seeded ``seed + i``)."""
    net = parent_net
    for i, r in enumerate(apply_sequence(parent_net.arch, morphs, constraints, apply_morph)):
        net = inherit_weights(net, r, None if seed is None else seed + i)
    return net
