"""Where a benchmark figure came from: the code, the machine, the libraries and the time.

Every ``python -m nasviz bench NAME`` prints JSON with a ``"provenance"`` object (added by the
command line around the benchmark's ``run``), and every record a benchmark appends to a results
file of its own (``bench cnn-search --results``) carries one too, so a number in the docs can be
traced to the commit that made it and compared only with numbers made under like conditions.
A benchmark written outside the command line calls :func:`collect` at its start and
:meth:`Provenance.finish` at its end.

The object, as it appears in the JSON::

    {"schema": 1,
     "commit": "759e080...",          # HEAD of the checkout the code was imported from (null: not a git checkout)
     "dirty": false,                  # tracked files differed from that commit (null: unknown)
     "nasviz_version": "0.1.0",
     "started_utc": "2026-11-29T10:04:05Z", "finished_utc": "...",
     "wall_seconds": 123.4,
     "cpu_seconds": 240.1,            # this process and the worker processes it waited for
     "command": ["bench", "search", "--tables", "shared", ...],
     "machine": {"cores": 2, "usable_cores": 2, "cpu_model": "...", "system": "Linux 6.1 x86_64",
                 "device": "cpu" | "cuda: NVIDIA H200", "load_average_start": [0.1, 0.2, 0.3],
                 "load_average_end": [...]},
     "versions": {"python": "3.11.2", "torch": "2.5.1", "numpy": "2.1.3", "scipy": "1.14.1",
                  "optuna": "5.0.0" | null, ...every peer package that is installed}}

The host name is not recorded, and the command line writes every path of this machine in a
benchmark's JSON relative to the checkout, or with its folders left out (:func:`portable`): results
files are committed.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any, Sequence

#: Bumped when a field changes meaning; readers check it.
SCHEMA = 1

#: Always reported (``null`` when not installed): the libraries every figure depends on.
CORE_PACKAGES: tuple[tuple[str, str], ...] = (
    ("torch", "torch"), ("numpy", "numpy"), ("scipy", "scipy"), ("optuna", "optuna"),
)

#: Reported when installed: the libraries some benchmarks use, and the peers they compare with.
PEER_PACKAGES: tuple[tuple[str, str], ...] = (
    ("scikit-learn", "scikit-learn"), ("pot", "POT"), ("networkx", "networkx"), ("grakel", "GraKeL"),
    ("mnist1d", "mnist1d"), ("streamlit", "streamlit"), ("playwright", "playwright"),
    ("smac", "smac"), ("dehb", "dehb"), ("botorch", "botorch"), ("hpbandster", "hpbandster"),
    ("optuna-integration", "optuna-integration"),
)

#: The checkout the ``nasviz`` package was imported from (a git worktree in development).
REPO_ROOT = Path(__file__).resolve().parents[2]

#: Keys of the provenance object in a benchmark's JSON.
KEY = "provenance"


@dataclass(frozen=True)
class Machine:
    """What the figures ran on. ``usable_cores`` is what this process may use (affinity)."""

    cores: int
    usable_cores: int
    cpu_model: str
    system: str
    device: str
    load_average_start: tuple[float, float, float] | None
    load_average_end: tuple[float, float, float] | None = None


@dataclass(frozen=True)
class Provenance:
    """Code, machine, library versions and time of one benchmark invocation (module docstring)."""

    commit: str | None
    dirty: bool | None
    nasviz_version: str | None
    started_utc: str
    command: tuple[str, ...]
    machine: Machine
    versions: dict[str, str | None]
    finished_utc: str | None = None
    wall_seconds: float | None = None
    cpu_seconds: float | None = None
    schema: int = SCHEMA
    _start_clock: float = field(default=0.0, repr=False, compare=False)
    _start_cpu: float = field(default=0.0, repr=False, compare=False)

    def finish(self) -> "Provenance":
        """The same provenance with the end time, wall and CPU seconds and the end load average."""
        return replace(
            self,
            finished_utc=_utc_now(),
            wall_seconds=round(time.perf_counter() - self._start_clock, 3),
            cpu_seconds=round(_cpu_seconds() - self._start_cpu, 2),
            machine=replace(self.machine, load_average_end=_load_average()),
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types, in the order of the module docstring; private clocks left out."""
        out = {key: value for key, value in asdict(self).items() if not key.startswith("_")}
        order = ("schema", "commit", "dirty", "nasviz_version", "started_utc", "finished_utc", "wall_seconds",
                 "cpu_seconds", "command", "machine", "versions")
        out["command"] = list(self.command)
        return {key: out[key] for key in order}


def collect(command: Sequence[str] | None = None) -> Provenance:
    """Provenance at the start of a benchmark. ``command``: its arguments (default ``sys.argv[1:]``),
    recorded with no folder of this machine in them (results files are committed; see
    :func:`portable`)."""
    commit, dirty = git_state(REPO_ROOT)
    return Provenance(
        commit=commit,
        dirty=dirty,
        nasviz_version=_version("nasviz"),
        started_utc=_utc_now(),
        command=tuple(portable(str(a)) for a in (sys.argv[1:] if command is None else command)),
        machine=_machine(),
        versions=library_versions(),
        _start_clock=time.perf_counter(),
        _start_cpu=_cpu_seconds(),
    )


def stamp(result: dict[str, Any], started: Provenance) -> dict[str, Any]:
    """``result`` with ``"provenance"`` (the finished ``started``) as its first key."""
    if not isinstance(result, dict):
        raise TypeError(f"a benchmark returns a dict, got {type(result).__name__}")
    return {KEY: started.finish().to_dict(), **{k: v for k, v in result.items() if k != KEY}}


def git_state(root: Path) -> tuple[str | None, bool | None]:
    """(HEAD commit, whether tracked files differ from it) of the checkout at ``root``;
    ``(None, None)`` when it is not a git checkout or git is missing. Untracked files do not
    count: results files written during a run would otherwise make every run dirty."""
    if not (root / ".git").exists():
        return None, None
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=20, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return head or None, bool(status.strip())


def library_versions() -> dict[str, str | None]:
    """Python and the installed versions of the core packages (``None`` if absent) and of the
    peer packages that are installed (absent ones left out). Read from package metadata: nothing
    is imported."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for key, dist in CORE_PACKAGES:
        versions[key] = _version(dist)
    for key, dist in PEER_PACKAGES:
        found = _version(dist)
        if found is not None:
            versions[key] = found
    return versions


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


# The folders of any other absolute path: a separator that starts a word (not one inside a relative
# path or after a URL's host), then one or more folder names, each followed by a separator.
_OTHER_FOLDERS = re.compile(r"(?<![\w.~$/-])/(?:[^\s/:,@=]+/)+")


def portable(text: str) -> str:
    """``text`` with this machine's folders taken out: the checkout itself becomes ``.``, its
    parent folder ``..`` (where the shared data sits beside it), the home folder ``~`` and the
    temporary folder ``$TMPDIR``. Any other absolute path keeps only its last part, after
    ``<elsewhere>/``: a results file written to ``/scratch/run7/r.jsonl`` is recorded as
    ``<elsewhere>/r.jsonl``, so that no committed file names a folder of the machine."""
    for folder, name in ((REPO_ROOT, "."), (REPO_ROOT.parent, ".."), (Path.home(), "~"),
                         (Path(tempfile.gettempdir()), "$TMPDIR")):
        prefix = str(folder)
        if prefix not in ("", "/"):
            text = re.sub(re.escape(prefix) + r"(?=/|$|[\s:,@=])", name, text)
    return _OTHER_FOLDERS.sub("<elsewhere>/", text)


def _machine() -> Machine:
    cores = os.cpu_count() or 0
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = cores
    return Machine(cores=cores, usable_cores=usable, cpu_model=_cpu_model(),
                   system=f"{platform.system()} {platform.release()} {platform.machine()}".strip(),
                   device=_device(), load_average_start=_load_average())


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _device() -> str:
    """``"cuda: <name of device 0>"`` when torch is installed and sees a GPU, else ``"cpu"``
    (every benchmark imports torch anyway; without it no GPU can be used)."""
    if _version("torch") is None:
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return f"cuda: {torch.cuda.get_device_name(0)}"
    return "cpu"


def _load_average() -> tuple[float, float, float] | None:
    try:
        one, five, fifteen = os.getloadavg()
    except (AttributeError, OSError):
        return None
    return round(one, 2), round(five, 2), round(fifteen, 2)


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
