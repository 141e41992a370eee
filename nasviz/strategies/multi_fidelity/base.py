"""What every multi-fidelity strategy shares: the ladder and the cost model, read from the objective."""

from __future__ import annotations

from typing import Any

from nasviz.errors import ConfigError
from nasviz.fidelity.ladder import RESUME, CostModel, Ladder


class FidelityAware:
    """A strategy that asks for budgets: :meth:`attach` reads the objective's ``ladder`` and
    ``cost_model`` (:class:`~nasviz.objectives.fidelity_table.FidelityTableObjective`, a training
    objective with a fidelity ladder); :attr:`ladder` refuses to work without them."""

    name = "multi-fidelity"
    _ladder: Ladder | None = None
    cost_model: CostModel = CostModel(RESUME)

    def attach(self, objective: Any) -> None:
        ladder = getattr(objective, "ladder", None)
        if not isinstance(ladder, Ladder):
            raise ConfigError(f"strategy {self.name!r} searches over budgets: it needs an objective with a fidelity "
                              "ladder (a table search with --fidelity, or live training)")
        self._ladder = ladder
        self.cost_model = getattr(objective, "cost_model", None) or CostModel(RESUME)
        self.attached(objective)

    def attached(self, objective: Any) -> None:
        """Called after :meth:`attach` has read the ladder (subclasses that need more)."""

    @property
    def ladder(self) -> Ladder:
        if self._ladder is None:
            raise ConfigError(f"strategy {self.name!r} was not attached to an objective with a fidelity ladder "
                              "(call attach(objective) before the search; the runner's build_search does)")
        return self._ladder

    def relative_cost(self, fidelity: float, previous: float | None) -> float:
        """What evaluating at ``fidelity`` (from ``previous``) costs, in full evaluations, by the
        objective's cost model with every architecture's full cost equal (the strategies do not
        read a table's costs of architectures they have not evaluated)."""
        return self.cost_model.cost(1.0, fidelity, self.ladder.top, previous)


__all__ = ["FidelityAware"]
