"""Build a strategy from its name and options (used by the CLI, the app and the benchmarks).

Strategy names
--------------
``random``              uniform random search without replacement
``evolution``           regularised evolution (aging tournament; population 10, sample 3)

                        On the layer space both start from its 10 initial networks, like
                        ``nasbot`` and ``autokeras`` (paper 001 Sec. 5); the option
                        ``init=random`` (e.g. ``bench layer-search --option evolution.init=random``)
                        starts them from random networks instead
``bo``                  Bayesian optimisation driven by options: ``kernel`` (tw, tw1g, tw2g, tw3g,
                        wl, otmann, edit, path, ot, gw), ``acquisition`` (ucb, ei), ``pool``
                        (evolution, random, gradient, mixed), ``batch`` (topk, kdpp-quality, kdpp,
                        bucb, thompson, random), ``batch_size``
``bo-tw2g-ucb``         TW 2-gram GP, UCB, evolutionary pool, one proposal per step (paper 000)
``bo-tw-ucb``           the same with the 1-gram TW kernel
``bo-wl-ei``            WL GP, EI, gradient-guided mutation pool (NAS-BOWL, paper 002)
``bo-wl-ucb``           WL GP, UCB, gradient-guided mutation pool
``bo-tw2g-kdpp5``       batch of 5 by quality k-DPP (paper 000 §3.2)
``bo-tw2g-dpp5``        batch of 5 by plain k-DPP on the posterior covariance (Kathuria et al.)
``bo-tw2g-bucb5``       batch of 5 by GP-BUCB / Kriging believer
``bo-tw2g-thompson5``   batch of 5 by Thompson sampling
``bo-tw2g-topk5``       the 5 best UCB values
``bo-tw2g-random5``     5 pool members at random (the pool without a selector)
``nasbot``              NASBOT on the layer space: OTMANN ensemble GP, EI, EA over modifiers (paper 001)
``autokeras``           Auto-Keras on the layer space: edit-distance GP, UCB, A*/SA over morphisms, warm
                        starts from trained ancestors (paper 003)

Named BO strategies accept the same options as ``bo`` to override their settings. A strategy's
``batch_size`` attribute is the batch it was designed for; the runner's ``batch_size`` decides
how many are asked per step.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Sequence

from nasviz.arch import Architecture

_TW2G: dict[str, Any] = {"kernel": "tw2g", "acquisition": "ucb", "pool": "evolution"}

#: Named BO configurations (options for :class:`~nasviz.strategies.bo.BayesianOptimisation`).
BO_PRESETS: dict[str, dict[str, Any]] = {
    "bo-tw2g-ucb": {**_TW2G, "batch": "topk", "batch_size": 1},
    "bo-tw-ucb": {**_TW2G, "kernel": "tw1g", "batch": "topk", "batch_size": 1},
    "bo-wl-ei": {"kernel": "wl", "acquisition": "ei", "pool": "gradient", "batch": "topk", "batch_size": 1},
    "bo-wl-ucb": {"kernel": "wl", "acquisition": "ucb", "pool": "gradient", "batch": "topk", "batch_size": 1},
    "bo-tw2g-kdpp5": {**_TW2G, "batch": "kdpp-quality", "batch_size": 5},
    "bo-tw2g-dpp5": {**_TW2G, "batch": "kdpp", "batch_size": 5},
    "bo-tw2g-bucb5": {**_TW2G, "batch": "bucb", "batch_size": 5},
    "bo-tw2g-thompson5": {**_TW2G, "batch": "thompson", "batch_size": 5},
    "bo-tw2g-topk5": {**_TW2G, "batch": "topk", "batch_size": 5},
    "bo-tw2g-random5": {**_TW2G, "batch": "random", "batch_size": 5},
}

#: Kernel shorthands: name -> (registry name, options).
KERNEL_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {
    "tw1g": ("tw", {"ngram": 1}),
    "tw2g": ("tw", {"ngram": 2}),
    "tw3g": ("tw", {"ngram": 3}),
}

_BO_OPTIONS = {
    "kernel", "kernel_options", "acquisition", "pool", "batch", "batch_size", "n_init", "pool_size",
    "transform", "beta0", "quality_temperature", "quality", "kdpp_anchor", "top_parents", "n_restarts",
}
_EVOLUTION_OPTIONS = {"population_size", "sample_size", "init"}
_RANDOM_OPTIONS = {"init"}
_NASBOT_OPTIONS = {"n_init", "ea_base", "ea_cap", "n_restarts", "acq_fraction", "ea_init"}
_AUTOKERAS_OPTIONS = {"n_init", "beta", "r", "t_low", "n_children", "warm_start", "n_restarts", "acq_fraction"}


def strategy_help() -> str:
    """The "Strategy names" table of this module's docstring (for ``--help``)."""
    doc = __doc__ or ""
    start = doc.index("Strategy names")
    return "strategies:\n" + doc[start:].split("\n", 2)[2].split("\n\nNamed BO")[0] + "\n"


def default_batch_size(name: str, batch_size: int | None = None) -> int:
    """Proposals per step a strategy was designed for: ``batch_size`` if given, else its preset's
    (5 for ``bo-tw2g-kdpp5``), else 1."""
    if batch_size is not None:
        return int(batch_size)
    return int(BO_PRESETS.get(name, {}).get("batch_size", 1))


def strategy_names() -> list[str]:
    """Names accepted by :func:`make_strategy`."""
    return ["random", "evolution", "bo", *BO_PRESETS, "nasbot", "autokeras"]


def _check_options(name: str, options: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(options) - allowed)
    if unknown:
        known = ", ".join(sorted(allowed)) or "none"
        raise ValueError(f"strategy {name!r} does not take option(s) {', '.join(unknown)}; it takes: {known}")


def make_strategy(
    name: str,
    *,
    space: ModuleType,
    seed: int = 0,
    domain: Sequence[Architecture] | None = None,
    **options: Any,
):
    """A strategy instance. ``domain`` restricts proposals to a finite set (a table's rows).

    Options that are ``None`` are ignored (the CLI passes unset flags as ``None``).
    """
    options = {k: v for k, v in options.items() if v is not None}
    if name == "random":
        from nasviz.strategies.random_search import RandomSearch

        _check_options(name, options, _RANDOM_OPTIONS)
        return RandomSearch(space, seed=seed, domain=domain, initial=_initial(space, options.pop("init", None)))
    if name == "evolution":
        from nasviz.strategies.evolution import RegularizedEvolution

        _check_options(name, options, _EVOLUTION_OPTIONS)
        initial = _initial(space, options.pop("init", None))
        return RegularizedEvolution(space, seed=seed, domain=domain, initial=initial,
                                    **{k: int(v) for k, v in options.items()})
    if name == "bo" or name in BO_PRESETS:
        from nasviz.strategies.bo import BayesianOptimisation

        _check_options(name, options, _BO_OPTIONS)
        config = {**BO_PRESETS.get(name, {"kernel": "tw2g", "acquisition": "ucb", "pool": "evolution", "batch": "topk"}), **options}
        kernel = str(config.pop("kernel"))
        kernel_options = dict(config.pop("kernel_options", None) or {})
        if kernel in KERNEL_ALIASES:
            kernel, alias_options = KERNEL_ALIASES[kernel]
            kernel_options = {**alias_options, **kernel_options}
        label = name if name != "bo" else _bo_label(kernel, kernel_options, config)
        return BayesianOptimisation(
            space, kernel, kernel_options=kernel_options, seed=seed, domain=domain, name=label, **config
        )
    if name == "nasbot":
        from nasviz.strategies.nasbot import NASBOT

        _check_options(name, options, _NASBOT_OPTIONS)
        casts = {"n_init": int, "ea_base": int, "ea_cap": int, "n_restarts": int, "acq_fraction": _fraction_or_none,
                 "ea_init": str}
        return NASBOT(space, seed=seed, domain=domain, **{k: casts[k](v) for k, v in options.items()})
    if name == "autokeras":
        from nasviz.strategies.autokeras import AutoKeras

        _check_options(name, options, _AUTOKERAS_OPTIONS)
        casts = {"n_init": int, "n_children": int, "n_restarts": int, "beta": float, "r": float, "t_low": float,
                 "warm_start": lambda v: v if isinstance(v, bool) else str(v).lower() in ("1", "true", "yes"),
                 "acq_fraction": _fraction_or_none}
        return AutoKeras(space, seed=seed, domain=domain, **{k: casts[k](v) for k, v in options.items()})
    raise ValueError(f"unknown strategy {name!r}; known strategies: {', '.join(strategy_names())}")


def _initial(space: ModuleType, init: Any) -> list[Architecture] | None:
    """Where random search and evolution start: ``"pool"`` (the default where the space has an
    initial pool: the layer space's 10 feed-forward networks that NASBOT and Auto-Keras also
    start from) or ``"random"``."""
    has_pool = hasattr(space, "initial_pool")
    init = ("pool" if has_pool else "random") if init is None else str(init).strip().lower()
    if init not in ("pool", "random"):
        raise ValueError(f"init must be 'pool' or 'random', got {init!r}")
    if init == "random":
        return None
    if not has_pool:
        raise ValueError(f"init='pool': the {getattr(space, 'NAME', space)!r} space has no initial pool")
    return list(space.initial_pool())


def _fraction_or_none(value: Any) -> float | None:
    """``acq_fraction`` from an option value: a positive number, or ``None`` / "none" (uncapped)."""
    if value is None or str(value).strip().lower() in ("none", "off", ""):
        return None
    return float(value)


def _bo_label(kernel: str, kernel_options: dict[str, Any], config: dict[str, Any]) -> str:
    k = f"{kernel}{kernel_options['ngram']}g" if kernel == "tw" and "ngram" in kernel_options else kernel
    return f"bo-{k}-{config.get('acquisition', 'ucb')}-{config.get('pool', 'evolution')}-{config.get('batch', 'topk')}{config.get('batch_size', 1)}"
