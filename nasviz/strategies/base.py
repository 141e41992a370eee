"""The ask/tell protocol every search strategy follows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Protocol, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.errors import ConfigError
from nasviz.objectives.base import Evaluation
from nasviz.state import StepState

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace


class Strategy(Protocol):
    """A search strategy.

    One step of a search is ``proposals = strategy.ask(n)``, evaluate them, then
    ``strategy.tell(evaluations)``. Strategies never propose an architecture they were already
    told about or already proposed.

    Strategies are built from the registry (:func:`nasviz.strategies.factory.make_strategy`) as
    ``cls(space, seed, domain, **options)``. Optional methods, looked up by the code that drives a
    search (the warm-starting strategies have them: Auto-Keras and BFS over morphisms,
    :mod:`nasviz.strategies.warm_start`):

    * ``attach(objective)``: hook into a training objective before the search starts
      (:func:`nasviz.runner.build_search`; warm starts set the objective's ``planner``).
    * ``network_state(arch) -> dict[str, np.ndarray] | None`` and
      ``restore_network(arch, arrays)``: trained weights the strategy needs again after a
      resume; :func:`nasviz.runner.run_search` stores them with each evaluation in the run store
      and gives them back during replay.
    """

    name: str

    def ask(self, n: int) -> list[Architecture]:
        """Up to ``n`` new architectures to evaluate (fewer only if the domain is exhausted)."""

    def tell(self, evaluations: Sequence[Evaluation]) -> None:
        """Record finished evaluations (failed ones included: they are not proposed again)."""

    def state(self) -> StepState:
        """What the last :meth:`ask` did (pool, GP fit, batch, ...): :class:`~nasviz.state.StepState`."""


def with_failures(
    observed: Sequence[Architecture], targets: Sequence[float], failed: Sequence[Architecture]
) -> tuple[list[Architecture], np.ndarray]:
    """GP training data in which failed evaluations count as the worst observed target.

    ``observed`` / ``targets`` (length n >= 1) are the successful evaluations; ``failed`` the
    networks whose training failed (diverged, too large). Returns ``(archs, y)`` of length
    ``n + len(failed)`` with ``y = min(targets)`` for every failed network. Without them the GP
    never learns that a region fails, and a model-based search keeps proposing it: on friedman1,
    Auto-Keras with 10 initial networks spent 191-630 of 400-700 evaluations per 180 s run on
    networks that diverged. The papers do not discuss failures; imputing the worst value is the
    usual choice of hyperparameter optimisers (a crashed run costs as much as the worst one).
    """
    y = np.asarray(targets, dtype=float)
    if len(y) == 0:
        raise ValueError("with_failures needs at least one successful evaluation")
    return list(observed) + list(failed), np.concatenate([y, np.full(len(failed), float(y.min()))])


def affordable_items(fraction: float | None, train_seconds: Sequence[float], seconds_per_item: float | None) -> float | None:
    """How many acquisition items (EA candidates, scored tree-search children) one step may
    compute so that it takes at most ``fraction`` of the mean training time of a network.

    ``None`` when uncapped (``fraction is None``) or nothing is measured yet. NASBOT and Auto-Keras
    use it to keep their acquisition optimisers from costing more than training on small, fast
    datasets (their papers train for minutes per network, where the cap never binds).
    """
    if fraction is None or seconds_per_item is None or not len(train_seconds):
        return None
    return fraction * float(np.mean(train_seconds)) / max(seconds_per_item, 1e-9)


def robust_targets(y: np.ndarray) -> np.ndarray:
    """Scores clipped from below at the Tukey fence ``Q1 - 1.5 IQR``; shape ``(n,) -> (n,)``.

    Keeps a handful of networks that trained badly (far below every other score) from dominating
    the GP's standardisation; the ordering of all the other scores is unchanged. NASBOT and
    Auto-Keras fit their GPs to these (figures in their module docstrings).
    """
    y = np.asarray(y, dtype=float)
    if len(y) < 4:
        return y
    q1, q3 = np.quantile(y, [0.25, 0.75])
    return np.maximum(y, q1 - 1.5 * (q3 - q1))


def initial_architectures(space: "SearchSpace", init: str | None) -> list[Architecture]:
    """Where random search and evolution start: ``"pool"`` (the default where the space has an
    initial pool: the layer space's 10 feed-forward networks that NASBOT and Auto-Keras also
    start from, paper 001 Sec. 5) or ``"random"`` (no initial architectures)."""
    pool = space.initial_pool()
    choice = ("pool" if pool else "random") if init is None else str(init).strip().lower()
    if choice not in ("pool", "random"):
        raise ConfigError(f"init must be 'pool' or 'random', got {init!r}")
    if choice == "pool" and not pool:
        raise ConfigError(f"init='pool': the {space.name!r} space has no initial pool")
    return list(pool) if choice == "pool" else []


def take_initial(queue: list[Architecture], n: int, allowed: Callable[[Architecture], bool]) -> list[Architecture]:
    """Pop up to ``n`` architectures from the front of ``queue`` (in place) that ``allowed``
    accepts; rejected ones (already seen, e.g. after a resume) are dropped. Random search and
    evolution propose their initial networks this way before sampling."""
    out: list[Architecture] = []
    while len(out) < n and queue:
        arch = queue.pop(0)
        if allowed(arch) and arch not in out:
            out.append(arch)
    return out

