"""The on-disk cache of the enumeration, and the space-level functions that read it.

:func:`load_enumeration` returns the enumeration from memory, else from ``nb101_cells_v1.npz``
under :func:`cache_dir` (``$NASVIZ_CACHE_DIR``, default ``~/.cache/nasviz``), else builds and
writes it. :func:`enumerate_all`, :func:`count`, :func:`index_of_hash`, :func:`cell_of_hash` and
:func:`sample` answer from it.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Iterator

import numpy as np

from nasviz.spaces.nb101.cell import MAX_VERTICES, NB101Cell
from nasviz.spaces.nb101.enumeration import Enumeration, build_enumeration

#: Environment variable naming the directory of the enumeration cache.
CACHE_ENV = "NASVIZ_CACHE_DIR"

#: Bumped whenever the cache file's content or layout changes, so stale caches are rebuilt.
_CACHE_VERSION = 1

# ------------------------------------------------------------------------------------ the cache
def cache_dir() -> Path:
    """Where the enumeration is cached: ``$NASVIZ_CACHE_DIR``, else ``~/.cache/nasviz``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "nasviz"


def _cache_file(directory: Path) -> Path:
    return directory / f"nb101_cells_v{_CACHE_VERSION}.npz"


def _save(enum: Enumeration, path: Path) -> None:
    """Write atomically (a temporary file renamed into place) so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.stem, suffix=".tmp.npz", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(
                handle,
                version=np.int64(_CACHE_VERSION),
                hashes=enum.hashes,
                n_vertices=enum.n_vertices,
                bits=enum.bits,
                codes=enum.codes,
                info=np.array(json.dumps(enum.info)),
            )
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _load(path: Path) -> Enumeration | None:
    """The cached enumeration, or ``None`` if the file is missing, stale or inconsistent."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if int(data["version"]) != _CACHE_VERSION:
                return None
            info = json.loads(str(data["info"]))
            info["per_vertex_count"] = {int(k): v for k, v in info.get("per_vertex_count", {}).items()}
            enum = Enumeration(data["hashes"], data["n_vertices"], data["bits"], data["codes"], info)
    except (OSError, KeyError, ValueError):
        return None
    n = len(enum.hashes)
    if not (
        n > 0
        and enum.hashes.dtype == np.dtype("S32")
        and len(enum.n_vertices) == len(enum.bits) == len(enum.codes) == n
        and bool(np.all(enum.hashes[1:] > enum.hashes[:-1]))  # sorted and unique
        and int(enum.n_vertices.min()) >= 2
        and int(enum.n_vertices.max()) <= MAX_VERTICES
    ):
        return None
    return enum


_LOADED: dict[Path, Enumeration] = {}


def load_enumeration(directory: str | Path | None = None, refresh: bool = False) -> Enumeration:
    """The full enumeration: from memory, else from the disk cache, else built and cached.

    ``directory`` defaults to :func:`cache_dir`. The file is ``nb101_cells_v1.npz`` (plain numpy
    arrays, read with ``allow_pickle=False``; about 17 MB). A missing, stale or inconsistent file
    is rebuilt (about 25 s on one core, ~230 MB peak); ``refresh`` forces a rebuild. The ``info``
    of the result says ``source`` ("built" or "cache") and ``load_seconds``.
    """
    path = _cache_file(Path(directory).expanduser() if directory is not None else cache_dir())
    if not refresh and path in _LOADED:
        return _LOADED[path]
    start = time.perf_counter()
    enum = None if refresh else _load(path)
    if enum is None:
        enum = build_enumeration()
        _save(enum, path)
        enum.info["source"] = "built"
    else:
        enum.info["source"] = "cache"
    enum.info["load_seconds"] = round(time.perf_counter() - start, 3)
    enum.info["path"] = str(path)
    _LOADED[path] = enum
    return enum


# -------------------------------------------------------------------------------- space API
def enumerate_all() -> Iterator[NB101Cell]:
    """All unique cells (canonical forms), in ascending order of module hash."""
    enum = load_enumeration()
    for i in range(len(enum)):
        yield enum.cell(i)


def count() -> int:
    """The number of unique cells, from the enumeration (NAS-Bench-101 reports 423,624)."""
    return len(load_enumeration())


def index_of_hash(h: str) -> int:
    """Position in :func:`enumerate_all` of the cell with module hash ``h`` (``KeyError`` if none)."""
    return load_enumeration().index_of_hash(h)


def cell_of_hash(h: str) -> NB101Cell:
    """The cell (canonical form) with module hash ``h``; ``KeyError`` if no cell has it."""
    enum = load_enumeration()
    return enum.cell(enum.index_of_hash(h))


def sample(rng: np.random.Generator, n: int = 1) -> list[NB101Cell]:
    """``n`` cells drawn uniformly (with replacement) from the unique cells.

    Uniform over the 423,624 cells, not over raw specs: NAS-Bench-101's own ``random_spec``
    samples raw matrices, which over-weights cells with many raw encodings.
    """
    enum = load_enumeration()
    return [enum.cell(int(i)) for i in rng.integers(0, len(enum), size=n)]

