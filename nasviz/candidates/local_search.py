"""Local search of the acquisition from the incumbent: the BO option ``local_search``.

A pool generator approximates the acquisition's argmax with mutations and random samples
(paper 000 Sec. 3's evolutionary pool draws a few random children of each parent per step). It
need not score every neighbour of the best cell observed so far, so a search can end next to a
better cell it never scored. Optuna's ``GPSampler`` avoids this by construction: its acquisition
optimiser starts a local search from the best observed point (and from the best of its random
samples), and each local-search sweep scores every other choice of every categorical parameter,
that is the whole one-edit neighbourhood, moving while the acquisition improves.

:func:`climb_acquisition` does that over the strategy's neighbour graph (a space's one-edit
neighbours; on a sparse table also its nearest rows, :class:`nasviz.candidates.TableNeighbourhood`):
best-improvement hill climbing of the acquisition, from each start in turn, to a local maximum.
The climb moves only to cells that can be proposed (unseen, in the domain); an evaluated start
(the incumbent) has no acquisition value of its own, so the first move from it always goes to its
best neighbour. :func:`extend_pool` adds every cell the climbs scored to a step's pool and keeps
the pool's best ``n`` by acquisition, so with B = 1 the step proposes the best of the pool and
of the local maxima.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.candidates.pools import Pool, ScoreFn
from nasviz.errors import ConfigError

#: Moves per climb at most: a safeguard; NAS-Bench-201's diameter is 6 edits.
MAX_MOVES = 32
#: Cells scored by all climbs of one step at most, in pool sizes: bounds a step's work where a
#: cell has thousands of neighbours (a randomly wired graph) or a visitor asks for many starts.
#: On NAS-Bench-201 ten climbs score about 300 cells, far below the cap of 2,000 (pool of 100).
MAX_SCORED_PER_POOL = 20


@dataclass
class Climbs:
    """What :func:`climb_acquisition` found.

    ``scores`` maps every cell scored during the climbs to its acquisition value; ``ends`` are the
    local maxima reached, one per start (a start without an allowed neighbour ends where it began);
    ``moves`` counts the moves of all climbs; ``capped`` says the climbs stopped at ``max_scored``.
    """

    scores: dict[Architecture, float]
    ends: list[Architecture]
    moves: int
    capped: bool = False


def climb_acquisition(
    starts: Sequence[Architecture],
    start_values: Sequence[float],
    score: ScoreFn,
    neighbours: Callable[[Architecture], list[Architecture]],
    allowed: Callable[[Architecture], bool],
    max_moves: int = MAX_MOVES,
    max_scored: int | None = None,
) -> Climbs:
    """Best-improvement hill climbing of the acquisition from each of ``starts``.

    Parameters
    ----------
    starts : sequence of Architecture, length S
        Where the climbs begin, in order (the incumbent first).
    start_values : sequence of float, length S
        Their acquisition values; ``-inf`` for a start that cannot be proposed (evaluated).
    score : callable
        ``score(archs) -> (len(archs),)`` acquisition values, higher is better.
    neighbours : callable
        ``neighbours(arch) -> list`` of the cells one move away.
    allowed : callable
        Whether a cell may be proposed (not evaluated or pending, inside the domain); asked at
        most once about a cell it allows, so a one-pass filter such as
        :meth:`nasviz.candidates.pools.PoolFilter.accept` serves.
    max_moves : int
        Most moves per climb.
    max_scored : int, optional
        Most cells scored over all climbs; once reached, every climb ends where it is.

    Each cell is scored once over all climbs (a climb entering a cell scored before reuses its
    value). Raises :class:`NotImplementedError` or :class:`~nasviz.errors.ConfigError` from
    ``neighbours`` when the space cannot list neighbours.
    """
    scores: dict[Architecture, float] = {}
    ends: list[Architecture] = []
    moves = 0
    capped = False
    for start, value in zip(starts, start_values):
        current, current_value = start, float(value)
        for _ in range(max_moves if not capped else 0):
            around = list(dict.fromkeys(neighbours(current)))
            new = [c for c in around if c not in scores and allowed(c)]
            if max_scored is not None and len(scores) + len(new) > max_scored:
                new, capped = new[: max(max_scored - len(scores), 0)], True
            if new:
                scores.update(zip(new, map(float, np.asarray(score(new), dtype=float))))
            options = [c for c in around if c in scores]
            if not options:
                break
            best = max(options, key=scores.__getitem__)
            if not scores[best] > current_value:
                break
            current, current_value = best, scores[best]
            moves += 1
            if capped:
                break
        ends.append(current)
    return Climbs(scores, ends, moves, capped)


def extend_pool(
    pool: Pool,
    n: int,
    n_starts: int,
    incumbent: Architecture | None,
    score: ScoreFn,
    neighbours: Callable[[Architecture], list[Architecture]],
    allowed: Callable[[Architecture], bool],
) -> Pool:
    """``pool`` with the cells that local search from ``n_starts`` starts scored; the best ``n``.

    The starts are ``incumbent`` (the best evaluated cell, if any) and then the pool's best
    members by acquisition, ``n_starts`` in all (so at most one more than the pool); the climbs score
    at most ``MAX_SCORED_PER_POOL * n`` cells. New cells carry the origin ``"local-search"``;
    the pool's ``notes["local_search"]`` records the starts, moves and cells scored. A space that
    cannot list neighbours leaves the pool as it is, and the notes say so.
    """
    values = np.asarray(score(pool.archs), dtype=float) if pool.archs else np.zeros(0)
    order = np.argsort(-values, kind="stable")
    starts: list[Architecture] = [incumbent] if incumbent is not None else []
    start_values: list[float] = [-np.inf] if incumbent is not None else []
    for i in order[: max(n_starts - len(starts), 0)]:
        starts.append(pool.archs[i])
        start_values.append(float(values[i]))
    notes = dict(pool.notes)
    try:
        climbs = climb_acquisition(starts, start_values, score, neighbours, allowed,
                                   max_scored=MAX_SCORED_PER_POOL * max(n, 1))
    except (NotImplementedError, ConfigError) as exc:
        notes["local_search"] = {"skipped": f"no neighbours to climb: {exc}"}
        return Pool(pool.archs, pool.origin, pool.info, notes)
    in_pool = set(pool.archs)
    added = [a for a in climbs.scores if a not in in_pool]
    archs = list(pool.archs) + added
    origin = list(pool.origin) + ["local-search"] * len(added)
    all_values = np.concatenate([values, np.array([climbs.scores[a] for a in added], dtype=float)])
    keep = np.argsort(-all_values, kind="stable")[:n]
    notes["local_search"] = {"starts": len(starts), "moves": climbs.moves, "scored": len(climbs.scores),
                             "added": len(added), "kept": int(sum(1 for i in keep if i >= len(pool.archs))),
                             "capped": climbs.capped}
    return Pool([archs[i] for i in keep], [origin[i] for i in keep], pool.info, notes)
