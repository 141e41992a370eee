"""What the operator of a dashboard server decides: where server-side files may come from, and the
limits every visitor's work is held to. Read from environment variables (``NASVIZ_*``), each with a
default that is safe to expose; the README's "Serving it safely" lists them.

The command line is not limited: these apply to what a browser can start.

>>> settings = ServeSettings.from_env()
>>> settings.data_dir            # None: server-side paths are off
>>> settings.limits.max_budget   # 1000
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from nasviz.errors import InputError, LimitError

#: Folder the dashboard may read server-side tables from; unset: server-side paths are off.
DATA_DIR_ENV = "NASVIZ_DATA_DIR"


@dataclass(frozen=True)
class Limits:
    """Bounds on what one visitor (a browser session) and all of them together may start.

    Attributes
    ----------
    max_budget : int
        Evaluations per search started from the page.
    max_running_per_session : int
        Searches running at once that one browser session started.
    max_running_total : int
        Searches running at once that browsers started, all sessions together.
    max_study_runs : int
        Runs of one study on the Compare page (strategies x seeds).
    max_upload_mb : float
        Size of an uploaded table (Streamlit's ``server.maxUploadSize`` caps the browser side).
    max_table_mb : float
        Size of a server-side table read from the data folder.
    upload_max_age_hours : float
        An upload that no search has used for this long (none running, none updated) is deleted.
    uploads_max_total_mb : float
        All kept uploads together; an upload that would exceed it is refused.
    max_explorer_seconds : float
        CPU seconds one explorer request (a Kernels page's matrices, its surrogate protocol, an
        Interpretability fit) may be estimated to cost before it starts
        (:mod:`nasviz.dashboard.explorer.budget`); a larger one is refused with what would fit.
    max_pause_seconds : float
        Pause after each step, times the budget: the longest one search started from the page may
        spend waiting (a class's pace, not a way to hold a search slot for hours).
    max_upload_parse_seconds : float
        An upload is first read in a separate process that is stopped after this long; a file that
        takes longer is refused before the server's own process spends time on it.
    max_uploads_per_session_mb : float
        Uploads one browser session may keep on the server, so one visitor cannot fill the total.
    max_explorer_seconds_total : float
        Estimated CPU seconds of explorer jobs running in worker processes, all sessions together
        (one session's running jobs are held to ``max_explorer_seconds``); see :mod:`nasviz.jobs`.
    max_explorer_cache_mb : float
        Explorer results kept on disk for the next visitor (``explorer-cache/`` beside the run
        store), all together; past it the least recently used are deleted
        (:meth:`nasviz.jobs.manager.JobManager.prune`).
    """

    max_budget: int = 1000
    max_running_per_session: int = 6  # a study's runs all run at once: the Compare page's default is 2 x 3
    max_running_total: int = 12
    max_study_runs: int = 6
    max_upload_mb: float = 50.0
    max_table_mb: float = 50.0
    upload_max_age_hours: float = 24.0
    uploads_max_total_mb: float = 1000.0
    max_explorer_seconds: float = 60.0
    max_pause_seconds: float = 1800.0
    max_upload_parse_seconds: float = 30.0
    max_uploads_per_session_mb: float = 200.0
    max_explorer_seconds_total: float = 240.0
    max_explorer_cache_mb: float = 500.0

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1e6)

    @property
    def max_table_bytes(self) -> int:
        return int(self.max_table_mb * 1e6)

    @property
    def max_explorer_cache_bytes(self) -> int:
        return int(self.max_explorer_cache_mb * 1e6)

    def check_budget(self, budget: int) -> None:
        """:class:`LimitError` if ``budget`` evaluations are more than a page may start."""
        if budget > self.max_budget:
            raise LimitError(f"a budget of {budget:,} evaluations is more than the {self.max_budget:,} this server "
                             f"allows per search ({_ENV['max_budget']}); the command line has no such limit",
                             field="budget")

    def check_pause(self, step_delay: float, budget: int) -> None:
        """:class:`LimitError` if a search would pause longer in all than the server allows."""
        total = float(step_delay) * int(budget)
        if total > self.max_pause_seconds:
            fits = int(self.max_pause_seconds // max(float(step_delay), 1e-9))
            raise LimitError(f"a pause of {step_delay:g} s after each of {budget:,} evaluations adds up to "
                             f"{total / 60:,.0f} min, more than the {self.max_pause_seconds / 60:,.0f} min this server "
                             f"allows per search ({_ENV['max_pause_seconds']}): shorten the pause or the budget "
                             f"(at {step_delay:g} s, a budget of {fits:,} fits)", field="step_delay")

    def check_study(self, n_runs: int) -> None:
        """:class:`LimitError` if a study of ``n_runs`` runs is larger than allowed."""
        if n_runs > self.max_study_runs:
            raise LimitError(f"a study of {n_runs} runs is larger than the {self.max_study_runs} this server allows "
                             f"({_ENV['max_study_runs']}): choose fewer strategies or seeds", field="study")

    def summary(self) -> str:
        """One line for the Search form: the limits in force."""
        return (f"Limits on this server: at most {self.max_budget:,} evaluations per search, "
                f"{self.max_running_per_session} searches running at once per browser session and "
                f"{self.max_running_total} in total, {self.max_study_runs} runs per study, "
                f"uploads up to {self.max_upload_mb:g} MB.")


#: Environment variable of each limit.
_ENV = {
    "max_budget": "NASVIZ_MAX_BUDGET",
    "max_running_per_session": "NASVIZ_MAX_RUNNING_PER_SESSION",
    "max_running_total": "NASVIZ_MAX_RUNNING",
    "max_study_runs": "NASVIZ_MAX_STUDY_RUNS",
    "max_upload_mb": "NASVIZ_MAX_UPLOAD_MB",
    "max_table_mb": "NASVIZ_MAX_TABLE_MB",
    "upload_max_age_hours": "NASVIZ_UPLOAD_MAX_AGE_HOURS",
    "uploads_max_total_mb": "NASVIZ_UPLOADS_MAX_TOTAL_MB",
    "max_explorer_seconds": "NASVIZ_MAX_EXPLORER_SECONDS",
    "max_pause_seconds": "NASVIZ_MAX_PAUSE_SECONDS",
    "max_upload_parse_seconds": "NASVIZ_MAX_UPLOAD_PARSE_SECONDS",
    "max_uploads_per_session_mb": "NASVIZ_MAX_UPLOADS_PER_SESSION_MB",
    "max_explorer_seconds_total": "NASVIZ_MAX_EXPLORER_SECONDS_TOTAL",
    "max_explorer_cache_mb": "NASVIZ_MAX_EXPLORER_CACHE_MB",
}


@dataclass(frozen=True)
class ServeSettings:
    """The operator's settings: the data folder (``None``: server paths off) and the limits."""

    data_dir: Path | None = None
    limits: Limits = field(default_factory=Limits)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "ServeSettings":
        """Settings from ``NASVIZ_*`` variables; :class:`~nasviz.errors.InputError` names a bad one."""
        env = os.environ if environ is None else environ
        values = {}
        for name, var in _ENV.items():
            text = env.get(var, "").strip()
            if not text:
                continue
            kind = type(getattr(Limits, name))
            try:
                value = kind(text)
            except ValueError:
                value = None
            if value is None or not value > 0 or (kind is float and value == float("inf")):
                raise InputError(f"must be a positive {'whole ' if kind is int else ''}number", source=var,
                                 detail=repr(text))
            values[name] = value
        data_dir = env.get(DATA_DIR_ENV, "").strip()
        if data_dir:
            path = Path(data_dir).expanduser()
            if not path.is_dir():
                raise InputError("must name an existing folder (the folder of server-side tables)",
                                 source=DATA_DIR_ENV, detail=repr(data_dir))
            return cls(path.resolve(), Limits(**values))
        return cls(None, Limits(**values))


def unlimited() -> Limits:
    """Limits that never refuse (tests and scripts that start many runs through the dashboard API)."""
    big = 10 ** 9
    return Limits(big, big, big, big, 1e9, 1e9, 1e9, 1e12, 1e12, 1e12, 1e12, 1e12, 1e12, 1e12)
