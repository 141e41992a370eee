"""Tables uploaded from a browser: size-capped, parsed once per content, stored under unguessable
names, deleted when nothing needs them any more.

* **Parsed once.** :func:`parse_upload` keeps the parsed :class:`~nasviz.objectives.Table` of the
  last few uploads keyed by the SHA-256 of their bytes: a rerun of the page (every click) or a
  second visitor with the same file costs a dictionary lookup, not a parse.
* **Unguessable names.** Each accepted upload is written to its own file named by 192 random bits
  (``secrets.token_urlsafe``), never by its content's hash: nobody can predict the path of another
  visitor's file, or of their own, before it exists. Files are created ``0600`` with ``O_EXCL``.
* **Pruned.** :func:`prune_uploads` deletes uploads that no search has used within the configured
  age (none running, none updated since) and that are older than it; the total the folder may
  hold is capped, and so is what one browser session keeps (its files carry a tag derived from
  the session's random id, :func:`owner_tag`).
* **Read first in a separate process.** :func:`check_parse_time` reads a new upload in a child
  process stopped after ``limits.max_upload_parse_seconds``: a file that takes longer (a 49 MB
  file of bad rows took 46 s) is refused before the server's process spends that time on it.

The background worker reads the stored copy as text, like any table: an upload is never unpickled.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Iterable

from nasviz.errors import LimitError, TableError
from nasviz.objectives import Table, load_table
from nasviz.settings import Limits
from nasviz.defaults import DEFAULT_SPACE

#: Parsed uploads kept in memory (each holds its architectures and values).
CACHE_SIZE = 8

_lock = threading.Lock()
_parsed: "OrderedDict[tuple[str, str, str], Table]" = OrderedDict()
#: How many uploads were parsed (not found in the cache) since the process started.
_stats = {"parses": 0, "hits": 0}


def cache_stats() -> dict[str, int]:
    """``{"parses": n, "hits": m}``: uploads parsed and uploads served from the cache so far."""
    with _lock:
        return dict(_stats)


def check_upload(data: bytes, filename: str, limits: Limits) -> None:
    """Refuse what no parse should be spent on: a name that is not ``.csv``, an empty or an
    over-size file (:class:`~nasviz.errors.LimitError`, the cap being ``limits.max_upload_mb``)."""
    if not filename.lower().endswith(".csv"):
        raise TableError("only CSV files can be uploaded", source=filename)
    if len(data) > limits.max_upload_bytes:
        raise LimitError(f"is {len(data) / 1e6:.1f} MB, larger than the {limits.max_upload_mb:g} MB an upload may "
                         "have on this server (NASVIZ_MAX_UPLOAD_MB)", source=filename)
    if not data.strip():
        raise TableError("is empty: expected a header line such as 'arch,cifar10'", source=filename)


def owner_tag(session: str | None) -> str:
    """The prefix of a session's upload files: 12 hex digits of the SHA-256 of its random id
    (``anon`` without one); another visitor cannot tell from it whose file it is."""
    return hashlib.sha256(session.encode()).hexdigest()[:12] if session else "anon"


def is_cached(data: bytes, filename: str, space: str) -> bool:
    with _lock:
        return (hashlib.sha256(data).hexdigest(), filename, space) in _parsed


def check_parse_time(data: bytes, filename: str, space: str, limits: Limits) -> None:
    """Read ``data`` as a table in a child process (``python -m nasviz.uploads``) and refuse it
    (:class:`LimitError`) if that takes over ``limits.max_upload_parse_seconds``. The child's own
    verdict is not used: the server parses the file itself afterwards, knowing it finishes in time."""
    import subprocess
    import sys

    seconds = limits.max_upload_parse_seconds
    try:
        subprocess.run([sys.executable, "-m", "nasviz.uploads", space, filename], input=data,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=seconds, check=False)
    except subprocess.TimeoutExpired:
        raise LimitError(f"takes more than {seconds:g} s to read (NASVIZ_MAX_UPLOAD_PARSE_SECONDS): keep the "
                         "rows the table needs, or give the file to the operator for the server's data folder",
                         source=filename) from None


def parse_upload(data: bytes, filename: str, space: str = DEFAULT_SPACE) -> Table:
    """The table of an uploaded CSV's bytes, parsed at most once per content (SHA-256), name and
    space. Raises :class:`~nasviz.errors.TableError` with the line and column of the problem."""
    key = (hashlib.sha256(data).hexdigest(), filename, space)
    with _lock:
        if key in _parsed:
            _parsed.move_to_end(key)
            _stats["hits"] += 1
            return _parsed[key]
    table = load_table(data, space=space, name=filename)  # outside the lock: parses may take seconds
    with _lock:
        _stats["parses"] += 1
        _parsed[key] = table
        while len(_parsed) > CACHE_SIZE:
            _parsed.popitem(last=False)
    return table


def store_upload(data: bytes, folder: Path, limits: Limits, *, in_use: Iterable[Path] = (),
                 owner: str | None = None) -> Path:
    """Write ``data`` to a new file with an unguessable name in ``folder`` and return its path.

    Old unused uploads are pruned first (:func:`prune_uploads`); if the folder would still hold
    more than ``limits.uploads_max_total_mb``, or the session ``owner`` (its random id) more than
    ``limits.max_uploads_per_session_mb``, the upload is refused (:class:`LimitError`).
    """
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    prune_uploads(folder, in_use=in_use, max_age_seconds=limits.upload_max_age_hours * 3600)
    held = sum(p.stat().st_size for p in folder.glob("*.csv") if p.is_file())
    if held + len(data) > limits.uploads_max_total_mb * 1e6:
        raise LimitError(f"the server keeps {held / 1e6:.0f} MB of uploads, and this one would pass its "
                         f"{limits.uploads_max_total_mb:g} MB (NASVIZ_UPLOADS_MAX_TOTAL_MB); try again later")
    tag = owner_tag(owner)
    mine = sum(p.stat().st_size for p in folder.glob(f"{tag}-*.csv") if p.is_file())
    if owner is not None and mine + len(data) > limits.max_uploads_per_session_mb * 1e6:
        raise LimitError(f"this browser session keeps {mine / 1e6:.0f} MB of uploads on the server, and this one "
                         f"would pass the {limits.max_uploads_per_session_mb:g} MB a session may keep "
                         "(NASVIZ_MAX_UPLOADS_PER_SESSION_MB); uploads no search uses are deleted after "
                         f"{limits.upload_max_age_hours:g} h")
    path = folder / f"{tag}-{secrets.token_urlsafe(24)}.csv"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return path


def prune_uploads(folder: Path, *, in_use: Iterable[Path], max_age_seconds: float,
                  now: float | None = None) -> list[Path]:
    """Delete the uploads in ``folder`` that are not ``in_use`` and were written more than
    ``max_age_seconds`` ago; return what was deleted.

    ``in_use`` is what searches still read or read recently
    (:func:`nasviz.dashboard.sources.uploads_in_use`: running, or updated within the same age), so an
    upload's age counts from its last use. The files themselves are never touched: their
    modification time keys the parsed-table cache.
    """
    now = time.time() if now is None else now
    keep = {Path(p).resolve() for p in in_use}
    deleted = []
    for path in folder.glob("*.csv"):
        try:
            if path.resolve() in keep or now - path.stat().st_mtime <= max_age_seconds:
                continue
            path.unlink()
        except FileNotFoundError:  # deleted by another session meanwhile
            continue
        deleted.append(path)
    return deleted


def _main(argv: list[str]) -> int:
    """``python -m nasviz.uploads SPACE NAME < bytes``: read a table from stdin (the child of
    :func:`check_parse_time`); exit 0 when it loads, 2 when it is refused."""
    import sys

    space, name = argv
    try:
        load_table(sys.stdin.buffer.read(), space=space, name=name)
    except TableError:
        return 2
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(_main(sys.argv[1:]))
