"""The Architectures page: two architectures compared kernel by kernel, OTMANN's transport plan
(paper 001), TW's per-edge masses (paper 000) and each one's neighbours with table values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.dashboard.kernels import KernelSet
from nasviz.objectives import Table
from nasviz.spaces import get_space
from nasviz.spaces.base import OPERATION_SLOTS
from nasviz.defaults import DEFAULT_SPACE


def pair_distances(specs: Sequence[str], a: Architecture, b: Architecture, space: str = DEFAULT_SPACE,
                   kernels: KernelSet | None = None) -> list[dict[str, Any]]:
    """Every kernel's distance components between ``a`` and ``b``: rows
    ``{"kernel", "component", "distance"}`` (one per component, in the kernel's order)."""
    kernels = kernels or KernelSet()
    rows = []
    for spec in specs:
        for comp, D in kernels.get(spec, space).distances([a], [b]).items():
            rows.append({"kernel": spec, "component": comp, "distance": float(np.asarray(D)[0, 0])})
    return rows


def otmann_plan(a: Architecture, b: Architecture, space: str = DEFAULT_SPACE, kernels: KernelSet | None = None):
    """OTMANN's transport plan between the layers of ``a`` and ``b``
    (:class:`nasviz.kernels.otmann.TransportPlan`, paper 001 Eq. (6); plan ``(n_a + 1, n_b + 1)``,
    the last row/column the non-assignment layer)."""
    return (kernels or KernelSet()).get("otmann", space).transport_plan(a, b)


@dataclass
class TreeEdgeMass:
    """One edge ``e`` of TW's operation tree for the n-gram order ``n``: its deeper node
    ``node`` (readable), length ``weight`` (``w_e``), the subtree masses ``mass_a`` / ``mass_b``
    (``omega(Gamma(v_e))``) and ``contribution = w_e |mass_a - mass_b| / N`` (``N`` orders are
    averaged), so the contributions sum to ``W_o`` (paper 000 Eq. (2))."""

    order: int
    node: str
    level: str  # "group" (root -> group-sequence edge) or "leaf" (group -> n-gram edge)
    weight: float
    mass_a: float
    mass_b: float
    contribution: float


def _node_name(node: Any) -> tuple[str, str]:
    if isinstance(node, tuple) and len(node) == 2 and node[0] in ("group", "op"):
        label = " → ".join(str(x) for x in node[1])
        return label, "group" if node[0] == "group" else "leaf"
    if isinstance(node, tuple) and node and node[0] == "empty":
        return "(no n-gram)", "leaf"
    return str(node), "leaf"


def tw_edge_masses(a: Architecture, b: Architecture, spec: str = "tw2g", space: str = DEFAULT_SPACE,
                   kernels: KernelSet | None = None) -> list[TreeEdgeMass]:
    """Per-edge subtree masses of the two n-gram measures on TW's operation tree (paper 000 §2.2,
    Eq. (2)): which subtrees carry the operation distance ``W_o``. Edges where both masses are
    zero are left out. Sorted by contribution, largest first."""
    from nasviz.kernels.tw import TreeWassersteinKernel

    k = (kernels or KernelSet()).get(spec, space)
    if not isinstance(k, TreeWassersteinKernel):
        raise ValueError(f"kernel {spec!r} is not a tree-Wasserstein kernel")
    rows = []
    measures_a, measures_b = k.ngram_measures(a), k.ngram_measures(b)
    for n in k.orders:
        mu_a, mu_b = measures_a[n], measures_b[n]
        ma, mb = k.tree.subtree_masses(mu_a), k.tree.subtree_masses(mu_b)
        weights = {node: w for leaf in list(mu_a) + list(mu_b) for node, w in k.tree.path(leaf)}
        for node, w in weights.items():
            x, y = ma.get(node, 0.0), mb.get(node, 0.0)
            name, level = _node_name(node)
            rows.append(TreeEdgeMass(n, name, level, float(w), x, y, float(w * abs(x - y) / len(k.orders))))
    rows.sort(key=lambda r: -r.contribution)
    return rows


def neighbour_values(arch: Architecture, table: Table | None, metric: str | None,
                     space: str = DEFAULT_SPACE) -> list[dict[str, Any]]:
    """The one-step neighbours of ``arch`` (NB201: 24) with what changed (per operation slot, for
    spaces that have slots) and their table value (``None`` if not in the table), best first
    (unknown values last)."""
    sp = get_space(space)
    slots = sp.slots(arch) if sp.provides(OPERATION_SLOTS) else None
    rows = []
    for nb in sp.neighbours(arch):
        change = ""
        if slots is not None:
            change = ", ".join(f"edge {k + 1}: {o} → {p}" for k, (o, p) in enumerate(zip(slots, sp.slots(nb))) if o != p)
        value = None
        if table is not None and metric and nb in table:
            value = table.lookup(nb, metric)
        rows.append({"arch": sp.format(nb), "change": change, "value": value})
    rows.sort(key=lambda r: (r["value"] is None, -(r["value"] or 0.0)))
    return rows
