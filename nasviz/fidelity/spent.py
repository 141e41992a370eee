"""What a search spent, in full evaluations: the unit in which searches at different fidelities
compare (Li et al.'s Hyperband counts resources the same way), from the stored evaluations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:
    from nasviz.store import StoredEvaluation


def full_evaluations_spent(evaluations: Sequence[StoredEvaluation]) -> np.ndarray:
    """``(n,)`` the cumulative cost after each evaluation, in full evaluations: 1 for each
    evaluation of a single-fidelity search; for a multi-fidelity one, the epochs it was charged
    (``cost``, a table without a cost column counts cost in epochs) over the top budget's, or,
    where cost is in seconds, its budget over the top one (what a restart costs)."""
    spent = []
    for e in evaluations:
        fidelity = (e.info or {}).get("fidelity")
        if not fidelity:
            spent.append(1.0)
        elif fidelity.get("unit") == "epochs" and e.cost is not None:
            spent.append(float(e.cost) / float(fidelity["top"]))
        else:
            spent.append(float(fidelity["fidelity"]) / float(fidelity["top"]))
    return np.cumsum(spent) if spent else np.zeros(0)


__all__ = ["full_evaluations_spent"]
