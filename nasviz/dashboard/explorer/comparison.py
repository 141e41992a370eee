"""The Compare page: runs side by side (best so far, final values) and the parallel coordinates of
their evaluated architectures, for spaces with operation slots."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from nasviz.config import TABLE, SearchConfig
from nasviz.dashboard.sources import table_from_path
from nasviz.table_schema import MINIMISE, run_direction
from nasviz.spaces.base import OPERATION_SLOTS
from nasviz.viz import SlotAxes
from nasviz.defaults import DEFAULT_SPACE

if TYPE_CHECKING:
    from nasviz.store import StoredEvaluation, StoredRun

#: Runs compared when the visitor has chosen none.
DEFAULT_RUNS = 12
#: Above this many evaluations the parallel coordinates are drawn on request: the browser renders
#: Plotly's ``parcoords`` with WebGL, and even the 1,000 lines it is capped at
#: (``MAX_PARALLEL_LINES`` in ``nasviz/viz/_compare.py``) hold the page for about 1.6 s on a 2-core machine
#: without a GPU (``python -m nasviz bench browser``).
PARALLEL_EAGER_LINES = 1000
#: Configuration fields that do not change what a search finds: runs differing only in these
#: are repeats of one configuration (a seed is a repeat; pacing and parallelism are not settings).
NOT_CONFIGURATION = frozenset({"seed", "train_seed", "step_delay", "workers", "dask", "name", "data_folder"})


def _setting_text(key: str, value: Any) -> str:
    if key == "table":
        return os.path.basename(str(value))
    if isinstance(value, Mapping):
        return ",".join(f"{k}={v}" for k, v in sorted(value.items())) or "defaults"
    return str(value)


def configuration_groups(configs: Sequence[Mapping[str, Any]]) -> list[str]:
    """One label per run configuration (same order): equal for runs that differ only by seed
    (:data:`NOT_CONFIGURATION`), different otherwise. A label is the strategy followed by the
    settings that vary among the given runs, e.g. ``bo · batch_size=5 · table=a.csv``, so the
    Compare page never averages runs of different data sources, selectors or budgets together.
    """
    keys = [{k: v for k, v in (c or {}).items() if k not in NOT_CONFIGURATION} for c in configs]
    fields = sorted({k for cfg in keys for k in cfg} - {"strategy"})
    varying = [f for f in fields if len({repr(cfg.get(f)) for cfg in keys}) > 1]
    labels = []
    for cfg in keys:
        parts = [str(cfg.get("strategy", "?"))]
        for f in varying:
            value = cfg.get(f)
            if isinstance(value, Mapping):  # options: only the entries that vary
                others = [k.get(f) or {} for k in keys]
                sub = {k: v for k, v in value.items() if len({repr(o.get(k)) for o in others}) > 1}
                if sub or not value:
                    parts.append(f"{f}={_setting_text(f, sub)}")
            elif value is not None:
                parts.append(f"{f}={_setting_text(f, value)}")
        labels.append(" · ".join(parts))
    return labels


@dataclass
class RunCurve:
    """One run's values in evaluation order: ``values`` ``(n,)`` (NaN where an evaluation failed,
    and where a multi-fidelity search measured a budget below the full one: those are not results),
    ``costs`` ``(n,)`` the cumulative cost after each evaluation (a table's in full evaluations,
    live training's in seconds) and
    ``seconds`` ``(n,)`` the wall clock since the run started when it was stored,
    ``strategy`` and ``seed`` from its configuration, ``optimum`` the table's optimum (or None),
    ``space`` the search space's name, ``group`` its configuration among the compared runs
    (:func:`configuration_groups`; the figures average runs of one group)."""

    run_id: int
    name: str
    strategy: str
    seed: int
    metric: str
    values: np.ndarray
    archs: list[str]
    optimum: float | None
    budget: int
    space: str = DEFAULT_SPACE
    group: str = ""
    costs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    seconds: np.ndarray = field(default_factory=lambda: np.zeros(0))


def _optimum(search: SearchConfig) -> float | None:
    """The table's best score for the run's metric (stored values are scores: minus a minimised metric)."""
    objective = search.objective
    if objective.kind != TABLE or not objective.table:
        return None
    try:
        table = table_from_path(objective.table, search.space)
        return table.sign(objective.metric) * table.optimum(objective.metric)
    except (ValueError, KeyError, OSError):
        return None


def _metric_label(run: StoredRun) -> str:
    """What a curve's values are: the metric, or ``-latency`` for a minimised one (curves are scores)."""
    metric = str(run.search.objective.metric or "value")
    return f"−{metric} (minimised: higher is better)" if run_direction(run.config) == MINIMISE else metric


def _full_result(evaluation: StoredEvaluation) -> bool:
    """A successful evaluation at the full budget (every evaluation of a single-fidelity search)."""
    fidelity = (evaluation.info or {}).get("fidelity") or {}
    return evaluation.ok and bool(fidelity.get("full", True))


def _cumulative_cost(search: SearchConfig, evals: Sequence[StoredEvaluation]) -> np.ndarray:
    """``(n,)`` cumulative cost: a table search's in full evaluations (a single-fidelity lookup is
    one, a 12-epoch lookup on NAS-Bench-201 12/200: :func:`nasviz.fidelity.spent.full_evaluations_spent`),
    so that single- and multi-fidelity runs of one table share the axis; live training's in the
    seconds its evaluations trained."""
    from nasviz.fidelity.spent import full_evaluations_spent

    if not evals:
        return np.zeros(0)
    if search.objective.kind == TABLE:
        return full_evaluations_spent(evals)
    return np.cumsum([float(e.cost or 0.0) for e in evals])


def run_curves(store_path: str | os.PathLike, run_ids: Sequence[int]) -> list[RunCurve]:
    """Read the chosen runs from the store (unknown ids raise ``ValueError``). A run that has no
    evaluation yet (a study's run waiting for its worker) has an empty curve."""
    from nasviz.store import RunStore, UnknownRunError

    store = RunStore(store_path)
    curves = []
    configs = []
    for rid in run_ids:
        try:
            run = store.get_run(int(rid))
            evals = store.evaluations(int(rid))
        except UnknownRunError:
            raise ValueError(f"run {rid} is not in the store") from None
        search = run.search
        configs.append(run.config or {})  # every stored setting, compared as stored
        values = np.array([float(e.value) if _full_result(e) else np.nan for e in evals], dtype=float)
        costs = _cumulative_cost(search, evals)
        started = float(run.created or (evals[0].created if evals else 0.0))
        seconds = np.array([max(float(e.created) - started, 0.0) for e in evals])
        curves.append(RunCurve(int(rid), str(run.name or ""), str(search.strategy.name),
                               int(search.run.seed or 0), _metric_label(run), values,
                               [e.arch for e in evals], _optimum(search), int(search.run.budget or len(evals)),
                               search.space, costs=costs, seconds=seconds))
    for curve, group in zip(curves, configuration_groups(configs)):
        curve.group = group
    return curves


def parallel_space(curves: Sequence[RunCurve]) -> tuple[str | None, str | None]:
    """``(space, None)`` when the runs' architectures can be drawn as parallel coordinates (one
    axis per operation slot: one space, which provides ``operation-slots``), else
    ``(None, one sentence why not)``."""
    from nasviz.spaces import get_space

    spaces = sorted({c.space for c in curves})
    if len(spaces) != 1:
        return None, (f"The chosen runs search different spaces ({', '.join(spaces)}), so their architectures "
                      f"share no axes.")
    if not get_space(spaces[0]).provides(OPERATION_SLOTS):
        return None, (f"Parallel coordinates draw one axis per operation slot, and architectures of the "
                      f"{spaces[0]!r} space have no fixed slots.")
    return spaces[0], None


def slot_axes(curves: Sequence[RunCurve], space: str | None) -> SlotAxes | None:
    """What :func:`nasviz.viz.plot_parallel` draws for ``curves`` of ``space`` (from
    :func:`parallel_space`): the space's slot names and choices and each successful evaluation's
    operations per slot; ``None`` when ``space`` is ``None``. ``ValueError`` for a space without
    operation slots."""
    from nasviz.spaces import get_space

    if space is None:
        return None
    sp = get_space(space)
    if not sp.provides(OPERATION_SLOTS):
        raise ValueError(f"space {space!r} has no operation slots to draw as axes")
    of = {a: tuple(sp.slots(sp.parse(a))) for c in curves for a, v in zip(c.archs, c.values) if np.isfinite(v)}
    return SlotAxes(tuple(sp.slot_names()), tuple(sp.slot_choices()), of)


def parallel_on_request(n_evaluations: int) -> bool:
    """Whether parallel coordinates of ``n_evaluations`` lines wait for the visitor to ask (more
    than :data:`PARALLEL_EAGER_LINES`), so the rest of the page is not held up by their rendering."""
    return n_evaluations > PARALLEL_EAGER_LINES


def default_selection(runs: Sequence[StoredRun], n: int = DEFAULT_RUNS) -> list[int]:
    """Runs to compare before the visitor chooses (``runs`` newest first): the newest ``n`` that
    share the newest run's metric and space, so they can be drawn together."""
    if not runs:
        return []
    first = runs[0]
    key = (first.metric, first.search.space)
    same = [r.id for r in runs if (r.metric, r.search.space) == key]
    return same[:n]
