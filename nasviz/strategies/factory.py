"""Build a strategy from its registered name and options (the CLI, the app and the benchmarks).

The strategies, their options and what they can search are registered in
:data:`nasviz.components.STRATEGIES` (``python -m nasviz components`` lists them). A named BO
strategy (``bo-wl-ei``, ``bo-tw2g-kdpp5``, ...) is the generic ``bo`` with preset options; every
option of ``bo`` may override them. ``make_strategy``'s ``batch_size`` is the batch the runner
asks per step; a strategy that declares a ``batch_size`` option (every ``bo``) is built for it.
"""

from __future__ import annotations

from typing import Any, Sequence

from nasviz.arch import Architecture
from nasviz.components import STRATEGIES, check_compatible, default_batch_size
from nasviz.spaces import get_space
from nasviz.spaces.base import SearchSpace

__all__ = ["default_batch_size", "make_strategy", "strategy_help", "strategy_names"]


def strategy_names() -> list[str]:
    """Names accepted by :func:`make_strategy`, in registry order."""
    return STRATEGIES.names()


def strategy_help() -> str:
    """``name  description`` lines of every strategy (for ``--help``)."""
    return "strategies:\n" + STRATEGIES.help() + "\n"


def make_strategy(
    name: str,
    *,
    space: SearchSpace | str,
    seed: int = 0,
    domain: Sequence[Architecture] | None = None,
    batch_size: int | None = None,
    **options: Any,
):
    """A strategy instance. ``domain`` restricts proposals to a finite set (a table's rows).

    Options that are ``None`` are ignored (the CLI passes unset flags as ``None``). The strategy,
    its options, the space and the batch size are checked together first
    (:func:`nasviz.components.check_compatible`); a combination that cannot run raises
    :class:`~nasviz.errors.ConfigError` naming what does not fit.
    """
    space = get_space(space)
    entry = STRATEGIES.get(name)
    options = entry.parse_options({k: v for k, v in options.items() if v is not None}, owner=f"strategy {name!r}")
    if batch_size is not None and entry.option("batch_size") is not None:
        # The runner's batch and a strategy's own ``batch_size`` option share this keyword, so a
        # strategy that declares the option is designed for the batch it is asked for.
        options = {**options, **entry.parse_options({"batch_size": batch_size}, owner=f"strategy {name!r}")}
    runner_batch = int(options.get("batch_size", batch_size if batch_size is not None else default_batch_size(name)))
    check_compatible(space.name, name, options, runner_batch)
    config = {**entry.preset, **options}
    if entry.option("kernel") is not None and name != "bo":
        config["name"] = name  # a BO preset keeps its own name in runs and tables
    return entry.load()(space, seed=int(seed), domain=domain, **config)
