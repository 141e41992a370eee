"""Make a tabular benchmark by training every cell of a space: ``python -m nasviz tabulate``.

Cells with the same canonical key (the space's ``canonical_key``: for NAS-Bench-201 the cell's
output as a sum of terms, equal exactly when two cells compute the same function with weights
tied term by term) form a class; NAS-Bench-201's 15,625 cells fall into 4,930 classes. One
representative per class -- the first member in the space's enumeration order -- is trained
``seeds`` times, seed ``k`` being :func:`~nasviz.objectives.training.arch_seed` of the class key
and ``k`` (initial weights and mini-batch order), and the class's results are written for every
member, so equivalent cells get identical values by construction.

One training run is one task: ``(class representative, seed)``. Each finished task is appended to
``<out>.partial.csv`` (one flushed line) as soon as it arrives, and a rerun with the same
settings skips the tasks already there, so an interrupted tabulation resumes. The settings are
kept in ``<out>.partial.json``; a rerun with other settings is refused rather than mixing two kinds
of results, except a rerun asking for more seeds, which extends the tabulation (seed ``k`` of a
class does not depend on how many seeds there are). When every task is done the table is written to ``<out>`` (columns:
:data:`COLUMNS` and one ``valid_accuracy_epoch_E`` per epoch).

Workers are separate processes (``spawn``), each limited to one torch thread, and every task is
seeded from its class key and seed index only, so the table does not depend on the number of
workers or the order in which tasks finish (tested).

Here the driver, :func:`tabulate`; :mod:`~nasviz.tabulate.tasks` what is trained and how (the plan,
one training, the worker processes), :mod:`~nasviz.tabulate.files` the progress and table files,
:mod:`~nasviz.tabulate.progress` the progress bar.
"""

from __future__ import annotations

from nasviz.defaults import DEFAULT_SPACE

import csv
import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from nasviz.errors import InputError
from nasviz.spaces import get_space
from nasviz.spaces.nb201 import TABLE_SETTINGS
from nasviz.tabulate.files import (COLUMNS, PARTIAL_COLUMNS, ClassResult, check_settings, class_results, format_cell,
                                   partial_paths, read_partial, write_table)
from nasviz.tabulate.progress import ProgressBar
from nasviz.tabulate.tasks import Plan, plan, run_tasks, train_seed

__all__ = ["COLUMNS", "ClassResult", "DEFAULT_SETTINGS", "PARTIAL_COLUMNS", "Plan", "ProgressBar", "class_results",
           "plan", "read_partial", "tabulate", "train_seed", "write_table"]

#: The settings of the committed NB201-on-digits table (``data/README.md`` explains the choice);
#: they live with the space (:data:`nasviz.spaces.nb201.TABLE_SETTINGS`), whose live training uses them.
DEFAULT_SETTINGS: dict[str, Any] = TABLE_SETTINGS


# ------------------------------------------------------------------------ driver
def tabulate(
    out: str | os.PathLike,
    space_name: str = DEFAULT_SPACE,
    settings: dict[str, Any] | None = None,
    workers: int = 1,
    limit_cells: int | None = None,
    stop_after: int | None = None,
    progress: bool = True,
    on_result: Callable[[dict[str, Any]], None] | None = None,
    classes: Sequence[int] | None = None,
) -> dict[str, Any]:
    """Train every class of equivalent cells ``seeds`` times and write the table; resumes.

    Parameters
    ----------
    out : the final CSV; ``<out>.partial.csv`` / ``.partial.json`` hold progress.
    settings : dataset, seeds, model options and training (:data:`DEFAULT_SETTINGS`).
    workers : worker processes (``0`` trains in this process, for tests and debugging).
    limit_cells : tabulate only the first ``limit_cells`` cells of the enumeration (small tables).
    stop_after : stop after this many *new* trainings (simulates an interruption).
    classes : train only these classes (indices into :func:`plan`'s ``members``; the pilot of
        ``bench table-pilot``); no final table is written then.

    Returns
    -------
    dict with ``classes``, ``cells``, ``tasks``, ``trained`` (this call), ``resumed`` (already
    done), ``failed``, ``complete`` (bool), ``seconds`` and ``out`` (``None`` unless written).
    """
    settings, n_seeds = _checked_settings(settings, workers)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial_csv, partial_json = partial_paths(out)
    check_settings(partial_json, {"space": space_name, "limit_cells": limit_cells, "settings": settings})

    t0 = time.perf_counter()
    p = plan(space_name, limit_cells)
    space = get_space(space_name)
    chosen = range(len(p.members)) if classes is None else sorted(set(int(c) for c in classes))
    reps = {c: space.format(p.cells[p.members[c][0]]) for c in chosen}
    tasks = [(reps[c], p.keys[p.members[c][0]], k) for c in chosen for k in range(n_seeds)]
    done = read_partial(partial_csv)
    todo = [t for t in tasks if (t[0], t[2]) not in done]
    resumed = len(tasks) - len(todo)
    if stop_after is not None:
        todo = todo[: max(0, stop_after)]

    bar = ProgressBar(len(tasks), resumed) if progress else None
    trained = _train_into(partial_csv, todo, space_name, settings, workers, done, bar, on_result)
    if bar is not None:
        bar.close()

    failed = sum(1 for t in tasks if (t[0], t[2]) in done and done[(t[0], t[2])]["status"] != "ok")
    complete = all((t[0], t[2]) in done for t in tasks)
    if written := complete and classes is None:
        write_table(out, p, settings, done)
    return {
        "classes": len(reps), "cells": len(p.cells), "tasks": len(tasks), "trained": trained, "resumed": resumed,
        "failed": failed, "complete": complete, "seconds": time.perf_counter() - t0,
        "out": str(out) if written else None,
    }


def _checked_settings(settings: dict[str, Any] | None, workers: int) -> tuple[dict[str, Any], int]:
    """A deep copy of ``settings`` (default :data:`DEFAULT_SETTINGS`) and its number of seeds,
    checked with ``workers``."""
    settings = json.loads(json.dumps(settings if settings is not None else DEFAULT_SETTINGS))
    if workers < 0:
        raise InputError(f"workers must be >= 0, got {workers}")
    n_seeds = int(settings.get("seeds", 1))
    if n_seeds < 1:
        raise InputError(f"seeds must be at least 1, got {n_seeds}")
    return settings, n_seeds


def _train_into(partial_csv: Path, todo: list[tuple[str, str, int]], space_name: str, settings: dict[str, Any],
                workers: int, done: dict, bar: "ProgressBar | None",
                on_result: Callable[[dict[str, Any]], None] | None) -> int:
    """Train ``todo``, appending each result to ``partial_csv`` (its header first if the file is
    new) and to ``done`` as it arrives, so an interruption loses at most the trainings in flight.
    Returns how many were trained."""
    new_file = not partial_csv.is_file() or partial_csv.stat().st_size == 0
    trained = 0
    with partial_csv.open("a", newline="") as fh:
        writer = csv.writer(fh)
        if new_file:
            writer.writerow(PARTIAL_COLUMNS)
            fh.flush()

        def record(row: dict[str, Any]) -> None:
            nonlocal trained
            writer.writerow([format_cell(row.get(c)) for c in PARTIAL_COLUMNS])
            fh.flush()
            done[(row["arch"], int(row["seed"]))] = {c: format_cell(row.get(c)) for c in PARTIAL_COLUMNS}
            trained += 1
            if bar is not None:
                bar.update(1, f"last {row.get('train_seconds', 0):.2f} s")
            if on_result is not None:
                on_result(row)

        run_tasks(todo, space_name, settings, workers, record)
    return trained

