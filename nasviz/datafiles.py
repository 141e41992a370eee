"""Small settings files (a space spec, a table schema) as plain data: TOML or JSON, each error with
the file, line and column it is at."""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from nasviz.errors import InputError

#: Largest settings file read (they are a few lines; this refuses a wrong file early).
MAX_BYTES = 1_000_000


def parse_text(text: str, suffix: str, label: str) -> Any:
    """The plain data of TOML text (``suffix`` ``.toml``) or JSON text (any other suffix)."""
    if suffix.lower() == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            match = re.search(r"\(at line (\d+), column (\d+)\)", str(err))
            at_end = "(at end of document)" in str(err)
            problem = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(err)) or "not valid TOML"
            line = int(match[1]) if match else (max(1, len(text.splitlines())) if at_end else None)
            raise InputError(f"is not valid TOML: {problem}" + (" at the end of the file" if at_end else ""),
                             source=label, line=line, column=int(match[2]) if match else None) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"is not valid JSON: {err.msg}", source=label, line=err.lineno, column=err.colno) from None


def read_text(path: str | Path, what: str) -> str:
    """The UTF-8 text of the small file ``path`` (``what`` it should be, for the size message)."""
    label = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise InputError(f"cannot be read: {err.strerror or err}", source=label) from None
    if len(raw) > MAX_BYTES:
        raise InputError(f"is larger than {MAX_BYTES:,} bytes: not {what}", source=label)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"is not UTF-8 (byte {err.start})", source=label) from None


__all__ = ["MAX_BYTES", "parse_text", "read_text"]


#: Environment variable naming the folder of the shared benchmark tables (default ``../shared/data``
#: beside the repository).
SHARED_DATA_ENV = "NASVIZ_SHARED_DATA"
REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_data_path(name: str) -> Path | None:
    """A shared benchmark file if present: ``$NASVIZ_SHARED_DATA/name``, else ``../shared/data/name``
    relative to the repository root. The tables themselves are never part of the repository."""
    env = os.environ.get(SHARED_DATA_ENV)
    candidates = [Path(env).expanduser() / name] if env else []
    candidates.append(REPO_ROOT / ".." / "shared" / "data" / name)
    for path in candidates:
        if path.is_file():
            return path.resolve()
    return None
