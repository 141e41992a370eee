"""The structure every layer network shares (paper 001 Sec. 2.2, App. B.1) and its string format.

A network of a layer space is an :class:`~nasviz.arch.Architecture` whose nodes are layers:
node 0 is the *input layer* (label ``"input"``, no units), the last node the *output layer*
(``"output"``, no units) that averages its parents, the *decision layers* (at least one, no
units: their size is the task's), and every other node a *processing layer*. Which labels a
processing layer may have, what its units mean and which extra rules hold are the space's
(:mod:`nasviz.spaces.mlp.graph`, :mod:`nasviz.spaces.cnn.graph`); the checks that hold in
both, the domain of App. B.1 (:class:`Constraints`) and the string format live here.

String format (:func:`format` / :func:`parse_layer_string`): the layers in topological order
separated by ``;``, each ``label[:units][<p1,p2,...]`` where ``p_i`` are the indices of its
parents, e.g. ``input;relu:64<0;tanh:32<1;linear<2;output<3``. Networks are numbered in
topological order (:func:`normalise`), so the same network always has the same string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.errors import ArchitectureError


@dataclass(frozen=True)
class Constraints:
    """The search domain of paper 001, App. B.1 (defaults are the paper's values).

    ``max_mass`` bounds the total layer mass ``sum_u units(u) * (features into u)`` (the fc
    mass of Sec. 3); the input layer's features are unknown to an architecture and count as 0.
    The CNN space bounds OTMANN's mass with it instead (:func:`nasviz.spaces.cnn.graph.total_mass`).
    """

    max_layers: int = 60
    max_mass: float = 1e8
    max_in_degree: int = 5
    max_out_degree: int = 5
    max_edges: int = 200
    min_units: int = 8
    max_units: int = 1024

    def __post_init__(self) -> None:
        if self.min_units < 1 or self.max_units < self.min_units:
            raise ValueError(f"need 1 <= min_units <= max_units, got {self.min_units}, {self.max_units}")
        for name in ("max_layers", "max_in_degree", "max_out_degree", "max_edges"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")


DEFAULT_CONSTRAINTS = Constraints()

#: Structure is checked, but not the search-domain limits (a built network may be any size).
STRUCTURE_ONLY = Constraints(max_layers=10**9, max_mass=float("inf"), max_in_degree=10**9, max_out_degree=10**9,
                             max_edges=10**9, min_units=1, max_units=10**9)


# ---------------------------------------------------------------------- structure helpers
def decision_layers(arch: Architecture) -> tuple[int, ...]:
    """Indices of the decision layers (the parents of the output layer)."""
    return tuple(sorted(arch.predecessors()[arch.n_nodes - 1]))


def processing_layers(arch: Architecture) -> tuple[int, ...]:
    """Indices of the processing layers (neither input, output nor decision), in topological order."""
    decision = set(decision_layers(arch))
    last = arch.n_nodes - 1
    return tuple(v for v in arch.topological_order() if v not in (0, last) and v not in decision)


def forward_pairs(arch: Architecture) -> list[tuple[int, int]]:
    """Every ``(u, v)`` a skip connection may join (NASBOT's skip, Table 6; Auto-Keras's add and
    concat, paper 003 Sec. 3.3), by ``u`` then ``v``: ``u`` before ``v`` in topological order, ``u``
    neither the output nor a decision layer (they feed only the output), ``v`` neither the input
    nor the output (the output's parents must be decision layers). Existing edges included."""
    last = arch.n_nodes - 1
    decision = set(decision_layers(arch))
    position = {v: i for i, v in enumerate(arch.topological_order())}
    return [(u, v) for u in range(last) if u not in decision for v in range(1, last) if position[u] < position[v]]


def end_problems(arch: Architecture) -> list[str]:
    """What is wrong with a network's ends (Sec. 2.2): node 0 must be the input layer and have no
    parent, the last node the output layer with no child and at least one parent (decision layer).

    The first checks of both spaces' ``problems``, in their order.
    """
    out: list[str] = []
    last = arch.n_nodes - 1
    pred, succ = arch.predecessors(), arch.successors()
    if arch.labels[0] != INPUT:
        out.append(f"node 0 must be the input layer labelled {INPUT!r}, got {arch.labels[0]!r}")
    if arch.labels[last] != OUTPUT:
        out.append(f"the last node {last} must be the output layer labelled {OUTPUT!r}, got {arch.labels[last]!r}")
    if pred[0]:
        out.append(f"the input layer has parents {list(pred[0])}")
    if succ[last]:
        out.append(f"the output layer has children {list(succ[last])}")
    if not pred[last]:
        out.append("the output layer has no parent: a network needs at least one decision layer")
    return out


def size_problems(arch: Architecture, constraints: Constraints) -> list[str]:
    """What is wrong with a network's size within App. B.1's domain: too many layers or edges, or a
    repeated edge (a layer concatenates each parent once). Both spaces check these after the layers."""
    out: list[str] = []
    n = arch.n_nodes
    if n > constraints.max_layers:
        out.append(f"{n} layers exceed the maximum {constraints.max_layers}")
    if arch.has_parallel_edges:
        repeated = sorted(e for e, m in arch.edge_multiplicities().items() if m > 1)
        out.append(f"repeated edge(s) {repeated}: a layer concatenates each parent once")
    if len(arch.edges) > constraints.max_edges:
        out.append(f"{len(arch.edges)} edges exceed the maximum {constraints.max_edges}")
    return out


def normalise(arch: Architecture) -> Architecture:
    """The same network renumbered in topological order (input first, output last)."""
    order = arch.topological_order()
    if order == tuple(range(arch.n_nodes)):
        return arch
    index = {old: new for new, old in enumerate(order)}
    widths = None if arch.widths is None else tuple(arch.widths[o] for o in order)
    return Architecture(
        tuple(arch.labels[o] for o in order), tuple((index[u], index[v]) for u, v in arch.edges), widths
    )


def build(labels: Sequence[str], edges: Sequence[tuple[int, int]], widths: Sequence[int | None],
          constraints: Constraints | None,
          validate: Callable[[Architecture, Constraints], Architecture]) -> Architecture:
    """A normalised network checked by the space's ``validate`` (``constraints=None`` skips it)."""
    arch = normalise(Architecture(tuple(labels), tuple(edges), tuple(widths)))
    if constraints is not None:
        validate(arch, constraints)
    return arch


def chain(labels: Sequence[str], widths: Sequence[int | None], decision_label: str,
          n_decision: int) -> tuple[list[str], list[tuple[int, int]], list[int | None]]:
    """Labels, edges and widths of ``input -> layer_1 -> ... -> layer_k -> decision layer(s) -> output``.

    ``labels`` and ``widths`` have one entry per processing layer; each of the ``n_decision``
    decision layers (label ``decision_label``, no units) reads the last processing layer.
    """
    k = len(labels)
    all_labels = [INPUT, *labels] + [decision_label] * n_decision + [OUTPUT]
    all_widths: list[int | None] = [None, *widths] + [None] * n_decision + [None]
    edges = [(i, i + 1) for i in range(k)]
    last = k + n_decision + 1
    for d in range(n_decision):
        edges += [(k, k + 1 + d), (k + 1 + d, last)]
    return all_labels, edges, all_widths


# ---------------------------------------------------------------------- string format
def format(arch: Architecture) -> str:  # noqa: A001 - mirrors parse()
    """The compact string of a network (see the module docstring); inverse of :func:`parse_layer_string`
    (each space's ``parse``)."""
    arch = normalise(arch)
    pred = arch.predecessors()
    parts = []
    for v in range(arch.n_nodes):
        s = arch.labels[v]
        w = arch.widths[v] if arch.widths is not None else None
        if w is not None:
            s += f":{w}"
        if pred[v]:
            s += "<" + ",".join(str(p) for p in sorted(pred[v]))
        parts.append(s)
    return ";".join(parts)


#: A layer's units or a parent's index: ASCII digits only (``int()`` would also take ``1_000``,
#: ``+8``, `` 8`` and full-width digits).
_INDEX = re.compile(r"[0-9]{1,9}", re.ASCII)


def parse_layer_string(text: str, labels: Sequence[str], max_layers: int,
                       validate: Callable[[Architecture], Architecture]) -> Architecture:
    """The network written ``label[:units][<p1,...];...`` (the format of :func:`format`), shared by
    every layer space: ``labels`` are the space's labels, ``max_layers`` its processing-layer
    bound (checked before the graph is built) and ``validate`` its rules (a ``ValueError`` naming
    what is wrong). Raises :class:`~nasviz.errors.ArchitectureError` naming the layer."""
    if not isinstance(text, str):
        raise ArchitectureError(f"expected a layer-network string, got {type(text).__name__}")
    s = text.strip()
    if not s:
        raise ArchitectureError("empty layer-network string")
    items = [item.strip() for item in s.split(";")]
    if len(items) > max_layers + 2:  # refuse before building a huge graph
        raise ArchitectureError(f"{len(items)} layers: more than the {max_layers} processing layers "
                                "(plus input and output) the domain allows")
    names: list[str] = []
    widths: list[int | None] = []
    edges: list[tuple[int, int]] = []
    for v, item in enumerate(items):
        head, sep, parents = item.partition("<")
        label, colon, units = head.partition(":")
        label = label.strip()
        if not label:
            raise ArchitectureError(f"layer {v} ({item!r}): missing label")
        if label not in labels:
            raise ArchitectureError(f"layer {v} ({item!r}): unknown label {label!r}; expected one of {', '.join(labels)}")
        if colon:
            if not _INDEX.fullmatch(units):
                raise ArchitectureError(f"layer {v} ({item!r}): units {units!r} is not an integer written in digits")
            widths.append(int(units))
        else:
            widths.append(None)
        names.append(label)
        if sep:
            for p in parents.split(","):
                if not _INDEX.fullmatch(p):
                    raise ArchitectureError(f"layer {v} ({item!r}): parent {p!r} is not an integer written in digits")
                pi = int(p)
                if not 0 <= pi < v:
                    raise ArchitectureError(f"layer {v} ({item!r}): parent {pi} must be an earlier layer (0..{v - 1})")
                edges.append((pi, v))
    if len(names) < 2:
        raise ArchitectureError(f"a layer network needs at least an input and an output layer, got {s!r}")
    try:
        arch = Architecture(tuple(names), tuple(edges), tuple(widths))
        return validate(arch)
    except ArchitectureError:
        raise
    except ValueError as err:
        raise ArchitectureError(str(err)) from None
