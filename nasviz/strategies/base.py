"""The ask/tell protocol every search strategy follows."""

from __future__ import annotations

from typing import Any, Protocol, Sequence

from nasviz.arch import Architecture
from nasviz.objectives.base import Evaluation


class Strategy(Protocol):
    """A search strategy.

    One step of a search is ``proposals = strategy.ask(n)``, evaluate them, then
    ``strategy.tell(evaluations)``. Strategies never propose an architecture they were already
    told about or already proposed.
    """

    name: str

    def ask(self, n: int) -> list[Architecture]:
        """Up to ``n`` new architectures to evaluate (fewer only if the domain is exhausted)."""

    def tell(self, evaluations: Sequence[Evaluation]) -> None:
        """Record finished evaluations (failed ones included: they are not proposed again)."""

    def state(self) -> dict[str, Any]:
        """Plain data describing the last :meth:`ask` (pool, GP mean/std, batch, ...)."""
