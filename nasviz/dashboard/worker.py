"""The background search worker: ``python -m nasviz.dashboard.worker --store FILE --run-id ID``.

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
import sys
import time
import traceback
from pathlib import Path
from typing import Sequence

from nasviz.errors import LeaseLostError
from nasviz.store import FAILED, FINISHED, STOPPED, RunStore

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

        config = store.get_run(run_id)["config"]
        delay = float(config.get("step_delay") or 0.0)
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nasviz.dashboard.worker",
                                     description="Run one stored search to its end (started by the dashboard).")
    parser.add_argument("--store", type=Path, required=True, help="the run store file")
    parser.add_argument("--run-id", type=int, required=True, help="the run to run")
    args = parser.parse_args(argv)
    start = time.time()
    status = run_worker(args.store, args.run_id)
    print(f"run {args.run_id}: {status} after {time.time() - start:.1f} s", flush=True)
    return 0 if status != FAILED else 1


if __name__ == "__main__":
    sys.exit(main())
