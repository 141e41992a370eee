"""The search loop: ask, evaluate, tell, and emit a plain-data snapshot after every step.

With a :class:`~nasviz.store.RunStore` every step is persisted as it happens: the step's
evaluations are committed right after they are evaluated (before the strategy is told and before
the next step starts), then the step's snapshot. A run killed at any moment (even by SIGKILL)
is resumed by :func:`resume_run` (or ``run_search(..., resume=True)``) by *deterministic
replay*: the strategy is rebuilt from the stored config and seed, and for each stored step it is
asked for proposals as before and told the stored results instead of evaluating them again.
Strategies are deterministic given their seed and what they were told, so replay restores their
state exactly without pickling anything, and the resumed run finishes with the same evaluations
as an uninterrupted one. Trained weights that a strategy keeps (Auto-Keras's warm-start
ancestors: ``network_state`` / ``restore_network``) are stored as they arrive and given back
during replay. If a replayed step proposes something other than what was stored (a strategy
that is not deterministic), the stored results are told anyway and a
:class:`ReplayMismatchWarning` is issued.

Every write to the store carries the lease this process got when it claimed the run (see
"Leases" in :mod:`nasviz.store`). If another process has claimed the run since (or it was declared
interrupted while this one was paused), the write is refused with
:class:`~nasviz.errors.LeaseLostError` and the search stops at once without writing anything more,
not even its status: the run belongs to the other process.
"""

from __future__ import annotations

from nasviz.run_record import ReplayMismatchWarning  # re-exported
from nasviz.runner.loop import RunResult, Snapshot, run_search
from nasviz.runner.rebuild import SearchSetup, build_search, resume_run, resume_setup, start_run

__all__ = ["ReplayMismatchWarning", "RunResult", "SearchSetup", "Snapshot", "build_search", "resume_run",
           "resume_setup", "run_search", "start_run"]
