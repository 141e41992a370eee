"""The background search worker: ``python -m nasviz.workers.search --store FILE --run-id ID``
(or ``--wait``: start warm and read the run id from stdin, see :func:`wait_for_run`).

A search started from the browser runs in this process, which never imports Streamlit. It reads
the run's :class:`~nasviz.config.SearchConfig` from the run store, writes every step (evaluations,
then the snapshot with the typed step state) there as it happens and polls the store for a stop
request between steps. :mod:`nasviz.dashboard.launching` starts it in its own session, so it
keeps running when the browser tab closes or the page reloads; a reloaded page finds the run
again in the store.
"""

from __future__ import annotations

import argparse
import os
import select
import sys
import time
import traceback
from pathlib import Path
from typing import Sequence

from nasviz.errors import LeaseLostError
from nasviz.store import FAILED, FINISHED, STOPPED, RunStore

#: How much lower than the server a search worker's CPU priority is (``os.nice``). Pages come first:
#: under a class's load the server's visitors must not wait behind searches. But a paced search is
#: a lesson a class watches, and each of its steps takes a fraction of a second of CPU: at niceness
#: 10 (the kernel jobs' batch work, :mod:`nasviz.workers.explorer`) the scheduler gives it about a
#: tenth of a busy server's share, so a step could stretch past its pause; at 5 it gets about a
#: third, ahead of the kernel jobs, which can wait. ``bench classroom`` checks that no search is
#: slowed past its pause.
NICENESS = 5

#: What :func:`run_worker` returns when another process took the run over while this one was
#: paused: it wrote nothing and the run's status is the other process's.
LOST = "lost"


def run_worker(store_path: str | os.PathLike, run_id: int) -> str:
    """Run (or continue) search ``run_id`` to its end, writing every step to the store.

    Returns the final status. Failures are recorded in the store by the runner (status
    ``failed`` with the message), not raised. If the run's lease is lost (another worker
    resumed it after this one was paused), nothing is written and :data:`LOST` is returned.
    """
    store = RunStore(store_path)
    try:
        from nasviz import runner

        delay = store.get_run(run_id).search.run.step_delay
        on_step = (lambda snapshot: time.sleep(delay)) if delay > 0 else None
        # Claiming the run clears its stop flag, so a Stop pressed while this process was still
        # starting (seconds of imports) is read here first and honoured before the first step.
        stopped_early = store.stop_requested(run_id)
        # The runner rebuilds the search from the stored config (table lookup or training),
        # replays stored steps deterministically, then continues live, writing each step under
        # its lease and honouring stop requests. force=True: this process was launched to own
        # the run, which the server marked running on its behalf.
        result = runner.resume_run(store, run_id, force=True, on_step=on_step, should_stop=lambda: stopped_early)
        return STOPPED if result.stopped else FINISHED
    except LeaseLostError as err:
        print(f"run {run_id}: {err}", flush=True)
        return LOST
    except Exception:  # already recorded under this worker's lease by the runner; the log keeps the traceback
        traceback.print_exc()
        return FAILED


def wait_for_run(table: str | None, space: str) -> int | None:
    """A *warm* worker (:func:`nasviz.dashboard.launching.prewarm`): do the work every search
    starts with -- import the runner and the strategies, parse the embedded table -- while no
    one waits, then read the run id from stdin. ``None`` when stdin closes first (the server
    stopped or no longer needs this worker): the process then ends without touching the store."""
    from nasviz import runner  # noqa: F401 - imported for its side effect: the modules are loaded
    from nasviz.strategies import bo  # noqa: F401

    # A run handed over while this process was still importing does not wait for a table it may
    # not use: parse the embedded table only while nothing is waiting on stdin.
    if table and not select.select([sys.stdin], [], [], 0)[0]:
        from nasviz.objectives import table as tables

        try:
            tables.preload_table(table, space)
        except (ValueError, OSError):
            pass  # the run reports its own table errors when it loads it
    line = sys.stdin.readline().strip()
    return int(line) if line.isdigit() else None


def _log_to(path: Path) -> None:
    """Send this process's output to the run's log (a warm worker learns its run late)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def main(argv: Sequence[str] | None = None) -> int:
    os.nice(NICENESS)  # first, so that its imports (seconds of CPU) already yield to the server
    from nasviz.components import load_plugins

    load_plugins()  # the search's space, strategy, ... may come from a plugin; failures go to the log
    parser = argparse.ArgumentParser(prog="python -m nasviz.workers.search",
                                     description="Run one stored search to its end (started by the dashboard).")
    parser.add_argument("--store", type=Path, required=True, help="the run store file")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--run-id", type=int, help="the run to run")
    which.add_argument("--wait", action="store_true", help="start warm, then read the run id from stdin")
    parser.add_argument("--table", help="with --wait: the table to parse while waiting (the embedded one)")
    parser.add_argument("--space", default="nb201", help="with --wait: the space of --table")
    args = parser.parse_args(argv)
    if args.wait:
        run_id = wait_for_run(args.table, args.space)
        if run_id is None:
            return 0
        _log_to(Path(args.store).parent / "logs" / f"run-{run_id}.log")
        args.run_id = run_id
    start = time.time()
    status = run_worker(args.store, args.run_id)
    print(f"run {args.run_id}: {status} after {time.time() - start:.1f} s", flush=True)
    return 0 if status != FAILED else 1


if __name__ == "__main__":
    sys.exit(main())
