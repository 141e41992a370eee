"""Tree-Wasserstein kernel for neural architectures (paper 000, §2, App. F and App. G).

An architecture ``x`` is distilled into three probability measures (§2.2):

* ``omega^o`` -- the normalised n-gram histogram of operations (Eq. (3)): an n-gram is the label
  sequence along a directed path of ``n`` *operation* nodes of the reduced graph
  (:meth:`~nasviz.arch.Architecture.reduced`). The input and output nodes are pseudo-layers and
  are excluded, as in App. F (``x_1 = (1, 3, 0) / 4`` counts the four operation layers only);
* ``omega^{d-}`` / ``omega^{d+}`` -- the normalised in-/out-degrees of the layers reachable from
  the input, each placed at ``(eta_l + 1) / (M + 1)`` on a chain (Eq. (4)), with ``eta_l`` the
  longest path from the input to layer ``l`` and ``M`` the longest path to the output.

Each pair of measures is compared with tree-Wasserstein (Eq. (2)),
``W(omega, nu) = sum_e w_e |omega(Gamma(v_e)) - nu(Gamma(v_e))|``, which is the L1 distance
between the per-architecture vectors ``g(omega) = (w_e omega(Gamma(v_e)))_e`` (App. F). The
kernel computes those vectors once per architecture and all pairwise distances in one
``cdist(..., 'cityblock')`` call. On the chain, TW is univariate OT,
``W = int |F_omega(t) - F_nu(t)| dt``; a measure is represented by its CDF on the union grid of
supports, weighted by the gaps, so that it too is one L1 distance.

Layer widths (units) play no part: ``d_NN`` compares operations and structure only, which is
what lets it compare networks of different sizes (§2.2).

The kernel is Eq. (25): ``k = exp(-(lambda_1 W_o + lambda_2 W_- + lambda_3 W_+))``, i.e. Eq. (6)
with ``lambda_i = alpha_i / sigma_l^2``; ``dk/dlambda_i = -W_i k`` (Eqs. (29)-(31)). It is positive
definite because ``d_NN`` is negative definite (Proposition 1).

The operation tree
------------------
Fig. 8 of the paper hangs similar operations under a group: root --0.9--> convolution
--0.1--> conv1 / conv3, and max-pool at depth 1, which gives Table 1's costs 0 / 0.2 / 2. nasviz
declares the groups in :data:`OPERATION_GROUPS`; every group, including a one-member group, is
``root --(1 - a)--> group --a--> operation`` with ``a = leaf_weight = 0.1``, so every leaf lies at
depth 1 (a one-member group is equivalent to a leaf at depth 1). For NAS-Bench-201::

    root ─0.9─ convolution ─0.1─ nor_conv_1x1
                           └0.1─ nor_conv_3x3
         ─0.9─ pooling     ─0.1─ avg_pool_3x3   (with max-pool variants of other spaces)
         ─0.9─ identity    ─0.1─ skip_connect   (never seen after reduction: bypassed)
         ─0.9─ zero        ─0.1─ none           (never seen after reduction: removed)

so conv1x1 <-> conv3x3 costs 0.2 and convolution <-> pooling costs 2. Labels of layer spaces are
declared too (rectifiers, saturating activations, linear / dense, ...). A label that no group
declares gets a one-member group of its own (cost 2 to every other label): nothing is assumed
about unknown operations.

n-gram trees (n >= 2). The figure with the 2-gram tree is missing from the text; Eq. (17) prints
its weights: the conv-conv 2-grams hang under a group at 0.9 with leaves at 0.1, the conv-pool
2-grams under a group at 0.99 with leaves at 0.01, pool-pool at depth 1. nasviz generalises this
as: an n-gram ``(s_1..s_n)`` hangs under the node of its *ordered group sequence*
``(G(s_1)..G(s_n))`` with edge ``1 - a^k``, and the leaf edge is ``a^k``, where ``k`` is the number
of distinct groups in the sequence. For ``n = 1`` this is the tree above; for the App. F example it
reproduces every term of Eq. (17). Leaves stay at depth 1, so n-grams with different group
sequences cost 2.

``ngram`` and ``cumulative``. The experiments use "TW-2G"; the authors' code (and §2.2: "when we use
all n <= l ... shares the same spirit as the path encoding") combine 1-grams and 2-grams. With
``cumulative=True`` (default) ``W_o`` is the mean of ``W_n`` over ``n = 1..ngram``, each on its own
normalised measure: this is TW on the tree whose root has one child per ``n`` (the mixture
``(1/N) sum_n omega_n`` is a probability measure on it), so Proposition 1 still holds. Unlike
the reference code, which normalises 1- and 2-gram counts jointly, each ``n`` keeps weight
``1/N`` whatever the number of paths. ``cumulative=False`` uses only ``n = ngram`` (App. F's Eq. (17)).

``anchored`` (default ``True``; a deviation, measured). App. F counts the n-grams of *operation*
layers only (its 1-gram ``x_1 = (1, 3, 0) / 4`` and the 2-grams of Eq. (17)). With ``anchored=True``
the n-grams of order ``n >= 2`` also run through the input and output pseudo-layers: ``(input,
nor_conv_3x3)`` says "a 3x3 convolution reads the cell's input", ``(nor_conv_1x1, output)`` "a 1x1
convolution feeds the output". 1-grams are unchanged, and ``input`` / ``output`` are labels of
their own group (cost 2 to every operation), so the measures stay probability measures on the
same kind of tree and Proposition 1 still holds. Why: which operations sit next to the cell's
input and output is what the in/out-degree measures only see as positions, and it is what the
Weisfeiler-Lehman features of paper 002 carry (the input and output are labelled nodes there).
On the shared NAS-Bench-201 table the surrogate benchmark (``bench surrogate --train 50 --test 400
--trials 20 --seed 0``) gave TW-2G a Spearman of 0.883 (cifar10) / 0.858 (cifar100) anchored
against 0.863 / 0.836 without. On the embedded NB201-on-digits table, which played no part in the
choice, it changes nothing (0.468 vs 0.465, standard error 0.025). ``anchored=False`` reproduces
App. F exactly (the tests do).

Parallel edges (the multiplicity :meth:`~nasviz.arch.Architecture.reduced` keeps, ``x + x``):
every n-gram path and every in/out-degree counts each copy. The measures are normalised, so a
relative multiplicity shows (a 1x1 convolution read twice next to a 3x3 read once) but doubling
every edge does not: the all-``skip_connect`` NB201 cell (``4x``, four parallel input -> output
edges) and the direct skip (``x``) have the same measures, distance 0.

Degenerate cells (the reference code returns NaN for them):

* no n-gram of length ``n`` (e.g. a cell with one operation layer has no 2-gram): the n-gram
  measure is a unit mass on a dedicated leaf ``()`` at depth 1 -- "no path of n operations";
* a cell without edges (its output is unreachable, e.g. NB201 cells whose paths all contain
  ``none``): both degree measures are a unit mass at ``t = 0``, left of every real layer (whose
  positions are ``> 0``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from typing import Hashable, Iterable, Mapping, Sequence

import numpy as np
from scipy.spatial.distance import cdist

from nasviz.arch import Architecture
from nasviz.spaces.base import LABELLED_DAG, OPERATION_TREE
from nasviz.kernels.base import Components, Hyperparameter, Kernel, unique_reduced

__all__ = [
    "COMPONENTS",
    "DeclaredTree",
    "OPERATION_GROUPS",
    "OperationTree",
    "Tree",
    "TreeWassersteinKernel",
    "chain_wasserstein",
    "degree_measures",
    "ngram_measure",
]

#: Component names, in the order of ``lambda_1, lambda_2, lambda_3`` (Eq. (25)).
COMPONENTS: tuple[str, str, str] = ("operations", "in_degree", "out_degree")

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


# ---------------------------------------------------------------------------------- trees
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


# ---------------------------------------------------------------------------------- measures
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
    return _ngram_measure(arch.reduced(), int(n), anchored)


def _ngram_measure(r: Architecture, n: int, anchored: bool = False) -> dict[Leaf, float]:
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
    return _degree_measures(arch.reduced())


def _degree_measures(r: Architecture) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


# ---------------------------------------------------------------------------------- kernel
class TreeWassersteinKernel(Kernel):
    """``k = exp(-(lambda_1 W_o + lambda_2 W_- + lambda_3 W_+))`` (Eq. (25) of paper 000).

    Parameters
    ----------
    ngram : int
        Longest n-gram, 1..3 (paper: 1-gram "TW" and 2-gram "TW-2G"; default 2).
    cumulative : bool
        ``W_o`` averages ``n = 1..ngram`` (default) or uses ``n = ngram`` only.
    tree : Tree or mapping group -> labels, optional
        The operation tree; a mapping declares the groups of an :class:`OperationTree`.
    leaf_weight : float
        ``a`` of the :class:`OperationTree` (ignored when ``tree`` is a :class:`Tree`).
    anchored : bool
        n-grams of order >= 2 may start at the input or end at the output (default, see the
        module docstring); ``False`` counts operation layers only, as App. F.

    Components (each ``(len(a), len(b))``): ``operations`` = ``W_o``, ``in_degree`` = ``W_-``,
    ``out_degree`` = ``W_+``. Hyperparameters ``lambda_1, lambda_2, lambda_3`` (log scale).
    """

    name = "tw"
    reads = frozenset({LABELLED_DAG, OPERATION_TREE})
    positive_definite = True

    @classmethod
    def options_from_space(cls, space) -> dict:
        """The space's operation groups as the first level of the operation tree."""
        return {"tree": dict(space.operation_groups())}

    def __init__(
        self,
        ngram: int = 2,
        cumulative: bool = True,
        tree: Tree | Mapping[str, Iterable[str]] | None = None,
        leaf_weight: float = 0.1,
        anchored: bool = True,
    ) -> None:
        if isinstance(ngram, bool) or not isinstance(ngram, (int, np.integer)) or not 1 <= int(ngram) <= 3:
            raise ValueError(f"ngram must be 1, 2 or 3, got {ngram!r}")
        self.ngram = int(ngram)
        self.cumulative = bool(cumulative)
        self.anchored = bool(anchored)
        self.tree: Tree = tree if isinstance(tree, Tree) else OperationTree(tree, leaf_weight)
        self.orders: tuple[int, ...] = tuple(range(1, self.ngram + 1)) if self.cumulative else (self.ngram,)
        # Column of each tree edge (keyed (n, v_e)) in the dense g-vectors; grows as leaves appear.
        self._columns: dict[tuple[int, Node], int] = {}
        self._features: dict[Architecture, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        return [
            Hyperparameter("lambda_1", 1.0, (1e-3, 1e3)),  # n-gram operations, W_o
            Hyperparameter("lambda_2", 1.0, (1e-3, 1e3)),  # in-degree, W_-
            Hyperparameter("lambda_3", 1.0, (1e-3, 1e3)),  # out-degree, W_+
        ]

    # -------------------------------------------------------------- per-architecture work
    def ngram_measures(self, arch: Architecture) -> dict[int, dict[Leaf, float]]:
        """``{n: omega_n}`` for the n-gram orders this kernel uses."""
        return {n: ngram_measure(arch, n, self.anchored) for n in self.orders}

    def _prepare(self, r: Architecture):
        """Cached ``(g columns, g values, positions, in_mass, out_mass)`` of a *reduced* graph."""
        feats = self._features.get(r)
        if feats is not None:
            return feats
        scale = 1.0 / len(self.orders)  # W_o is the mean over the orders
        g: dict[int, float] = {}
        for n in self.orders:
            for node, value in self.tree.embed(_ngram_measure(r, n, self.anchored)).items():
                col = self._columns.setdefault((n, node), len(self._columns))
                g[col] = g.get(col, 0.0) + scale * value
        cols = np.fromiter(g.keys(), dtype=np.int64, count=len(g))
        vals = np.fromiter(g.values(), dtype=float, count=len(g))
        feats = (cols, vals, *_degree_measures(r))
        self._features[r] = feats
        return feats

    def _operation_vectors(self, feats: Sequence[tuple]) -> np.ndarray:
        """Dense ``g(omega)`` matrix, shape ``(len(feats), n_edges_seen)``."""
        X = np.zeros((len(feats), max(len(self._columns), 1)))
        if feats:
            rows = np.repeat(np.arange(len(feats)), [len(f[0]) for f in feats])
            X[rows, np.concatenate([f[0] for f in feats])] = np.concatenate([f[1] for f in feats])
        return X

    @staticmethod
    def _cdf_vectors(feats: Sequence[tuple], grid: np.ndarray, which: int) -> np.ndarray:
        """Gap-weighted CDFs ``F(t_k) (t_{k+1} - t_k)``, shape ``(len(feats), len(grid) - 1)``."""
        F = np.zeros((len(feats), grid.size))
        if feats:
            rows = np.repeat(np.arange(len(feats)), [len(f[2]) for f in feats])
            cols = np.searchsorted(grid, np.concatenate([f[2] for f in feats]))
            np.add.at(F, (rows, cols), np.concatenate([f[which] for f in feats]))
        return np.cumsum(F, axis=1)[:, :-1] * np.diff(grid)[None, :]

    def _unique(self, archs: Sequence[Architecture]) -> tuple[list[tuple], np.ndarray]:
        """Features of the distinct reduced graphs of ``archs`` and each arch's row among them.

        Cells that reduce to the same graph (about 4 in 10 of 1,000 random NB201 cells) share
        their features and their rows of the distance matrices.
        """
        graphs, index = unique_reduced(archs)
        return [self._prepare(r) for r in graphs], index

    def components(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        """``W_o``, ``W_-``, ``W_+`` for all pairs, each ``(len(a), len(b))`` (Eqs. (2), (4))."""
        fa, ia = self._unique(archs_a)
        fb, ib = (fa, ia) if archs_b is archs_a else self._unique(archs_b)
        grid = np.unique(np.concatenate([f[2] for f in fa + fb])) if fa or fb else np.zeros(1)
        result: Components = {}
        pairs = [
            ("operations", self._operation_vectors(fa), self._operation_vectors(fb)),
            ("in_degree", self._cdf_vectors(fa, grid, 3), self._cdf_vectors(fb, grid, 3)),
            ("out_degree", self._cdf_vectors(fa, grid, 4), self._cdf_vectors(fb, grid, 4)),
        ]
        for name, A, B in pairs:
            if A.shape[1] == 0 or not len(A) or not len(B):
                result[name] = np.zeros((len(ia), len(ib)))
            else:
                result[name] = cdist(A, B, metric="cityblock")[np.ix_(ia, ib)]
        return result

    def pair_distances(self, x: Architecture, z: Architecture) -> dict[str, float]:
        """The three distances for one pair, from scratch and edge by edge (no caching).

        The straightforward computation (Eq. (2) summed over the tree's edges, the chain by
        its CDFs); :meth:`components` gives the same numbers for all pairs at once. Used by
        the benchmark as the per-pair baseline and by the tests as an independent check.
        """
        mx, mz = self.ngram_measures(x), self.ngram_measures(z)
        w_o = float(np.mean([self.tree.wasserstein(mx[n], mz[n]) for n in self.orders]))
        px, ix, ox = degree_measures(x)
        pz, iz, oz = degree_measures(z)
        return {
            "operations": w_o,
            "in_degree": chain_wasserstein(px, ix, pz, iz),
            "out_degree": chain_wasserstein(px, ox, pz, oz),
        }

    # -------------------------------------------------------------- kernel from components
    def _lambdas(self, theta: Sequence[float] | None) -> np.ndarray:
        lam = self.default_theta() if theta is None else np.asarray(theta, dtype=float)
        if lam.shape != (3,):
            raise ValueError(f"theta must hold (lambda_1, lambda_2, lambda_3), got shape {lam.shape}")
        if np.any(lam < 0) or not np.all(np.isfinite(lam)):
            raise ValueError(f"lambda_1..3 must be finite and non-negative, got {lam.tolist()}")
        return lam

    @staticmethod
    def _check(components: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        missing = [c for c in COMPONENTS if c not in components]
        if missing:
            raise ValueError(f"components lack {', '.join(missing)}; expected {', '.join(COMPONENTS)}")
        return [np.asarray(components[c], dtype=float) for c in COMPONENTS]

    def combine(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> np.ndarray:
        """Eq. (25): ``exp(-(lambda_1 W_o + lambda_2 W_- + lambda_3 W_+))``, shape of the components."""
        lam = self._lambdas(theta)
        W = self._check(components)
        return np.exp(-(lam[0] * W[0] + lam[1] * W[1] + lam[2] * W[2]))

    def combine_with_gradients(
        self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """``K`` and ``dK/dlambda_i = -W_i * K`` (Eqs. (29)-(31)), each the shape of the components."""
        K = self.combine(components, theta)
        return K, [-W * K for W in self._check(components)]
