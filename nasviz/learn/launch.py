"""Start (or find again) the searches a lesson needs, through the dashboard's launching code:
real worker processes, bounded by the server's limits like any search started from the page.

>>> started = launch_lesson(lesson, store_path, session=token, limits=limits)   # run ids, in lesson order
>>> found = find_lesson_runs(lesson, store_path)                              # the newest complete set, or None
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nasviz.learn.lesson import Lesson, LessonRun

if TYPE_CHECKING:
    from nasviz.config import SearchConfig


@dataclass(frozen=True)
class LessonRunId:
    """One search of a lesson: which of its runs, the seed and the run id in the store."""

    run: LessonRun
    seed: int
    run_id: int


def run_name(lesson: Lesson, run: LessonRun, seed: int) -> str:
    """``"lesson why-search · random · seed 0"``: how the store names a lesson's search."""
    return f"lesson {lesson.id} · {run.label} · seed {seed}"


def _source(run: LessonRun):
    from nasviz.dashboard import sources

    if run.source == "train":
        return sources.DataSource.training(run.dataset or "digits", space=run.space)
    path = sources.default_table_path()
    if path is None:
        raise ValueError("the embedded default table is missing (data/nb201_cifar.csv)")
    return sources.DataSource.from_table(path, sources.table_from_path(path, run.space), "embedded table")


def lesson_configs(lesson: Lesson) -> list[tuple[LessonRun, int, Any, Any]]:
    """``(run, seed, config, source)`` for every search of ``lesson``, validated
    (:func:`nasviz.dashboard.launching.search_config`); unpaced: a lesson waits for its takeaway."""
    from nasviz.dashboard import launching

    out = []
    for run in lesson.runs:
        source = _source(run)
        for seed in run.seeds:
            config = launching.search_config(source, metric=run.metric, space=run.space, strategy=run.strategy,
                                             options=run.options, budget=run.budget, seed=seed, step_delay=0.0,
                                             training=run.training or None, fidelity=run.fidelity,
                                             cost_budget=run.cost_budget)
            out.append((run, seed, config, source))
    return out


def launch_lesson(lesson: Lesson, store_path: str | os.PathLike, *, session: str | None = None,
                  limits: Any = None, background: bool | None = None) -> list[LessonRunId]:
    """Start every search of ``lesson`` at once (:func:`nasviz.dashboard.launching.start_runs`:
    all or none, within ``limits``); returns them in lesson order."""
    from nasviz.dashboard import launching

    planned = lesson_configs(lesson)
    groups: dict[tuple, list[int]] = {}  # start_runs takes one data source: one call per source
    for k, (run, _, _, _) in enumerate(planned):
        groups.setdefault((run.source, run.dataset, run.space), []).append(k)
    ids: dict[int, int] = {}
    for members in groups.values():
        started = launching.start_runs(store_path, [planned[k][2] for k in members], source=planned[members[0]][3],
                                       names=[run_name(lesson, planned[k][0], planned[k][1]) for k in members],
                                       background=background, session=session, limits=limits)
        ids.update(zip(members, started))
    return [LessonRunId(run, seed, ids[k]) for k, (run, seed, _, _) in enumerate(planned)]


def _same(stored: SearchConfig, run: LessonRun, seed: int) -> bool:
    options = stored.strategy.options
    return (stored.strategy.name == run.strategy and stored.run.seed == seed and stored.run.budget == run.budget
            and stored.objective.fidelity == run.fidelity and stored.run.cost_budget == run.cost_budget
            and all(options.get(k) == v for k, v in run.options.items()))


def find_lesson_runs(lesson: Lesson, store_path: str | os.PathLike) -> list[LessonRunId] | None:
    """The newest searches in the store that this lesson started with its current settings (one
    per run and seed, none failed), so that opening a lesson again shows them instead of starting
    new ones; ``None`` when some are missing."""
    from nasviz.store import RunStore, StoredRun

    if not Path(store_path).is_file():
        return None
    by_name: dict[str, StoredRun] = {}
    for stored in RunStore(store_path).list_runs():  # newest first
        if stored.status != "failed":
            by_name.setdefault(stored.name, stored)
    found = []
    for run in lesson.runs:
        for seed in run.seeds:
            stored = by_name.get(run_name(lesson, run, seed))
            if stored is None or not _same(stored.search, run, seed):
                return None
            found.append(LessonRunId(run, seed, int(stored.id)))
    return found
