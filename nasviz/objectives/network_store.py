"""Trained networks kept on disk, bounded, for warm starts (paper 003 Sec. 4.1, "Model Storage").

Auto-Keras warm-starts every child from its ancestor's trained network, so it needs every
network it may still morph; held in memory they grow without bound (an MLP run on digits held
112 MB after 30 evaluations). A :class:`NetworkStore` keeps them in a folder instead, one ``.npz``
archive of numeric arrays per network (the ``state_dict``), read back with ``allow_pickle=False``
when a child needs it. Written atomically (a temporary file renamed into place), so the worker
processes that train and the process that searches can share one folder. The folder is bounded:
once it holds more than ``max_bytes``, the least recently used archives are deleted (a read
counts as a use). A child whose ancestor was evicted is trained from scratch, and the trainer
says so in the evaluation's notes.

A :class:`NetworkPlan` is what one evaluation needs to know about it: which folder to keep the
trained network in, and which stored network (and morphisms) to start from. It is plain data, so
it travels to worker processes with the architecture.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np


@dataclass(frozen=True)
class NetworkPlan:
    """How one evaluation uses a :class:`NetworkStore` (plain, picklable data).

    ``folder`` / ``max_bytes``: the store the trained network is kept in (under its string);
    ``ancestor``: the string of a stored network to start from, morphed by ``morphs``
    (:meth:`~nasviz.spaces.morphs.Morph.to_dict` items) with ``seed`` for new units; ``None``
    trains from a fresh initialisation.
    """

    folder: str
    max_bytes: int | None = None
    ancestor: str | None = None
    morphs: tuple[dict, ...] = ()
    seed: int = 0


class NetworkStore:
    """A folder of trained networks, least recently used evicted beyond ``max_bytes``.

    Parameters
    ----------
    folder : created if missing
    max_bytes : bound on the archives' total size (``None``: unbounded)
    """

    def __init__(self, folder: str | os.PathLike, max_bytes: int | None = None) -> None:
        if max_bytes is not None and int(max_bytes) < 1:
            raise ValueError(f"max_bytes must be positive or None, got {max_bytes}")
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.max_bytes = None if max_bytes is None else int(max_bytes)
        #: networks this instance deleted to stay within ``max_bytes``
        self.evicted = 0

    @classmethod
    def temporary(cls, max_bytes: int | None = None, prefix: str = "nasviz-networks-") -> "NetworkStore":
        """A store in a new temporary folder, deleted with everything in it when the store is
        garbage collected or the interpreter exits."""
        store = cls(tempfile.mkdtemp(prefix=prefix), max_bytes)
        store._finalizer = weakref.finalize(store, shutil.rmtree, str(store.folder), ignore_errors=True)
        return store

    def close(self) -> None:
        """Delete a temporary store's folder now (a no-op for other stores)."""
        finalizer = getattr(self, "_finalizer", None)
        if finalizer is not None:
            finalizer()

    def path(self, key: str) -> Path:
        """The archive of network ``key`` (a hash of the string: any string is a safe name)."""
        return self.folder / (hashlib.sha256(str(key).encode("utf-8")).hexdigest()[:40] + ".npz")

    def __contains__(self, key: object) -> bool:
        return self.path(str(key)).is_file()

    def save(self, key: str, state: Mapping[str, Any]) -> None:
        """Keep ``state`` (name -> tensor or array, numeric) as network ``key``, then evict."""
        arrays = {str(k): _numeric(k, v) for k, v in state.items()}
        target = self.path(key)
        fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                np.savez(handle, **arrays)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._evict(keep=target)

    def load(self, key: str) -> dict[str, np.ndarray] | None:
        """Network ``key``'s arrays, or ``None`` if it is not (or no longer) stored."""
        path = self.path(key)
        try:
            with np.load(path, allow_pickle=False) as archive:
                arrays = {name: archive[name] for name in archive.files}
            os.utime(path)  # a use: least recently used archives go first
        except FileNotFoundError:
            return None
        return arrays

    def discard(self, key: str) -> None:
        self.path(key).unlink(missing_ok=True)

    def archives(self) -> list[Path]:
        return sorted(self.folder.glob("*.npz"))

    def bytes_used(self) -> int:
        return sum(_size(p) for p in self.archives())

    def summary(self) -> dict[str, Any]:
        """``{"networks", "bytes", "evicted", "max_bytes"}`` for the strategy's notes."""
        files = self.archives()
        return {"networks": len(files), "bytes": sum(_size(p) for p in files), "evicted": self.evicted,
                "max_bytes": self.max_bytes}

    def _evict(self, keep: Path) -> None:
        if self.max_bytes is None:
            return
        files = [(p, p.stat()) for p in self.archives() if p.exists()]
        total = sum(st.st_size for _, st in files)
        for p, st in sorted(files, key=lambda f: f[1].st_mtime_ns):
            if total <= self.max_bytes:
                break
            if p == keep:
                continue
            p.unlink(missing_ok=True)
            total -= st.st_size
            self.evicted += 1


def _numeric(name: object, value: Any) -> np.ndarray:
    array = value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise ValueError(f"network state {name!r} is not a numeric array (dtype {array.dtype})")
    return array


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


_OPEN: dict[tuple[str, int | None], NetworkStore] = {}


def open_store(folder: str, max_bytes: int | None = None) -> NetworkStore:
    """The store at ``folder`` (one instance per folder and bound in a process)."""
    key = (str(folder), max_bytes)
    if key not in _OPEN:
        _OPEN[key] = NetworkStore(folder, max_bytes)
    return _OPEN[key]
