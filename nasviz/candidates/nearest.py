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
        self.space = space
        self.k = int(k)
        self.domain = list(domain)
        self._index = [{value: i for i, value in enumerate(values)} for values in space.parameter_choices().values()]
        self._codes = np.stack([self._encode(a) for a in self.domain]) if self.domain else np.zeros((0, len(self._index)))
        self._cache: dict[Architecture, list[Architecture]] = {}

    def _encode(self, arch: Architecture) -> np.ndarray:
        """``(P,)`` the index of each parameter's choice."""
        values = self.space.to_parameters(arch).values()
        return np.fromiter((index[v] for index, v in zip(self._index, values)), dtype=np.int16, count=len(self._index))

    def nearest(self, arch: Architecture) -> list[Architecture]:
        """The ``k`` members nearest to ``arch`` (itself excluded), nearest first; cached per cell."""
        found = self._cache.get(arch)
        if found is None:
            distance = (self._codes != self._encode(arch)).sum(axis=1)  # (D,) parameters that differ
            distance[distance == 0] = np.iinfo(distance.dtype).max  # the cell itself, or one encoded alike
            k = min(self.k, len(self.domain))
            if k == 0:
                return []
            first = np.argpartition(distance, k - 1)[:k] if k < len(self.domain) else np.arange(len(self.domain))
            order = first[np.lexsort((first, distance[first]))]  # by distance, then table order
            found = [self.domain[i] for i in order if distance[i] != np.iinfo(distance.dtype).max]
            self._cache[arch] = found
        return found
