"""Explorer computations from a page's side: submitted to the server's
:class:`~nasviz.jobs.manager.JobManager`, shown with a progress bar and a Cancel button while they
run in worker processes, and returned when every result is there (the Kernels and Interpretability
pages share this, so both are held to the same budgets and caches)."""

from __future__ import annotations

import time
from typing import Sequence

import streamlit as st

from nasviz.dashboard.locations import runs_dir, sync_runs
from nasviz.dashboard.text import plain
from nasviz.dashboard.ui import serve_settings, session_token
from nasviz.errors import LimitError
from nasviz.jobs.manager import JobManager, manager

#: How long a page waits for small jobs before it draws a progress bar (avoids the bar's flash).
QUICK_WAIT_S = 3.0


def explorer_jobs() -> JobManager:
    """The server's job manager, caching results in ``explorer-cache/`` beside the run store."""
    return manager(runs_dir() / "explorer-cache")


def is_cached(request) -> bool:
    """Whether ``request``'s result is on disk already (a page may then show it without asking)."""
    return explorer_jobs().result_path(request.key).exists()


def computed(requests: Sequence, name: str, noun: str = "computations") -> dict | None:
    """Each request's result by its key, computed in worker processes: cached results at once;
    else jobs with a progress bar and a Cancel button (widget keys start with ``name``). ``None``
    (after drawing the progress, an error or a refusal) until every result is there."""
    requests = list(requests)
    jobs = explorer_jobs()
    owner = session_token()
    if st.session_state.get(f"{name}_cancelled") == [r.key for r in requests]:
        if not st.button("Compute again", key=f"{name}_again"):
            st.info("Cancelled: change the request, or compute again.")
            return None
        st.session_state.pop(f"{name}_cancelled")
    try:
        jobs.submit(requests, owner, serve_settings().limits, background=not sync_runs())
    except LimitError as err:
        st.error(plain(str(err)))
        return None
    deadline = time.monotonic() + QUICK_WAIT_S
    while not jobs.poll(requests, owner).finished and time.monotonic() < deadline:
        time.sleep(0.2)
    progress = jobs.poll(requests, owner)
    if not progress.finished:
        _progress(requests, name, noun)
        return None
    if progress.errors:
        st.error(plain("Cannot compute: " + " ".join(progress.errors)))
        return None
    results = {r.key: jobs.cached(r) for r in requests}
    if any(v is None for v in results.values()):  # pruned by another visitor's request in between
        st.error("The result was removed from this server's full cache before it could be shown: compute it again.")
        return None
    return results


@st.fragment(run_every=1.0)
def _progress(requests: list, name: str, noun: str) -> None:
    """Progress of this session's jobs, polled every second (each poll is the session's heartbeat:
    a closed tab stops polling and its jobs are killed)."""
    jobs = explorer_jobs()
    progress = jobs.poll(requests, session_token())
    if progress.finished:
        st.rerun(scope="app")
    st.progress(progress.fraction, text=f"Computing in worker processes: {progress.done} of {progress.total} "
                                        f"{noun} done")
    if st.button("Cancel", key=f"{name}_cancel"):
        jobs.cancel(requests, session_token())
        st.session_state[f"{name}_cancelled"] = [r.key for r in requests]
        st.rerun(scope="app")
