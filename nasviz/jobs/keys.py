"""What identifies an explorer job: the hash of its inputs, which names its cached result file.

Kept apart from :mod:`nasviz.jobs.manager` so a kind of request defined in its own module
(:mod:`nasviz.jobs.interpret`) hashes its inputs the same way without importing the manager.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

#: Bump when what a job computes changes, so older cached results are not served.
CACHE_VERSION = 1


def input_key(inputs: dict) -> str:
    """Hash of a request's inputs (plain JSON values): its cache file's name and its job's identity."""
    text = json.dumps({"v": CACHE_VERSION, **inputs}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def file_identity(path: str) -> dict:
    """Size and modification time of an input file: a changed file is another input."""
    stat = Path(path).stat()
    return {"size": stat.st_size, "mtime": stat.st_mtime_ns}
