"""The engine as the pages see it: every name a page uses from outside ``nasviz.dashboard`` and
``nasviz.viz``, in one place (``tests/test_layers.py`` lets pages import nothing else of the
project).

A page that needs something new of the engine adds it here, so what the pages depend on stays one
short list: the store and its errors, the registries of spaces, kernels and strategies, the lesson
catalogue, and a few defaults and formats.
"""

from __future__ import annotations

import os

from nasviz import defaults
from nasviz.components import kernels_for, model_never_fitted, problems, strategies_for
from nasviz.config import MAX_STEP_DELAY
from nasviz.errors import InputError, LimitError
from nasviz.jobs.interpret import InterpretRequest, InterpretResult
from nasviz.jobs.kernels import KernelRequest, KernelResult, SurrogateRequest
from nasviz.jobs.manager import manager
from nasviz.learn import compute_takeaway, find_lesson_runs, launch_lesson, load_lessons
from nasviz.learn.view import view_target
from nasviz.objectives import TableError
from nasviz.rounding import counted, format_value
from nasviz.spaces import get_space
from nasviz.spaces.base import OPERATION_SLOTS
from nasviz.spaces.strings import parse_architecture
from nasviz.store import MAX_NOTES_CHARS, RUNNING, RunStore, StoreError, UnknownRunError
from nasviz.table_schema import run_direction, shown_value


def export_zip(store_path: str | os.PathLike, run_id: int) -> bytes:
    """:func:`nasviz.export.export_zip` of a trained run's best network, imported when a visitor
    first exports (it loads the exporters, which the other pages never need). Never trains: a
    network whose weights the run did not keep raises :class:`~nasviz.errors.ConfigError`
    (:func:`nasviz.dashboard.exporting.plan_export` says so before the button is offered)."""
    from nasviz.export import export_zip as export

    return export(store_path, run_id, retrain=False)


__all__ = [
    "InputError", "InterpretRequest", "InterpretResult", "KernelRequest", "KernelResult", "LimitError", "MAX_NOTES_CHARS", "SurrogateRequest", "manager", "MAX_STEP_DELAY", "OPERATION_SLOTS", "RUNNING", "RunStore", "StoreError",
    "TableError", "UnknownRunError", "compute_takeaway", "counted", "defaults", "export_zip", "find_lesson_runs",
    "format_value", "get_space", "kernels_for", "launch_lesson", "load_lessons", "model_never_fitted",
    "parse_architecture", "problems", "run_direction", "shown_value", "strategies_for", "view_target",
]
