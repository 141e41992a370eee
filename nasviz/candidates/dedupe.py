"""Canonical dedupe: what a strategy that never proposes two architectures with one canonical key
(:meth:`~nasviz.arch.Architecture.canonical_key`; the BO option ``dedupe="canonical"``) tests
candidates against."""

from __future__ import annotations

from typing import Callable, Sequence

from nasviz.arch import Architecture


class SeenKeys:
    """``arch in seen``: an architecture with the same key was recorded. ``keys`` is the caller's
    own set, read live (recording a key there is seen here at once)."""

    def __init__(self, key: Callable[[Architecture], str], keys: set[str]) -> None:
        self.key, self.keys = key, keys

    def __contains__(self, arch: object) -> bool:
        return isinstance(arch, Architecture) and self.key(arch) in self.keys


def first_of_each_key(archs: Sequence[Architecture], key: Callable[[Architecture], str], seen: set[str]) -> list[int]:
    """Indices of ``archs`` whose key is not in ``seen`` and is the first of its key among them,
    in order (``seen`` itself is not changed)."""
    keys, keep = set(seen), []
    for i, arch in enumerate(archs):
        k = key(arch)
        if k not in keys:
            keys.add(k)
            keep.append(i)
    return keep


__all__ = ["SeenKeys", "first_of_each_key"]
