"""Build a strategy from its name and options (used by the CLI, the app and the benchmarks)."""

from __future__ import annotations

from types import ModuleType
from typing import Any, Sequence

from nasviz.arch import Architecture


def strategy_names() -> list[str]:
    """Names accepted by :func:`make_strategy`."""
    return ["random"]


def make_strategy(
    name: str,
    *,
    space: ModuleType,
    seed: int = 0,
    domain: Sequence[Architecture] | None = None,
    **options: Any,
):
    """A strategy instance. ``domain`` restricts proposals to a finite set (a table's rows)."""
    if name == "random":
        from nasviz.strategies.random_search import RandomSearch

        return RandomSearch(space, seed=seed, domain=domain)
    raise ValueError(f"unknown strategy {name!r}; known strategies: {', '.join(strategy_names())}")
