"""A search space from a :class:`~nasviz.spaces.declared.spec.SpaceSpec`: no Python needed.

:func:`space_class` makes one :class:`DeclaredSpace` subclass per spec (the registry keeps
classes, and asks them which representations they provide). An architecture is the assignment
of the spec's categorical parameters, held as a labelled DAG: input, one node per position
labelled by its choice, output; with the ``chain`` template each position reads the position
before it or its chosen input, without it the nodes simply follow each other (the graph is then
only drawn, never read by a kernel). What the space provides:

================================  =======================================================
always                            ``categorical-parameters``: Optuna, the slot and Hamming
                                  kernels, gradient-guided mutation; mutation, neighbours,
                                  enumeration (finite); tables with one column per parameter
every position has the same       ``operation-slots``: the Compare page's parallel
choices, no input choices         coordinates, the Interpretability page's slot views
``groups``                        ``operation-tree``: TW, OT (with the graph)
``graph = "chain"``               ``labelled-dag`` and ``paths``: WL, edit, path, GW, and TW
================================  =======================================================

An architecture is written as the choices joined by the spec's separator, a position with input
choices as ``choice<input`` (``conv3x3-maxpool<input-conv5x5<layer_1``).
"""

from __future__ import annotations

import itertools
import math
from typing import ClassVar, Iterator, Mapping, Sequence

import numpy as np

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.spaces.base import (LABELLED_DAG, OPERATION_SLOTS, OPERATION_TREE, PARAMETERS, PATHS, SearchSpace,
                                check_parameters)
from nasviz.spaces.declared.spec import INPUT_MARK, SpaceSpec


def representations_of(spec: SpaceSpec) -> frozenset[str]:
    """What a space of ``spec`` provides (module docstring)."""
    found = {PARAMETERS}
    if len({p.choices for p in spec.positions}) == 1 and not any(p.inputs for p in spec.positions):
        found.add(OPERATION_SLOTS)
    if spec.groups:
        found.add(OPERATION_TREE)
    if spec.graph:
        found |= {LABELLED_DAG, PATHS}
    return frozenset(found)


class DeclaredSpace(SearchSpace):
    """A space of a spec (see the module docstring); subclasses are made by :func:`space_class`."""

    spec: ClassVar[SpaceSpec]

    # ------------------------------------------------------------------ parameters
    def parameter_choices(self) -> dict[str, tuple[str, ...]]:
        return self.spec.parameters()

    def to_parameters(self, arch: Architecture) -> dict[str, str]:
        """The assignment ``arch`` holds: node ``k + 1`` is position ``k``; its input is its parent."""
        out: dict[str, str] = {}
        names = [INPUT, *(p.name for p in self.spec.positions)]
        parents = arch.predecessors()
        for k, p in enumerate(self.spec.positions):
            out[p.name] = self._choice(p, arch.labels[k + 1])
            if p.inputs:
                out[p.input_parameter] = names[parents[k + 1][0]]
        return out

    def from_parameters(self, params: Mapping[str, str]) -> Architecture:
        check_parameters(params, self.parameter_choices())
        spec, n = self.spec, len(self.spec.positions)
        index = {INPUT: 0, **{p.name: k + 1 for k, p in enumerate(spec.positions)}}
        labels = (INPUT, *(spec.label(p, params[p.name]) for p in spec.positions), OUTPUT)
        edges = []
        for k, p in enumerate(spec.positions):
            edges.append((index[params[p.input_parameter]] if p.inputs else k, k + 1))
        if spec.graph:
            read = {u for u, _ in edges}
            edges += [(k, n + 1) for k in range(1, n + 1) if k not in read]
        else:
            edges.append((n, n + 1))
        return Architecture(labels, tuple(edges))

    def parameter_label(self, name: str, choice: str) -> str | None:
        position = next((p for p in self.spec.positions if p.name == name), None)
        return None if position is None else self.spec.label(position, choice)

    def _choice(self, position, label: str) -> str:
        prefix = f"{position.name}:" if self.spec.labels == "position" else ""
        return label[len(prefix):] if prefix and label.startswith(prefix) else label

    # ------------------------------------------------------------------ strings
    def format(self, arch: Architecture) -> str:
        params = self.to_parameters(arch)
        parts = [params[p.name] + (f"{INPUT_MARK}{params[p.input_parameter]}" if p.inputs else "")
                 for p in self.spec.positions]
        return self.spec.separator.join(parts)

    def parse(self, text: str) -> Architecture:
        parts = str(text).strip().split(self.spec.separator)
        positions = self.spec.positions
        if len(parts) != len(positions):
            raise ValueError(f"a {self.name} architecture has {len(positions)} positions joined by "
                             f"{self.spec.separator!r}, got {len(parts)}")
        params: dict[str, str] = {}
        for p, part in zip(positions, parts):
            choice, mark, source = part.strip().partition(INPUT_MARK)
            if bool(mark) != bool(p.inputs):
                need = f"'choice{INPUT_MARK}input'" if p.inputs else "a choice without an input"
                raise ValueError(f"position {p.name!r} is written as {need}")
            params[p.name] = choice.strip()
            if p.inputs:
                params[p.input_parameter] = source.strip()
        return self.from_parameters(params)

    def parse_columns(self, values: tuple[str, ...]) -> Architecture:
        """A table row with one column per parameter (:attr:`table_columns`), or one ``arch`` column."""
        if len(values) == 1:
            return self.parse(values[0])
        return self.from_parameters(dict(zip(self.parameter_choices(), (v.strip() for v in values))))

    # ------------------------------------------------------------------ moves
    def sample(self, rng: np.random.Generator, n: int = 1) -> list[Architecture]:
        choices = self.parameter_choices()
        return [self.from_parameters({k: c[int(rng.integers(len(c)))] for k, c in choices.items()}) for _ in range(n)]

    def neighbours(self, arch: Architecture) -> list[Architecture]:
        """Every architecture that differs in one parameter."""
        params = self.to_parameters(arch)
        return [self.from_parameters({**params, name: c}) for name, choices in self.parameter_choices().items()
                for c in choices if c != params[name]]

    def mutate(self, arch: Architecture, rng: np.random.Generator) -> Architecture:
        """A uniform draw from :meth:`neighbours` without listing them: a parameter with
        probability proportional to its other choices, then one of those."""
        params = self.to_parameters(arch)
        choices = self.parameter_choices()
        names = [n for n in choices if len(choices[n]) > 1]
        if not names:
            return arch
        weights = np.array([len(choices[n]) - 1 for n in names], dtype=float)
        name = names[int(rng.choice(len(names), p=weights / weights.sum()))]
        others = [c for c in choices[name] if c != params[name]]
        return self.from_parameters({**params, name: others[int(rng.integers(len(others)))]})

    def canonical_key(self, arch: Architecture) -> str:
        """The assignment itself: a declared space claims no equivalences between its architectures."""
        return self.format(arch)

    @property
    def size(self) -> int:
        return math.prod(len(c) for c in self.parameter_choices().values())

    def enumerate(self) -> Iterator[Architecture]:
        choices = self.parameter_choices()
        return (self.from_parameters(dict(zip(choices, combo))) for combo in itertools.product(*choices.values()))

    # ------------------------------------------------------------------ other representations
    def operation_groups(self) -> Mapping[str, tuple[str, ...]]:
        if OPERATION_TREE not in self.representations:
            raise self._missing(OPERATION_TREE)
        groups = {g: tuple(dict.fromkeys(self.spec.label(p, op) for op in members for p in self.spec.positions
                                         if op in p.choices)) for g, members in self.spec.groups}
        return {**groups, INPUT: (INPUT,), OUTPUT: (OUTPUT,)}

    def _slot_spec(self):
        if OPERATION_SLOTS not in self.representations:
            raise self._missing(OPERATION_SLOTS)
        return self.spec.positions

    def slot_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self._slot_spec())

    def slot_choices(self) -> tuple[str, ...]:
        return self._slot_spec()[0].choices

    def slots(self, arch: Architecture) -> tuple[str, ...]:
        self._slot_spec()
        return tuple(self.to_parameters(arch)[p.name] for p in self.spec.positions)

    def from_slots(self, operations: Sequence[str]) -> Architecture:
        positions = self._slot_spec()
        if len(operations) != len(positions):
            raise ValueError(f"{self.name} has {len(positions)} slots, got {len(operations)} operations")
        return self.from_parameters({p.name: str(op) for p, op in zip(positions, operations)})


def space_class(spec: SpaceSpec) -> type[DeclaredSpace]:
    """A :class:`DeclaredSpace` subclass for ``spec``: what the registry's entry builds."""
    example_params = {name: choices[0] for name, choices in spec.parameters().items()}
    attributes = {
        "spec": spec, "name": spec.name, "description": spec.description,
        "representations": representations_of(spec),
        "table_columns": (tuple(spec.parameters()),),
        "__doc__": f"{spec.description} (declared in {spec.source})",
        "__module__": __name__,
    }
    cls = type(f"Declared_{spec.name}", (DeclaredSpace,), attributes)
    cls.examples = (cls().format(cls().from_parameters(example_params)),)
    return cls


__all__ = ["DeclaredSpace", "representations_of", "space_class"]
