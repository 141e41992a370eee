"""A benchmark table at several fidelities: look an architecture's value up at the budget asked for.

:class:`FidelityTableObjective` is the table objective of multi-fidelity searches. Its ladder (the
budgets, :class:`~nasviz.fidelity.Ladder`) and where each budget's values come from are given by a
:class:`FidelitySpec`, written as text (the CLI's ``--fidelity``, the stored search config):

``auto``
    the table's own fidelity columns. Either the metric is ``<base>_<E>`` and the table has
    siblings ``<base>_<E'>`` (NAS-Bench-101's ``valid_accuracy_4`` .. ``_108``; the embedded
    NAS-Bench-201 table's ``cifar10_test_12ep`` below ``cifar10_test_200ep``: separate training
    runs per budget, so continuing costs a ``restart``), or the table has per-epoch columns
    ``<metric>_epoch_<E>`` (``nasviz tabulate``'s learning curves, e.g. the embedded digits table:
    one run's epochs, so continuing ``resume``\\ s); then the metric itself is the value at the
    last epoch column's budget, and the columns below it are the lower rungs.
``E=COLUMN[@TABLE],...[;resume|;restart]``
    explicit rungs, lowest first: budget ``E`` reads ``COLUMN`` of ``TABLE`` (a path, or a file
    of the shared data folder; default: the run's own table). The last rung must be the run's
    metric on the run's table (regret is measured there). E.g. NAS-Bench-201's 12-epoch table
    below its 200-epoch one: ``12=cifar10_test@nb201_12epoch.csv,200=cifar10``. The suffix says how
    a higher budget is reached (:class:`~nasviz.fidelity.CostModel`); without it, ``resume`` when
    every lower rung is a ``<metric>_epoch_<E>`` column of the run's table, else ``restart``.

Cost: a table with a cost column (NAS-Bench-101's ``train_seconds_108``, the digits table's
``train_seconds``) holds the seconds of a full evaluation of each architecture, and budget ``E``
costs that times ``E / top``. A table without one (NAS-Bench-201) counts cost in epochs: budget
``E`` costs ``E``. The same model charges every strategy, nasviz's and the peers'.

NAS-Bench-201's two tables are not one training run seen at two budgets: the 12-epoch values come
from runs with their own 12-epoch cosine schedule (and, for CIFAR-100, a different evaluation
split: ``x-test``, half of the test set), not from the 200-epoch runs' 12th epoch. They are a
proxy (Spearman 0.86 / 0.81 with the 200-epoch values) and a search cannot continue a 12-epoch run
to 200 epochs: it pays the 200 epochs in full (``restart``).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.errors import ConfigError
from nasviz.fidelity.ladder import (RESTART, RESUME, CostModel, FidelityOutcome, FidelityRequest, Ladder)
from nasviz.objectives.base import FAILED, Evaluation

AUTO = "auto"
#: ``<base>_<E>`` or ``<base>_<E>ep`` (the embedded NB201 table's ``cifar10_test_12ep`` / ``_200ep``).
_BUDGET_SUFFIX = re.compile(r"^(?P<base>.+?)_(?P<budget>\d+)(?P<unit>ep)?$")
_EPOCH_COLUMN = re.compile(r"^(?P<metric>.+)_epoch_(?P<epoch>\d+)$")


@dataclass(frozen=True)
class FidelityRung:
    """Budget ``fidelity`` reads ``column`` of ``table`` (``None``: the run's own table)."""

    fidelity: float
    column: str
    table: str | None = None


@dataclass(frozen=True)
class FidelitySpec:
    """Where each budget's values come from (module docstring); ``rungs`` empty means ``auto``.
    ``continuation`` is ``"resume"``, ``"restart"`` or ``"auto"``."""

    rungs: tuple[FidelityRung, ...] = ()
    continuation: str = AUTO

    @classmethod
    def parse(cls, text: str) -> "FidelitySpec":
        """Read the text form (module docstring); :class:`~nasviz.errors.ConfigError` names the part."""
        body, _, how = str(text).strip().partition(";")
        how = how.strip() or AUTO
        if how not in (AUTO, RESUME, RESTART):
            raise ConfigError(f"fidelity: the continuation after ';' must be resume or restart, got {how!r}")
        body = body.strip()
        if not body or body == AUTO:
            return cls((), how)
        rungs = []
        for part in (p.strip() for p in body.split(",")):
            budget, sep, source = part.partition("=")
            column, _, table = source.partition("@")
            try:
                value = float(budget)
            except ValueError:
                value = float("nan")
            if not sep or not column.strip() or not value > 0:
                raise ConfigError(f"fidelity: {part!r} is not BUDGET=COLUMN[@TABLE] with a positive budget")
            rungs.append(FidelityRung(value, column.strip(), table.strip() or None))
        return cls(tuple(rungs), how)

    def text(self) -> str:
        body = AUTO if not self.rungs else ",".join(
            f"{r.fidelity:g}={r.column}" + (f"@{r.table}" if r.table else "") for r in self.rungs)
        return body if self.continuation == AUTO else f"{body};{self.continuation}"


def auto_rungs(metrics: Sequence[str], metric: str) -> tuple[tuple[FidelityRung, ...], str]:
    """The table's own fidelity columns for ``metric`` (module docstring, ``auto``) and how a
    higher budget is reached; :class:`~nasviz.errors.ConfigError` when it has none."""
    m = _BUDGET_SUFFIX.match(metric)
    if m:
        siblings = sorted((int(b.group("budget")), name) for name in metrics
                          if (b := _BUDGET_SUFFIX.match(name)) and b.group("base", "unit") == m.group("base", "unit"))
        if len(siblings) > 1 and siblings[-1][1] == metric:
            return tuple(FidelityRung(float(e), name) for e, name in siblings), RESTART
    epochs = sorted((int(e.group("epoch")), name) for name in metrics
                    if (e := _EPOCH_COLUMN.match(name)) and e.group("metric") == metric)
    if epochs:
        top = epochs[-1][0]
        lower = tuple(FidelityRung(float(e), name) for e, name in epochs if e < top)
        return lower + (FidelityRung(float(top), metric),), RESUME
    raise ConfigError(f"fidelity 'auto': the table has no fidelity columns for {metric!r} (neither "
                      f"<base>_<budget> siblings of it nor {metric}_epoch_<E> columns); give the rungs as "
                      "BUDGET=COLUMN[@TABLE],...")


class FidelityTableObjective:
    """Look architectures up at a budget (the objective protocol, :mod:`.base`, plus fidelities).

    ``evaluate`` takes architectures (evaluated at the full budget, as a single-fidelity strategy
    asks) or :class:`~nasviz.fidelity.FidelityRequest`\\ s; each :class:`Evaluation` carries its
    :class:`~nasviz.fidelity.FidelityOutcome` and the cost of the model in the module docstring.

    Parameters
    ----------
    table : Table
        The run's table: its ``metric`` is the full fidelity.
    metric : str
    spec : FidelitySpec or its text
    load : callable, optional
        ``load(path, space) -> Table`` for the rungs read from other tables (default
        :func:`~nasviz.objectives.table.load_table`, paths resolved in the shared data folder too).
    """

    def __init__(self, table: Any, metric: str, spec: FidelitySpec | str = AUTO, *, load: Any = None) -> None:
        self.table = table
        self.metric = table.check_metric(metric)
        self.space = table.space
        self.spec = FidelitySpec.parse(spec) if isinstance(spec, str) else spec
        rungs, continuation = self._rungs()
        self.cost_model = CostModel(continuation)
        values, present = self._values(rungs, load)
        self.rungs = rungs
        self.ladder = Ladder(tuple(r.fidelity for r in rungs), "epochs")
        self.values = values  # (n_rungs, n) over the table's rows
        self._domain = [a for a, ok in zip(table.archs, present) if ok]
        self.full_costs = None if table.costs is None else np.asarray(table.costs, dtype=float)
        self.cost_unit = "seconds" if self.full_costs is not None else "epochs"
        self.name = f"table:{table.source}:{metric}@{self.spec.text()}"
        self.direction = table.direction(self.metric)
        self.sign = table.sign(self.metric)

    def shown(self, score: float | None) -> float | None:
        """The metric's own value of a score (``None`` stays ``None``), as :class:`TableObjective`'s."""
        return None if score is None else self.sign * score

    def _rungs(self) -> tuple[tuple[FidelityRung, ...], str]:
        if not self.spec.rungs:
            rungs, how = auto_rungs(self.table.metrics, self.metric)
        else:
            rungs = self.spec.rungs
            top = rungs[-1]
            if top.column != self.metric or top.table not in (None, self.table.source):
                raise ConfigError(f"fidelity: the last rung must be the run's metric {self.metric!r} on its own "
                                  f"table, got {top.column!r}" + (f"@{top.table}" if top.table else ""))
            if any(b.fidelity <= a.fidelity for a, b in zip(rungs, rungs[1:])):
                raise ConfigError("fidelity: the budgets must increase from rung to rung")
            own = all(r.table is None and _EPOCH_COLUMN.match(r.column) for r in rungs[:-1])
            how = RESUME if own else RESTART
        return rungs, how if self.spec.continuation == AUTO else self.spec.continuation

    def _values(self, rungs: Sequence[FidelityRung], load: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(values (n_rungs, n), present (n,))``: each rung's value of every row of the run's
        table (NaN where a rung's table lacks the architecture) and which rows every rung has."""
        n = len(self.table.archs)
        values = np.full((len(rungs), n), np.nan)
        for k, rung in enumerate(rungs):
            source = self.table if rung.table is None else _load(rung.table, self.space.name, load)
            # scores, higher is better: a minimised column (a table's schema says so) is negated
            column = source.sign(rung.column) * np.asarray(source.values[source.check_metric(rung.column)], dtype=float)
            if source is self.table:
                values[k] = column
            else:
                index = source._index  # architecture -> row, the table's own lookup
                rows = np.array([index.get(a, -1) for a in self.table.archs])
                values[k, rows >= 0] = column[rows[rows >= 0]]
        present = np.isfinite(values).all(axis=0)
        if not present.any():
            raise ConfigError("fidelity: no architecture of the table has a value at every budget")
        return values, present

    # ------------------------------------------------------------------ the objective protocol
    def evaluate(self, items: Sequence[Architecture | FidelityRequest]) -> list[Evaluation]:
        return [self._one(item) for item in items]

    def _one(self, item: Architecture | FidelityRequest) -> Evaluation:
        start = time.perf_counter()
        if isinstance(item, FidelityRequest):
            arch, budget, previous = item.arch, float(item.fidelity), item.previous
        else:
            arch, budget, previous = item, self.ladder.top, None
        try:
            i = self.table.index_of(arch)
            rung = self.ladder.index(budget)
        except (KeyError, ValueError) as err:
            return Evaluation(arch, None, time.perf_counter() - start, FAILED, str(err))
        value = float(self.values[rung, i])
        if not np.isfinite(value):
            return Evaluation(arch, None, 0.0, FAILED, f"no value at {budget:g} epochs for this architecture")
        full = self.ladder.top if self.full_costs is None else float(self.full_costs[i])
        cost = self.cost_model.cost(full, budget, self.ladder.top, previous)
        outcome = FidelityOutcome(budget, self.ladder.top, self.ladder.unit, previous, full=rung == len(self.ladder) - 1)
        return Evaluation(arch, value, cost, fidelity=outcome)

    def optimum(self) -> float:
        return float(np.nanmax(self.values[-1][self._present_mask()]))

    def domain(self) -> list[Architecture]:
        return self._domain

    def _present_mask(self) -> np.ndarray:
        return np.isfinite(self.values).all(axis=0)

    # ------------------------------------------------------------------ for benchmarks and pages
    def full_cost_unit(self) -> float:
        """The cost of one full evaluation: the mean over the domain (what ``cost_budget`` counts in)."""
        if self.full_costs is None:
            return float(self.ladder.top)
        return float(np.mean(self.full_costs[self._present_mask()]))

    def describe(self) -> dict[str, Any]:
        """Plain data: the ladder, each rung's source, the cost model and unit (stored with reports)."""
        return {"ladder": self.ladder.to_dict(), "rungs": [{"fidelity": r.fidelity, "column": r.column,
                                                             "table": r.table or self.table.source}
                                                            for r in self.rungs],
                "continuation": self.cost_model.continuation, "cost_unit": self.cost_unit,
                "cost_column": self.table.cost_column, "full_cost_unit": self.full_cost_unit(),
                "domain": len(self._domain)}


def _load(path: str, space: str, load: Any) -> Any:
    if load is not None:
        return load(path, space)
    from pathlib import Path

    from nasviz.objectives.table import load_table, shared_data_path

    found = Path(path).expanduser()
    if not found.is_file():
        shared = shared_data_path(path)
        if shared is None:
            raise ConfigError(f"fidelity: table {path!r} not found (neither a file nor in the shared data folder)")
        found = shared
    return load_table(found, space=space)


__all__ = ["AUTO", "FidelityRung", "FidelitySpec", "FidelityTableObjective", "auto_rungs"]
