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

Modules: ``trees`` (the operation tree and tree-Wasserstein on it), ``measures`` (the n-gram and
degree measures of an architecture, univariate OT on the chain), ``kernel`` (Eq. (25), vectorised).
"""

from nasviz.kernels.tw.kernel import COMPONENTS, TreeWassersteinKernel
from nasviz.kernels.tw.measures import chain_wasserstein, degree_measures, ngram_measure
from nasviz.kernels.tw.trees import OPERATION_GROUPS, DeclaredTree, Leaf, Node, OperationTree, Tree

__all__ = [
    "COMPONENTS",
    "DeclaredTree",
    "Leaf",
    "Node",
    "OPERATION_GROUPS",
    "OperationTree",
    "Tree",
    "TreeWassersteinKernel",
    "chain_wasserstein",
    "degree_measures",
    "ngram_measure",
]
