"""The operation tree of paper 000 (Fig. 8, Table 1, Eq. (17)) and tree-Wasserstein on a tree
(Eq. (2)); see the package docstring for how groups and n-gram trees are declared."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Hashable, Iterable, Mapping

#: Declared operation groups (the first level of the operation tree, see the module docstring).
OPERATION_GROUPS: dict[str, tuple[str, ...]] = {
    # NAS-Bench-201 / DARTS-style cells and CNN layer spaces
    "convolution": (
        "nor_conv_1x1", "nor_conv_3x3", "nor_conv_5x5", "conv1x1", "conv3x3", "conv5x5",
        "conv1x1-bn-relu", "conv3x3-bn-relu", "sep_conv_3x3", "sep_conv_5x5", "dil_conv_3x3",
        "dil_conv_5x5", "conv3", "conv5", "conv7", "conv", "res3", "res5", "res7",
    ),
    "pooling": ("avg_pool_3x3", "max_pool_3x3", "maxpool3x3", "avg-pool", "max-pool", "avgpool", "maxpool"),
    "identity": ("skip_connect", "identity"),
    "zero": ("none", "zero"),
    # MLP layer spaces (NASBOT's labels, paper 001 App. A)
    "rectifier": ("relu", "crelu", "leaky-relu", "elu", "softplus", "selu", "gelu"),
    "saturating": ("logistic", "tanh", "sigmoid"),
    "dense": ("linear", "fc"),
    "decision": ("softmax",),
    # The pseudo-layers, which only anchored n-grams (n >= 2) contain; one-member groups.
    "input": ("input",),
    "output": ("output",),
}

Node = Hashable
Leaf = tuple[str, ...]


class Tree(ABC):
    """A rooted tree with positive edge lengths whose leaves are n-grams (tuples of labels).

    A subclass only says how to reach a leaf: :meth:`path` lists the edges from the root down
    to it as ``(v_e, w_e)`` -- the deeper node of edge ``e`` (a hashable key, unique in the
    tree) and its length. Everything else (tree metric, subtree masses, Eq. (2)) follows.
    """

    @abstractmethod
    def path(self, leaf: Leaf) -> tuple[tuple[Node, float], ...]:
        """Edges ``(v_e, w_e)`` from the root to ``leaf``, root side first."""

    def distance(self, a: Leaf, b: Leaf) -> float:
        """Tree metric ``d_T(a, b)``: the length of the unique path between two leaves."""
        pa, pb = self.path(a), self.path(b)
        common = 0
        while common < min(len(pa), len(pb)) and pa[common][0] == pb[common][0]:
            common += 1
        return float(sum(w for _, w in pa[common:]) + sum(w for _, w in pb[common:]))

    def subtree_masses(self, measure: Mapping[Leaf, float]) -> dict[Node, float]:
        """``omega(Gamma(v))`` for every non-root node ``v`` on a path to a support of ``omega``."""
        masses: dict[Node, float] = {}
        for leaf, mass in measure.items():
            for node, _ in self.path(leaf):
                masses[node] = masses.get(node, 0.0) + float(mass)
        return masses

    def embed(self, measure: Mapping[Leaf, float]) -> dict[Node, float]:
        """``g(omega) = (w_e omega(Gamma(v_e)))_e`` (App. F), sparse: edges with zero mass omitted."""
        g: dict[Node, float] = {}
        for leaf, mass in measure.items():
            for node, weight in self.path(leaf):
                g[node] = g.get(node, 0.0) + weight * float(mass)
        return g

    def children(self, leaves: Iterable[Leaf]) -> dict[Node, list[Node]]:
        """The part of the tree spanned by ``leaves``: node -> its children (root is ``None``)."""
        kids: dict[Node, list[Node]] = {}
        for leaf in leaves:
            parent: Node = None
            for node, _ in self.path(leaf):
                siblings = kids.setdefault(parent, [])
                if node not in siblings:
                    siblings.append(node)
                parent = node
        return kids

    def wasserstein(self, omega: Mapping[Leaf, float], nu: Mapping[Leaf, float]) -> float:
        """Eq. (2) for one pair, summed edge by edge (the plain, unvectorised form)."""
        weights: dict[Node, float] = {}
        for leaf in list(omega) + list(nu):
            for node, w in self.path(leaf):
                weights[node] = w
        mo, mn = self.subtree_masses(omega), self.subtree_masses(nu)
        return float(sum(w * abs(mo.get(v, 0.0) - mn.get(v, 0.0)) for v, w in weights.items()))


class OperationTree(Tree):
    """The operation tree of the module docstring, built from declared groups.

    Parameters
    ----------
    groups : mapping group name -> labels, optional
        The declared first level (default :data:`OPERATION_GROUPS`). A label may appear in one
        group only. Labels of no group get a one-member group of their own.
    leaf_weight : float
        ``a`` in ``root --(1 - a^k)--> group sequence --a^k--> n-gram`` (paper: 0.1); in (0, 1).
    """

    def __init__(self, groups: Mapping[str, Iterable[str]] | None = None, leaf_weight: float = 0.1) -> None:
        groups = OPERATION_GROUPS if groups is None else groups
        if not 0.0 < float(leaf_weight) < 1.0:
            raise ValueError(f"leaf_weight must lie in (0, 1), got {leaf_weight!r}")
        self.leaf_weight = float(leaf_weight)
        self.groups: dict[str, tuple[str, ...]] = {}
        self._group_of: dict[str, str] = {}
        for group, labels in groups.items():
            labels = tuple(str(label) for label in labels)
            if not labels:
                raise ValueError(f"operation group {group!r} is empty")
            for label in labels:
                if label in self._group_of:
                    raise ValueError(
                        f"label {label!r} is declared in two groups: {self._group_of[label]!r} and {group!r}"
                    )
                self._group_of[label] = str(group)
            self.groups[str(group)] = labels
        self._paths: dict[Leaf, tuple[tuple[Node, float], ...]] = {}

    def group_of(self, label: str) -> str:
        """The declared group of ``label``; an undeclared label is its own group ``'=label'``."""
        return self._group_of.get(label, "=" + label)

    def path(self, leaf: Leaf) -> tuple[tuple[Node, float], ...]:
        cached = self._paths.get(leaf)
        if cached is not None:
            return cached
        if len(leaf) == 0:  # "no n-gram": a leaf of its own at depth 1
            result: tuple[tuple[Node, float], ...] = ((("empty",), 1.0),)
        else:
            sequence = tuple(self.group_of(label) for label in leaf)
            eps = self.leaf_weight ** len(set(sequence))
            result = ((("group", sequence), 1.0 - eps), (("op", tuple(leaf)), eps))
        self._paths[leaf] = result
        return result


class DeclaredTree(Tree):
    """A tree given explicitly as nested ``{child: (edge length, subtree or None)}``.

    Leaves are the keys whose subtree is ``None``; a leaf key is a tuple of labels (an n-gram)
    or a single label (shorthand for the 1-gram). Used to state a figure's tree verbatim (e.g.
    the 2-gram tree read off Eq. (17)) or to supply a hand-made tree.
    """

    def __init__(self, spec: Mapping) -> None:
        self._paths: dict[Leaf, tuple[tuple[Node, float], ...]] = {}
        self._walk(spec, (), ())

    def _walk(self, spec: Mapping, prefix: tuple, path: tuple) -> None:
        if not isinstance(spec, Mapping) or not spec:
            raise ValueError(f"tree node {prefix or 'root'!r} must map children to (length, subtree)")
        for name, entry in spec.items():
            try:
                weight, sub = entry
            except (TypeError, ValueError):
                raise ValueError(f"tree entry {name!r} must be (edge length, subtree or None), got {entry!r}") from None
            if not float(weight) > 0:
                raise ValueError(f"tree edge into {name!r} must have a positive length, got {weight!r}")
            node = prefix + (name,)
            step = path + ((node, float(weight)),)
            if sub is None:
                leaf = tuple(name) if isinstance(name, tuple) else (str(name),)
                if leaf in self._paths:
                    raise ValueError(f"leaf {leaf!r} appears twice in the tree")
                self._paths[leaf] = step
            else:
                self._walk(sub, node, step)

    @property
    def leaves(self) -> list[Leaf]:
        return list(self._paths)

    def path(self, leaf: Leaf) -> tuple[tuple[Node, float], ...]:
        try:
            return self._paths[tuple(leaf)]
        except KeyError:
            raise ValueError(f"{leaf!r} is not a leaf of the declared tree") from None
