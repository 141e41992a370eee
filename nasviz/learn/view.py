"""Where a lesson's "Open the view" button goes: the page, its URL and the widget values that
make it show the lesson's runs in the lesson's view (a page reads a link's values once per
session, so the button sets them directly)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from nasviz.learn.launch import LessonRunId
from nasviz.learn.lesson import Lesson
from nasviz.learn.takeaways import KERNEL_SAMPLE

#: The page files of the views a lesson may open.
PAGE_FILES = {"search": "pages/search.py", "compare": "pages/compare.py", "kernels": "pages/kernels.py"}


@dataclass(frozen=True)
class ViewTarget:
    """``page`` (a page file), ``query`` (the URL's parameters) and ``state`` (session values of
    the page's widgets) that open a lesson's view on its runs."""

    page: str
    query: dict[str, str] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)


def view_target(lesson: Lesson, runs: Sequence[LessonRunId]) -> ViewTarget:
    """The target of ``lesson``'s view for its ``runs`` (the Search page shows the first run)."""
    ids = [r.run_id for r in runs]
    view = lesson.view
    if view.page == "search":
        state: dict[str, Any] = {"run_id": ids[0]}
        query = {"run": str(ids[0])}
        if view.tab:
            state["view_tab"] = query["tab"] = view.tab
        return ViewTarget(PAGE_FILES["search"], query, state)
    if view.page == "kernels":
        kernels = list(view.kernels) or ["tw2g", "wl"]
        return ViewTarget(PAGE_FILES["kernels"],
                          {"from": "run", "run": str(ids[0]), "kernels": ",".join(kernels), "n": str(KERNEL_SAMPLE)},
                          {"k_origin": "a run's evaluations", "k_run": ids[0], "k_kernels": kernels,
                           "k_n": KERNEL_SAMPLE})
    state = {"c_selected": ids, "c_regret": True}
    if view.tab and len(ids) >= 2:  # two runs side by side, in the lesson's view
        state.update(sbs_on=True, sbs_left=ids[0], sbs_right=ids[1], sbs_view=view.tab)
    return ViewTarget(PAGE_FILES["compare"], {"runs": ",".join(map(str, ids))}, state)
