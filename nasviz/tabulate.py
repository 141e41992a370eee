"""Make a tabular benchmark by training every cell of a space: ``python -m nasviz tabulate``.

Cells with the same canonical key (the space's ``canonical_key``: for NAS-Bench-201 the cell's
output as a sum of terms, equal exactly when two cells compute the same function with weights
tied term by term) form a class; NAS-Bench-201's 15,625 cells fall into 4,930 classes. One
representative per class -- the first member in the space's enumeration order -- is trained,
with a seed derived from the class key (:func:`nasviz.objectives.trainer.arch_seed`), and its
result is written for every member, so equivalent cells get identical values by construction.

Resumable: each finished class is appended to ``<out>.partial.csv`` (one line, flushed) as soon
as it arrives; a rerun with the same settings skips the classes already there. The settings are
kept in ``<out>.partial.json`` and a rerun with different settings is refused rather than mixing
two kinds of results. When every class is done the final table is written to ``<out>``
(``arch,valid_accuracy,test_accuracy,train_seconds``; accuracies in percent; ``train_seconds``,
the single-thread CPU seconds that training the class representative took, is read as the cost
column by :func:`nasviz.objectives.load_table`).

Workers are separate processes (``spawn``), each limited to one torch thread, so results do not
depend on the number of workers.
"""

from __future__ import annotations

import csv
import json
import math
import os
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Iterable, TextIO

from nasviz.arch import Architecture
from nasviz.spaces import get_space

#: The settings of the committed NB201-on-digits table (chosen so that a cell trains in well
#: under a second on one CPU core while the accuracy spread stays wide; see data/README.md).
DEFAULT_SETTINGS: dict[str, Any] = {
    "dataset": "digits",
    "dataset_seed": 0,
    "seed": 0,
    "model_options": {"channels": 4, "n_cells": 1},
    "training": {"epochs": 3, "patience": 2, "lr": 0.4, "batch_size": 256, "optimizer": "sgd", "weight_decay": 5e-4},
}

COLUMNS = ("arch", "valid_accuracy", "test_accuracy", "train_seconds")
PARTIAL_COLUMNS = ("arch", "status", "valid_accuracy", "test_accuracy", "train_seconds", "epochs_run", "error")


@dataclass(frozen=True)
class Plan:
    """The classes to train: ``members[i]`` are the cells of class ``i``; ``members[i][0]`` is its representative."""

    space_name: str
    cells: list[Architecture]
    keys: list[str]
    members: list[list[int]]

    @property
    def representatives(self) -> list[Architecture]:
        return [self.cells[m[0]] for m in self.members]


def plan(space_name: str = "nb201", limit_cells: int | None = None) -> Plan:
    """Group the space's cells (the first ``limit_cells`` in enumeration order) by canonical key."""
    space = get_space(space_name)
    if not hasattr(space, "enumerate_all"):
        raise ValueError(f"space {space_name!r} cannot be enumerated, so it cannot be tabulated")
    cells: list[Architecture] = []
    for arch in space.enumerate_all():
        if limit_cells is not None and len(cells) >= limit_cells:
            break
        cells.append(arch)
    keys = [space.canonical_key(a) for a in cells]
    first: dict[str, int] = {}
    members: list[list[int]] = []
    for i, key in enumerate(keys):
        if key not in first:
            first[key] = len(members)
            members.append([])
        members[first[key]].append(i)
    return Plan(space_name, cells, keys, members)


# ------------------------------------------------------------------------ worker side
_WORKER_CACHE: dict[str, Any] = {}


def _init_worker() -> None:
    import torch

    torch.set_num_threads(1)  # one core per worker: parallelism comes from the processes


def train_cell(space_name: str, arch_string: str, settings: dict[str, Any]) -> dict[str, Any]:
    """Train one cell with ``settings``; a plain dict (runs in a worker process)."""
    from nasviz.objectives.trainer import TrainingObjective

    cache_key = json.dumps([space_name, settings], sort_keys=True)
    objective = _WORKER_CACHE.get(cache_key)
    if objective is None:
        from nasviz.objectives.datasets import load_dataset

        dataset = load_dataset(settings["dataset"], seed=settings["dataset_seed"])
        objective = TrainingObjective(
            get_space(space_name), dataset, seed=settings["seed"], device="cpu",
            model_options=settings["model_options"], training=settings["training"],
        )
        _WORKER_CACHE.clear()
        _WORKER_CACHE[cache_key] = objective
    arch = objective.space.parse(arch_string)
    cpu0 = time.process_time()
    try:
        res = objective.train(arch)
    except Exception as err:  # noqa: BLE001 - recorded as a failed class, the run continues
        return {"arch": arch_string, "status": "failed", "error": f"{type(err).__name__}: {err}",
                "train_seconds": time.process_time() - cpu0, "epochs_run": 0}
    return {
        "arch": arch_string, "status": res.status, "valid_accuracy": res.valid_score,
        "test_accuracy": res.test_score, "train_seconds": time.process_time() - cpu0,
        "epochs_run": res.epochs_run, "error": res.error or "",
    }


# ------------------------------------------------------------------------ files
def _partial_paths(out: Path) -> tuple[Path, Path]:
    return out.with_name(out.name + ".partial.csv"), out.with_name(out.name + ".partial.json")


def read_partial(path: Path) -> dict[str, dict[str, Any]]:
    """Finished classes of a partial file, by representative string (a torn last line is ignored)."""
    done: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return done
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames is None or tuple(reader.fieldnames) != PARTIAL_COLUMNS:
            raise ValueError(f"{path} is not a tabulation progress file (columns {reader.fieldnames})")
        for row in reader:
            if row.get("error") is None or row.get("status") not in ("ok", "failed"):
                continue  # a line cut short by an interruption
            done[row["arch"]] = row
    return done


def _fmt(value: Any) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


class ProgressBar:
    """A one-line text progress bar with rate and ETA, redrawn on ``stream`` (stderr)."""

    def __init__(self, total: int, done: int = 0, stream: TextIO | None = None, width: int = 30) -> None:
        self.total, self.done, self.start_done = total, done, done
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.t0 = time.perf_counter()

    def update(self, n: int = 1, note: str = "") -> None:
        self.done += n
        elapsed = time.perf_counter() - self.t0
        rate = (self.done - self.start_done) / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else math.inf
        filled = int(self.width * self.done / max(self.total, 1))
        eta_text = f"{eta / 60:.1f} min" if math.isfinite(eta) else "?"
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} classes, "
            f"{rate:.2f}/s, ETA {eta_text} {note}"
        )
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


def tabulate(
    out: str | os.PathLike,
    space_name: str = "nb201",
    settings: dict[str, Any] | None = None,
    workers: int = 1,
    limit_cells: int | None = None,
    stop_after: int | None = None,
    progress: bool = True,
    on_result: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Train every class of equivalent cells and write the table; resumes a previous run.

    Parameters
    ----------
    out : the final CSV; ``<out>.partial.csv`` / ``.partial.json`` hold progress.
    settings : dataset, seeds, model options and training settings (:data:`DEFAULT_SETTINGS`).
    workers : worker processes (``0`` trains in this process, for tests and debugging).
    limit_cells : tabulate only the first ``limit_cells`` cells of the enumeration (small tables).
    stop_after : stop after this many *new* classes (simulates an interruption); the final table
        is written only when every class is done.

    Returns
    -------
    dict with ``classes``, ``cells``, ``trained`` (this call), ``resumed`` (already done),
    ``failed``, ``complete`` (bool), ``seconds`` and ``out`` (``None`` if not complete).
    """
    settings = json.loads(json.dumps(settings if settings is not None else DEFAULT_SETTINGS))
    if workers < 0:
        raise ValueError(f"workers must be >= 0, got {workers}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial_csv, partial_json = _partial_paths(out)
    meta = {"space": space_name, "limit_cells": limit_cells, "settings": settings}
    if partial_json.is_file():
        previous = json.loads(partial_json.read_text())
        if previous != meta:
            raise ValueError(
                f"{partial_json} was written with other settings ({previous}); remove the .partial files "
                "to start again, or rerun with the same settings to resume"
            )
    else:
        partial_json.write_text(json.dumps(meta, indent=1, sort_keys=True))

    t0 = time.perf_counter()
    p = plan(space_name, limit_cells)
    space = get_space(space_name)
    reps = [space.format(a) for a in p.representatives]
    done = read_partial(partial_csv)
    todo = [s for s in reps if s not in done]
    resumed = len(reps) - len(todo)
    if stop_after is not None:
        todo = todo[: max(0, stop_after)]

    new_file = not partial_csv.is_file() or partial_csv.stat().st_size == 0
    bar = ProgressBar(len(reps), resumed) if progress else None
    trained = 0
    with partial_csv.open("a", newline="") as fh:
        writer = csv.writer(fh)
        if new_file:
            writer.writerow(PARTIAL_COLUMNS)
            fh.flush()

        def record(row: dict[str, Any]) -> None:
            nonlocal trained
            writer.writerow([_fmt(row.get(c)) for c in PARTIAL_COLUMNS])
            fh.flush()
            done[row["arch"]] = {c: _fmt(row.get(c)) for c in PARTIAL_COLUMNS}
            trained += 1
            if bar is not None:
                bar.update(1, f"last {row.get('train_seconds', 0):.2f} s")
            if on_result is not None:
                on_result(row)

        if workers == 0:
            for s in todo:
                record(train_cell(space_name, s, settings))
        else:
            with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"), initializer=_init_worker) as pool:
                pending: set[Future] = set()
                queue = iter(todo)
                # Keep a few tasks per worker in flight: enough to hide the round trip, few enough
                # that an interruption loses little.
                for s in _take(queue, 4 * workers):
                    pending.add(pool.submit(train_cell, space_name, s, settings))
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in finished:
                        record(fut.result())
                        for s in _take(queue, 1):
                            pending.add(pool.submit(train_cell, space_name, s, settings))
    if bar is not None:
        bar.close()

    failed = sum(1 for s in reps if s in done and done[s]["status"] != "ok")
    complete = all(s in done for s in reps)
    if complete:
        _write_final(out, p, reps, done)
    return {
        "classes": len(reps), "cells": len(p.cells), "trained": trained, "resumed": resumed, "failed": failed,
        "complete": complete, "seconds": time.perf_counter() - t0, "out": str(out) if complete else None,
    }


def _take(it: Iterable[str], n: int) -> list[str]:
    out = []
    for item in it:
        out.append(item)
        if len(out) >= n:
            break
    return out


def _write_final(out: Path, p: Plan, reps: list[str], done: dict[str, dict[str, Any]]) -> None:
    """Write every cell with its class's result (failed classes keep empty accuracies)."""
    space = get_space(p.space_name)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS)
        cls_of = [0] * len(p.cells)
        for cls, members in enumerate(p.members):
            for i in members:
                cls_of[i] = cls
        for i, cell in enumerate(p.cells):  # enumeration order
            row = done[reps[cls_of[i]]]
            writer.writerow([space.format(cell), row["valid_accuracy"], row["test_accuracy"], row["train_seconds"]])
    tmp.replace(out)
