"""Watching a stored run: the incremental :class:`RunWatcher` the Search page polls, and exports.

A watcher reads only what was added since its last refresh (evaluations by index, snapshots by
step), turns each snapshot's strategy state into a typed :class:`~nasviz.state.StepState`, and
keeps what the views need: every step's progress fields and GP fit (:class:`StepSummary`, a few
numbers each), the newest full state, and the newest WL feature gradients. It also owns the
kernels the views compute with (:class:`~nasviz.dashboard.kernels.KernelSet`): watchers live in
one browser session's state, so sessions never share a kernel object.
"""

from __future__ import annotations

import copy
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

from nasviz.config import TABLE, SearchConfig
from nasviz.dashboard.kernels import KernelSet
from nasviz.dashboard.sources import table_from_path
from nasviz.fidelity.decisions import RungDecision
from nasviz.objectives import TableError
from nasviz.table_schema import run_direction, shown_value
from nasviz.spaces.base import SearchSpace
from nasviz.state import FeatureGradients, GPFit, StepState
from nasviz.store import RUNNING, RunStore, StoredRun, StoredSnapshot, to_json

T = TypeVar("T")
#: What a watcher's :attr:`~RunWatcher.search` is before its run is read: the defaults.
_NO_RUN = SearchConfig()

#: Derived views kept per watcher (distances, embeddings), newest last.
MEMO_SIZE = 32


@dataclass(frozen=True)
class StepSummary:
    """What the history views need of one step: progress fields (a
    :class:`nasviz.viz.StepProgress`) and the GP fit (if any)."""

    step: int
    n_evaluations: int
    budget: int
    elapsed: float
    step_seconds: float
    best_value: float | None
    best_arch: str | None
    phase: str = ""
    gp: GPFit | None = None

    @classmethod
    def of(cls, snapshot: StoredSnapshot, state: StepState) -> "StepSummary":
        return cls(step=snapshot.step, n_evaluations=snapshot.n_evaluations, budget=snapshot.budget,
                   elapsed=snapshot.elapsed, step_seconds=snapshot.step_seconds, best_value=snapshot.best_value,
                   best_arch=snapshot.best_arch, phase=state.phase, gp=state.gp)


class RunWatcher:
    """Incremental reader of one stored run for the live views.

    :meth:`refresh` fetches only evaluations and snapshots added since the last call, so a page
    polling every second stays cheap however long the run is. ``steps`` holds one
    :class:`StepSummary` per step, ``latest`` the newest full snapshot (a
    :class:`~nasviz.store.StoredSnapshot`) and ``state`` its typed
    strategy state; ``features`` the newest WL feature gradients any step reported.
    """

    def __init__(self, store_path: str | os.PathLike, run_id: int) -> None:
        self.store_path = Path(store_path)
        self.run_id = int(run_id)
        self.store = RunStore(self.store_path)
        #: The run's row as of the last :meth:`refresh` (``None`` before the first).
        self.run: StoredRun | None = None
        #: The views' rows, plain data as :mod:`nasviz.viz` reads it: each stored evaluation's fields
        #: but ``info`` (curves etc. are not drawn from here: memory stays flat), plus ``fidelity``,
        #: the budget a multi-fidelity search asked for, where there is one.
        self.evaluations: list[dict[str, Any]] = []
        self.steps: list[StepSummary] = []
        self.latest: StoredSnapshot | None = None
        self.state: StepState = StepState(strategy="", phase="")
        self.features: FeatureGradients | None = None
        self.kernels = KernelSet()
        #: every promotion and stop a multi-fidelity strategy reported, with its step
        self.decisions: list[tuple[int, RungDecision]] = []
        self._memo: dict[Any, Any] = {}
        #: When the newest snapshot was written (wall clock), for the live elapsed time.
        self.last_snapshot_at: float | None = None

    def refresh(self) -> "RunWatcher":
        self.run = self.store.get_run(self.run_id)
        for ev in self.store.evaluations(self.run_id, since_index=len(self.evaluations)):
            row = {"index": ev.index, "step": ev.step, "arch": ev.arch, "value": ev.value, "cost": ev.cost,
                   "status": ev.status, "error": ev.error, "created": ev.created}
            if (ev.info or {}).get("fidelity"):
                row["fidelity"] = ev.info["fidelity"]
            self.evaluations.append(row)
        last_step = self.steps[-1].step if self.steps else None
        for snap in self.store.snapshots(self.run_id, since_step=last_step):
            state = StepState.from_dict(snap.strategy)  # the store keeps it as plain data
            self.decisions.extend((snap.step, d) for d in state.decisions)
            self.steps.append(StepSummary.of(snap, state))
            self.features = state.features or self.features
            self.latest, self.state = snap, state
            self.last_snapshot_at = None
        if self.last_snapshot_at is None and self.steps:
            self.last_snapshot_at = self.store.latest_snapshot_time(self.run_id)
        return self

    def at_step(self, step: int) -> "RunWatcher":
        """The run as it was just after ``step`` (teaching: replay a past step): a copy whose
        steps, evaluations and state stop there, sharing this watcher's kernels and memo (their
        keys name the step). Raises ``ValueError`` for a step without a stored snapshot."""
        # memoised: a replayed step is read from the store once, not on every live refresh
        snapshot = self.memo(("snapshot", step), lambda: self.store.snapshot(self.run_id, step))
        if snapshot is None:
            raise ValueError(f"run {self.run_id} has no stored step {step}")
        past = copy.copy(self)
        past.steps = [s for s in self.steps if s.step <= step]
        past.evaluations = [e for e in self.evaluations if int(e["step"]) <= step]
        past.decisions = [(s, d) for s, d in self.decisions if s <= step]
        past.latest, past.state = snapshot, StepState.from_dict(snapshot.strategy)
        past.features = past.state.features
        return past

    def elapsed(self, now: float | None = None) -> float:
        """Seconds the search has run: the newest step's ``elapsed`` (resumed sessions included),
        plus, while it runs, the time since that step was stored, so the figure keeps moving
        during a long step instead of standing at the last step's value."""
        if not self.steps:
            return 0.0
        base = self.steps[-1].elapsed
        if self.status != RUNNING or self.last_snapshot_at is None:
            return base
        return base + max(0.0, (time.time() if now is None else now) - self.last_snapshot_at)

    # ------------------------------------------------------------------ what the views ask
    @property
    def config(self) -> dict[str, Any]:
        """The stored configuration as plain data (:meth:`SearchConfig.to_dict`, plus what the
        store adds: ``skipped_rows``, ``direction``, ``value_decimals``); the settings are read
        typed from :attr:`search`."""
        return (self.run.config if self.run is not None else None) or {}

    @property
    def search(self) -> SearchConfig:
        """The run's settings, typed (:attr:`nasviz.store.StoredRun.search`); before the first
        :meth:`refresh`, the defaults."""
        return self.run.search if self.run is not None else _NO_RUN

    @property
    def status(self) -> str:
        """The run's status (``"unknown"`` before the first :meth:`refresh`)."""
        return self.run.status if self.run is not None else "unknown"

    @property
    def name(self) -> str:
        """The run's name (``""`` before the first :meth:`refresh`)."""
        return self.run.name if self.run is not None else ""

    @property
    def error(self) -> str | None:
        """Why the run failed, if it did."""
        return self.run.error if self.run is not None else None

    @property
    def decimals(self) -> int | None:
        """The resolution of the run's values (:func:`nasviz.rounding.run_decimals`)."""
        from nasviz.rounding import run_decimals

        return run_decimals(self.config)

    @property
    def space_name(self) -> str:
        return self.search.space

    @property
    def space(self) -> SearchSpace:
        from nasviz.spaces import get_space

        return get_space(self.space_name)

    @property
    def strategy(self) -> str:
        """The strategy's registered name (``""`` before the first :meth:`refresh`)."""
        return self.search.strategy.name if self.run is not None else ""

    @property
    def model_kernel(self) -> str | None:
        """The kernel of the strategy's GP, as the stored configuration names it
        (:attr:`nasviz.config.StrategySettings.kernel`; ``None``: no model). Runs stored before the
        configuration named it: worked out when it is read (:meth:`SearchConfig.from_dict`;
        ``None`` for a strategy this installation does not know)."""
        return self.search.strategy.kernel or None

    @property
    def has_model(self) -> bool:
        """Whether the strategy fits a surrogate (registry capability ``model``)."""
        from nasviz.components import STRATEGIES

        return self.strategy in STRATEGIES and bool(STRATEGIES.get(self.strategy).capabilities.get("model"))

    def last_fit(self) -> GPFit | None:
        """The newest GP fit of any step (``None`` before the first)."""
        return next((s.gp for s in reversed(self.steps) if s.gp is not None), None)

    def successful(self) -> list[dict[str, Any]]:
        """The evaluations that produced a value."""
        return [e for e in self.evaluations if e["status"] == "ok" and e["value"] is not None]

    @property
    def direction(self) -> str:
        """``"maximise"`` or ``"minimise"``: the run's metric's. Stored values are scores (higher is
        better: minus a minimised metric); :meth:`shown` gives the metric's own value."""
        return run_direction(self.config)

    def shown(self, score: float | None) -> float | None:
        """A stored value (a score) as the metric's own value, for display."""
        return shown_value(score, self.direction)

    def optimum(self) -> float | None:
        """The best score the table holds for the run's metric, in the stored values' units
        (``None`` for live training); :meth:`shown` of it is the table's optimum."""
        objective = self.search.objective
        if objective.kind != TABLE or not objective.table:
            return None
        try:
            table = table_from_path(objective.table, self.space_name)
            return table.sign(objective.metric) * table.optimum(objective.metric)
        except (TableError, KeyError, ValueError):
            return None

    def memo(self, key: Any, compute: Callable[[], T]) -> T:
        """``compute()`` once per ``key`` (kept for the latest :data:`MEMO_SIZE` keys only)."""
        if key not in self._memo:
            if len(self._memo) >= MEMO_SIZE:
                self._memo.pop(next(iter(self._memo)))
            self._memo[key] = compute()
        return self._memo[key]


def export_bytes(store_path: str | os.PathLike, run_id: int, fmt: str) -> bytes:
    """A run exported as CSV (evaluations) or JSON (run, evaluations, snapshots), as bytes."""
    store = RunStore(store_path)
    if fmt == "json":
        return to_json(store.export_json(run_id)).encode("utf-8")
    if fmt != "csv":
        raise ValueError(f"export format must be 'csv' or 'json', got {fmt!r}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.csv"
        store.export_csv(run_id, path)
        return path.read_bytes()
