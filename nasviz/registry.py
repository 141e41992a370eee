"""One registry type for every pluggable component: spaces, kernels, strategies, pools, ...

A :class:`Registry` maps a name to an :class:`Entry`: a one-line description, a factory that
builds the component, the options the factory takes (:class:`Option`, typed, with defaults and
help) and free-form capabilities (which representations a kernel reads, which spaces a strategy
searches, ...). Everything that lists components is generated from the registries: the CLI's
choices and help, the dashboard's select boxes, the compatibility checks
(:func:`nasviz.components.check_compatible`) and the README's table of components
(``python -m nasviz components --markdown``). Adding a component is one module plus one
``register`` call; nothing else has to know about it.

>>> KERNELS.names()
['tw', 'tw1g', 'tw2g', 'tw3g', 'wl', 'otmann', 'edit', 'path', 'ot', 'gw']
>>> KERNELS.get("tw2g").description
'tree-Wasserstein, 2-gram operations + in/out-degree (paper 000 Eq. 25)'
>>> KERNELS.create("tw2g", space=...)          # builds the kernel with the entry's preset options

Factories are given as ``"module:attribute"`` strings and imported on first use, so listing
components costs no heavy import (torch, POT) and modules can register without import cycles.

Every entry records where it came from (:attr:`Entry.origin`): ``built-in``, an entry point of an
installed package, a module named in ``NASVIZ_PLUGINS``, a space spec file, or the module that
called ``register``. Plugins (:mod:`nasviz.plugins`) are loaded by a hook that runs once per
process, at the first read of any registry (:func:`set_read_hook`), so a CLI's choices, a page's
select boxes and a worker's lookups all see them. Registering the same component twice (a module
run as ``__main__`` and then imported by name) is a no-op.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Generic, Iterator, Mapping, Sequence, TypeVar

from nasviz.errors import ConfigError, LimitError

T = TypeVar("T")


@dataclass(frozen=True)
class Option:
    """A setting a component takes: name, type, help, and the allowed values if finite.

    ``kind`` is one of ``"int"``, ``"float"``, ``"bool"``, ``"str"``, ``"choice"`` (one of
    ``choices``, or of the names in registry ``choices_from``) or ``"float?"`` (a float or
    ``None``, written ``none``). The default is the factory's own (:meth:`Entry.defaults` reads
    it from the factory's signature), so it is written in one place only.
    """

    name: str
    kind: str
    help: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    choices_from: "Registry | None" = None
    #: The values a search started from a browser may use, ``(low, high)``, either end ``None``
    #: for unbounded. Set where one step's work grows with the value (pool sizes, restarts, the
    #: length of an annealing schedule), so every visitor's work stays bounded; the command line
    #: is not bound. A ``float?`` option's ``none`` (off: uncapped) is outside a range with a ``high``.
    page_range: tuple[float | None, float | None] | None = None

    def allowed(self) -> tuple[str, ...]:
        """The values a ``choice`` option accepts (read from its registry when it has one)."""
        return tuple(self.choices_from.names()) if self.choices_from is not None else self.choices

    def parse(self, value: Any, owner: str) -> Any:
        """``value`` (a string from the CLI or a form, or already typed) as this option's type.

        Raises :class:`~nasviz.errors.ConfigError` naming the owner and the option.
        """
        where = f"{owner}: option {self.name!r}"
        try:
            if self.kind == "bool":
                parsed: Any = value if isinstance(value, bool) else str(value).strip().lower() in ("1", "true", "yes", "on")
            elif self.kind == "float?":
                parsed = None if value is None or str(value).strip().lower() in ("none", "off", "") else float(value)
            elif self.kind == "int":
                if isinstance(value, float) and not value.is_integer():
                    raise ValueError
                parsed = int(value)
            elif self.kind == "float":
                parsed = float(value)
            else:
                parsed = str(value).strip()
        except (TypeError, ValueError):
            raise ConfigError(f"{where} must be a {self.kind}, got {value!r}") from None
        if self.kind == "choice" and parsed not in self.allowed():
            raise ConfigError(f"{where} must be one of {', '.join(self.allowed())}, got {parsed!r}")
        if self.minimum is not None and parsed is not None and isinstance(parsed, (int, float)) and parsed < self.minimum:
            raise ConfigError(f"{where} must be at least {self.minimum:g}, got {parsed!r}")
        return parsed

    def check_page(self, value: Any, owner: str) -> None:
        """Refuse ``value`` (already parsed) outside :attr:`page_range`, with a
        :class:`~nasviz.errors.LimitError` that names the owner, the option and the range."""
        if self.page_range is None:
            return
        low, high = self.page_range
        inside = (value is not None or high is None) and (
            value is None or ((low is None or value >= low) and (high is None or value <= high)))
        if not inside:
            bounds = " and ".join(part for part in (
                None if low is None else f"at least {low:g}", None if high is None else f"at most {high:g}") if part)
            shown = "none (uncapped)" if value is None else repr(value)
            raise LimitError(f"{owner}: option {self.name!r} must be {bounds} in a search started from the page, "
                             f"got {shown}; the command line has no such limit", field=self.name)


@dataclass(frozen=True)
class Entry(Generic[T]):
    """A registered component.

    Attributes
    ----------
    name : str
        Registry key (what users type).
    description : str
        One line, shown in help texts, select boxes and the README's component table.
    factory : str or callable
        ``"module:attribute"`` (imported on first use) or a callable returning the component.
    options : tuple of Option
        The options :meth:`Registry.create` accepts (others are refused with a clear message).
    preset : mapping
        Options fixed by this entry (``tw2g`` is ``tw`` with ``ngram=2``); the caller may
        override them only where ``options`` lists them.
    capabilities : mapping
        Free-form facts other code checks: ``reads`` (kernels), ``representations``
        (spaces), ``spaces`` / ``batch`` (strategies), ...
    paper : str
        Short reference (``"000 Eq. (25)"``), resolvable in ``docs/REFERENCES.md``.
    origin : str
        Where the entry came from: ``"built-in"``, ``"entry point NAME (dist==version)"``,
        ``"NASVIZ_PLUGINS module NAME"``, ``"spec file PATH"``, ``"module NAME"``. Filled in by
        :meth:`Registry.register` when empty.
    """

    name: str
    description: str
    factory: str | Callable[..., T]
    options: tuple[Option, ...] = ()
    preset: Mapping[str, Any] = field(default_factory=dict)
    capabilities: Mapping[str, Any] = field(default_factory=dict)
    paper: str = ""
    origin: str = ""

    @property
    def built_in(self) -> bool:
        return self.origin == BUILT_IN

    def load(self) -> Callable[..., T]:
        """The factory, imported if it was given as a string."""
        if callable(self.factory):
            return self.factory
        module, _, attribute = self.factory.partition(":")
        return getattr(importlib.import_module(module), attribute)

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)

    def parse_options(self, options: Mapping[str, Any], owner: str | None = None) -> dict[str, Any]:
        """Validate and type ``options`` (``None`` values are dropped: "not given").

        Raises :class:`~nasviz.errors.ConfigError` for an unknown option, listing the known ones.
        """
        owner = owner or self.name
        parsed: dict[str, Any] = {}
        for key, value in options.items():
            if value is None:
                continue
            option = self.option(key)
            if option is None:
                known = ", ".join(o.name for o in self.options) or "none"
                raise ConfigError(f"{owner} does not take option {key!r}; it takes: {known}")
            parsed[key] = option.parse(value, owner)
        return parsed

    def check_page_options(self, options: Mapping[str, Any], owner: str | None = None) -> None:
        """Refuse parsed ``options`` a search started from a browser may not use
        (:meth:`Option.check_page`: :class:`~nasviz.errors.LimitError`)."""
        for key, value in options.items():
            option = self.option(key)
            if option is not None:
                option.check_page(value, owner or self.name)

    def defaults(self) -> dict[str, Any]:
        """Every option's effective default: the preset's value where it sets one, else the
        factory's keyword default (``None`` if the factory has none)."""
        try:
            parameters = inspect.signature(self.load()).parameters
        except (TypeError, ValueError):  # a builtin without a signature
            parameters = {}
        own = {k: p.default for k, p in parameters.items() if p.default is not inspect.Parameter.empty}
        return {o.name: self.preset.get(o.name, own.get(o.name)) for o in self.options}


#: :attr:`Entry.origin` of the components nasviz itself registers.
BUILT_IN = "built-in"

#: The origin given to entries registered while a plugin loads (innermost last), see :func:`registering_from`.
_LOADING: list[str] = []
#: Run once, before the first read of any registry (:func:`set_read_hook`): plugin loading.
_READ_HOOK: dict[str, Any] = {"hook": None, "ran": False}


@contextmanager
def registering_from(origin: str) -> Iterator[None]:
    """Entries registered inside this block without an origin of their own get ``origin``
    (:mod:`nasviz.plugins` wraps each plugin's import in it)."""
    _LOADING.append(origin)
    try:
        yield
    finally:
        _LOADING.pop()


def set_read_hook(hook: Callable[[], Any] | None) -> None:
    """Call ``hook`` once, before any registry is first read in this process (names, lookups,
    listings); :mod:`nasviz.components` sets plugin loading here."""
    _READ_HOOK.update(hook=hook, ran=False)


def _run_read_hook() -> None:
    if not _READ_HOOK["ran"] and _READ_HOOK["hook"] is not None:
        _READ_HOOK["ran"] = True  # first: a plugin that reads a registry while it loads does not recurse
        _READ_HOOK["hook"]()


def _factory_module(factory: Any) -> str:
    if isinstance(factory, str):
        return factory.partition(":")[0]
    return str(getattr(factory, "__module__", "") or "")


def _origin_of(factory: Any) -> str:
    """The origin of an entry registered outside any plugin loading: built-in for nasviz's own
    factories, else the module that defines the factory."""
    module = _factory_module(factory)
    if module == "nasviz" or module.startswith("nasviz."):
        return BUILT_IN
    if module == "__main__":
        path = getattr(sys.modules.get("__main__"), "__file__", None)
        return f"module __main__ ({Path(path).name})" if path else "module __main__"
    return f"module {module}" if module else "registered at run time"


def _factory_identity(factory: Any) -> tuple[str, str]:
    """What makes two factories the same component: a ``"module:attribute"`` string itself; a
    callable's qualified name and the file that defines it, so that a module run as ``__main__``
    and imported again by name registers the same thing twice, not two things."""
    if isinstance(factory, str):
        return factory, ""
    module = sys.modules.get(_factory_module(factory))
    source = getattr(module, "__file__", None)
    where = str(Path(source).resolve()) if source else _factory_module(factory)
    return str(getattr(factory, "__qualname__", repr(factory))), where


def _same_component(a: Entry, b: Entry) -> bool:
    return (a.name, a.description, _factory_identity(a.factory), a.options, dict(a.preset), dict(a.capabilities)) == \
        (b.name, b.description, _factory_identity(b.factory), b.options, dict(b.preset), dict(b.capabilities))


class Registry(Generic[T]):
    """Name -> :class:`Entry` for one kind of component (``"kernel"``, ``"space"``, ...)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry[T]] = {}

    def register(self, entry: Entry[T], *, replace: bool = False) -> Entry[T]:
        """Add ``entry`` (its :attr:`~Entry.origin` filled in when empty) and return it as stored.

        Registering a taken name is refused unless ``replace``, except for the same component
        again (same description, options, preset and factory, where a factory defined in a file
        run as ``__main__`` equals the one of that file imported by name): a no-op that keeps
        the entry whose factory can be imported by name.
        """
        if not entry.name or not entry.description:
            raise ConfigError(f"a {self.kind} entry needs a name and a one-line description")
        if not entry.origin:
            entry = replace_entry(entry, origin=_LOADING[-1] if _LOADING else _origin_of(entry.factory))
        old = self._entries.get(entry.name)
        if old is not None and not replace:
            if not _same_component(old, entry):
                raise ConfigError(f"a {self.kind} called {entry.name!r} is already registered ({old.origin}); "
                                  f"{entry.origin} registers another one under that name")
            if _factory_module(old.factory) != "__main__" or _factory_module(entry.factory) == "__main__":
                return old
        self._entries[entry.name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Remove ``name`` (tests that register a toy component clean up with this)."""
        self._entries.pop(name, None)

    def get(self, name: str) -> Entry[T]:
        """The entry called ``name``; an unknown name lists the known ones."""
        _run_read_hook()
        try:
            return self._entries[name]
        except KeyError:
            raise ConfigError(f"unknown {self.kind} {name!r}; known: {', '.join(self._entries)}") from None

    def __contains__(self, name: object) -> bool:
        _run_read_hook()
        return name in self._entries

    def __iter__(self) -> Iterator[Entry[T]]:
        _run_read_hook()
        return iter(list(self._entries.values()))

    def names(self, where: Callable[[Entry[T]], bool] | None = None) -> list[str]:
        """Registered names in registration order, optionally filtered by ``where(entry)``."""
        _run_read_hook()
        return [e.name for e in self._entries.values() if where is None or where(e)]

    def create(self, name: str, /, *args: Any, **options: Any) -> T:
        """Build component ``name``: its preset, overridden by the validated ``options``.

        Positional ``args`` (a space, a seed, ...) are passed through untouched.
        """
        entry = self.get(name)
        parsed = entry.parse_options(options, owner=f"{self.kind} {name!r}")
        return entry.load()(*args, **{**entry.preset, **parsed})

    def help(self, origins: bool = False) -> str:
        """``name  description`` lines, for ``--help`` texts; ``origins``: each entry not
        built in says where it came from."""
        entries = list(self)
        width = max((len(e.name) for e in entries), default=0)
        return "\n".join(f"  {e.name:<{width}}  {e.description}" + ("" if not origins or e.built_in else f"  [{e.origin}]")
                         for e in entries)

    def markdown(self, columns: Sequence[tuple[str, Callable[[Entry[T]], str]]] = (), built_in_only: bool = False) -> str:
        """A Markdown table of the entries (name, description, extra ``columns``); the README's
        tables list the ``built_in_only`` ones, whatever plugins this installation has."""
        head = ["name", "description", *(c for c, _ in columns)]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for e in self:
            if built_in_only and not e.built_in:
                continue
            cells = [f"`{e.name}`", e.description, *(fn(e) for _, fn in columns)]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)


def replace_entry(entry: Entry[T], **changes: Any) -> Entry[T]:
    """``entry`` with ``changes`` (a frozen dataclass: a new entry)."""
    return replace(entry, **changes)
