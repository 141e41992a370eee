"""Architectures with their values, best first: a uniform sample of a table or a run's evaluations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.dashboard.kernels import parse_archs
from nasviz.objectives import Table
from nasviz.defaults import DEFAULT_SPACE

if TYPE_CHECKING:
    from nasviz.store import StoredEvaluation


@dataclass
class Sample:
    """Architectures with their values, best first.

    ``archs`` / ``strings`` length ``n``; ``values`` shape ``(n,)`` (finite); ``source`` says where
    they come from ("table", "run 3"); ``space`` the search space's name.
    """

    archs: list[Architecture]
    strings: list[str]
    values: np.ndarray
    metric: str
    source: str
    space: str = DEFAULT_SPACE


def _best_first(archs: list, strings: list[str], values: np.ndarray, metric: str, source: str, space: str) -> Sample:
    order = np.argsort(-values, kind="stable")
    return Sample([archs[i] for i in order], [strings[i] for i in order], values[order], metric, source, space)


def sample_table(table: Table, metric: str, n: int, seed: int = 0) -> Sample:
    """``n`` distinct rows drawn uniformly without replacement among those with a finite value of
    ``metric``, ordered by value (best first). ``ValueError`` for ``n < 2`` or an unknown metric;
    ``n`` larger than the table is capped at the table's size."""
    metric = table.check_metric(metric)
    if int(n) < 2:
        raise ValueError(f"the number of architectures must be at least 2, got {n}")
    values = np.asarray(table.values[metric], dtype=float)
    ok = np.flatnonzero(np.isfinite(values))
    if len(ok) < 2:
        raise ValueError(f"table {table.source} has fewer than 2 rows with a {metric} value")
    rng = np.random.default_rng(seed)
    idx = rng.choice(ok, size=min(int(n), len(ok)), replace=False)
    return _best_first([table.archs[i] for i in idx], [table.strings[i] for i in idx], values[idx], metric, "table",
                       table.space.name)


def sample_run(evaluations: Sequence[StoredEvaluation], metric: str, n: int, space: str = DEFAULT_SPACE,
               source: str = "run") -> Sample:
    """The run's successful evaluations (distinct architectures, latest value kept), at most ``n``
    of them (the best ``n``), best first."""
    seen: dict[str, float] = {}
    for e in evaluations:
        if e.ok and np.isfinite(float(e.value)):
            seen[e.arch] = float(e.value)
    if len(seen) < 2:
        raise ValueError(f"{source} has fewer than 2 successful evaluations")
    strings = list(seen)
    values = np.array([seen[s] for s in strings])
    sample = _best_first(parse_archs(strings, space), strings, values, metric, source, space)
    k = min(int(n), len(strings))
    return Sample(sample.archs[:k], sample.strings[:k], sample.values[:k], metric, source, space)
