"""Exact acquisition maximisation over an enumerable space: the ``exhaustive`` candidate pool.

When the architectures that can be proposed form a small finite set -- a benchmark table's rows
(the BO ``domain``; NAS-Bench-201's 15,625 cells) or a finite space (:attr:`SearchSpace.size`)
-- there is no need to search for the acquisition's maximiser with mutations (paper 000 §3,
paper 002 App. E.2): every candidate is scored every step and the pool is the ``n`` best
unevaluated ones, so a B = 1 step proposes the exact argmax. The strategy keeps the kernel
components of the fixed set against its training architectures between steps
(:class:`nasviz.gp.cross.CandidateSet`), so scoring all 15,625 cells costs a few hundredths of a
second at 100 observations.

Ties (architectures the kernel cannot tell apart share their posterior) are broken at random
with the strategy's generator, so the order of the table's rows does not decide which is
proposed. A set larger than ``max_candidates``, or an infinite space without a domain, falls back
to the ``fallback`` generator, and the pool's notes say so.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.candidates import Pool, PoolGenerator, PoolRequest

#: Largest candidate set scored exhaustively by default (a few times NAS-Bench-201's 15,625).
MAX_CANDIDATES = 100_000


def exhaustive_generator(max_candidates: int = MAX_CANDIDATES, fallback: str = "evolution") -> PoolGenerator:
    """The ``exhaustive`` pool generator (module docstring); registry entry ``exhaustive``.

    Parameters
    ----------
    max_candidates : int
        Largest finite set scored whole; larger sets use ``fallback``.
    fallback : str
        A registered pool generator for sets that are infinite or too large.
    """
    from nasviz.components import POOLS

    if fallback == "exhaustive":
        raise ValueError("the exhaustive pool cannot fall back to itself")
    backup = POOLS.create(fallback)
    enumerated: dict[str, list[Architecture]] = {}  # a finite space's architectures, listed once

    def candidates(r: PoolRequest) -> tuple[Sequence[Architecture] | None, str]:
        if r.domain is not None:
            return (r.domain, "domain") if len(r.domain) <= max_candidates else (None, f"domain of {len(r.domain)}")
        size = r.space.size
        if size is None:
            return None, f"the {r.space.name!r} space is not finite"
        if size > max_candidates:
            return None, f"the {r.space.name!r} space has {size} architectures"
        if r.space.name not in enumerated:
            enumerated[r.space.name] = list(r.space.enumerate())
        return enumerated[r.space.name], "space"

    def generate(r: PoolRequest) -> Pool:
        cands, source = candidates(r)
        if cands is None:
            pool = backup(r)
            pool.notes["exhaustive_fallback"] = f"{fallback}: {source} exceeds max_candidates={max_candidates}"
            return pool
        acq = np.asarray(r.score_set(cands) if r.score_set is not None else r.score(cands), dtype=float)
        allowed = np.fromiter((a not in r.exclude for a in cands), dtype=bool, count=len(cands))
        if source == "space" and r.domain_set is not None:
            allowed &= np.fromiter((a in r.domain_set for a in cands), dtype=bool, count=len(cands))
        keep = np.flatnonzero(allowed)
        order = keep[np.lexsort((r.rng.random(len(keep)), -acq[keep]))][: r.n]
        scored = int(len(keep))
        return Pool([cands[i] for i in order], ["exhaustive"] * len(order), {"scored": scored},
                    {"scored": scored, "candidates": len(cands), "source": source})

    return generate


__all__ = ["MAX_CANDIDATES", "exhaustive_generator"]
