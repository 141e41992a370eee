"""A plain-language account of one search step, for teaching: what the surrogate knew, where the
candidates came from, which ones the selector chose and why, and what they measured.

:func:`explain_step` reads only a step's typed state (:class:`~nasviz.state.StepState`) and the
evaluations that step produced, so it works for a past step replayed from the store as well as
for the newest one. It returns Markdown sentences; architecture strings are put in code spans
(NAS-Bench-201's ``~`` is Markdown).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from nasviz.rounding import format_spread, format_value, percent_ceiling
from nasviz.state import StepState

if TYPE_CHECKING:
    from nasviz.dashboard.watching import RunWatcher

#: What the batch selectors do, in a sentence each (the registry's names).
SELECTOR_SENTENCES = {
    "topk": "took the {k} candidates with the highest {acq}",
    "kdpp-quality": "sampled {k} candidates from a quality k-DPP: each candidate's quality grows with its {acq}, "
                    "and the kernel's similarity between candidates makes near-duplicates unlikely together",
    "kdpp": "sampled {k} candidates from a k-DPP on the GP's posterior covariance: as spread out as the surrogate "
            "allows, whatever their {acq}",
    "bucb": "picked {k} candidates one at a time by {acq}, each time pretending the previous pick had been measured "
            "(its uncertainty shrinks, so the next pick goes elsewhere)",
    "thompson": "drew {k} functions from the GP posterior and took the best candidate of each",
    "random": "took {k} pool members at random (the pool without a selector)",
}


def _code(text: str) -> str:
    """An architecture string as a code span (Markdown shows its ``~`` and ``|`` as they are); one
    that could close the span (a backtick: a declared space's choice names are outside text) is
    shown escaped instead (:func:`nasviz.dashboard.text.plain`)."""
    from nasviz.dashboard.text import plain, shorten

    text = shorten(text)
    return plain(text) if "`" in text else f"`{text}`"


def _fmt(x: float | None) -> str:
    return "-" if x is None or not np.isfinite(x) else f"{x:.4g}"


def prediction_text(mean: float, std: float | None, decimals: int | None, ceiling: float | None) -> str:
    """``"predicted 93.61 ± 1.25"`` at the values' resolution. A spread below it reads ``< 0.01``,
    not ``0``; a mean above the largest value the metric can take (100 for an accuracy: the GP's
    mean is not bounded) is named as such, not passed off as a prediction of 100.8."""
    spread = "" if std is None else f" ± {format_spread(std, decimals)}"
    if ceiling is not None and np.isfinite(mean) and mean > ceiling:
        return (f"predicted above the largest possible value ({format_value(ceiling, decimals)}; the GP's mean, "
                f"{format_value(mean, decimals)}, is not bounded){spread}")
    return f"predicted {format_value(mean, decimals)}{spread}"


def explain_step(step: int, state: StepState, evaluations: Sequence[Mapping[str, Any]],
                 best_before: float | None = None, max_listed: int = 5, sign: float = 1.0,
                 decimals: int | None = None, metric: str | None = None) -> list[str]:
    """Sentences (Markdown) saying what step ``step`` did: the model it fitted (or why none), the
    pool it scored and the batch it chose, the fidelities, then what it measured.

    ``evaluations`` are the step's own evaluations (dicts with ``arch``, ``value``, ``status``),
    ``best_before`` the best value measured before it (``None`` if none). Values are scores
    (higher is better); ``sign`` -1 says the metric is minimised: measured and predicted values
    are then shown as the metric's own (minus the score). ``decimals`` is the values' resolution
    (:mod:`nasviz.rounding`), ``metric`` their name (an accuracy is at most 100).
    """
    lines = [_model_line(step, state)]
    if state.pool is not None and len(state.pool):
        lines.extend(_pool_lines(state, max_listed, sign, decimals, metric))
    lines.extend(fidelity_lines(state, evaluations, max_listed))
    measured = _measured_line(evaluations, best_before, sign, decimals)
    return lines + ([measured] if measured else [])


def _model_line(step: int, state: StepState) -> str:
    """The step's model: the GP, its kernel, how it was fitted and what its hyperparameters say;
    or why the step had none."""
    gp = state.gp
    if gp is None:
        if state.phase in ("", "init", "random"):
            return (f"**Step {step}** is part of the initial design: architectures drawn at random, because the "
                    "surrogate needs a few measurements before it can predict anything.")
        return f"**Step {step}** ({state.phase or state.strategy}) used no surrogate model."
    theta = ", ".join(f"{k} = {_fmt(v)}" for k, v in gp.hyperparameters.items())
    return (f"**Step {step}**: the GP with the {_code(gp.kernel)} kernel was fitted to "
            f"{gp.n_observations} measured architectures by maximising the marginal likelihood"
            + (f" times the {gp.prior} prior on its hyperparameters (MAP)" if gp.prior else "")
            + (f" within the {gp.box} box of its hyperparameters" if gp.box else "")
            + (f" ({theta}; amplitude {_fmt(gp.amplitude)}, noise {_fmt(gp.noise)})." if theta else
               f" (amplitude {_fmt(gp.amplitude)}, noise {_fmt(gp.noise)}).")
            + (f" {', '.join(gp.bounds_hit)} ended on a bound: the data do not determine "
               f"{'it' if len(gp.bounds_hit) == 1 else 'them'} yet." if gp.bounds_hit else "")
            + (f" {', '.join(gp.switched_off)} {'is' if len(gp.switched_off) == 1 else 'are'} at the smallest "
               "value allowed: the GP switched that part of its kernel off, because the other parts already "
               "explain the data." if gp.switched_off else "")
            + (f" {', '.join(gp.floors_hit)} {'rests' if len(gp.floors_hit) == 1 else 'rest'} on the floor "
               "the strategy chose: the data alone would fit less, and the floor keeps the surrogate from "
               "taking noisy measurements as exact." if gp.floors_hit else ""))


def _stall_line(stalled: Mapping[str, Any]) -> str:
    """BayesianOptimisation's stall_patience, and what its stall_action did about it."""
    since = (f"No new best in the last {stalled.get('since_best', '?')} evaluations, so the search counts "
             "as stalled: ")
    if stalled.get("action") == "neighbours":
        left = stalled.get("neighbours") or 0
        return since + (f"this step chose among the {left} one-edit neighbours of the best cell that "
                        "were never evaluated, to look closer at the cell it knows best." if left else
                        "no one-edit neighbour of the best cell is left to evaluate (all were "
                        "evaluated, none better, or they are not in the table), so this step used the "
                        "usual pool.")
    return since + (f"this step used UCB with its exploration weight raised to {_fmt(stalled.get('kappa'))} to "
                    "look further from the cells it already knows.")


def _pool_lines(state: StepState, max_listed: int, sign: float, decimals: int | None,
                metric: str | None) -> list[str]:
    """The candidate pool the step scored (how it was made, with which acquisition), then the
    batch it chose from it (:func:`_batch_lines`)."""
    pool = state.pool
    origins: dict[str, int] = {}
    for o in pool.origin:
        # "evolution-2" (round 2) counts as evolution; "local-search" reads "local search"
        key = re.sub(r"-\d+$", "", str(o)).replace("-", " ") or "?"
        origins[key] = origins.get(key, 0) + 1
    made = ", ".join(f"{n} by {o}" for o, n in sorted(origins.items(), key=lambda kv: -kv[1]))
    acq = pool.acquisition_name.upper() or "acquisition"
    lines = []
    stalled = state.notes.get("stalled")
    if isinstance(stalled, Mapping):
        lines.append(_stall_line(stalled))
    lines.append(f"It scored {len(pool)} candidates" + (f" ({made})" if made else "")
                 + f" with the {acq} acquisition, which trades the GP's predicted value (mean) against its "
                   "uncertainty (standard deviation).")
    if state.batch is not None and state.batch.indices:
        lines.extend(_batch_lines(state, acq, max_listed, sign, decimals, metric))
    return lines


def _batch_lines(state: StepState, acq: str, max_listed: int, sign: float, decimals: int | None,
                 metric: str | None) -> list[str]:
    """How the selector chose the batch, then its first ``max_listed`` candidates with their
    prediction, acquisition rank and k-DPP quality."""
    pool, batch = state.pool, state.batch
    k = len(batch.indices)
    sentence = SELECTOR_SENTENCES.get(batch.method, "chose {k} candidates with the {method} selector")
    sentence = sentence.format(k=k, acq=acq, method=batch.method)
    if k == 1:  # "took the 1 candidates with ..." -> "took the candidate with ..."
        sentence = sentence.replace("the 1 candidates", "the candidate").replace("1 candidates", "1 candidate")
    lines = ["The selector " + sentence + ":"]
    n = len(pool)
    ranks = np.argsort(-np.asarray(pool.acquisition, dtype=float)) if len(pool.acquisition) == n else None
    for i in list(batch.indices)[:max_listed]:
        parts = []
        if len(pool.mean) == n:
            parts.append(prediction_text(sign * float(pool.mean[i]), float(pool.std[i]) if len(pool.std) == n else None,
                                         decimals, percent_ceiling(metric) if sign > 0 else None))
        if ranks is not None:
            parts.append(f"{acq} {_fmt(pool.acquisition[i])} (rank {int(np.flatnonzero(ranks == i)[0]) + 1} "
                         f"of {len(pool)})")
        if batch.qualities and len(batch.qualities) == len(pool):
            parts.append(f"k-DPP quality {_fmt(batch.qualities[i])}")
        lines.append(f"- {_code(pool.candidates[i])}: " + ", ".join(parts))
    if k > max_listed:
        lines.append(f"- ... and {k - max_listed} more.")
    return lines


def _measured_line(evaluations: Sequence[Mapping[str, Any]], best_before: float | None, sign: float,
                   decimals: int | None) -> str | None:
    """What the step measured at the full budget: how many values, the best, whether it is a new
    best so far, how many failed (``None`` when it measured nothing)."""
    ok = [e for e in evaluations if e.get("status") == "ok" and e.get("value") is not None and _full(e)]
    failed = sum(1 for e in evaluations if e.get("status") != "ok" or e.get("value") is None)
    if not ok and not failed:
        return None
    best = max(ok, key=lambda e: float(e["value"])) if ok else None
    text = f"Measured: {len(ok)} value{'s' if len(ok) != 1 else ''}"
    if best is not None:
        text += f", the best {format_value(sign * float(best['value']), decimals)} ({_code(best['arch'])})"
        if best_before is None or float(best["value"]) > best_before:
            text += " — a new best so far" if best_before is not None else " — the first measurement"
        else:
            text += f"; the best so far stays {format_value(sign * best_before, decimals)}"
    if failed:
        text += f"; {failed} evaluation{'s' if failed != 1 else ''} failed"
    return text + "."


def _full(evaluation: Mapping[str, Any]) -> bool:
    """An evaluation at the full budget (every evaluation of a single-fidelity search)."""
    return bool((evaluation.get("fidelity") or {}).get("full", True))


def fidelity_lines(state: StepState, evaluations: Sequence[Mapping[str, Any]], max_listed: int = 5) -> list[str]:
    """A multi-fidelity step in words: the budgets it measured at, and each promotion and stop it
    decided, with the trial's rank at that budget and the rule (:meth:`RungDecision.describe`)."""
    lines: list[str] = []
    measured = [e for e in evaluations if e.get("fidelity") and e.get("status") == "ok" and e.get("value") is not None]
    for e in measured[:max_listed]:
        fid = e["fidelity"]
        unit = fid.get("unit", "epochs")
        how = (f", continued from {fid['previous']:g}" if fid.get("previous") is not None else "")
        where = "the full budget" if fid.get("full") else f"{fid['fidelity']:g} of {fid['top']:g} {unit}"
        lines.append(f"{_code(e['arch'])} was measured at {where}{how}: {_fmt(float(e['value']))}"
                     + ("." if fid.get("full") else " (a value below the full budget is not a result: the best so far "
                        "counts full-budget values only)."))
        if fid.get("stop"):
            from nasviz.fidelity.decisions import RungDecision

            lines.append(RungDecision.from_dict(fid["stop"]).describe(unit))
    if len(measured) > max_listed:
        lines.append(f"... and {len(measured) - max_listed} more measurements.")
    if state.decisions:
        promoted = [d for d in state.decisions if d.promoted]
        lines.append(f"With this result the budget's comparison was complete: {len(promoted)} of "
                     f"{len(state.decisions)} trials go on, the rest stop.")
        for d in sorted(state.decisions, key=lambda d: (not d.promoted, d.rank))[:max_listed]:
            lines.append(f"- {_code(d.arch)}: {d.describe()}")
        if len(state.decisions) > max_listed:
            lines.append(f"- ... and {len(state.decisions) - max_listed} more decisions (the Learning curves view "
                         "marks every one).")
    return lines


def explain_run_step(run: "RunWatcher") -> list[str]:
    """:func:`explain_step` for a watched run's newest (or, after ``at_step``, replayed) step."""
    step = run.steps[-1].step
    before = [float(e["value"]) for e in run.evaluations
              if int(e["step"]) < step and e["status"] == "ok" and e["value"] is not None and _full(e)]
    own = [e for e in run.evaluations if int(e["step"]) == step]
    sign = -1.0 if run.direction == "minimise" else 1.0  # stored values are scores: show a minimised metric's own
    return explain_step(step, run.state, own, max(before) if before else None, sign=sign, decimals=run.decimals,
                        metric=run.search.objective.metric)
