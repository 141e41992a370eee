"""Plugins: components that live outside nasviz, found the same way in every process.

A package adds components through Python entry points, one group per registry (the convention of
pytest, Optuna's integrations and Jupyter)::

    [project.entry-points."nasviz.spaces"]
    chain8 = "nasviz_chain.space:ChainSpace"      # a SearchSpace subclass
    [project.entry-points."nasviz.kernels"]
    mykernel = "mypkg.kernels:ENTRY"              # a nasviz.registry.Entry

An entry point names a class (registered under its ``name``, else the entry point's, with its
``description``), an :class:`~nasviz.registry.Entry`, a list of them, or a module whose import
registers what it wants. The groups are :data:`nasviz.components.PLUGIN_GROUPS`.

For one file during development, ``NASVIZ_PLUGINS`` lists comma-separated items: module names
(imported from ``sys.path``), ``.py`` files, and space spec files (``.toml``, ``.json``:
:mod:`nasviz.spaces.declared`) or tables whose columns declare a space (``.csv``). Files are read
relative to the current folder; :func:`load` rewrites them as absolute paths in the environment so
the processes this one starts (search workers, executors, Dask's local workers) find them too.

:func:`load` runs once per process. It is the read hook of the registries
(:func:`nasviz.registry.set_read_hook`, set in :mod:`nasviz.components`), so the CLI (its choices
are built after it), the Streamlit process and every worker load plugins the same way, at their
first look at a registry; the entry points of those processes call it explicitly too. A plugin
that fails to load is skipped with one line naming it and the error (:class:`PluginProblem`,
printed to stderr, listed by ``python -m nasviz components`` and shown as text on the page), never
a crash. Every entry records where it came from (:attr:`nasviz.registry.Entry.origin`).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import inspect
import os
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from nasviz.registry import Entry, Registry, registering_from, replace_entry

#: The environment variable of development plugins (see the module docstring).
PLUGINS_ENV = "NASVIZ_PLUGINS"
#: Registry of the files ``NASVIZ_PLUGINS`` may name besides modules: suffix -> the loader, as a
#: ``"module:function"`` string imported when used (``function(path, registry, origin) -> Entry``).
FILE_LOADERS: dict[str, str] = {
    ".toml": "nasviz.spaces.declared.loading:register_spec_file",
    ".json": "nasviz.spaces.declared.loading:register_spec_file",
    ".csv": "nasviz.spaces.declared.loading:register_table_space",
}
#: The group whose registry space files are added to.
SPACES_GROUP = "nasviz.spaces"
#: Longest error text a :class:`PluginProblem` keeps.
MAX_ERROR_CHARS = 300


@dataclass(frozen=True)
class PluginProblem:
    """A plugin that could not be loaded: which one, and the error in one line."""

    plugin: str
    error: str

    def __str__(self) -> str:
        return f"plugin {self.plugin} was skipped: {self.error}"


_STATE: dict[str, Any] = {"loaded": False, "problems": []}


def problems() -> tuple[PluginProblem, ...]:
    """The plugins this process could not load (empty before :func:`load`)."""
    return tuple(_STATE["problems"])


def load(groups: Mapping[str, Registry], *, report: bool = True) -> tuple[PluginProblem, ...]:
    """Load every entry point of ``groups`` (group -> registry) and every ``NASVIZ_PLUGINS`` item,
    once per process; later calls return the same problems. ``report``: print each problem as
    one line to stderr."""
    if _STATE["loaded"]:
        return problems()
    _STATE["loaded"] = True
    found: list[PluginProblem] = []
    for group, registry in groups.items():
        for point in _entry_points(group):
            problem = _load_entry_point(point, group, registry)
            if problem is not None:
                found.append(problem)
    items = [item.strip() for item in os.environ.get(PLUGINS_ENV, "").split(",") if item.strip()]
    for item in items:
        problem = load_item(item, groups)[1]
        if problem is not None:
            found.append(problem)
    _export([str(Path(i).resolve()) if is_file_item(i) else i for i in items], replace=True)
    _STATE["problems"] = found
    if report:
        for problem in found:
            print(f"warning: {problem}", file=sys.stderr, flush=True)
    return tuple(found)


def is_file_item(item: str) -> bool:
    """Whether a ``NASVIZ_PLUGINS`` item names a file (by its suffix) rather than a module."""
    return Path(item).suffix.lower() in (*FILE_LOADERS, ".py")


def load_item(item: str, groups: Mapping[str, Registry], *, export: bool = False) -> tuple[list[str], PluginProblem | None]:
    """Load one ``NASVIZ_PLUGINS`` item: ``(names it registered or, for a space file, declares;
    problem or None)``.

    ``export``: add it (as an absolute path when it is a file) to this process's
    ``NASVIZ_PLUGINS``, so that processes started from here load it too (``--space FILE``).
    """
    suffix = Path(item).suffix.lower()
    origin = f"NASVIZ_PLUGINS module {item}" if not is_file_item(item) else (
        f"spec file {item}" if suffix in (".toml", ".json") else f"table columns {item}" if suffix == ".csv"
        else f"NASVIZ_PLUGINS file {item}")
    before = _snapshot(groups)
    declared: list[str] = []
    try:
        with registering_from(origin):
            if suffix in FILE_LOADERS:
                loader = Entry("file loader", "loads a space file", FILE_LOADERS[suffix]).load()
                declared.append(loader(Path(item), groups[SPACES_GROUP], origin).name)  # new, or the same again
            elif suffix == ".py":
                _import_file(Path(item))
            else:
                importlib.import_module(item)
    except Exception as err:  # noqa: BLE001 - any failure of outside code is one line, never a crash
        return [], PluginProblem(f"{item!r} ({PLUGINS_ENV})", _one_line(err))
    if export:
        _export([str(Path(item).resolve()) if is_file_item(item) else item], replace=False)
    return list(dict.fromkeys([*declared, *_added(groups, before)])), None


def _entry_points(group: str) -> list[importlib.metadata.EntryPoint]:
    try:
        return list(importlib.metadata.entry_points(group=group))
    except Exception:  # noqa: BLE001 - a broken installation's metadata must not stop nasviz
        return []


def _distribution(point: importlib.metadata.EntryPoint) -> str:
    dist = getattr(point, "dist", None)
    return f"{dist.name}=={dist.version}" if dist is not None else "unknown distribution"


def _load_entry_point(point: importlib.metadata.EntryPoint, group: str, registry: Registry) -> PluginProblem | None:
    origin = f"entry point {point.name} ({_distribution(point)})"
    try:
        with registering_from(origin):
            _register(point.load(), point.name, registry, origin)
    except Exception as err:  # noqa: BLE001 - see load_item
        return PluginProblem(f"{point.name!r} of {group} ({_distribution(point)})", _one_line(err))
    return None


def _register(obj: Any, name: str, registry: Registry, origin: str) -> None:
    """Register what an entry point names (see the module docstring)."""
    if isinstance(obj, types.ModuleType):
        return  # importing it registered its components
    if isinstance(obj, Entry):
        registry.register(obj if obj.origin else replace_entry(obj, origin=origin))
    elif isinstance(obj, (list, tuple)) and obj and all(isinstance(e, Entry) for e in obj):
        for entry in obj:
            _register(entry, name, registry, origin)
    elif inspect.isclass(obj):
        doc = (inspect.getdoc(obj) or "").strip().splitlines()
        description = str(getattr(obj, "description", "") or (doc[0] if doc else "") or name)
        registry.register(Entry(str(getattr(obj, "name", "") or name), description, obj, origin=origin))
    else:
        raise TypeError(f"names a {type(obj).__name__}; a {registry.kind} entry point names a class, an Entry, "
                        "a list of entries or a module")


def _import_file(path: Path) -> None:
    """Import a ``.py`` file as the module of its stem (once: a second load of it is a no-op)."""
    path = path.resolve()
    existing = sys.modules.get(path.stem)
    if existing is not None and getattr(existing, "__file__", None) and Path(existing.__file__).resolve() == path:
        return
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path.name}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(path.stem, None)
        raise


def _export(items: list[str], *, replace: bool) -> None:
    current = [] if replace else [i.strip() for i in os.environ.get(PLUGINS_ENV, "").split(",") if i.strip()]
    merged = list(dict.fromkeys([*current, *items]))
    if merged:
        os.environ[PLUGINS_ENV] = ",".join(merged)


def _snapshot(groups: Mapping[str, Registry]) -> dict[str, set[str]]:
    return {group: set(registry.names()) for group, registry in groups.items()}


def _added(groups: Mapping[str, Registry], before: Mapping[str, set[str]]) -> list[str]:
    return [name for group, registry in groups.items() for name in registry.names() if name not in before[group]]


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or "(no message)"
    line = f"{type(err).__name__}: {text}"
    return line if len(line) <= MAX_ERROR_CHARS else line[: MAX_ERROR_CHARS - 3] + "..."


def reset_for_tests() -> None:
    """Forget that plugins were loaded (tests that load them again in one process)."""
    _STATE.update(loaded=False, problems=[])
