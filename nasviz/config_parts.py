"""The parts of a :class:`~nasviz.config.SearchConfig` (issue 49): what is evaluated
(:class:`ObjectiveSettings`), by which strategy (:class:`StrategySettings`) and for how long, in
what batches, on which workers (:class:`RunPlan`).

Each part is a small frozen dataclass that checks its own fields in one method (``check``, or
:meth:`StrategySettings.checked` for the strategy, whose options the registry parses); the checks
that need two parts (a table search has no workers) are :meth:`SearchConfig.create`'s. Errors are
:class:`~nasviz.errors.ConfigError` naming the field. A part's field is named as the setting it
holds in the flat form the CLI, the page and the run store use, except ``ObjectiveSettings.kind``
(``objective``), ``StrategySettings.name`` (``strategy``) and ``StrategySettings.options``
(``strategy_options``): :data:`nasviz.config.FLAT` maps the flat names onto the parts.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Mapping

from nasviz import defaults
from nasviz.errors import ConfigError

if TYPE_CHECKING:
    from nasviz.strategies.bo_parts import BOParts

TABLE = "table"
TRAIN = "train"
#: Largest pause after a step (seconds): slows a table search to a pace a class can follow.
MAX_STEP_DELAY = 60.0


@dataclass(frozen=True)
class ObjectiveSettings:
    """What a search evaluates.

    ``kind``: ``"table"`` (look values up in the CSV ``table``) or ``"train"`` (train every
    proposal on the bundled ``dataset``, default ``digits``). ``metric``: the table column or
    trained score to maximise (default: the table's first metric, ``valid_accuracy`` for
    training). ``train_seed``, ``dataset_seed``, ``model_options``, ``training`` and
    ``data_folder`` (a folder dataset in torchvision's layout) apply to training;
    ``early_stopping`` is a rule that may stop any training after an epoch (``median``, ``asha``
    or ``asha:eta=3:min_epochs=1``, :func:`nasviz.fidelity.stopping.parse_rule`). ``fidelity``:
    the fidelity ladder of a multi-fidelity table search (``auto`` or ``BUDGET=COLUMN[@TABLE],...``,
    :class:`~nasviz.objectives.fidelity_table.FidelitySpec`); ``None``: a single-fidelity search.
    The mappings are plain data; treat them as read-only.
    """

    kind: str = TABLE
    table: str | None = None
    dataset: str | None = None
    metric: str | None = None
    train_seed: int = 0
    dataset_seed: int = 0
    model_options: Mapping[str, Any] = field(default_factory=dict)
    training: Mapping[str, Any] = field(default_factory=dict)
    data_folder: str | None = None
    fidelity: str | None = None
    early_stopping: str | None = None

    def check(self) -> "ObjectiveSettings":
        """The objective checked, with the training defaults (dataset, metric) filled in."""
        from nasviz.components import DATASETS

        if self.kind not in (TABLE, TRAIN):
            raise ConfigError(f"objective must be {TABLE!r} or {TRAIN!r}, got {self.kind!r}")
        if self.kind == TABLE:
            if not self.table:
                raise ConfigError("a table search needs 'table', the benchmark CSV")
            if self.data_folder:
                raise ConfigError("data_folder applies to training objectives; a table lookup reads no dataset")
        else:
            DATASETS.get(self.dataset or "digits")
        self._check_fidelity()
        if self.kind != TRAIN:
            return self
        return replace(self, dataset=self.dataset or "digits", metric=self.metric or "valid_accuracy")

    def _check_fidelity(self) -> None:
        """A fidelity ladder needs a table (live training reads its budgets from the training
        settings) and parses; an early-stopping rule needs epochs and parses."""
        if self.fidelity is not None:
            if self.kind != TABLE:
                raise ConfigError("fidelity applies to table searches; a training search's budgets are its epochs")
            from nasviz.objectives.fidelity_table import FidelitySpec

            FidelitySpec.parse(self.fidelity)
        if self.early_stopping is not None:
            if self.kind != TRAIN:
                raise ConfigError("early_stopping applies to training objectives; a table lookup has no epochs to stop")
            from nasviz.fidelity.stopping import parse_rule

            try:
                parse_rule(self.early_stopping)
            except ValueError as err:
                raise ConfigError(str(err)) from None


@dataclass(frozen=True)
class StrategySettings:
    """The strategy that proposes: its registered ``name``, its ``options`` as its registry entry
    parsed them (:func:`nasviz.components.checked_options`: typed, ``None`` dropped; read-only),
    and the ``kernel`` of its GP (``None``: a strategy without a model), worked out once from the
    entry and the options (:func:`nasviz.components.strategy_kernel`) and stored with the run, so
    the dashboard reads it instead of working it out again.

    A BO strategy's options are its five typed parts (:meth:`bo_parts`); the factory builds
    every strategy from this part (:func:`nasviz.strategies.factory.build_strategy`).
    """

    name: str = defaults.DEFAULT_STRATEGY
    options: Mapping[str, Any] = field(default_factory=dict)
    kernel: str | None = None

    @classmethod
    def checked(cls, space: str, name: str, options: Mapping[str, Any] | None, batch_size: int | None,
                kernel: str | None = None) -> "StrategySettings":
        """The strategy with its options parsed and checked with ``space`` and batches of
        ``batch_size``: the one parse and the one compatibility check of a search's strategy.
        A ``kernel`` given must be the one the strategy uses with these options."""
        from nasviz.components import checked_options, strategy_kernel

        parsed = checked_options(space, name, options, batch_size)
        derived = strategy_kernel(name, parsed)
        if kernel is not None and kernel != derived:
            raise ConfigError(f"kernel {kernel!r} is not the one strategy {name!r} uses with these "
                              f"options ({derived!r}); choose the kernel through the strategy's options")
        return cls(name=name, options=parsed, kernel=derived)

    def keywords(self, batch_size: int | None = None) -> dict[str, Any]:
        """The keywords its registry entry's factory takes: the entry's preset overridden by the
        options; a strategy that declares a ``batch_size`` option is designed for ``batch_size``
        (the batch the runner asks per step), and a BO preset keeps its own name in runs and tables."""
        from nasviz.components import STRATEGIES

        entry = STRATEGIES.get(self.name)
        config = {**entry.preset, **self.options}
        if batch_size is not None and entry.option("batch_size") is not None:
            config["batch_size"] = int(batch_size)
        if entry.option("kernel") is not None and self.name != "bo":
            config["name"] = self.name
        return config

    def setting(self, option: str) -> Any:
        """One of the strategy's options: as given, else its registry entry's effective default
        (:meth:`nasviz.registry.Entry.defaults`: the preset's, else the factory's); ``None`` for
        an option the strategy does not have, or a strategy this installation does not know."""
        from nasviz.components import STRATEGIES

        if option in self.options:
            return self.options[option]
        if self.name not in STRATEGIES:
            return None
        return STRATEGIES.get(self.name).defaults().get(option)

    def is_bo(self) -> bool:
        """Whether the strategy is a configuration of :class:`~nasviz.strategies.bo.BayesianOptimisation`
        (its entry loads :func:`nasviz.strategies.bo.bayesian_optimisation`)."""
        from nasviz.components import STRATEGIES
        from nasviz.strategies.bo import bayesian_optimisation

        return STRATEGIES.get(self.name).load() is bayesian_optimisation

    def bo_parts(self, batch_size: int | None = None) -> "BOParts | None":
        """A BO strategy's five typed parts (GP and kernel, acquisition, pool, batch, run
        settings: :func:`nasviz.strategies.bo_parts.parts_from_options` of :meth:`keywords`);
        ``None`` for a strategy that is not BO."""
        if not self.is_bo():
            return None
        from nasviz.strategies.bo_parts import parts_from_options

        return parts_from_options(self.keywords(batch_size))


@dataclass(frozen=True)
class RunPlan:
    """How long a search runs and how: ``budget`` evaluations in all, ``batch_size`` proposals per
    step (default: what the strategy was designed for), ``seed`` seeding the strategy; ``workers``
    local processes or a ``dask`` scheduler evaluating each batch (training objectives only);
    ``step_delay`` seconds of pause after each step (teaching; 0 = none); ``overlap``: propose the
    next step while this one trains (paper 003 Sec. 4.3, :mod:`nasviz.overlap`); ``cost_budget``:
    stop once the evaluations cost this many full evaluations (the mean cost of a full evaluation
    of the table; multi-fidelity table searches), ``None``: only ``budget``."""

    budget: int = defaults.DEFAULT_BUDGET
    batch_size: int = 1
    seed: int = defaults.DEFAULT_SEED
    workers: int = 1
    dask: str | None = None
    step_delay: float = 0.0
    overlap: bool = False
    cost_budget: float | None = None

    def check(self) -> "RunPlan":
        """The plan checked, ``step_delay`` as a float (``batch_size`` is checked by
        :meth:`SearchConfig.create` before the strategy, which is checked against it)."""
        at_least("budget", self.budget, 1)
        at_least("seed", self.seed, 0)
        at_least("workers", self.workers, 1)
        if self.batch_size > self.budget:
            raise ConfigError(f"batch_size {self.batch_size} is larger than the budget {self.budget}")
        if not (0.0 <= float(self.step_delay) <= MAX_STEP_DELAY) or math.isnan(float(self.step_delay)):
            raise ConfigError(f"step_delay must be between 0 and {MAX_STEP_DELAY:g} seconds, got {self.step_delay}")
        if not isinstance(self.overlap, bool):
            raise ConfigError(f"overlap must be true or false, got {self.overlap!r}")
        if self.cost_budget is not None:
            try:
                value = float(self.cost_budget)
            except (TypeError, ValueError):
                raise ConfigError(f"cost_budget must be a number of full evaluations, got {self.cost_budget!r}") from None
            if not (value > 0 and math.isfinite(value)):
                raise ConfigError(f"cost_budget must be a positive number of full evaluations, got {self.cost_budget!r}")
        return replace(self, step_delay=float(self.step_delay))


def integer(name: str, value: Any) -> int:
    """``value`` as an int (a whole float, or ASCII digits with a sign), else a
    :class:`~nasviz.errors.ConfigError` naming ``name``."""
    if isinstance(value, bool):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    if isinstance(value, float):
        if not value.is_integer():
            raise ConfigError(f"{name} must be an integer, got {value!r}")
        return int(value)
    text = str(value).strip()
    # ASCII digits only: int() would also take "1_000" and full-width digits.
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    return int(text)


def at_least(name: str, value: int, low: int) -> None:
    """Raise :class:`~nasviz.errors.ConfigError` naming ``name`` unless ``value >= low``."""
    if value < low:
        raise ConfigError(f"{name} must be at least {low}, got {value}")
