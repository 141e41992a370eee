"""Persistent run store: one SQLite file holding runs, their evaluations and their snapshots.

Everything a search produces is written here as it happens, so a run survives a closed browser
tab, a crashed server or ``kill -9``, and can be listed, watched, stopped, resumed and exported
from another process.

Layout (plain data only: JSON text, numbers and numeric arrays, never pickle)
--------------------------------------------------------------
``runs``
    ``id`` (integer, from 1), ``created``/``updated`` (Unix seconds), ``name``, ``config`` (JSON:
    everything needed to rebuild the objective and the strategy: table path, metric, space,
    strategy name and options, seed, budget, batch size), ``status`` (one of :data:`STATUSES`),
    ``pid``/``host``/``heartbeat`` of the process running it, ``stop_requested`` (0/1),
    ``error`` (why it failed), ``lease`` (schema 3: the generation of the current owner, see
    "Leases") and ``session`` (schema 3: the browser session that started it; NULL from the CLI).
``evaluations``
    ``(run_id, idx)`` unique: ``idx`` counts evaluations from 0 in the order the search made
    them; ``step`` (1-based step that made it), ``arch`` (the space's string), ``value``
    (NULL when failed), ``cost`` (seconds), ``status``, ``error``, ``info`` (JSON), ``created``.
``snapshots``
    ``(run_id, step)`` unique: the runner's :class:`~nasviz.runner.Snapshot` as JSON. Its
    ``strategy`` field is the step's typed state, :meth:`nasviz.state.StepState.to_dict`
    (schema 4; tagged ``"version": 3`` inside, :data:`nasviz.state.STATE_VERSION`).
``networks`` (schema 2)
    ``(run_id, arch)`` unique: the trained weights a strategy needs after a resume (Auto-Keras
    warm-starts children from them), as an ``.npz`` archive of float arrays read back with
    ``allow_pickle=False``; 4 bytes per parameter. Kept while the run may be resumed and
    dropped when it finishes. A version-1 file gains the table on open.

Older files are migrated when opened, in one transaction: the missing tables are created and
the missing ``runs`` columns added (version 1 or 2 -> 3), and every snapshot's untyped strategy
dictionary is rewritten in the typed layout (-> 4: :meth:`StepState.from_legacy`, see
:func:`typed_snapshot`). A snapshot written in the typed layout already is left as it is.

Leases
------
Whoever starts or resumes a run *claims* it, which increments its ``lease``; the claimer keeps the
new value and passes it to every write it makes for the run (evaluations, snapshots, weights,
heartbeats, its final status). Each write checks the lease inside its own transaction and is
refused with :class:`~nasviz.errors.LeaseLostError` if the run has been claimed since, or was
declared ``interrupted`` (which also increments the lease). So a worker that was paused (SIGSTOP,
a suspended laptop) past the heartbeat timeout and then wakes up finds that another process owns
the run, writes nothing (no ``failed`` over the resumed run's status) and exits quietly.

Concurrency
-----------
The file is in WAL mode, so readers (the dashboard) never block the writer and several
processes or threads may write different runs at once. Each thread (and each process after a
``fork``) gets its own connection; writes take the write lock up front (``BEGIN IMMEDIATE``)
and are retried on ``SQLITE_BUSY`` beyond SQLite's own busy timeout. ``synchronous=FULL`` makes
every committed step durable, even against power loss.

Using it (what the dashboard needs)
-----------------------------------
>>> store = RunStore("runs.sqlite")                            # creates the file if missing
>>> run_id = store.create_run({"strategy": "random", "budget": 10, ...})
>>> store.add_step(run_id, step=1, evaluations=[...], start_index=0, snapshot={...})
>>> store.list_runs()        # [StoredRun(id, name, status, strategy, metric, best_value, ...), ...]
>>> store.evaluations(run_id, since_index=0)      # StoredEvaluation records in evaluation order
>>> store.snapshots(run_id, since_step=3)  # StoredSnapshot records with step > 3, for live polling
>>> store.latest_snapshot(run_id)          # the newest StoredSnapshot (its .strategy: the typed state's dict)
>>> store.request_stop(run_id)                    # cooperative: the runner stops between steps
>>> store.claim_run(run_id)      # before resuming elsewhere: refused while a live process runs it
>>> store.export_csv(run_id, "run.csv"); store.export_json(run_id, "run.json")
>>> store.import_json("run.json")                 # a copy as a new run; read_csv_export reads CSV back
>>> store.delete_run(run_id)                      # refused while running: stop it first
>>> store.add_network(run_id, arch, {"w": array}); store.network(run_id, arch)   # trained weights

Runs are started with :func:`nasviz.runner.start_run` and resumed with
:func:`nasviz.runner.resume_run` (or ``python -m nasviz run --store FILE [--resume RUN_ID]``;
``python -m nasviz runs list|export|stop|delete``). A run whose status says ``running`` but whose
process is gone (dead pid on this host, or no heartbeat for ``stale_after`` seconds) is marked
``interrupted`` whenever runs are read. Runs that several callers poll (the dashboard) cost a
few indexed queries: ``list_runs`` on a store of a handful of runs takes well under a
millisecond, ``evaluations(run_id, since_index=k)`` reads only the new rows.

Modules
-------
``records``  statuses, the JSON encoding and the checks of what a caller hands in;
``stored``   the typed records the store hands back (:class:`StoredRun`, :class:`StoredEvaluation`,
             :class:`StoredSnapshot` with its :class:`StepResult` entries);
``schema``   the tables, the migration of older files, the typed snapshot layout;
``database`` connections, write transactions with retries, consistent reads;
``runs``     creating, claiming, leasing, listing, stopping and deleting runs;
``results``  evaluations and snapshots; ``networks`` trained weights kept for resumes;
``exchange`` CSV / JSON export and import. :class:`RunStore` combines them.
"""

from nasviz.errors import StoreError
from nasviz.store.database import SQLiteFile
from nasviz.store.exchange import Exchange, read_csv_export
from nasviz.store.networks import Networks
from nasviz.store.records import (CSV_COLUMNS, FAILED, FINISHED, INTERRUPTED, MAX_NOTES_CHARS, RUNNING, STALE_AFTER_ENV,
                                  STATUSES, STOPPED, UnknownRunError, default_stale_after, to_json)
from nasviz.store.results import Results
from nasviz.store.runs import Runs
from nasviz.store.schema import SCHEMA_VERSION, typed_snapshot
from nasviz.store.stored import StepResult, StoredEvaluation, StoredRun, StoredSnapshot

__all__ = ["CSV_COLUMNS", "FAILED", "FINISHED", "INTERRUPTED", "MAX_NOTES_CHARS", "RUNNING", "RunStore", "SCHEMA_VERSION",
           "STALE_AFTER_ENV", "STATUSES", "STOPPED", "StepResult", "StoreError", "StoredEvaluation", "StoredRun",
           "StoredSnapshot", "UnknownRunError", "default_stale_after", "read_csv_export", "to_json", "typed_snapshot"]


class RunStore(Runs, Results, Networks, Exchange, SQLiteFile):
    """A SQLite run store in one file (see the package docstring for layout and usage).

    Parameters
    ----------
    path : str or PathLike
        The database file; created (with its folder) if missing.
    busy_timeout : float
        Seconds SQLite waits for a lock before reporting ``SQLITE_BUSY``; the store then
        retries a write up to ``retries`` more times.
    stale_after : float, optional
        A ``running`` run whose heartbeat is older than this many seconds is ``interrupted``
        (default: ``$NASVIZ_STALE_AFTER``, else 90). Runners beat every third of it (at most 10 s).
    durable : bool
        Fsync every commit of evaluations and new runs (``synchronous=FULL``), so they survive
        power loss, not only a killed process. ``False`` trades that for speed everywhere.
    """
