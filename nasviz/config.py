"""One validated description of a search: :class:`SearchConfig`, built once and stored with the run.

The CLI (``python -m nasviz run``), the dashboard's form and the Compare page's studies all
build a :class:`SearchConfig`; :func:`nasviz.runner.build_search` turns it into an objective and a
strategy, and the run store keeps :meth:`SearchConfig.to_dict` so a run can be resumed or
repeated exactly. Every check that needs no file happens in :meth:`SearchConfig.create`, with an
error naming the field (:class:`~nasviz.errors.ConfigError`); checks that need the table (its
metrics) happen when the objective is built.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Mapping

from nasviz import defaults
from nasviz.errors import ConfigError

TABLE = "table"
TRAIN = "train"
#: Largest pause after a step (seconds): slows a table search to a pace a class can follow.
MAX_STEP_DELAY = 60.0


@dataclass(frozen=True)
class SearchConfig:
    """A search: what to evaluate, with which strategy, for how long.

    Attributes
    ----------
    objective : ``"table"`` (look values up in the CSV ``table``) or ``"train"`` (train every
        proposal on the bundled ``dataset``).
    space, strategy : registered names (:mod:`nasviz.components`); by default the space of
        :mod:`nasviz.defaults` and the first strategy of its preference that fits the space
        (:func:`nasviz.components.default_strategy`); budget and seed default there too.
    strategy_options : the strategy's options (validated against its registry entry).
    budget : evaluations in all; ``batch_size`` proposals per step (default: what the strategy
        was designed for); ``seed`` seeds the strategy.
    metric : the table column or trained score to maximise (default: the table's first metric,
        ``valid_accuracy`` for training).
    train_seed, dataset_seed, model_options, training : training objectives only.
    workers, dask : evaluate each batch on that many local processes or on a Dask scheduler
        (training objectives only).
    step_delay : seconds to pause after each step (teaching; 0 = none).
    data_folder : the folder of a folder dataset (MNIST, Fashion-MNIST, CIFAR-10 in torchvision's
        layout); training objectives only.
    overlap : propose the next step while this one trains (paper 003 Sec. 4.3, :mod:`nasviz.overlap`).
    fidelity : the fidelity ladder of a multi-fidelity table search
        (:class:`~nasviz.objectives.fidelity_table.FidelitySpec` text: ``auto`` or
        ``BUDGET=COLUMN[@TABLE],...``); ``None``: a single-fidelity search.
    cost_budget : stop once the evaluations cost this many full evaluations (the mean cost of a
        full evaluation of the table; multi-fidelity table searches); ``None``: only ``budget``.
    early_stopping : a rule that may stop any training after an epoch, with every strategy
        (training objectives: ``median``, ``asha`` or ``asha:eta=3:min_epochs=1``,
        :func:`nasviz.fidelity.stopping.parse_rule`); ``None``: none.
    kernel : the kernel of the strategy's GP (``None``: a strategy without a model), worked out
        once by :meth:`create` from the strategy's registry entry and ``strategy_options`` and
        stored with the run, so the dashboard reads it instead of working it out again. Given, it
        must be the one the strategy uses (set it through ``strategy_options``).
    """

    objective: str = TABLE
    space: str = defaults.DEFAULT_SPACE
    strategy: str = defaults.DEFAULT_STRATEGY
    strategy_options: Mapping[str, Any] = field(default_factory=dict)
    budget: int = defaults.DEFAULT_BUDGET
    batch_size: int = 1
    seed: int = defaults.DEFAULT_SEED
    metric: str | None = None
    table: str | None = None
    dataset: str | None = None
    train_seed: int = 0
    dataset_seed: int = 0
    model_options: Mapping[str, Any] = field(default_factory=dict)
    training: Mapping[str, Any] = field(default_factory=dict)
    workers: int = 1
    dask: str | None = None
    step_delay: float = 0.0
    data_folder: str | None = None
    overlap: bool = False
    fidelity: str | None = None
    cost_budget: float | None = None
    early_stopping: str | None = None
    kernel: str | None = None

    # ------------------------------------------------------------------ building
    @classmethod
    def create(cls, **values: Any) -> "SearchConfig":
        """A validated config; ``None`` values mean "the default". Raises
        :class:`~nasviz.errors.ConfigError` naming the first field that is wrong."""
        from nasviz.components import (DATASETS, SPACES, STRATEGIES, checked_options, default_batch_size,
                                       default_strategy, strategy_kernel)

        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"unknown search setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        given = {k: v for k, v in values.items() if v is not None}
        if "strategy" not in given and str(given.get("space", cls.space)) in SPACES:
            given["strategy"] = default_strategy(str(given.get("space", cls.space)))  # the page's default too
        strategy = str(given.get("strategy", cls.strategy))
        given.setdefault("batch_size", default_batch_size(strategy) if strategy in STRATEGIES else 1)
        for name in ("budget", "batch_size", "seed", "train_seed", "dataset_seed", "workers"):
            if name in given:
                given[name] = _integer(name, given[name])
        config = cls(**given)
        if config.objective not in (TABLE, TRAIN):
            raise ConfigError(f"objective must be {TABLE!r} or {TRAIN!r}, got {config.objective!r}")
        SPACES.get(config.space)
        _at_least("batch_size", config.batch_size, 1)
        # The one parse of the strategy's options and the one compatibility check of the whole path
        # (form -> store -> worker -> strategy -> GP): first, so that the page names a combination
        # that cannot run even while another setting (the budget) is still wrong.
        options = checked_options(config.space, config.strategy, config.strategy_options, config.batch_size)
        _at_least("budget", config.budget, 1)
        _at_least("seed", config.seed, 0)
        _at_least("workers", config.workers, 1)
        if config.batch_size > config.budget:
            raise ConfigError(f"batch_size {config.batch_size} is larger than the budget {config.budget}")
        if not (0.0 <= float(config.step_delay) <= MAX_STEP_DELAY) or math.isnan(float(config.step_delay)):
            raise ConfigError(f"step_delay must be between 0 and {MAX_STEP_DELAY:g} seconds, got {config.step_delay}")
        if config.objective == TABLE:
            if not config.table:
                raise ConfigError("a table search needs 'table', the benchmark CSV")
            if config.workers > 1 or config.dask:
                raise ConfigError("workers / dask apply to training objectives; a table lookup needs no workers")
            if config.data_folder:
                raise ConfigError("data_folder applies to training objectives; a table lookup reads no dataset")
        else:
            DATASETS.get(config.dataset or "digits")
        if not isinstance(config.overlap, bool):
            raise ConfigError(f"overlap must be true or false, got {config.overlap!r}")
        _check_fidelity(config)
        kernel = strategy_kernel(config.strategy, options)
        if config.kernel is not None and config.kernel != kernel:
            raise ConfigError(f"kernel {config.kernel!r} is not the one strategy {config.strategy!r} uses with these "
                              f"options ({kernel!r}); choose the kernel through the strategy's options")
        return replace(config, strategy_options=options, step_delay=float(config.step_delay), kernel=kernel,
                       dataset=config.dataset or ("digits" if config.objective == TRAIN else None),
                       metric=config.metric or ("valid_accuracy" if config.objective == TRAIN else None))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SearchConfig":
        """Read a stored config back as it was validated (the keys of :meth:`to_dict`); other
        keys (a run's ``skipped_rows``) are ignored.

        A dictionary with every field is what :meth:`to_dict` wrote for a config :meth:`create`
        validated (the run store keeps nothing else): it is read back as it is, not validated a
        second time, so the strategy's options are not parsed again nor the combination checked
        again on the worker's side (issue 49). A dictionary that lacks fields (written by an older
        version, before ``kernel`` was stored, or typed by hand) goes through :meth:`create`,
        which fills in the defaults and validates it.
        """
        names = [f.name for f in fields(cls)]
        given = {k: v for k, v in data.items() if k in names}
        if len(given) < len(names):
            return cls.create(**given)
        return cls(**{**given, "strategy_options": dict(given["strategy_options"] or {}),
                      "model_options": dict(given["model_options"] or {}), "training": dict(given["training"] or {})})

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data."""
        out = asdict(self)
        out["strategy_options"] = dict(self.strategy_options)
        out["model_options"] = dict(self.model_options)
        out["training"] = dict(self.training)
        return out

    def with_metric(self, metric: str) -> "SearchConfig":
        """The same config with the metric filled in (once the table says what its first metric is)."""
        return replace(self, metric=metric)

    def label(self) -> str:
        """The configuration in one line, for grouping runs on the Compare page: everything that
        changes results except the seed."""
        source = f"table {self.table}" if self.objective == TABLE else f"training on {self.dataset}"
        options = ",".join(f"{k}={v}" for k, v in sorted(self.strategy_options.items()))
        return (f"{self.strategy}{'(' + options + ')' if options else ''} · {self.space} · {source} · "
                f"{self.metric} · B={self.batch_size} · budget {self.budget}")


def _check_fidelity(config: "SearchConfig") -> None:
    """A fidelity ladder needs a table (live training reads its budgets from the training settings)
    and parses; a cost budget is a positive number of full evaluations."""
    if config.fidelity is not None:
        if config.objective != TABLE:
            raise ConfigError("fidelity applies to table searches; a training search's budgets are its epochs")
        from nasviz.objectives.fidelity_table import FidelitySpec

        FidelitySpec.parse(config.fidelity)
    if config.early_stopping is not None:
        if config.objective != TRAIN:
            raise ConfigError("early_stopping applies to training objectives; a table lookup has no epochs to stop")
        from nasviz.fidelity.stopping import parse_rule

        try:
            parse_rule(config.early_stopping)
        except ValueError as err:
            raise ConfigError(str(err)) from None
    if config.cost_budget is not None:
        try:
            value = float(config.cost_budget)
        except (TypeError, ValueError):
            raise ConfigError(f"cost_budget must be a number of full evaluations, got {config.cost_budget!r}") from None
        if not (value > 0 and math.isfinite(value)):
            raise ConfigError(f"cost_budget must be a positive number of full evaluations, got {config.cost_budget!r}")


def _integer(name: str, value: Any) -> int:
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


def _at_least(name: str, value: int, low: int) -> None:
    if value < low:
        raise ConfigError(f"{name} must be at least {low}, got {value}")
