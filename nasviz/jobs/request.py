"""The shape every explorer job request shares: :class:`JobRequest`.

A request (:class:`~nasviz.jobs.kernels.KernelRequest`, :class:`~nasviz.jobs.kernels.SurrogateRequest`,
:class:`~nasviz.jobs.interpret.InterpretRequest`, :class:`~nasviz.jobs.export.ExportRequest`) is a
frozen dataclass of its inputs that :class:`~nasviz.jobs.manager.JobManager` prices, names, runs
and rebuilds the same way: what it tells the visitor (``label``), its identity and cache file
(``key``), its estimated CPU seconds (``cost_s``), its job file (``to_json``), what the worker
computes (``compute``) and the page's object rebuilt from those arrays (``result``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nasviz.jobs.keys import file_identity, input_key


@dataclass(frozen=True)
class JobRequest:
    """Base of the explorer's job requests.

    ``cost_s``: the estimated CPU seconds the budgets count (measured before the request); not
    part of the request's identity, and keyword-only so each request's own inputs come first.
    ``key`` hashes :meth:`to_json` (which names the kind) with :meth:`input_files`' identities.
    """

    cost_s: float = field(default=0.0, compare=False, kw_only=True)

    @property
    def label(self) -> str:
        """What the request computes, in a sentence's words ("the wl matrices")."""
        raise NotImplementedError

    @property
    def key(self) -> str:
        """Hash of the inputs: the cache file's name and the job's identity."""
        return input_key({**self.to_json(), **self.input_files()})

    def input_files(self) -> dict:
        """Identities of the files the result depends on beyond their paths (none here; a request
        that reads a table adds :func:`~nasviz.jobs.keys.file_identity`: a changed file is
        another input)."""
        return {}

    @classmethod
    def from_json(cls, data: dict) -> "JobRequest":
        """The request back from its :meth:`to_json` (what the worker reads; ``cost_s`` is not there)."""
        raise NotImplementedError

    def to_json(self) -> dict:
        """The job file a worker reads: plain JSON with ``kind``, the inputs without ``cost_s``."""
        raise NotImplementedError

    def compute(self) -> dict[str, np.ndarray]:
        """The result as plain arrays (in the worker process)."""
        raise NotImplementedError

    def result(self, arrays: dict[str, np.ndarray]) -> Any:
        """The page's object rebuilt from :meth:`compute`'s arrays (read from the cache)."""
        raise NotImplementedError


@dataclass(frozen=True)
class TableJobRequest(JobRequest):
    """A request computed on the table file at ``table`` (a file the app chose: the embedded
    table, a stored upload, a server-side table): the file's size and time join its identity."""

    table: str

    def input_files(self) -> dict:
        return file_identity(self.table)
