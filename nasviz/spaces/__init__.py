"""Search spaces behind one interface (:class:`~nasviz.spaces.base.SearchSpace`).

Spaces are registered in :data:`nasviz.components.SPACES`; :func:`get_space` returns the
(stateless, shared) instance for a name, and a space added with ``SPACES.register(...)`` is
found the same way.
"""

from __future__ import annotations

from functools import lru_cache

from nasviz.spaces.base import SearchSpace


@lru_cache(maxsize=None)
def _instance(name: str, factory_id: int) -> SearchSpace:
    from nasviz.components import SPACES

    return SPACES.get(name).load()()


def get_space(name: str) -> SearchSpace:
    """The space registered as ``name`` (e.g. ``"nb201"``); an unknown name lists the known ones."""
    from nasviz.components import SPACES

    if isinstance(name, SearchSpace):
        return name
    entry = SPACES.get(str(name))
    return _instance(entry.name, id(entry))


def space_names() -> list[str]:
    """Registered space names."""
    from nasviz.components import SPACES

    return SPACES.names()


__all__ = ["SearchSpace", "get_space", "space_names"]
