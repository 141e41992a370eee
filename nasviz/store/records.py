"""What the run store writes: run statuses, strict JSON encoding, and the checks that turn a
caller's evaluation (a dict or an :class:`~nasviz.objectives.base.Evaluation`) into stored fields."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Mapping

from nasviz.errors import StoreError

RUNNING = "running"
STOPPED = "stopped"
FINISHED = "finished"
FAILED = "failed"
INTERRUPTED = "interrupted"
#: Every status a run can have.
STATUSES = (RUNNING, STOPPED, FINISHED, FAILED, INTERRUPTED)

#: The longest notes a run keeps (a few pages of text: notes are for people, not data).
MAX_NOTES_CHARS = 10_000

#: Columns of :meth:`RunStore.export_csv`, in order.
CSV_COLUMNS = ("index", "step", "arch", "value", "cost", "status", "error", "info", "created")


class UnknownRunError(StoreError, KeyError):
    """No run with that id in this store."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown run"


# ---------------------------------------------------------------------------------------------
# JSON helpers: plain data only; numpy scalars/arrays become numbers/lists, NaN/inf become null
# (strict JSON, so a browser can read an export).


def _default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):  # numpy arrays and scalars
        return obj.tolist()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"{type(obj).__name__} is not plain data and cannot be stored as JSON")


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def to_json(obj: Any) -> str:
    """``obj`` as strict JSON text (numpy converted; NaN and infinities written as ``null``)."""
    try:
        try:
            return json.dumps(obj, allow_nan=False, default=_default, separators=(",", ":"))
        except ValueError:  # a NaN/inf somewhere: rare, so only then walk the structure
            return json.dumps(_finite(json.loads(json.dumps(obj, default=_default))), allow_nan=False,
                              separators=(",", ":"))
    except TypeError as err:
        raise StoreError(str(err)) from None


def _optional_float(x: Any, what: str) -> float | None:
    if x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise StoreError(f"{what} must be a number or None, got {x!r}") from None
    return v if math.isfinite(v) else None


#: Environment variable: seconds without a heartbeat after which a running run is interrupted.
STALE_AFTER_ENV = "NASVIZ_STALE_AFTER"


def default_stale_after() -> float:
    """``$NASVIZ_STALE_AFTER`` seconds if set (a positive number), else 90."""
    text = os.environ.get(STALE_AFTER_ENV, "").strip()
    if not text:
        return 90.0
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise StoreError(f"{STALE_AFTER_ENV} must be a positive number of seconds, got {text!r}")
    return value


def check_status(status: str) -> None:
    if status not in STATUSES:
        raise StoreError(f"unknown run status {status!r}; expected one of {', '.join(STATUSES)}")


def default_name(config: Mapping[str, Any]) -> str:
    parts = [str(config[k]) for k in ("strategy", "metric") if config.get(k)]
    if config.get("seed") is not None:
        parts.append(f"seed {config['seed']}")
    return " ".join(parts)


def csv_cell(x: float | None) -> str:
    return "" if x is None else repr(float(x))


def evaluation_fields(ev: Any, what: str) -> dict[str, Any]:
    """Normalise a dict or an Evaluation-like object into the stored fields, validating them."""
    if not isinstance(ev, Mapping):
        ev = {k: getattr(ev, k) for k in ("arch", "value", "cost", "status", "error", "info") if hasattr(ev, k)}
    arch = ev.get("arch")
    if not isinstance(arch, str) or not arch:
        raise StoreError(f"{what}: 'arch' must be the architecture's string, got {arch!r}")
    status = ev.get("status") or "ok"
    info = ev.get("info") or {}
    if not isinstance(info, Mapping):
        raise StoreError(f"{what}: 'info' must be a dict, got {type(info).__name__}")
    out = {
        "arch": arch,
        "value": _optional_float(ev.get("value"), f"{what}: value"),
        "cost": _optional_float(ev.get("cost"), f"{what}: cost"),
        "status": str(status),
        "error": None if ev.get("error") in (None, "") else str(ev.get("error")),
        "info": dict(info),
    }
    if ev.get("step") is not None:
        out["step"] = int(ev["step"])
    return out

