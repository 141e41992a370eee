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
from typing import Any, Callable, Iterable, Sequence, TextIO

import numpy as np

from nasviz.arch import Architecture
from nasviz.errors import InputError
from nasviz.spaces import get_space
from nasviz.spaces.nb201 import TABLE_SETTINGS

#: The settings of the committed NB201-on-digits table (``data/README.md`` explains the choice);
#: they live with the space (:data:`nasviz.spaces.nb201.TABLE_SETTINGS`), whose live training uses them.
DEFAULT_SETTINGS: dict[str, Any] = TABLE_SETTINGS

#: Columns of the final table before the per-epoch ones.
COLUMNS = (
    "arch", "valid_accuracy", "test_accuracy", "valid_accuracy_std", "test_accuracy_std",
    "valid_accuracy_seeds", "test_accuracy_seeds", "params", "flops", "train_seconds",
)
PARTIAL_COLUMNS = (
    "arch", "seed", "status", "valid_accuracy", "test_accuracy", "train_seconds", "epochs_run", "valid_curve", "error",
)


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
    if space.size is None:
        raise InputError(f"space {space_name!r} cannot be enumerated, so it cannot be tabulated")
    cells: list[Architecture] = []
    for arch in space.enumerate():
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

    from nasviz.components import load_plugins

    load_plugins()  # a spawned worker starts without them: a plugin's space is tabulated too
    torch.set_num_threads(1)  # one core per worker: parallelism comes from the processes


def train_seed(space_name: str, arch_string: str, class_key: str, seed_index: int,
               settings: dict[str, Any]) -> dict[str, Any]:
    """Train one class representative with seed ``seed_index``; a plain dict (runs in a worker).

    ``valid_accuracy`` is the trainer's estimate (the mean validation accuracy of the last
    ``estimate_epochs`` epochs, paper 003 App. D), ``test_accuracy`` the final network's,
    ``valid_curve`` the validation accuracy after every epoch, ``train_seconds`` the process CPU
    seconds it took.
    """
    import torch

    from nasviz.objectives.trainer import train_model
    from nasviz.objectives.training import arch_seed

    dataset = _WORKER_CACHE.get(("dataset", settings["dataset"], settings["dataset_seed"]))
    if dataset is None:
        from nasviz.objectives.datasets import load_dataset

        dataset = load_dataset(settings["dataset"], seed=settings["dataset_seed"])
        _WORKER_CACHE.clear()
        _WORKER_CACHE[("dataset", settings["dataset"], settings["dataset_seed"])] = dataset
    space = get_space(space_name)
    seed = arch_seed(class_key, seed_index)
    cpu0 = time.process_time()
    row: dict[str, Any] = {"arch": arch_string, "seed": seed_index}
    try:
        torch.manual_seed(seed)
        model = space.build_network(space.parse(arch_string), tuple(dataset.input_shape), dataset.n_outputs,
                                    **settings["model_options"])
        res = train_model(model, dataset, seed=seed, device="cpu", **settings["training"])
    except Exception as err:  # noqa: BLE001 - recorded as a failed task, the tabulation goes on
        return {**row, "status": "failed", "error": f"{type(err).__name__}: {err}",
                "train_seconds": time.process_time() - cpu0, "epochs_run": 0, "valid_curve": []}
    return {**row, "status": res.status, "valid_accuracy": res.valid_score, "test_accuracy": res.test_score,
            "train_seconds": time.process_time() - cpu0, "epochs_run": res.epochs_run,
            "valid_curve": list(res.valid_curve), "error": res.error or ""}


# ------------------------------------------------------------------------ files
def _partial_paths(out: Path) -> tuple[Path, Path]:
    return out.with_name(out.name + ".partial.csv"), out.with_name(out.name + ".partial.json")


def read_partial(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """Finished tasks of a partial file, by ``(representative string, seed index)``.

    A line cut short by an interruption (too few fields, or an unreadable seed) is ignored.
    """
    done: dict[tuple[str, int], dict[str, Any]] = {}
    if not path.is_file():
        return done
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames is None or tuple(reader.fieldnames) != PARTIAL_COLUMNS:
            raise InputError(f"{path} is not a tabulation progress file (columns {reader.fieldnames})")
        for row in reader:
            if row.get("error") is None or row.get("status") not in ("ok", "failed") or not str(row["seed"]).isdigit():
                continue
            done[(row["arch"], int(row["seed"]))] = row
    return done


def _fmt(value: Any) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, (list, tuple)):
        return ";".join(_fmt(float(v)) for v in value)
    return str(value)


def _fmt_seed_values(values: Sequence[float]) -> str:
    """Per-seed accuracies, ``;``-separated, to 0.01 points: the means and spreads are computed
    before rounding, and on splits of fewer than 5,000 examples (digits: 359 / 360) every
    possible value stays distinct, so the list loses nothing while the table stays under 5 MB."""
    return ";".join(f"{float(v):.2f}" for v in values)


class ProgressBar:
    """A one-line text progress bar with rate and ETA, redrawn on ``stream`` (stderr)."""

    def __init__(self, total: int, done: int = 0, stream: TextIO | None = None, width: int = 30,
                 unit: str = "trainings") -> None:
        self.total, self.done, self.start_done = total, done, done
        self.stream = stream if stream is not None else sys.stderr
        self.width, self.unit = width, unit
        self.t0 = time.perf_counter()

    def update(self, n: int = 1, note: str = "") -> None:
        self.done += n
        elapsed = time.perf_counter() - self.t0
        rate = (self.done - self.start_done) / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else math.inf
        filled = int(self.width * self.done / max(self.total, 1))
        eta_text = f"{eta / 60:.1f} min" if math.isfinite(eta) else "?"
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} {self.unit}, "
            f"{rate:.2f}/s, ETA {eta_text} {note}"
        )
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


def _more_seeds_only(previous: dict[str, Any], meta: dict[str, Any]) -> bool:
    """Whether ``meta`` asks only for more seeds than ``previous``: seed ``k`` of a class depends on
    the class key and ``k`` alone, so the trainings already done are the first seeds of the larger
    tabulation and it can extend them."""
    def without_seeds(m: dict[str, Any]) -> dict[str, Any]:
        return {**m, "settings": {k: v for k, v in m.get("settings", {}).items() if k != "seeds"}}

    return (without_seeds(previous) == without_seeds(meta)
            and int(meta["settings"].get("seeds", 1)) > int(previous.get("settings", {}).get("seeds", 1)))


def _check_settings(partial_json: Path, meta: dict[str, Any]) -> None:
    if partial_json.is_file():
        previous = json.loads(partial_json.read_text())
        if previous != meta and _more_seeds_only(previous, meta):
            partial_json.write_text(json.dumps(meta, indent=1, sort_keys=True))
        elif previous != meta:
            raise InputError(
                f"{partial_json} was written with other settings ({previous}); remove the .partial files "
                "to start again, or rerun with the same settings to resume"
            )
    else:
        partial_json.write_text(json.dumps(meta, indent=1, sort_keys=True))


# ------------------------------------------------------------------------ driver
def tabulate(
    out: str | os.PathLike,
    space_name: str = "nb201",
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
    partial_csv, partial_json = _partial_paths(out)
    _check_settings(partial_json, {"space": space_name, "limit_cells": limit_cells, "settings": settings})

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
            writer.writerow([_fmt(row.get(c)) for c in PARTIAL_COLUMNS])
            fh.flush()
            done[(row["arch"], int(row["seed"]))] = {c: _fmt(row.get(c)) for c in PARTIAL_COLUMNS}
            trained += 1
            if bar is not None:
                bar.update(1, f"last {row.get('train_seconds', 0):.2f} s")
            if on_result is not None:
                on_result(row)

        _run_tasks(todo, space_name, settings, workers, record)
    return trained


def _run_tasks(todo: list[tuple[str, str, int]], space_name: str, settings: dict[str, Any], workers: int,
               record: Callable[[dict[str, Any]], None]) -> None:
    if workers == 0:
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # as in a worker: the thread count changes the rounding of convolutions
        try:
            for arch, key, seed in todo:
                record(train_seed(space_name, arch, key, seed, settings))
        finally:
            torch.set_num_threads(threads)
        return
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"), initializer=_init_worker) as pool:
        pending: set[Future] = set()
        queue = iter(todo)
        # A few tasks per worker in flight: enough to hide the round trip, few enough that an
        # interruption loses little.
        for arch, key, seed in _take(queue, 4 * workers):
            pending.add(pool.submit(train_seed, space_name, arch, key, seed, settings))
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                record(fut.result())
                for arch, key, seed in _take(queue, 1):
                    pending.add(pool.submit(train_seed, space_name, arch, key, seed, settings))


def _take(it: Iterable, n: int) -> list:
    out = []
    for item in it:
        out.append(item)
        if len(out) >= n:
            break
    return out


# ------------------------------------------------------------------------ aggregation
@dataclass(frozen=True)
class ClassResult:
    """One class's results over its seeds (failed seeds left out of the means).

    ``valid`` / ``test``: per-seed accuracies of the successful seeds, in seed order, shape
    ``(n_ok,)``; ``curves``: validation accuracy per epoch, shape ``(n_ok, epochs)`` (shorter
    curves of early-stopped seeds are padded with their last value); ``seconds``: mean training
    seconds per seed.
    """

    valid: np.ndarray
    test: np.ndarray
    curves: np.ndarray
    seconds: float


def class_results(rows: Sequence[dict[str, Any]], epochs: int) -> ClassResult:
    """Aggregate the partial-file rows of one class (any order; sorted by seed here)."""
    ok = sorted((r for r in rows if r["status"] == "ok" and r["valid_accuracy"] != ""), key=lambda r: int(r["seed"]))
    curves = []
    for r in ok:
        curve = [float(v) for v in str(r["valid_curve"]).split(";") if v != ""]
        curves.append((curve + curve[-1:] * epochs)[:epochs] if curve else [math.nan] * epochs)
    return ClassResult(
        valid=np.array([float(r["valid_accuracy"]) for r in ok]),
        test=np.array([float(r["test_accuracy"]) for r in ok]),
        curves=np.array(curves, dtype=float).reshape(len(ok), epochs),
        seconds=float(np.mean([float(r["train_seconds"]) for r in rows])) if rows else math.nan,
    )


def write_table(out: Path, p: Plan, settings: dict[str, Any], done: dict[tuple[str, int], dict[str, Any]]) -> None:
    """Write every cell (enumeration order) with its class's results, parameter count and FLOPs.

    ``params`` counts every edge's module, as NAS-Bench-201 does (also edges that cannot reach the
    output); ``flops`` is what one forward pass of one image computes (``torch.utils.flop_counter``:
    convolutions and the linear layer), so it is per cell, not per class.
    """
    from nasviz.objectives.network_cost import network_cost

    space = get_space(p.space_name)
    epochs = int(settings["training"]["epochs"])
    n_seeds = int(settings.get("seeds", 1))
    results = []
    for members in p.members:
        rep = space.format(p.cells[members[0]])
        results.append(class_results([done[(rep, k)] for k in range(n_seeds)], epochs))
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow([*COLUMNS, *(f"valid_accuracy_epoch_{e}" for e in range(1, epochs + 1))])
        cls_of = [0] * len(p.cells)
        for cls, members in enumerate(p.members):
            for i in members:
                cls_of[i] = cls
        flops_cache: dict[str, int] = {}
        for i, cell in enumerate(p.cells):
            r = results[cls_of[i]]
            params, flops = network_cost(p.space_name, cell, settings, flops_cache)
            has = len(r.valid) > 0
            writer.writerow([
                space.format(cell),
                _fmt(float(r.valid.mean())) if has else "", _fmt(float(r.test.mean())) if has else "",
                _fmt(float(r.valid.std(ddof=1))) if len(r.valid) > 1 else "",
                _fmt(float(r.test.std(ddof=1))) if len(r.test) > 1 else "",
                _fmt_seed_values(r.valid), _fmt_seed_values(r.test), params, flops, _fmt(r.seconds),
                *(_fmt(float(v)) if has else "" for v in r.curves.mean(axis=0)),
            ])
    tmp.replace(out)
