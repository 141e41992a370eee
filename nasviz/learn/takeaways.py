"""What each lesson proves, computed from the searches it just ran (read back from the run store).

A takeaway is a function ``(runs, store_path, lesson) -> Takeaway``: the numbers a lesson's
``takeaway_text`` is filled with and one figure that shows them. Lessons name them in
:data:`TAKEAWAYS`; a new lesson reuses one, or adds one here.

Every function reads only the store (evaluations and the typed step states the runs kept), never
a strategy, and waits (``ready=False``) until every run of the lesson has ended.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from nasviz.learn.launch import LessonRunId
    from nasviz.learn.lesson import Lesson
    from nasviz.config import SearchConfig
    from nasviz.store import StoredEvaluation


@dataclass
class Takeaway:
    """The numbers (already formatted) and the figure of a lesson's takeaway; ``ready`` is False
    while runs are still going (``waiting`` says how far they are)."""

    ready: bool
    numbers: dict[str, str] = field(default_factory=dict)
    figure: "go.Figure | None" = None
    waiting: str = ""

    def sentence(self, template: str) -> str:
        """``template`` with the numbers filled in (a missing one reads ``?``)."""
        return template.format_map(_Missing(self.numbers))


class _Missing(dict):
    def __missing__(self, key: str) -> str:
        return "?"


@dataclass(frozen=True)
class _Read:
    """One run as a takeaway reads it."""

    label: str
    seed: int
    search: SearchConfig  # the run's settings (StoredRun.search)
    evaluations: list[StoredEvaluation]
    states: list[tuple[int, Any]]  # (step, StepState) per stored step


def _read(runs: "Sequence[LessonRunId]", store_path: str | os.PathLike) -> tuple[list[_Read] | None, str]:
    """The runs, or None and a progress line while any of them is still running."""
    from nasviz.state import StepState
    from nasviz.store import RUNNING, RunStore

    store = RunStore(store_path)
    stored = [store.get_run(r.run_id) for r in runs]
    done = sum(s.status != RUNNING for s in stored)
    if done < len(stored):
        evaluated = sum(store.n_evaluations(r.run_id) for r in runs)
        budget = sum(r.run.budget for r in runs)
        return None, f"{done} of {len(stored)} searches finished, {evaluated} of {budget} evaluations done."
    out = []
    for r, s in zip(runs, stored):
        states = [(snap.step, StepState.from_dict(snap.strategy)) for snap in store.snapshots(r.run_id)]
        out.append(_Read(r.run.label, r.seed, s.search, store.evaluations(r.run_id), states))
    return out, ""


def _ok_values(run: _Read) -> list[tuple[str, float]]:
    return [(e.arch, float(e.value)) for e in run.evaluations if e.ok]


def _labels(reads: list[_Read]) -> list[str]:
    return list(dict.fromkeys(r.label for r in reads))


def _optimum(run: _Read) -> float:
    from nasviz.dashboard.sources import table_from_path

    table = table_from_path(run.search.objective.table, run.search.space)
    return table.optimum(run.search.objective.metric)


# ----------------------------------------------------------------------------- the computations


def regret_by_strategy(runs: "Sequence[LessonRunId]", store_path: str | os.PathLike,
                       lesson: "Lesson | None" = None) -> Takeaway:
    """Regret after the budget (the table's optimum minus the best value found), mean and standard
    error over seeds, per strategy. Numbers: ``budget``, ``seeds``, ``<label>`` (mean regret of the
    run labelled so), ``best_label`` / ``best_regret``, ``worst_label`` / ``worst_regret``, ``times``
    (how many times larger the worst mean regret is than the best)."""
    from nasviz import viz

    reads, waiting = _read(runs, store_path)
    if reads is None:
        return Takeaway(False, waiting=waiting)
    labels = _labels(reads)
    regrets = {label: np.array([_optimum(r) - max(v for _, v in _ok_values(r)) for r in reads if r.label == label])
               for label in labels}
    means = {k: float(v.mean()) for k, v in regrets.items()}
    ses = {k: float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else 0.0 for k, v in regrets.items()}
    best, worst = min(means, key=means.get), max(means, key=means.get)
    numbers = {label: f"{means[label]:.2f}" for label in labels}
    numbers.update(budget=str(reads[0].search.run.budget), seeds=str(len(regrets[labels[0]])), best_label=best,
                   best_regret=f"{means[best]:.2f}", worst_label=worst, worst_regret=f"{means[worst]:.2f}",
                   times=f"{means[worst] / means[best]:.0f}" if means[best] > 0 else "many")
    figure = viz.plot_lesson_bars(labels, [means[k] for k in labels], [ses[k] for k in labels],
                                  title=f"Regret after {numbers['budget']} evaluations (mean ± s.e. over "
                                        f"{numbers['seeds']} seeds; lower is better)",
                                  axis=f"points below the best {reads[0].search.objective.metric}")
    return Takeaway(True, numbers, figure)


#: Architectures of a run the kernel lesson compares (OTMANN's distances are the slow part: about
#: 1,800 transport problems for 60, a few seconds).
KERNEL_SAMPLE = 30


def kernel_rank_correlation(runs: "Sequence[LessonRunId]", store_path: str | os.PathLike,
                            lesson: "Lesson | None" = None) -> Takeaway:
    """Spearman's rho between each kernel's distance (as the Kernels page computes it) and the
    difference in value, over pairs of the run's best :data:`KERNEL_SAMPLE` architectures.
    Numbers: ``n``, ``pairs``, ``<kernel>`` (its rho), ``best_kernel`` / ``best_rho``,
    ``worst_kernel`` / ``worst_rho``."""
    from nasviz import viz
    from nasviz.dashboard.explorer import kernels as kx
    from nasviz.dashboard.explorer.samples import sample_run
    from nasviz.viz._kernels import _get_distance_performance_info

    reads, waiting = _read(runs, store_path)
    if reads is None:
        return Takeaway(False, waiting=waiting)
    run = reads[0]
    kernels = (lesson.view.kernels if lesson is not None else ()) or ("tw2g", "wl", "otmann")
    space = run.search.space
    sample = sample_run(run.evaluations, run.search.objective.metric, KERNEL_SAMPLE, space, "the run")
    rho = {}
    for spec in kernels:
        D = kx.induced_distance(kx.kernel_views(spec, sample.archs, space)[1])
        rho[spec] = _get_distance_performance_info(spec, D, sample.values).rho
    best, worst = max(rho, key=rho.get), min(rho, key=rho.get)
    n = len(sample.archs)
    numbers = {k: f"{v:.2f}" for k, v in rho.items()}
    numbers.update(n=str(n), pairs=f"{n * (n - 1) // 2:,}", best_kernel=best, best_rho=f"{rho[best]:.2f}",
                   worst_kernel=worst, worst_rho=f"{rho[worst]:.2f}")
    figure = viz.plot_lesson_bars(list(rho), list(rho.values()),
                                  title=f"Spearman ρ of distance with |difference in value| ({numbers['pairs']} pairs)",
                                  axis="ρ (higher: distance tracks performance)")
    return Takeaway(True, numbers, figure)


def _chosen(state) -> list[int]:
    return list(state.batch.indices) if state.batch is not None else []


def prediction_check(runs: "Sequence[LessonRunId]", store_path: str | os.PathLike,
                     lesson: "Lesson | None" = None) -> Takeaway:
    """Per run, the GP's belief about each candidate it chose (posterior mean and standard
    deviation, as the step's pool state kept them) against the value then measured. Numbers per
    run (``first_...``, ``second_...``): ``label``, ``inside`` (measured values within the mean ± 2
    s.d.), ``picks``, ``error`` (mean absolute difference), ``sd`` (mean predicted s.d.)."""
    from nasviz import viz

    reads, waiting = _read(runs, store_path)
    if reads is None:
        return Takeaway(False, waiting=waiting)
    numbers, groups = {}, {}
    for order, run in zip(("first", "second", "third"), reads):
        measured = {(int(e.step), e.arch): float(e.value) for e in run.evaluations if e.ok}
        rows = []
        for step, state in run.states:
            pool = state.pool
            if pool is None or len(pool.mean) != len(pool) or len(pool.std) != len(pool):
                continue
            for i in _chosen(state):
                value = measured.get((step, pool.candidates[i]))
                if value is not None:
                    rows.append((float(pool.mean[i]), float(pool.std[i]), value))
        pred, sd, y = (np.array([r[k] for r in rows]) for k in range(3))
        inside = int(np.sum(np.abs(y - pred) <= 2 * sd))
        groups[run.label] = (pred, sd, y)
        numbers.update({f"{order}_label": run.label, f"{order}_inside": str(inside), f"{order}_picks": str(len(rows)),
                        f"{order}_error": f"{np.mean(np.abs(y - pred)):.2f}" if len(rows) else "?",
                        f"{order}_sd": f"{np.mean(sd):.2f}" if len(rows) else "?"})
    return Takeaway(True, numbers, viz.plot_prediction_check(groups, reads[0].search.objective.metric))


def batch_spread(runs: "Sequence[LessonRunId]", store_path: str | os.PathLike,
                 lesson: "Lesson | None" = None) -> Takeaway:
    """Per run, how different the members of each chosen batch are: the mean number of categorical
    parameters (NB201: edges) in which two members differ, averaged over the model-based steps.
    Numbers: ``first_label``, ``first_spread``, ``second_...``, ``parameters`` (how many there are)."""
    from nasviz import viz
    from nasviz.spaces import get_space

    reads, waiting = _read(runs, store_path)
    if reads is None:
        return Takeaway(False, waiting=waiting)
    numbers, labels, spreads = {}, [], []
    for order, run in zip(("first", "second", "third"), reads):
        space = get_space(run.search.space)
        per_step = []
        for _, state in run.states:
            if state.pool is None or state.batch is None or len(_chosen(state)) < 2:
                continue
            params = [space.to_parameters(space.parse(state.pool.candidates[i])) for i in _chosen(state)]
            per_step.append(np.mean([sum(a[k] != b[k] for k in a) for a, b in combinations(params, 2)]))
        labels.append(run.label)
        spreads.append(float(np.mean(per_step)) if per_step else float("nan"))
        numbers.update({f"{order}_label": run.label, f"{order}_spread": f"{spreads[-1]:.1f}",
                        "parameters": str(len(space.parameter_choices()))})
    figure = viz.plot_lesson_bars(labels, spreads, decimals=1,
                                  title="How far apart the members of a batch are (mean over steps)",
                                  axis=f"parameters in which two members differ (of {numbers.get('parameters', '?')})")
    return Takeaway(True, numbers, figure)


def wl_features(runs: "Sequence[LessonRunId]", store_path: str | os.PathLike,
                lesson: "Lesson | None" = None) -> Takeaway:
    """The WL features whose count raised and lowered the GP's prediction most in the run's newest
    step that measured them (NAS-BOWL Eq. 3.2). Numbers: ``step``, ``up_feature``, ``up_gradient``,
    ``down_feature``, ``down_gradient``, ``features``."""
    from nasviz import viz

    reads, waiting = _read(runs, store_path)
    if reads is None:
        return Takeaway(False, waiting=waiting)
    run = reads[0]
    found = [(k, s.features) for k, s in run.states if s.features is not None and s.features.features]
    if not found:
        return Takeaway(True, {"features": "0"})
    step, feats = found[-1]
    g = np.asarray(feats.gradients, dtype=float)
    up, down = int(np.argmax(g)), int(np.argmin(g))
    numbers = {"step": str(step), "features": str(len(g)), "up_feature": feats.features[up], "up_gradient": f"{g[up]:+.3f}",
               "down_feature": feats.features[down], "down_gradient": f"{g[down]:+.3f}"}
    return Takeaway(True, numbers, viz.plot_feature_gradients(feats.features, g, depths=feats.depths or None))


def growth(runs: "Sequence[LessonRunId]", store_path: str | os.PathLike,
           lesson: "Lesson | None" = None) -> Takeaway:
    """How the search grew its networks: the best of the random start-up against the best the
    model found afterwards, with their parameter counts. Numbers: ``start_up``, ``model_steps``,
    ``start_best``, ``start_params``, ``best``, ``best_params``, ``gain``, ``times_larger``."""
    from nasviz import viz

    reads, waiting = _read(runs, store_path)
    if reads is None:
        return Takeaway(False, waiting=waiting)
    run = reads[0]
    ok = [e for e in run.evaluations if e.ok]
    n_init = int(run.search.strategy.setting("n_init") or 0)  # the preset's or the strategy's own default
    values = [float(e.value) for e in ok]
    params = [float((e.info or {}).get("n_parameters") or 0) for e in ok]
    start = [k for k in range(min(n_init, len(ok)))]
    later = [k for k in range(n_init, len(ok))]
    if not start or not later:
        return Takeaway(True, {"model_steps": "0"}, viz.plot_growth(values, params, n_init, run.search.objective.metric))
    a = max(start, key=lambda k: values[k])
    b = max(later, key=lambda k: values[k])
    numbers = {"start_up": str(len(start)), "model_steps": str(len(later)), "start_best": f"{values[a]:.2f}",
               "start_params": f"{params[a]:,.0f}", "best": f"{values[b]:.2f}", "best_params": f"{params[b]:,.0f}",
               "gain": f"{values[b] - values[a]:+.2f}", "times_larger": f"{params[b] / max(params[a], 1):.1f}"}
    return Takeaway(True, numbers, viz.plot_growth(values, params, len(start), run.search.objective.metric))


def _regret_by_cost(run: _Read, optimum: float) -> tuple[np.ndarray, np.ndarray]:
    """``(cost, regret)`` after each evaluation: the optimum minus the best full-budget value so
    far (NaN before the first; a lower budget's value is not a result)."""
    from nasviz.fidelity.spent import full_evaluations_spent

    cost = full_evaluations_spent(run.evaluations)
    best, regret = -np.inf, []
    for e in run.evaluations:
        full = bool(((e.info or {}).get("fidelity") or {}).get("full", True))
        if e.ok and full:
            best = max(best, float(e.value))
        regret.append(optimum - best if np.isfinite(best) else np.nan)
    return cost, np.asarray(regret, dtype=float)


def _at(cost: np.ndarray, regret: np.ndarray, c: float) -> float:
    k = int(np.searchsorted(cost, c * (1 + 1e-9), side="right"))
    return float(regret[k - 1]) if k else float("nan")


def cost_to_regret(runs: "Sequence[LessonRunId]", store_path: str | os.PathLike,
                   lesson: "Lesson | None" = None) -> Takeaway:
    """Regret against what the searches spent, counted in full evaluations (one 200-epoch training
    on NAS-Bench-201): per strategy (``first_``, ``second_``, ``third_`` in lesson order) its
    ``label``, mean regret ``at_cost`` once every run has spent ``cost`` (the smallest total any
    run spent), mean ``evaluations`` made and how many of them were ``full``; the figure: mean
    regret against cost per strategy. Cost as Li et al.'s Hyperband counts it (resources spent)."""
    from nasviz import viz

    reads, waiting = _read(runs, store_path)
    if reads is None:
        return Takeaway(False, waiting=waiting)
    optimum = _optimum(reads[0])
    curves = [(run.label, *_regret_by_cost(run, optimum)) for run in reads]
    cost = min(float(c[-1]) for _, c, _ in curves if len(c))
    numbers: dict[str, str] = {"cost": f"{cost:.0f}"}
    labels, xs, ys = [], [], []
    grid = np.linspace(0.0, max(float(c[-1]) for _, c, _ in curves if len(c)), 200)[1:]
    for order, label in zip(("first", "second", "third"), _labels(reads)):
        mine = [(c, r) for name, c, r in curves if name == label]
        members = [run for run in reads if run.label == label]
        at = [_at(c, r, cost) for c, r in mine]
        full = [sum(bool(((e.info or {}).get("fidelity") or {}).get("full", True)) for e in run.evaluations)
                for run in members]
        numbers.update({f"{order}_label": label, f"{order}_at_cost": f"{np.nanmean(at):.2f}" if np.isfinite(at).any()
                        else "none yet", f"{order}_evaluations": f"{np.mean([len(m.evaluations) for m in members]):.0f}",
                        f"{order}_full": f"{np.mean(full):.0f}"})
        labels.append(label)
        xs.append(grid)
        with np.errstate(all="ignore"):
            ys.append(np.array([np.nanmean([_at(c, r, g) for c, r in mine]) if any(np.isfinite(_at(c, r, g))
                                                                                   for c, r in mine) else np.nan
                                for g in grid]))
    figure = viz.plot_lesson_steps(labels, xs, ys, title=f"Regret against cost (mean over {len(reads) // len(labels)} "
                                                          "seeds; lower is better)",
                                   x_axis="cost spent, in full evaluations (one 200-epoch training each)",
                                   y_axis=f"points below the best {reads[0].search.objective.metric}")
    return Takeaway(True, numbers, figure)


#: The takeaways lessons may name.
TAKEAWAYS: dict[str, Callable[..., Takeaway]] = {
    "regret-by-strategy": regret_by_strategy,
    "kernel-rank-correlation": kernel_rank_correlation,
    "prediction-check": prediction_check,
    "batch-spread": batch_spread,
    "wl-features": wl_features,
    "growth": growth,
    "cost-to-regret": cost_to_regret,
}
