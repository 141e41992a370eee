"""What the run store hands back: typed, read-only records of its rows (runs, evaluations, step
snapshots).

A caller reads ``run.status`` or ``evaluation.value``, not ``run["status"]``: a misspelt field is an
``AttributeError`` where it is written (and a type checker's error before that), not a
``KeyError`` on one page of the dashboard. The records are snapshots of the file at the moment
they were read; they never write back (the store's methods do that).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
import math
from typing import Any, Mapping

from nasviz.config import SearchConfig


@dataclass(frozen=True)
class StoredRun:
    """One run as stored, with the summaries of its evaluations (:meth:`RunStore.get_run`,
    :meth:`RunStore.list_runs`, :meth:`RunStore.claim_run`).

    Attributes
    ----------
    id : int
        The run's id in its store (from 1, never reused).
    name : str
        The label a visitor sees (given at creation or made from strategy, metric and seed).
    created, updated : float
        Unix seconds: when the run was created, and when anything of it (status, evaluations,
        snapshots, name, notes) was last written.
    status : str
        One of :data:`nasviz.store.STATUSES` (``running``, ``stopped``, ``finished``, ``failed``,
        ``interrupted``).
    strategy, metric, table : str or None
        ``config["strategy"]`` (a registry name), ``config["metric"]`` (the table column or
        trained score searched) and ``config["table"]`` (the benchmark file's path; ``None`` for
        a trained objective), copied out of :attr:`config`.
    seed, budget, batch_size : int or None
        ``config``'s seed, budget (evaluations in all) and batch size (evaluations per step).
    n_evaluations, n_failed : int
        Evaluations stored so far, and how many of them did not succeed (status other than ``ok``).
    last_step : int
        The highest step with a stored evaluation (0 before the first).
    best_value : float or None
        The highest stored value of a successful evaluation, as strategies see it: a minimised
        metric is stored negated (:func:`nasviz.table_schema.shown_value` turns it back).
        ``None`` while no evaluation has succeeded.
    best_arch : str or None
        The architecture (the space's string) of that best evaluation; the earliest on ties.
    pid, host : int or None, str or None
        The process (id and host name) that last claimed the run.
    heartbeat : float or None
        Unix seconds of that process's last sign of life; a ``running`` run without one for the
        store's ``stale_after`` seconds is marked ``interrupted``.
    stop_requested : bool
        Whether someone asked the running process to stop after its current step.
    error : str or None
        Why the run failed (``None`` unless ``failed``, or cleared by a later claim).
    config : dict
        Everything needed to rebuild the search (:func:`nasviz.runner.build_search`), as plain
        data: :meth:`SearchConfig.to_dict`'s settings and what the store adds (``skipped_rows``,
        ``direction``, ``value_decimals``). The record is frozen but this dict is not: treat it as
        read-only. Read the settings typed from :attr:`search`.
    lease : int
        The generation of the run's current owner (see "Leases" in :mod:`nasviz.store`); from
        :meth:`RunStore.claim_run`, the lease that call took, which the claimer passes to its writes.
    session : str or None
        The browser session that started the run (``None`` from the command line).
    notes : str
        Free text a visitor keeps with the run (at most :data:`nasviz.store.MAX_NOTES_CHARS`).
    """

    id: int
    name: str
    created: float
    updated: float
    status: str
    strategy: str | None
    metric: str | None
    table: str | None
    seed: int | None
    budget: int | None
    batch_size: int | None
    n_evaluations: int
    n_failed: int
    last_step: int
    best_value: float | None
    best_arch: str | None
    pid: int | None
    host: str | None
    heartbeat: float | None
    stop_requested: bool
    error: str | None
    config: dict[str, Any]
    lease: int
    session: str | None
    notes: str

    @cached_property
    def search(self) -> SearchConfig:
        """The run's settings, typed: :attr:`config` read once (:meth:`SearchConfig.read_stored`:
        as it was validated; a config this installation cannot read, such as one naming a plugin
        strategy no longer installed, as stored, with the parts' defaults where it says nothing).
        What the pages read (``run.search.space``, ``run.search.objective.metric``,
        ``run.search.run.budget``); :attr:`config` keeps what the store adds besides the settings
        (``skipped_rows``, ``direction``, ``value_decimals``)."""
        return SearchConfig.read_stored(self.config)

    def to_dict(self) -> dict[str, Any]:
        """The record as plain data (a copy), its fields in declaration order (the order the
        store's dictionaries had before these records, so JSON written from it is unchanged)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class StoredEvaluation:
    """One stored evaluation of a run (:meth:`RunStore.evaluations`, :func:`read_csv_export`).

    Attributes
    ----------
    index : int
        Its place in the run, from 0, in the order the search made the evaluations.
    step : int
        The search step (from 1) that made it.
    arch : str
        The architecture, as its space writes it (:meth:`SearchSpace.format`).
    value : float or None
        The score as strategies see it (higher is better: a minimised metric is stored negated,
        :func:`nasviz.table_schema.shown_value` turns it back); ``None`` when it failed.
    cost : float or None
        What it cost: seconds of training, or a table's cost column (epochs for a multi-fidelity
        lookup on a table without one); ``None`` when unknown.
    status : str
        ``"ok"``, or why there is no value (``"failed"``, ...).
    error : str or None
        The failure's message.
    info : dict
        What the objective reported besides (plain data: learning curves, a multi-fidelity
        search's ``fidelity``, the training ``device``, ...). Frozen record, mutable dict: treat it
        as read-only.
    created : float
        Unix seconds when it was stored.
    """

    index: int
    step: int
    arch: str
    value: float | None
    cost: float | None
    status: str
    error: str | None
    info: dict[str, Any]
    created: float

    @property
    def ok(self) -> bool:
        """Whether it succeeded with a value."""
        return self.status == "ok" and self.value is not None

    def to_dict(self) -> dict[str, Any]:
        """The evaluation as plain data (a copy), keys in field order: the order of the CSV
        columns and of the JSON export's evaluations."""
        return dataclasses.asdict(self)


def _number(x: Any, default: float | None) -> float | None:
    """``x`` as a float, or ``default`` where it is absent (``None``), not a number or not finite
    (JSON has no NaN: the store writes ``null``)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return default
    return v if math.isfinite(v) else default


def _count(x: Any) -> int:
    """``x`` as an int, 0 where it is absent or not a number."""
    return int(_number(x, 0.0) or 0)


@dataclass(frozen=True)
class StepResult:
    """One evaluation as a step's snapshot reports it (:attr:`StoredSnapshot.results`).

    Attributes
    ----------
    arch : str
        The architecture, as its space writes it.
    value : float or None
        The score as strategies see it (a minimised metric negated); ``None`` when it failed.
    status : str
        ``"ok"``, or why there is no value.
    error : str or None
        The failure's message.
    fidelity : dict or None
        The budget a multi-fidelity search asked for (:meth:`Fidelity.to_dict`'s plain data),
        ``None`` for a full evaluation. Frozen record, mutable dict: treat it as read-only.
    """

    arch: str
    value: float | None
    status: str = "ok"
    error: str | None = None
    fidelity: dict[str, Any] | None = None

    @classmethod
    def from_stored(cls, data: Mapping[str, Any]) -> "StepResult":
        """Read one entry of a stored snapshot's ``results`` (lenient: missing fields default)."""
        fidelity = data.get("fidelity")
        error = data.get("error")
        return cls(arch=str(data.get("arch", "")), value=_number(data.get("value"), None),
                   status=str(data.get("status") or "ok"), error=None if error is None else str(error),
                   fidelity=dict(fidelity) if isinstance(fidelity, Mapping) else None)


@dataclass(frozen=True)
class StoredSnapshot:
    """What one search step did, as stored (:meth:`RunStore.snapshots`, :meth:`RunStore.snapshot`,
    :meth:`RunStore.latest_snapshot`): the fields the runner's ``Snapshot`` writes, read back.

    Stores written by older releases, and snapshots that callers wrote by hand, may lack fields:
    numbers then read 0, the best ``None``, lists empty, the state ``{}``; keys the record does not
    know are not read (the JSON export keeps the stored text as it is, see
    :meth:`RunStore.export_json`).

    Attributes
    ----------
    step : int
        The search step (from 1).
    n_evaluations, budget : int
        Evaluations made up to and including this step, and the run's budget (0 when unknown).
    proposals : tuple of str
        The architectures the strategy proposed at this step (the space's strings).
    results : tuple of StepResult
        What evaluating them gave, in proposal order.
    best_value : float or None
        The best value so far, as strategies see it (a minimised metric negated); ``None`` before
        a success.
    best_arch : str or None
        The architecture of that best value.
    elapsed : float
        Seconds the search had run at the end of this step (earlier sessions of a resumed run included).
    step_seconds : float
        Seconds this step took (ask, evaluations, tell).
    strategy : dict
        The strategy's state after this step, as plain data in the typed layout
        (:meth:`nasviz.state.StepState.to_dict`; read it with :meth:`StepState.from_dict`, which the
        store does not import). ``{}`` when the step stored none. Treat it as read-only.
    """

    step: int
    n_evaluations: int = 0
    budget: int = 0
    proposals: tuple[str, ...] = ()
    results: tuple[StepResult, ...] = ()
    best_value: float | None = None
    best_arch: str | None = None
    elapsed: float = 0.0
    step_seconds: float = 0.0
    strategy: dict[str, Any] = dataclasses.field(default_factory=dict)

    @classmethod
    def from_stored(cls, data: Mapping[str, Any]) -> "StoredSnapshot":
        """Read a stored snapshot (the JSON object of the ``snapshots`` table) leniently: an absent
        or ``null`` number reads 0 (``best_value`` ``None``), an absent list empty."""
        state = data.get("strategy")
        best_arch = data.get("best_arch")
        return cls(step=_count(data.get("step")),
                   n_evaluations=_count(data.get("n_evaluations")),
                   budget=_count(data.get("budget")),
                   proposals=tuple(str(p) for p in data.get("proposals") or ()),
                   results=tuple(StepResult.from_stored(r) for r in data.get("results") or () if isinstance(r, Mapping)),
                   best_value=_number(data.get("best_value"), None),
                   best_arch=None if best_arch is None else str(best_arch),
                   elapsed=_number(data.get("elapsed"), 0.0) or 0.0,
                   step_seconds=_number(data.get("step_seconds"), 0.0) or 0.0,
                   strategy=dict(state) if isinstance(state, Mapping) else {})
