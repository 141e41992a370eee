"""What the page and the command line offer and default to: the strategies that can search a
space, the default strategy, and the warning for a model that would never be fitted."""

from __future__ import annotations

from typing import Any, Mapping

from nasviz import defaults
from nasviz.components.compatibility import default_batch_size, problems
from nasviz.components.registries import STRATEGIES

def strategies_for(space: str, fidelity: bool = False) -> list[str]:
    """Strategies that can search ``space`` with their own settings. Multi-fidelity strategies
    (``capabilities["fidelity"]``) ask for budgets and need an objective with a fidelity ladder:
    listed only with ``fidelity=True`` (every other strategy evaluates such an objective at its
    full budget)."""
    return [s for s in STRATEGIES.names() if not problems(space, s, batch_size=default_batch_size(s))
            and (fidelity or not STRATEGIES.get(s).capabilities.get("fidelity"))]


def is_multi_fidelity(strategy: str) -> bool:
    """Whether ``strategy`` asks for budgets (needs an objective with a fidelity ladder)."""
    return bool(STRATEGIES.get(strategy).capabilities.get("fidelity"))


def default_strategy(space: str) -> str:
    """The strategy a search of ``space`` uses when none is named, on the page and on the command
    line alike: the first of :data:`nasviz.defaults.STRATEGY_PREFERENCE` that can search it
    (:data:`DEFAULT_STRATEGY` wherever the space has categorical parameters)."""
    offered = strategies_for(space)
    return next((name for name in defaults.STRATEGY_PREFERENCE if name in offered), offered[0] if offered else "random")


def model_never_fitted(strategy: str, options: Mapping[str, Any], budget: int) -> str | None:
    """Why a model-based ``strategy`` would never fit its model within ``budget`` evaluations (its
    random start-up, ``n_init``, takes all of them), in one sentence; None when it will fit one.
    The page and ``run`` say it before the search starts (issue 46: such a search said nothing)."""
    entry = STRATEGIES.get(strategy)
    if not entry.capabilities.get("model"):
        return None
    n_init = options.get("n_init", entry.defaults().get("n_init"))
    if n_init is None or int(budget) > int(n_init):
        return None
    return (f"{strategy} spends its first {int(n_init)} evaluations on a random start-up before it fits its model, "
            f"so with a budget of {int(budget)} it never fits one: this search is a random search. Raise the budget "
            f"above {int(n_init)}, or lower n_init in the strategy's settings.")
