"""The nearest members of a table, for mutation on a table that holds a sparse part of its space.

A mutation pool on a table draws a parent's children among its one-edit neighbours that the table
holds (:func:`nasviz.candidates.pools.mutation_pool`). On a table that holds all of its space
(NAS-Bench-201's 15,625 cells) that is the space's mutation. On a sparse one it is not: the NB101
20k table is an architecturally arbitrary 4.7 % of NAS-Bench-101, so about one in twenty of a
cell's neighbours is in it, most parents have none left after a few steps, and the pool falls back
to uniform samples.

:class:`TableNeighbourhood` gives the *local* alternative: the table members nearest to a cell in
Hamming distance over the space's ``categorical-parameters`` (the number of parameters that
differ: NB201's six edge operations, NB101's 21 edge bits and five operations), the distance the
exponentiated Hamming factor of the ``tw2g-hamming`` kernel reads. A one-edit neighbour in the
table is at distance 1 (or close, NB101 parameters being in canonical vertex order), so the
nearest members generalise "the neighbours in the table" to tables where there are none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.errors import ConfigError
from nasviz.kernels.slots import SlotKernel
from nasviz.spaces.base import PARAMETERS

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace

#: How many nearest members a cell is given: NAS-Bench-201's one-edit neighbourhood (6 edges x 4
#: other operations), so a sparse table offers a mutation about as many children as a full one.
DEFAULT_K = 24


class TableNeighbourhood:
    """The ``k`` table members nearest to a cell in Hamming distance over categorical parameters.

    Parameters
    ----------
    space : SearchSpace
        A space with the ``categorical-parameters`` representation.
    domain : sequence of Architecture, length D
        The table's architectures; encoded once, ``(D, P)`` choice indices.
    k : int
        Members returned per cell (ties at the k-th distance broken by table order).
    """

    def __init__(self, space: "SearchSpace", domain: Sequence[Architecture], k: int = DEFAULT_K) -> None:
        if not space.provides(PARAMETERS):
            raise ConfigError(f"nearest table members need the {PARAMETERS!r} representation, "
                              f"which the {space.name!r} space lacks")
        if k < 1:
            raise ConfigError(f"k must be at least 1, got {k}")
        self.k = int(k)
        self.domain = list(domain)
        # the slot kernel's encoding: (D, P) choice indices, the codes its Hamming factor compares
        self._slots = SlotKernel(space)
        self._codes = self._slots.codes(self.domain)
        self._cache: dict[Architecture, list[Architecture]] = {}

    def nearest(self, arch: Architecture) -> list[Architecture]:
        """The ``k`` members nearest to ``arch`` (itself excluded), nearest first; cached per cell."""
        found = self._cache.get(arch)
        if found is None:
            distance = (self._codes != self._slots.codes([arch])).sum(axis=1)  # (D,) parameters that differ
            candidates = np.flatnonzero(distance > 0)  # not the cell itself (nor one encoded alike)
            if len(candidates) > self.k:
                # every row up to the k-th smallest distance, ties included: which of the tied rows
                # an argpartition keeps is arbitrary, and the table order below decides instead
                kth = np.partition(distance[candidates], self.k - 1)[self.k - 1]
                candidates = candidates[distance[candidates] <= kth]
            order = candidates[np.lexsort((candidates, distance[candidates]))][: self.k]  # by distance, then table order
            found = self._cache[arch] = [self.domain[i] for i in order]
        return found
