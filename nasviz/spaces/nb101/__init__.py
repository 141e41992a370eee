"""The NAS-Bench-101 cell space (NB101): cells of up to 7 vertices, 423,624 unique cells.

* :mod:`.cell`: the cell model, pruning and the text forms;
* :mod:`.hashing`: NAS-Bench-101's module hash (the space's canonical key);
* :mod:`.enumeration`: the canonical form of a cell and the enumeration of every unique cell;
* :mod:`.cache`: the enumeration's on-disk cache, uniform sampling and lookups by hash;
* :mod:`.moves`: mutation / neighbours and the conversion to and from :class:`~nasviz.arch.Architecture`;
* :mod:`.tables`: the import of tables known only by module hash;
* :mod:`.network`: the NAS-Bench-101 network for live training;
* :class:`NB101Space` (:mod:`.space`): all of it behind the :class:`~nasviz.spaces.base.SearchSpace` interface.

The public names of the modules are re-exported, so ``from nasviz.spaces import nb101;
nb101.parse(s)`` reads a cell.
"""

from nasviz.spaces.nb101.cache import (
    CACHE_ENV, cache_dir, cell_of_hash, count, enumerate_all, index_of_hash, load_enumeration, sample,
)
from nasviz.spaces.nb101.cell import (
    CONV1X1, CONV3X3, MAX_EDGES, MAX_VERTICES, MAXPOOL3X3, NAME, OPERATIONS, PUBLISHED_CELL_COUNT, InvalidCellError,
    NB101Cell, NB101Error, NB101ParseError, format, format_matrix, format_ops, is_valid_spec, parse, parse_matrix,
    parse_ops, parse_raw, prune,
)
from nasviz.spaces.nb101.enumeration import Enumeration, build_enumeration, canonical
from nasviz.spaces.nb101.hashing import canonical_key, hash_labels, module_hash, module_hash_batch
from nasviz.spaces.nb101.moves import from_architecture, mutate, neighbours, to_architecture
from nasviz.spaces.nb101.space import LABEL_MISMATCH, LAYER_KINDS, OPERATION_GROUPS, SPACE, NB101Space, cell_of
from nasviz.spaces.nb101.tables import (
    HASH_TABLE_RENAMES, SHARED_DATA_ENV, ImportResult, import_hash_table, shared_data_path,
)

__all__ = [
    "CACHE_ENV", "CONV1X1", "CONV3X3", "Enumeration", "HASH_TABLE_RENAMES", "ImportResult", "InvalidCellError",
    "MAX_EDGES", "MAX_VERTICES", "MAXPOOL3X3", "NAME", "NB101Cell", "NB101Error", "NB101Space", "OPERATION_GROUPS", "SPACE", "NB101ParseError", "OPERATIONS",
    "PUBLISHED_CELL_COUNT", "SHARED_DATA_ENV", "build_enumeration", "cache_dir", "canonical", "canonical_key", "cell_of",
    "cell_of_hash", "count", "enumerate_all", "format", "format_matrix", "format_ops", "from_architecture",
    "hash_labels", "import_hash_table", "index_of_hash", "is_valid_spec", "load_enumeration", "module_hash",
    "module_hash_batch", "mutate", "neighbours", "parse", "parse_matrix", "parse_ops", "parse_raw", "prune", "sample",
    "shared_data_path", "to_architecture",
]
