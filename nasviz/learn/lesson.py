"""A lesson of the Learn page, read from one TOML file: its text, what it launches, the view to look
at and the takeaway computed from the runs it made.

A lesson file (``nasviz/learn/lessons/*.toml``, or ``$NASVIZ_LESSONS``, a folder of more) holds::

    id = "why-search"                 # unique, lower case, letters, digits and '-'
    order = 1                         # lessons are listed by it
    title = "Why search?"
    text = '''One screen of plain text (paragraphs separated by blank lines).'''
    look = "What to look at in the view, in a sentence or two."
    takeaway = "random-vs-model"      # a computation of nasviz.learn.takeaways.TAKEAWAYS
    takeaway_text = "After {budget} evaluations ..."   # filled with that computation's numbers

    [[runs]]                          # one table per search; "seeds" repeats it for each seed
    strategy = "random"
    seeds = [0, 1]
    budget = 40
    # optional: options = {acquisition = "ucb"}, label = "UCB", metric = "...",
    # source = "embedded" (the default table) or "train", with space, dataset, training = {...};
    # a multi-fidelity search: fidelity = "auto" (the table's own budgets), cost_budget = 20

    [view]                            # the one view to look at
    page = "compare"                  # search | compare | kernels
    tab = "Candidate pool"            # search: the tab; compare: the side-by-side view
    kernels = ["tw2g", "wl"]          # kernels page: the kernels compared

Lessons are data: a teacher adds a file, the page lists it; :func:`load_lessons` refuses a file
that names an unknown strategy, takeaway or page, naming the file and the field.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from nasviz.errors import InputError
from nasviz.defaults import DEFAULT_SPACE

#: The lessons that ship with nasviz.
LESSON_DIR = Path(__file__).resolve().parent / "lessons"
#: Environment variable naming a folder of more lesson files (a teacher's own).
LESSONS_ENV = "NASVIZ_LESSONS"
#: Pages a lesson's view may open.
PAGES = ("search", "compare", "kernels")
#: Sources a lesson's runs may use: the embedded default table, or live training.
SOURCES = ("embedded", "train")
_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")


@dataclass(frozen=True)
class LessonRun:
    """One search a lesson starts (once per seed)."""

    strategy: str
    seeds: tuple[int, ...]
    budget: int
    label: str
    options: Mapping[str, Any] = field(default_factory=dict)
    metric: str | None = None
    source: str = "embedded"
    space: str = DEFAULT_SPACE
    dataset: str | None = None
    training: Mapping[str, Any] = field(default_factory=dict)
    fidelity: str | None = None
    cost_budget: float | None = None


@dataclass(frozen=True)
class LessonView:
    """The one view a lesson points at: a page, and on it a tab (Search), a side-by-side view
    (Compare) or the kernels compared (Kernels)."""

    page: str
    tab: str | None = None
    kernels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Lesson:
    """A lesson: ``paragraphs`` of plain text, the ``runs`` it launches, the ``view`` to look at,
    and the ``takeaway`` computation whose numbers fill ``takeaway_text``."""

    id: str
    order: int
    title: str
    paragraphs: tuple[str, ...]
    look: str
    runs: tuple[LessonRun, ...]
    view: LessonView
    takeaway: str
    takeaway_text: str
    path: str = ""

    @property
    def n_runs(self) -> int:
        return sum(len(r.seeds) for r in self.runs)


def _need(data: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise InputError(f"needs {key!r} ({kind.__name__})", source=where, field=key)
    return value


def _run(data: Mapping[str, Any], where: str) -> LessonRun:
    from nasviz.components import STRATEGIES

    strategy = _need(data, "strategy", str, where)
    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {strategy!r}", source=where, field="strategy")
    seeds = data.get("seeds", [0])
    if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) and s >= 0 for s in seeds):
        raise InputError("seeds must be a list of whole numbers >= 0", source=where, field="seeds")
    source = data.get("source", "embedded")
    if source not in SOURCES:
        raise InputError(f"source must be one of {', '.join(SOURCES)}", source=where, field="source")
    fidelity = data.get("fidelity")
    if fidelity is not None and not isinstance(fidelity, str):
        raise InputError("fidelity must be text: auto, or BUDGET=COLUMN,...", source=where, field="fidelity")
    cost_budget = data.get("cost_budget")
    if cost_budget is not None and (isinstance(cost_budget, bool) or not isinstance(cost_budget, (int, float))
                                    or cost_budget <= 0):
        raise InputError("cost_budget must be a number above 0 (full evaluations)", source=where, field="cost_budget")
    return LessonRun(strategy=strategy, seeds=tuple(seeds), budget=_need(data, "budget", int, where),
                     label=str(data.get("label") or strategy), options=dict(data.get("options") or {}),
                     metric=data.get("metric"), source=source, space=str(data.get("space", DEFAULT_SPACE)),
                     dataset=data.get("dataset"), training=dict(data.get("training") or {}), fidelity=fidelity,
                     cost_budget=None if cost_budget is None else float(cost_budget))


def parse_lesson(text: str, where: str) -> Lesson:
    """The lesson a TOML file holds; :class:`~nasviz.errors.InputError` names the field that is wrong."""
    from nasviz.learn.takeaways import TAKEAWAYS

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise InputError(f"is not TOML: {err}", source=where) from None
    lesson_id = _need(data, "id", str, where)
    if not _ID.fullmatch(lesson_id):
        raise InputError("id must be lower case letters, digits and '-'", source=where, field="id")
    takeaway = _need(data, "takeaway", str, where)
    if takeaway not in TAKEAWAYS:
        raise InputError(f"unknown takeaway {takeaway!r}; known: {', '.join(TAKEAWAYS)}", source=where,
                         field="takeaway")
    runs = data.get("runs")
    if not isinstance(runs, list) or not runs:
        raise InputError("needs at least one [[runs]] table", source=where, field="runs")
    view = _need(data, "view", dict, where)
    if view.get("page") not in PAGES:
        raise InputError(f"view.page must be one of {', '.join(PAGES)}", source=where, field="view.page")
    paragraphs = tuple(p.strip().replace("\n", " ") for p in _need(data, "text", str, where).split("\n\n") if p.strip())
    return Lesson(id=lesson_id, order=int(data.get("order", 100)), title=_need(data, "title", str, where),
                  paragraphs=paragraphs, look=str(data.get("look", "")), runs=tuple(_run(r, where) for r in runs),
                  view=LessonView(page=view["page"], tab=view.get("tab"), kernels=tuple(view.get("kernels") or ())),
                  takeaway=takeaway, takeaway_text=_need(data, "takeaway_text", str, where), path=where)


def lesson_folders() -> list[Path]:
    """The shipped lessons' folder, then ``$NASVIZ_LESSONS`` when it names one."""
    extra = os.environ.get(LESSONS_ENV)
    return [LESSON_DIR] + ([Path(extra)] if extra and Path(extra).is_dir() else [])


def load_lessons(folders: list[Path] | None = None) -> list[Lesson]:
    """Every ``*.toml`` lesson of ``folders`` (default :func:`lesson_folders`), by ``order`` then
    title; a later file with an id seen before is refused, naming both files."""
    lessons: dict[str, Lesson] = {}
    for folder in folders or lesson_folders():
        for path in sorted(Path(folder).glob("*.toml")):
            lesson = parse_lesson(path.read_text(encoding="utf-8"), path.name)
            if lesson.id in lessons:
                raise InputError(f"repeats the id {lesson.id!r} of {lessons[lesson.id].path}", source=path.name,
                                 field="id")
            lessons[lesson.id] = lesson
    return sorted(lessons.values(), key=lambda l: (l.order, l.title))
