"""Build a strategy from its registered name and options (the CLI, the app and the benchmarks).

The strategies, their options and what they can search are registered in
:data:`nasviz.components.STRATEGIES` (``python -m nasviz components`` lists them). A named BO
strategy (``bo-wl-ei``, ``bo-tw2g-kdpp5``, ...) is the generic ``bo`` with preset options; every
option of ``bo`` may override them. ``make_strategy``'s ``batch_size`` is the batch the runner
asks per step; a strategy that declares a ``batch_size`` option (every ``bo``) is built for it.

Two doors, one path: :func:`make_strategy` takes raw options and parses and checks them
(:func:`nasviz.components.checked_options`, the function :meth:`nasviz.config.SearchConfig.create`
calls); :func:`build_strategy` takes a strategy part whose options were (a validated config's
:class:`~nasviz.config_parts.StrategySettings`) and neither parses nor checks them again.
"""

from __future__ import annotations

from typing import Any, Sequence

from nasviz.arch import Architecture
from nasviz.components import STRATEGIES, checked_options, default_batch_size, strategy_kernel
from nasviz.config_parts import StrategySettings
from nasviz.spaces import get_space
from nasviz.spaces.base import SearchSpace

__all__ = ["build_strategy", "default_batch_size", "make_strategy", "strategy_help", "strategy_names"]


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
    (:func:`nasviz.components.checked_options`); a combination that cannot run raises
    :class:`~nasviz.errors.ConfigError` naming what does not fit.
    """
    space = get_space(space)
    raw = {k: v for k, v in options.items() if v is not None}
    if batch_size is not None and STRATEGIES.get(name).option("batch_size") is not None:
        # parsed with the others, then the batch checked and built (see build_strategy) is its typed value
        raw["batch_size"], batch_size = batch_size, None
    parsed = checked_options(space.name, name, raw, None if batch_size is None else int(batch_size))
    batch_size = parsed.get("batch_size", batch_size)
    chosen = StrategySettings(name=name, options=parsed, kernel=strategy_kernel(name, parsed))
    return build_strategy(chosen, space=space, seed=seed, domain=domain, batch_size=batch_size)


def build_strategy(strategy: StrategySettings, *, space: SearchSpace | str, seed: int = 0,
                   domain: Sequence[Architecture] | None = None, batch_size: int | None = None):
    """A strategy instance from its typed part (a validated :class:`~nasviz.config.SearchConfig`'s
    ``strategy``, asked for batches of its ``run.batch_size``; or :func:`make_strategy`'s), whose
    options are already parsed and checked: nothing is parsed or checked again.

    A BO strategy is built from its five typed parts (:meth:`StrategySettings.bo_parts`: the GP
    and its kernel, the acquisition, the pool, the batch, the run settings); any other from the
    keywords its registry entry's factory takes (:meth:`StrategySettings.keywords`)."""
    space = get_space(space)
    parts = strategy.bo_parts(batch_size)
    if parts is not None:
        from nasviz.strategies.bo import BayesianOptimisation

        return BayesianOptimisation(space, int(seed), domain, **parts.keywords())
    return STRATEGIES.get(strategy.name).load()(space, seed=int(seed), domain=domain, **strategy.keywords(batch_size))
