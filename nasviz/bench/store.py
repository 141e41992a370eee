"""Run store speed: per-step cost of persisting, dashboard reads, replay on resume, concurrent writers."""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import statistics
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # imported when the benchmark runs, not when the command line is built
    from nasviz.runner import RunResult
    from nasviz.store import RunStore

DESCRIPTION = ("Run store speed: seconds per search step with and without --store, dashboard reads of a run "
               "(list_runs, evaluations, snapshots), replay speed on resume, and concurrent writer throughput.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--table", type=Path, help="benchmark CSV (default: 2,000 NB201 cells with synthetic values)")
    parser.add_argument("--budget", type=int, default=500, help="evaluations per run (default: 500)")
    parser.add_argument("--batch-size", type=int, default=1, help="architectures per step (default: 1)")
    parser.add_argument("--writers", type=int, default=4, help="concurrent writer processes (default: 4)")
    parser.add_argument("--writer-steps", type=int, default=200, help="steps each writer commits (default: 200)")
    parser.add_argument("--json", action="store_true", help="accepted for symmetry; output is always JSON")


def _synthetic_table(folder: Path, n: int = 2000) -> Path:
    from nasviz.spaces import nb201

    rng = np.random.default_rng(0)
    path = folder / "synthetic.csv"
    cells = list(itertools.islice(nb201.enumerate_all(), n))
    path.write_text("arch,acc\n" + "".join(f"{nb201.format(a)},{float(v)!r}\n"
                                           for a, v in zip(cells, rng.uniform(10, 95, n))))
    return path


def _writer(path: str, worker: int, steps: int) -> float:
    from nasviz.store import RunStore

    store = RunStore(path)
    run_id = store.create_run({"strategy": "bench", "seed": worker})
    start = time.perf_counter()
    for step in range(steps):
        store.add_step(run_id, step + 1, [{"arch": f"w{worker}-{step}", "value": 1.0}], step,
                       {"step": step + 1})
    store.set_status(run_id, "finished")
    return time.perf_counter() - start


def _timed_run(config: dict, store: RunStore, budget: int, batch_size: int, with_store: bool,
               stop_after: int | None = None) -> tuple[RunResult, list[float], int | None]:
    """One search of ``config``, with or without ``store``: its result, the seconds of each step
    and its run id; ``stop_after`` evaluations it is asked to stop (a run to resume)."""
    from nasviz.runner import build_search, run_search

    setup = build_search(config)
    step_times: list[float] = []
    last = [time.perf_counter()]

    def on_step(snap):
        now = time.perf_counter()
        step_times.append(now - last[0])
        last[0] = now
        if stop_after is not None and snap.n_evaluations >= stop_after:
            store.request_stop(run_id)

    run_id = store.create_run(setup.config) if with_store else None
    result = run_search(setup.strategy, setup.objective, budget, format_arch=setup.space.format,
                        batch_size=batch_size, on_step=on_step, store=store if with_store else None,
                        run_id=run_id)
    return result, step_times, run_id


def _read_seconds(store: RunStore, run_id: int, n_steps: int) -> dict[str, float]:
    """The median seconds of each read the dashboard makes of a run, over 20 reads."""
    reads = {}
    for name, fn in (("list_runs", store.list_runs),
                     ("evaluations", lambda: store.evaluations(run_id)),
                     ("snapshots_since_last_10", lambda: store.snapshots(run_id, since_step=n_steps - 10)),
                     ("latest_snapshot", lambda: store.latest_snapshot(run_id))):
        times = []
        for _ in range(20):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        reads[name] = statistics.median(times)
    return reads


def _concurrent_writers(path: str, writers: int, steps: int) -> tuple[list[float], float, int]:
    """``writers`` spawned processes committing ``steps`` steps each to one new store: each
    writer's seconds, the wall time with process start, and how many evaluations landed."""
    from nasviz.store import RunStore

    RunStore(path)
    ctx = multiprocessing.get_context("spawn")
    t = time.perf_counter()
    with ctx.Pool(writers) as pool:
        per_writer = pool.starmap(_writer, [(path, w, steps) for w in range(writers)])
    wall = time.perf_counter() - t
    landed = sum(r.n_evaluations for r in RunStore(path).list_runs())
    return per_writer, wall, landed


def run(args: argparse.Namespace) -> dict:
    from nasviz.runner import resume_run
    from nasviz.store import RunStore

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        table = args.table or _synthetic_table(folder)
        config = {"table": str(table), "strategy": "random", "seed": 0, "budget": args.budget,
                  "batch_size": args.batch_size}
        store = RunStore(folder / "runs.sqlite")
        _, plain_steps, _ = _timed_run(config, store, args.budget, args.batch_size, False)
        stored_result, stored_steps, run_id = _timed_run(config, store, args.budget, args.batch_size, True)
        reads = _read_seconds(store, run_id, len(stored_steps))

        # resume a run stopped half way: the replay is the cost of resuming
        half = args.budget // 2
        first, _, stopped_id = _timed_run(config, store, args.budget, args.batch_size, True, stop_after=half)
        t = time.perf_counter()
        resumed = resume_run(store, stopped_id)
        resume_seconds = time.perf_counter() - t
        per_writer, wall, landed = _concurrent_writers(str(folder / "concurrent.sqlite"), args.writers,
                                                       args.writer_steps)

    return {
        "budget": args.budget,
        "batch_size": args.batch_size,
        "table": str(args.table) if args.table else "synthetic (2,000 NB201 cells)",
        "step_seconds_median": {"no_store": statistics.median(plain_steps), "store": statistics.median(stored_steps)},
        "step_seconds_mean": {"no_store": statistics.fmean(plain_steps), "store": statistics.fmean(stored_steps)},
        "read_seconds_median": {**reads, "n_evaluations": len(stored_result.evaluations)},
        "resume": {"replayed": resumed.replayed, "live": len(resumed.evaluations) - resumed.replayed,
                   "seconds": resume_seconds, "same_as_uninterrupted":
                   [e.arch for e in resumed.evaluations] == [e.arch for e in stored_result.evaluations],
                   "stopped_at": len(first.evaluations)},
        "concurrent_writers": {"writers": args.writers, "steps_each": args.writer_steps,
                               "wall_seconds_with_process_start": wall,
                               # each writer's own writing time; they overlap, so this is a lower bound
                               "commits_per_second": args.writers * args.writer_steps / max(per_writer),
                               "writer_seconds": per_writer,
                               "all_landed": landed == args.writers * args.writer_steps},
    }
