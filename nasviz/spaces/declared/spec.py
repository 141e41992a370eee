"""What a declared space is: :class:`SpaceSpec`, read from a spec file's plain data.

A spec names the positions of an architecture and the choices at each; everything else is
optional and unlocks more of nasviz (``docs/ARCHITECTURE.md``, "How to add a search space")::

    name = "chain8"                                  # the registry name
    description = "chains of 8 layers, 3 operations each"
    operations = ["conv3x3", "conv5x5", "maxpool"]  # the choices of every position ...
    positions = 8                                    # ... named layer_1 .. layer_8 (or a list of names)
    separator = "-"                                  # between positions in an architecture string
    labels = "operation"                             # node labels: the choice, or "position" (layer_3:conv3x3)
    graph = "chain"                                  # a DAG template: WL, edit, path, TW read the graph

    [choices]                                        # a position with choices of its own
    layer_8 = ["conv3x3", "skip"]

    [inputs]                                         # a position that reads one of these (a parameter layer_4_input)
    layer_4 = ["input", "layer_2", "layer_3"]

    [groups]                                         # operations that are alike: the TW kernel's operation tree
    conv = ["conv3x3", "conv5x5"]
    pool = ["maxpool"]

The DAG template ``chain`` builds, besides an input and an output node, one node per position,
labelled by its choice; a position reads the one before it (the input, for the first) unless it
declares ``inputs``, and every position no other position reads feeds the output. Input choices
need the template. Errors name the file, the line of the field (found by its key) and the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from nasviz.arch import INPUT, OUTPUT
from nasviz.errors import InputError

#: Node labels: the choice itself, or the position and the choice (position-dependent labels).
LABEL_STYLES = ("operation", "position")
#: The DAG templates a spec may name.
GRAPHS = ("chain",)
#: Keys a spec may have.
KEYS = ("name", "description", "operations", "positions", "separator", "labels", "graph", "choices", "inputs",
        "groups")
#: A registry name: what a user types after ``--space``.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")
#: Reserved in architecture strings: between a position's choice and its input.
INPUT_MARK = "<"
#: Largest number of positions: keeps enumerating neighbours and drawing graphs cheap.
MAX_POSITIONS = 64


@dataclass(frozen=True)
class Position:
    """One position: its ``name``, its ``choices`` and, in a graph, the ``inputs`` it may read
    (empty: the position before it)."""

    name: str
    choices: tuple[str, ...]
    inputs: tuple[str, ...] = ()

    @property
    def input_parameter(self) -> str:
        """The categorical parameter of the input this position reads."""
        return f"{self.name}_input"


@dataclass(frozen=True)
class SpaceSpec:
    """A declared space: its name, description, positions and the optional groups, graph template
    and label style (module docstring). ``source`` names where it was read from, for messages."""

    name: str
    description: str
    positions: tuple[Position, ...]
    separator: str = "-"
    labels: str = "operation"
    graph: str | None = None
    groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    source: str = "space spec"

    @property
    def operations(self) -> tuple[str, ...]:
        """Every choice of any position, in order of first appearance."""
        return tuple(dict.fromkeys(c for p in self.positions for c in p.choices))

    def label(self, position: Position, choice: str) -> str:
        """The node label ``choice`` gets at ``position``."""
        return f"{position.name}:{choice}" if self.labels == "position" else choice

    def parameters(self) -> dict[str, tuple[str, ...]]:
        """Each categorical parameter and its choices: a position's choice, then (in a graph
        with input choices) the input it reads."""
        out: dict[str, tuple[str, ...]] = {}
        for p in self.positions:
            out[p.name] = p.choices
            if p.inputs:
                out[p.input_parameter] = p.inputs
        return out

    def to_dict(self) -> dict[str, Any]:
        """The spec as the plain data :func:`spec_from_data` reads (a spec file's content)."""
        shared = len({p.choices for p in self.positions}) == 1
        data: dict[str, Any] = {"name": self.name, "description": self.description,
                                "positions": [p.name for p in self.positions], "separator": self.separator,
                                "labels": self.labels}
        if shared:
            data["operations"] = list(self.positions[0].choices)
        else:
            data["choices"] = {p.name: list(p.choices) for p in self.positions}
        if self.graph:
            data["graph"] = self.graph
        if any(p.inputs for p in self.positions):
            data["inputs"] = {p.name: list(p.inputs) for p in self.positions if p.inputs}
        if self.groups:
            data["groups"] = {g: list(members) for g, members in self.groups}
        return data


class _Reader:
    """Checks a spec's plain data field by field; errors name the file, the field and its line."""

    def __init__(self, data: Mapping[str, Any], source: str, text: str | None) -> None:
        self.data, self.source, self.text = data, source, text

    def fail(self, field: str, problem: str) -> InputError:
        return InputError(problem, source=self.source, line=_line_of(self.text, field), field=field)

    def words(self, field: str, value: Any, *, allow_empty: bool = False) -> tuple[str, ...]:
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in value):
            raise self.fail(field, "must be a list of non-empty strings")
        words = tuple(v.strip() for v in value)
        if not words and not allow_empty:
            raise self.fail(field, "must not be empty")
        if len(set(words)) != len(words):
            raise self.fail(field, f"lists {sorted({w for w in words if words.count(w) > 1})[0]!r} twice")
        return words

    def text_field(self, field: str, default: str | None = None) -> str:
        value = self.data.get(field, default)
        if not isinstance(value, str) or not value.strip():
            raise self.fail(field, "must be a non-empty string" if field in self.data else "is missing")
        return value.strip()

    def table(self, field: str) -> dict[str, Any]:
        value = self.data.get(field, {})
        if not isinstance(value, Mapping):
            raise self.fail(field, "must be a table of position -> list")
        return dict(value)

    def position_names(self) -> tuple[str, ...]:
        value = self.data.get("positions")
        if isinstance(value, int) and not isinstance(value, bool):
            if not 1 <= value <= MAX_POSITIONS:
                raise self.fail("positions", f"must be between 1 and {MAX_POSITIONS}, got {value}")
            return tuple(f"layer_{i}" for i in range(1, value + 1))
        names = self.words("positions", value)
        if len(names) > MAX_POSITIONS:
            raise self.fail("positions", f"has {len(names)} names; at most {MAX_POSITIONS}")
        taken = {INPUT, OUTPUT} & set(names)
        if taken:
            raise self.fail("positions", f"{sorted(taken)[0]!r} names the graph's own node; call the position otherwise")
        return names


def spec_from_data(data: Mapping[str, Any], source: str = "space spec", text: str | None = None) -> SpaceSpec:
    """The :class:`SpaceSpec` of a spec file's data (``text``: the file, to find a field's line).

    Raises :class:`~nasviz.errors.InputError` naming ``source``, the line and the field.
    """
    r = _Reader(data, source, text)
    if not isinstance(data, Mapping):
        raise InputError("must be a table of keys (name, positions, operations, ...)", source=source)
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise r.fail(unknown[0], f"is not a spec key; the keys are {', '.join(KEYS)}")
    name = r.text_field("name")
    if not _NAME.fullmatch(name):
        raise r.fail("name", "must be letters, digits and _ . + - (at most 64, starting with a letter or digit)")
    names = r.position_names()
    own, inputs = r.table("choices"), r.table("inputs")
    for field, table in (("choices", own), ("inputs", inputs)):
        stray = sorted(set(table) - set(names))
        if stray:
            raise r.fail(f"{field}.{stray[0]}", f"names no position; the positions are {', '.join(names)}")
    shared = r.words("operations", data["operations"]) if "operations" in data else None
    positions = []
    for i, pos in enumerate(names):
        if pos in own:
            choices = r.words(f"choices.{pos}", own[pos])
        elif shared is not None:
            choices = shared
        else:
            raise r.fail("operations", f"is missing, and position {pos!r} has no choices of its own")
        reads = r.words(f"inputs.{pos}", inputs[pos]) if pos in inputs else ()
        earlier = {INPUT, *names[:i]}
        bad = [x for x in reads if x not in earlier]
        if bad:
            raise r.fail(f"inputs.{pos}", f"{bad[0]!r} is not an earlier position or 'input'")
        positions.append(Position(pos, choices, reads))
    spec = SpaceSpec(name=name, description=r.text_field("description", f"declared space {name}"),
                     positions=tuple(positions), separator=r.text_field("separator", "-"),
                     labels=_one_of(r, "labels", LABEL_STYLES, "operation"),
                     graph=_one_of(r, "graph", GRAPHS, None), groups=_groups(r, positions), source=source)
    _check_strings(r, spec)
    if inputs and spec.graph is None:
        raise r.fail("inputs", "input choices need the DAG template: add graph = \"chain\"")
    return spec


def _one_of(r: _Reader, field: str, allowed: Sequence[str], default: str | None) -> str | None:
    if field not in r.data:
        return default
    value = r.data[field]
    if value not in allowed:
        raise r.fail(field, f"must be one of {', '.join(repr(a) for a in allowed)}, got {value!r}")
    return str(value)


def _groups(r: _Reader, positions: Sequence[Position]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    groups = r.table("groups")
    operations = {c for p in positions for c in p.choices}
    seen: dict[str, str] = {}
    out = []
    for group, members in groups.items():
        words = r.words(f"groups.{group}", members)
        for op in words:
            if op not in operations:
                raise r.fail(f"groups.{group}", f"{op!r} is not an operation of any position")
            if op in seen:
                raise r.fail(f"groups.{group}", f"{op!r} is in group {seen[op]!r} already")
            seen[op] = str(group)
        out.append((str(group), words))
    return tuple(out)


def _check_strings(r: _Reader, spec: SpaceSpec) -> None:
    """Every choice and input must survive the architecture string: no separator, no input mark."""
    if INPUT_MARK in spec.separator:
        raise r.fail("separator", f"must not contain {INPUT_MARK!r} (it marks a position's input)")
    for p in spec.positions:
        for word in (*p.choices, *p.inputs):
            if spec.separator in word or INPUT_MARK in word:
                field = f"choices.{p.name}" if word in p.choices and p.name in r.table("choices") else (
                    "operations" if word in p.choices else f"inputs.{p.name}")
                raise r.fail(field, f"{word!r} contains the separator {spec.separator!r} or {INPUT_MARK!r}; "
                                    "choose another separator")


def _line_of(text: str | None, field: str) -> int | None:
    """The 1-based line that defines ``field`` in ``text`` (a TOML ``key =`` / ``[key]`` or a JSON
    ``"key":``); a dotted field (``inputs.layer_4``) is looked for after its table's line."""
    if not text:
        return None
    lines = text.splitlines()
    start = 0
    for key in field.split("."):
        pattern = re.compile(rf'^\s*(?:\[\s*)?"?{re.escape(key)}"?\s*[=:\]]|"{re.escape(key)}"\s*:')
        found = next((i for i in range(start, len(lines)) if pattern.search(lines[i])), None)
        if found is None:
            return start + 1 if start else None
        start = found
    return start + 1


__all__ = ["GRAPHS", "INPUT_MARK", "KEYS", "LABEL_STYLES", "Position", "SpaceSpec", "spec_from_data"]
