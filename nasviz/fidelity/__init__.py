"""Fidelity in the search frame: an architecture evaluated at a budget (epochs, a table's fidelity
column), at a cost, and continued to a higher budget.

==============  ===============================================================================
``ladder``      :class:`Ladder` (the budgets a search may ask for), :class:`CostModel` (what
                reaching a budget costs, from scratch or continued), :class:`FidelityRequest`
                (what a multi-fidelity strategy asks for) and :class:`FidelityOutcome` (what an
                :class:`~nasviz.objectives.base.Evaluation` reached)
``decisions``   :class:`RungDecision`: why a trial was promoted or stopped at a rung (its rank,
                the rule), stored with the step or the evaluation that made it and explained on
                the page
``hyperband``   the bracket arithmetic of successive halving and Hyperband (Li et al. 2018,
                Alg. 1) over a ladder, and the top-k rule with its decisions
``stopping``    early-stopping rules for live training (the median rule, Golovin et al. 2017;
                asynchronous successive halving, Li et al. 2020), usable with every strategy
``spent``       what a search spent in full evaluations, from its stored evaluations (the Compare
                page's cost axis on tables, the Learn page's multi-fidelity lesson)
==============  ===============================================================================

This package depends on nothing else in nasviz (plain dataclasses and numpy), so the objectives,
the step state and the strategies can all import it.
"""

from nasviz.fidelity.decisions import PROMOTE, STOP, RungDecision
from nasviz.fidelity.ladder import (CONTINUATIONS, RESTART, RESUME, CostModel, FidelityOutcome, FidelityRequest, Ladder,
                                    arch_of, is_full)

__all__ = ["CONTINUATIONS", "CostModel", "FidelityOutcome", "FidelityRequest", "Ladder", "PROMOTE", "RESTART", "RESUME",
           "RungDecision", "STOP", "arch_of", "is_full"]
