"""Explorer computations off the request thread: priced, budgeted, cached, cancellable.

A page asks for a :class:`~nasviz.jobs.kernels.KernelRequest` (one kernel's matrices on a
sample), a :class:`~nasviz.jobs.kernels.SurrogateRequest` (the surrogate protocol), an
:class:`~nasviz.jobs.interpret.InterpretRequest` (the Interpretability page's GP fits) or an
:class:`~nasviz.jobs.export.ExportRequest` (a run's network retrained for download). The
:class:`JobManager` (one per server process, see :func:`manager`):

1. returns the cached result at once if any visitor computed the same inputs before (a ``.npz``
   file in ``explorer-cache/`` beside the run store, named by the hash of the inputs; read with
   ``allow_pickle=False``);
2. else refuses with a :class:`~nasviz.errors.LimitError` (one sentence) if its estimated cost
   (measured before the request, :mod:`nasviz.dashboard.explorer.budget`) plus this visitor's
   running jobs exceed ``max_explorer_seconds``, or plus every running job exceed
   ``max_explorer_seconds_total`` (:class:`~nasviz.settings.Limits`);
3. else starts ``python -m nasviz.workers.explorer JOB.json`` (a worker process at low priority)
   or joins the same job already running for another visitor.

The cache is held to ``max_explorer_cache_mb`` (:meth:`JobManager.prune`): reading a result marks it
used, and past the cap the least recently used results are deleted (a later request computes them
again).

Each page poll is a heartbeat (:meth:`JobManager.poll`); a job none of whose visitors has polled
for :attr:`JobManager.heartbeat_s` seconds (the tab was closed, the session ended) is killed by a
reaper thread, as is a job its last visitor cancelled.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from nasviz.errors import LimitError
from nasviz.jobs.export import ExportRequest
from nasviz.jobs.interpret import InterpretRequest
from nasviz.jobs.kernels import KernelRequest, SurrogateRequest
from nasviz.settings import Limits


Request = KernelRequest | SurrogateRequest | InterpretRequest | ExportRequest


#: Each kind of request by the ``kind`` its job file names.
KINDS: dict[str, type[Request]] = {"kernel": KernelRequest, "surrogate": SurrogateRequest,
                                   "interpret": InterpretRequest, "export": ExportRequest}


def request_from_json(data: dict) -> Request:
    """The request a worker reads from its job file (plain JSON)."""
    kind = KINDS.get(data["kind"])
    if kind is None:
        raise ValueError(f"unknown job kind {data['kind']!r}")
    return kind.from_json(data)


def save_arrays(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as ``.npz`` atomically (a reader never sees half a file)."""
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        np.savez(fh, **arrays)
    os.replace(tmp, path)


def load_arrays(path: Path) -> dict[str, np.ndarray]:
    """Read arrays written by :func:`save_arrays` (never unpickles); read-only."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: np.array(data[k]) for k in data.files}
    for a in arrays.values():
        a.setflags(write=False)
    return arrays


@dataclass
class Job:
    """A running computation: its process, estimate, and the visitors waiting for it."""

    request: Request
    proc: subprocess.Popen | None
    started: float
    owners: dict[str, float] = field(default_factory=dict)  # visitor -> time of its last poll

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None


@dataclass
class Progress:
    """What :meth:`JobManager.poll` reports for a page's requests."""

    done: int
    total: int
    fraction: float  # 0..1, finished jobs plus elapsed / estimated time of the running ones
    errors: list[str]

    @property
    def finished(self) -> bool:
        return self.done == self.total


class JobManager:
    """Jobs of one server process, writing results under ``cache_dir``."""

    def __init__(self, cache_dir: Path, heartbeat_s: float = 10.0) -> None:
        self.cache_dir = Path(cache_dir)
        self.heartbeat_s = heartbeat_s
        self._jobs: dict[str, Job] = {}
        self._lock = threading.RLock()
        self._reaper: threading.Thread | None = None
        self._cache_cap: int | None = None  # bytes, from the Limits of the last submit

    # ------------------------------------------------------------------ files
    def result_path(self, key: str) -> Path:
        return self.cache_dir / f"{key}.npz"

    def _error_path(self, key: str) -> Path:
        return self.cache_dir / f"{key}.error.txt"

    def cached(self, request: Request):
        """The stored result of ``request`` (its ``result`` type), or ``None``; marks it used (its
        file's time is what :meth:`prune` orders by)."""
        path = self.result_path(request.key)
        try:
            arrays = load_arrays(path)
        except FileNotFoundError:
            return None
        try:
            os.utime(path)
        except FileNotFoundError:
            pass
        return request.result(arrays)

    def prune(self, max_bytes: int, keep: Iterable[str] = ()) -> list[Path]:
        """Delete the least recently used results (``.npz`` and error notes, oldest file time
        first) until the cache holds at most ``max_bytes``; never those of running jobs or of the
        keys in ``keep`` (results a page is about to read). Returns the deleted files."""
        keep = set(keep)
        with self._lock:
            keep |= set(self._jobs)
            files = []
            for path in self.cache_dir.glob("*"):
                if not path.name.endswith((".npz", ".error.txt")):
                    continue  # job specs and half-written results belong to running jobs
                try:
                    stat = path.stat()
                except FileNotFoundError:
                    continue
                files.append((stat.st_mtime_ns, stat.st_size, path.name.split(".", 1)[0], path))
            total = sum(size for _, size, _, _ in files)
            removed = []
            for _, size, key, path in sorted(files):
                if total <= max_bytes:
                    break
                if key in keep:
                    continue
                path.unlink(missing_ok=True)
                total -= size
                removed.append(path)
        return removed

    # ------------------------------------------------------------------ budget
    def check(self, requests: Sequence[Request], owner: str, limits: Limits) -> None:
        """:class:`LimitError` (one sentence) if starting the uncached and not yet running
        ``requests`` would take ``owner``'s running jobs past ``max_explorer_seconds`` or all running
        jobs past ``max_explorer_seconds_total``."""
        with self._lock:
            new = [r for r in requests if r.key not in self._jobs and not self.result_path(r.key).exists()
                   and not self._error_path(r.key).exists()]
            cost = sum(r.cost_s for r in new)
            mine = sum(j.request.cost_s for j in self._jobs.values() if owner in j.owners)
            everyone = sum(j.request.cost_s for j in self._jobs.values())
        if not new:
            return
        if mine + cost > limits.max_explorer_seconds:
            raise LimitError(f"This request (about {cost:.0f} CPU s) and your computations still running (about "
                             f"{mine:.0f} s) exceed the {limits.max_explorer_seconds:.0f} s this server allows per "
                             f"visitor: cancel them or wait for them.", field="n")
        if everyone + cost > limits.max_explorer_seconds_total:
            raise LimitError(f"The server is busy with other visitors' computations (about {everyone:.0f} CPU s "
                             f"running, {limits.max_explorer_seconds_total:.0f} s allowed together): try again in "
                             f"a minute, or ask for a smaller N.", field="n")

    # ------------------------------------------------------------------ jobs
    def submit(self, requests: Sequence[Request], owner: str, limits: Limits, *,
               background: bool = True) -> None:
        """Start (or join) a job for each request not cached yet, after :meth:`check`.
        ``background=False`` computes in this thread instead (tests, ``$NASVIZ_SYNC_RUNS``)."""
        with self._lock:
            self.check(requests, owner, limits)
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            self._cache_cap = limits.max_explorer_cache_bytes
            now = time.monotonic()
            for r in requests:
                key = r.key
                if key in self._jobs:
                    self._jobs[key].owners[owner] = now
                    continue
                if self.result_path(key).exists() or self._error_path(key).exists():
                    continue  # done, or an input it cannot compute (the same inputs fail the same way)
                if not background:
                    try:
                        save_arrays(self.result_path(key), r.compute())
                    except ValueError as err:
                        self._error_path(key).write_text(f"{r.label} cannot be computed: {str(err)[:300]}")
                    continue
                spec = self.cache_dir / f"{key}.job.json"
                spec.write_text(json.dumps(r.to_json()))
                proc = subprocess.Popen([sys.executable, "-m", "nasviz.workers.explorer", str(spec), str(os.getpid())],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
                self._jobs[key] = Job(r, proc, now, {owner: now})
            self.prune(self._cache_cap, keep=[r.key for r in requests])
            self._start_reaper()

    def poll(self, requests: Sequence[Request], owner: str) -> Progress:
        """Progress of ``requests`` for ``owner``; also its heartbeat for the running ones."""
        self.reap()
        now = time.monotonic()
        done, fraction, errors = 0, 0.0, []
        with self._lock:
            for r in requests:
                key = r.key
                job = self._jobs.get(key)
                if job is not None:
                    job.owners[owner] = now
                    fraction += min(0.95, (now - job.started) / max(r.cost_s, 1e-9))
                elif self.result_path(key).exists():
                    done += 1
                    fraction += 1.0
                elif self._error_path(key).exists():
                    done += 1
                    fraction += 1.0
                    errors.append(self._error_path(key).read_text())
                else:
                    errors.append(f"{r.label} stopped before it finished.")
                    done += 1
        return Progress(done, len(requests), fraction / max(1, len(requests)), errors)

    def cancel(self, requests: Sequence[Request], owner: str) -> None:
        """``owner`` no longer waits for ``requests``; a job nobody waits for is killed."""
        with self._lock:
            for r in requests:
                job = self._jobs.get(r.key)
                if job is not None:
                    job.owners.pop(owner, None)
                    if not job.owners:
                        self._kill(r.key)

    def running(self) -> dict[str, Job]:
        """The running jobs by key (after collecting finished ones)."""
        self.reap()
        with self._lock:
            return dict(self._jobs)

    def reap(self) -> None:
        """Forget finished jobs (then prune the cache their results may have taken over its cap);
        kill jobs whose visitors all stopped polling."""
        now = time.monotonic()
        with self._lock:
            finished = []
            for key, job in list(self._jobs.items()):
                if job.proc is not None and job.proc.poll() is not None:
                    del self._jobs[key]
                    finished.append(key)
                    continue
                job.owners = {o: t for o, t in job.owners.items() if now - t <= self.heartbeat_s}
                if not job.owners:
                    self._kill(key)
            if finished and self._cache_cap is not None:
                self.prune(self._cache_cap, keep=finished)  # new results: the cache may be over its cap

    def _kill(self, key: str) -> None:
        job = self._jobs.pop(key)
        if job.proc is not None and job.proc.poll() is None:
            try:
                os.killpg(job.proc.pid, signal.SIGKILL)  # the worker leads its own process group
            except ProcessLookupError:
                pass
            job.proc.wait()
        (self.cache_dir / f"{key}.job.json").unlink(missing_ok=True)

    def _start_reaper(self) -> None:
        if self._reaper is None or not self._reaper.is_alive():
            self._reaper = threading.Thread(target=self._reap_forever, name="nasviz-job-reaper", daemon=True)
            self._reaper.start()

    def _reap_forever(self) -> None:
        while True:
            time.sleep(min(1.0, self.heartbeat_s / 4))
            self.reap()
            with self._lock:
                if not self._jobs:
                    self._reaper = None
                    return


_MANAGERS: dict[Path, JobManager] = {}
_MANAGERS_LOCK = threading.Lock()


def manager(cache_dir: Path) -> JobManager:
    """The server process's :class:`JobManager` for ``cache_dir`` (shared by all sessions)."""
    with _MANAGERS_LOCK:
        return _MANAGERS.setdefault(Path(cache_dir), JobManager(Path(cache_dir)))
