"""What a tabulation trains and the training itself: the space's cells grouped into classes of
equivalent cells (:func:`plan`), one representative trained with one seed (:func:`train_seed`), and
the tasks run in this process or in spawned worker processes of one torch thread each."""

from __future__ import annotations

import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any, Callable, Iterable

from nasviz.arch import Architecture
from nasviz.errors import InputError
from nasviz.spaces import get_space
from nasviz.defaults import DEFAULT_SPACE


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


def plan(space_name: str = DEFAULT_SPACE, limit_cells: int | None = None) -> Plan:
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


def run_tasks(todo: list[tuple[str, str, int]], space_name: str, settings: dict[str, Any], workers: int,
              record: Callable[[dict[str, Any]], None]) -> None:
    """Train each ``(representative, class key, seed index)`` of ``todo`` and ``record`` its row as it
    arrives: in this process (``workers == 0``) or in ``workers`` spawned processes."""
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

