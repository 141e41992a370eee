"""Search spaces: string formats, sampling, mutation and neighbourhoods.

Each space is a module exposing ``NAME``, ``parse``, ``format``, ``sample``, ``mutate`` and
``neighbours``; :func:`get_space` returns it by name.
"""

from __future__ import annotations

from types import ModuleType

from nasviz.spaces import layers, nb201

_SPACES: dict[str, ModuleType] = {nb201.NAME: nb201, layers.NAME: layers}


def get_space(name: str) -> ModuleType:
    """The space module called ``name`` (e.g. ``"nb201"``)."""
    try:
        return _SPACES[name]
    except KeyError:
        raise ValueError(f"unknown search space {name!r}; known spaces: {', '.join(sorted(_SPACES))}") from None


def register_space(module: ModuleType) -> None:
    """Make a space module available to :func:`get_space` under its ``NAME``."""
    _SPACES[module.NAME] = module


def space_names() -> list[str]:
    return sorted(_SPACES)


__all__ = ["get_space", "layers", "register_space", "space_names", "nb201"]
