"""Why a trial was promoted to a higher budget or stopped: :class:`RungDecision`.

A multi-fidelity strategy compares the trials that reached a rung (a budget of its ladder) and
promotes the best of them; an early-stopping rule compares a training's value after an epoch
with what earlier trainings had at that epoch. Either way the decision is the trial's rank among
those compared, the rule, and the value it had to beat. Strategies put the decisions of a step in
its :class:`~nasviz.state.StepState` (``decisions``); an early-stopping rule puts its stop in the
stopped evaluation's :class:`~nasviz.fidelity.FidelityOutcome`. The Learning curves view marks
them and the step explainer says them in plain words (:meth:`RungDecision.describe`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping

PROMOTE = "promote"
STOP = "stop"

#: What each rule keeps, in words (``{keep}``, ``{of}``, ``{eta}`` filled in by :meth:`RungDecision.describe`).
RULE_SENTENCES = {
    "top-k": "keeps the best {keep} of the {of} trials that reached this budget (1/{eta} of them)",
    "median": "stops a training whose best value so far is below the median of what earlier trainings had "
              "reached by the same epoch",
    "asha": "lets a training go on only while it is among the best 1/{eta} of the trainings that reached "
            "this epoch before it",
    "pruner": "Optuna's pruner ({name}) compares the trial with the others that reported at this budget",
}


@dataclass(frozen=True)
class RungDecision:
    """One trial's fate at one rung.

    Attributes
    ----------
    arch : str
        The architecture, as its space writes it.
    fidelity : float
        The budget (rung) where it was decided.
    action : ``"promote"`` or ``"stop"``
    rule : str
        ``"top-k"`` (successive halving, Hyperband, BOHB: the best ``keep`` of ``of`` go on),
        ``"median"`` (the median stopping rule), ``"asha"`` (asynchronous successive halving) or
        ``"pruner"`` (an Optuna pruner; ``name`` says which).
    rank, of : int
        Its rank at the rung (1 = best) among the ``of`` trials compared.
    value : float
        Its value at the rung.
    threshold : float or None
        The value it had to reach (the ``keep``-th best value for top-k, the median for the
        median rule); ``None`` when the rule has none.
    keep : int or None
        How many trials the rule keeps at this rung (top-k rules).
    eta : float or None
        The reduction factor (top-k and asha: 1/eta of the trials go on).
    to : float or None
        The budget a promoted trial goes on to.
    name : str
        The strategy or pruner that applied the rule (``"hyperband"``, ``"HyperbandPruner"``).
    bracket : int or None
        The Hyperband bracket (``s`` of Li et al. 2018, Alg. 1), when there are brackets.
    """

    arch: str
    fidelity: float
    action: str
    rule: str
    rank: int
    of: int
    value: float
    threshold: float | None = None
    keep: int | None = None
    eta: float | None = None
    to: float | None = None
    name: str = ""
    bracket: int | None = None

    def __post_init__(self) -> None:
        if self.action not in (PROMOTE, STOP):
            raise ValueError(f"a rung decision's action is {PROMOTE!r} or {STOP!r}, got {self.action!r}")

    @property
    def promoted(self) -> bool:
        return self.action == PROMOTE

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None and v != ""}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RungDecision":
        def number(key: str) -> float | None:
            return None if data.get(key) is None else float(data[key])

        return cls(arch=str(data["arch"]), fidelity=float(data["fidelity"]), action=str(data["action"]),
                   rule=str(data.get("rule", "")), rank=int(data.get("rank", 0)), of=int(data.get("of", 0)),
                   value=float(data.get("value", float("nan"))), threshold=number("threshold"),
                   keep=None if data.get("keep") is None else int(data["keep"]), eta=number("eta"), to=number("to"),
                   name=str(data.get("name", "")), bracket=None if data.get("bracket") is None else int(data["bracket"]))

    def describe(self, unit: str = "epochs") -> str:
        """The decision in one plain sentence (no markup; the page puts the architecture in code)."""
        verb = (f"promoted from {self.fidelity:g} to {self.to:g} {unit}" if self.promoted and self.to is not None
                else "promoted" if self.promoted else f"stopped at {self.fidelity:g} {unit}")
        where = f"ranked {self.rank} of {self.of} at {self.fidelity:g} {unit} with {self.value:.4g}"
        if self.threshold is not None:
            relation = "at least" if self.promoted else "below"
            where += f" ({relation} the {'median' if self.rule == 'median' else 'cut'} {self.threshold:.4g})"
        eta = "" if self.eta is None else f"{self.eta:g}"
        rule = RULE_SENTENCES.get(self.rule, self.rule).format(keep=self.keep, of=self.of, eta=eta, name=self.name)
        bracket = "" if self.bracket is None else f" (bracket s = {self.bracket})"
        return f"It was {verb}: it {where}, and the rule{bracket} {rule}."


__all__ = ["PROMOTE", "RULE_SENTENCES", "RungDecision", "STOP"]
