"""The Learn page's course: lessons as data, launched through the dashboard's launching code.

``lesson.py`` reads the lesson files (one TOML file per lesson, :data:`lesson.LESSON_DIR` and
``$NASVIZ_LESSONS``); ``launch.py`` starts or finds again the searches a lesson needs;
``takeaways.py`` computes, from the runs just made, the numbers and the figure that prove the
lesson's point. ``pages/learn.py`` draws it.

>>> lessons = load_lessons()
>>> runs = launch_lesson(lessons[0], store_path, session=token)
>>> takeaway = compute_takeaway(lessons[0], runs, store_path)       # ready once the runs have ended
"""

from __future__ import annotations

import os
from typing import Sequence

from nasviz.learn.launch import LessonRunId, find_lesson_runs, launch_lesson, run_name
from nasviz.learn.lesson import Lesson, LessonRun, LessonView, load_lessons, parse_lesson
from nasviz.learn.takeaways import TAKEAWAYS, Takeaway


def compute_takeaway(lesson: Lesson, runs: Sequence[LessonRunId], store_path: str | os.PathLike) -> Takeaway:
    """The lesson's takeaway from its runs (:data:`~nasviz.learn.takeaways.TAKEAWAYS`)."""
    return TAKEAWAYS[lesson.takeaway](runs, store_path, lesson)


__all__ = ["Lesson", "LessonRun", "LessonRunId", "LessonView", "TAKEAWAYS", "Takeaway", "compute_takeaway",
           "find_lesson_runs", "launch_lesson", "load_lessons", "parse_lesson", "run_name"]
