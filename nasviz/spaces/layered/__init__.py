"""What the two layer spaces of NASBOT / Auto-Keras share: networks as DAGs of layers.

The MLP space (:mod:`nasviz.spaces.mlp`) and the CNN space (:mod:`nasviz.spaces.cnn`) both
follow paper 001 Sec. 2.2: a network is an :class:`~nasviz.arch.Architecture` whose node 0 is
the input layer, whose last node is the output layer averaging its parents (the decision
layers), and whose other nodes are processing layers with units; a layer reads the
concatenation of its parents. This package holds the logic that does not depend on which layers
a space has, parameterised where the spaces differ (labels, what a layer's units mean, the
space's validity rules), in the same layout as the spaces:

* :mod:`.graph`: App. B.1's domain constraints, the structure helpers (decision and processing
  layers), the checks every network passes, normalisation and the string format;
* :mod:`.modifiers`: the editing copy of a network and the parts of NASBOT's modifiers and
  compound mutation (Table 6, App. B.2) that are the same in both spaces;
* :mod:`.morphisms`: the bookkeeping of Auto-Keras's morphisms (paper 003 Sec. 3.3, App. B) and
  their enumeration, sampling and application in turn;
* :mod:`.space`: the :class:`~nasviz.spaces.base.SearchSpace` plumbing of both spaces.

Each space keeps what is specific to it (its labels, validity rules, modifier details, weight
inheritance and torch network) and re-exports the names it always had.
"""
