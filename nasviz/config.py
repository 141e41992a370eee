"""One validated description of a search: :class:`SearchConfig`, built once and stored with the run.

The CLI (``python -m nasviz run``), the dashboard's form and the Compare page's studies all
build a :class:`SearchConfig`; :func:`nasviz.runner.build_search` turns it into an objective and a
strategy, and the run store keeps :meth:`SearchConfig.to_dict` so a run can be resumed or
repeated exactly. A config is made of typed, frozen parts (:mod:`nasviz.config_parts`): the
``space`` searched, the ``objective`` (:class:`ObjectiveSettings`), the ``strategy``
(:class:`StrategySettings`, whose :meth:`~StrategySettings.bo_parts` are a BO strategy's GP,
acquisition, pool and batch parts) and the ``run`` (:class:`RunPlan`: budget, batches, seed,
workers). Every check that needs no file happens in :meth:`SearchConfig.create`, with an error
naming the field (:class:`~nasviz.errors.ConfigError`); checks that need the table (its metrics)
happen when the objective is built.

The flat form (:meth:`SearchConfig.create`'s keywords, :meth:`SearchConfig.to_dict`'s keys, the
run store's JSON) names each setting once, as the CLI and the page do: :data:`FLAT` says which
part holds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from nasviz import defaults
from nasviz.config_parts import (MAX_STEP_DELAY, TABLE, TRAIN, ObjectiveSettings, RunPlan, StrategySettings, at_least,
                                 integer)
from nasviz.errors import ConfigError

__all__ = ["FLAT", "MAX_STEP_DELAY", "TABLE", "TRAIN", "ObjectiveSettings", "RunPlan", "SearchConfig",
           "StrategySettings"]

#: Every flat setting (in the order :meth:`SearchConfig.to_dict` writes them, the run store's
#: order since before the parts) -> ``(part, field)``; ``part`` ``None``: a field of the config itself.
FLAT: dict[str, tuple[str | None, str]] = {
    "objective": ("objective", "kind"), "space": (None, "space"), "strategy": ("strategy", "name"),
    "strategy_options": ("strategy", "options"), "budget": ("run", "budget"), "batch_size": ("run", "batch_size"),
    "seed": ("run", "seed"), "metric": ("objective", "metric"), "table": ("objective", "table"),
    "dataset": ("objective", "dataset"), "train_seed": ("objective", "train_seed"),
    "dataset_seed": ("objective", "dataset_seed"), "model_options": ("objective", "model_options"),
    "training": ("objective", "training"), "workers": ("run", "workers"), "dask": ("run", "dask"),
    "step_delay": ("run", "step_delay"), "data_folder": ("objective", "data_folder"), "overlap": ("run", "overlap"),
    "fidelity": ("objective", "fidelity"), "cost_budget": ("run", "cost_budget"),
    "early_stopping": ("objective", "early_stopping"), "kernel": ("strategy", "kernel"),
}
_PARTS = {"objective": ObjectiveSettings, "strategy": StrategySettings, "run": RunPlan}
_MAPPINGS = ("strategy_options", "model_options", "training")
_INTEGERS = ("budget", "batch_size", "seed", "train_seed", "dataset_seed", "workers")


@dataclass(frozen=True)
class SearchConfig:
    """A search: which ``space``, what to evaluate (``objective``), with which ``strategy``, for
    how long (``run``).

    Build one with :meth:`create` (flat settings, validated once) or read a stored one with
    :meth:`from_dict`; the parts are read as attributes (``config.run.budget``,
    ``config.objective.table``, ``config.strategy.kernel``). By default the space of
    :mod:`nasviz.defaults`, and the first strategy of its preference that fits the space
    (:func:`nasviz.components.default_strategy`); budget and seed default there too.
    """

    space: str = defaults.DEFAULT_SPACE
    objective: ObjectiveSettings = field(default_factory=ObjectiveSettings)
    strategy: StrategySettings = field(default_factory=StrategySettings)
    run: RunPlan = field(default_factory=RunPlan)

    # ------------------------------------------------------------------ building
    @classmethod
    def create(cls, **values: Any) -> "SearchConfig":
        """A validated config from flat settings (the names of :data:`FLAT`); ``None`` values
        mean "the default". Raises :class:`~nasviz.errors.ConfigError` naming the first field that
        is wrong.

        The strategy is checked first (the one parse of its options and the one compatibility
        check of the whole path, form -> store -> worker -> strategy -> GP), so that the page
        names a combination that cannot run even while another setting (the budget) is still
        wrong; then the run plan, the objective, and what needs two parts."""
        from nasviz.components import SPACES, STRATEGIES, default_batch_size, default_strategy

        unknown = sorted(set(values) - set(FLAT))
        if unknown:
            raise ConfigError(f"unknown search setting(s) {', '.join(unknown)}; known: {', '.join(sorted(FLAT))}")
        given = {k: v for k, v in values.items() if v is not None}
        space = str(given.pop("space", cls.space))
        if "strategy" not in given and space in SPACES:
            given["strategy"] = default_strategy(space)  # the page's default too
        strategy = str(given.get("strategy", StrategySettings.name))
        given.setdefault("batch_size", default_batch_size(strategy) if strategy in STRATEGIES else 1)
        for name in _INTEGERS:
            if name in given:
                given[name] = integer(name, given[name])
        parts = _grouped(given)
        SPACES.get(space)
        run = RunPlan(**parts["run"])
        at_least("batch_size", run.batch_size, 1)
        chosen = StrategySettings(**parts["strategy"])
        chosen = StrategySettings.checked(space, chosen.name, chosen.options, run.batch_size, chosen.kernel)
        run = run.check()
        objective = ObjectiveSettings(**parts["objective"]).check()
        if objective.kind == TABLE and (run.workers > 1 or run.dask):
            raise ConfigError("workers / dask apply to training objectives; a table lookup needs no workers")
        return cls(space=space, objective=objective, strategy=chosen, run=run)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SearchConfig":
        """Read a stored config back as it was validated (the keys of :meth:`to_dict`); other
        keys (a run's ``skipped_rows``) are ignored.

        A dictionary with every setting is what :meth:`to_dict` wrote for a config :meth:`create`
        validated (the run store keeps nothing else): it is read back as it is, not validated a
        second time, so the strategy's options are not parsed again nor the combination checked
        again on the worker's side (issue 49). A dictionary that lacks settings (written by an
        older version, before ``kernel`` was stored, or typed by hand) goes through :meth:`create`,
        which fills in the defaults and validates it.
        """
        given = {k: v for k, v in data.items() if k in FLAT}
        if len(given) < len(FLAT):
            return cls.create(**given)
        for name in _MAPPINGS:
            given[name] = dict(given[name] or {})
        parts = _grouped(given)
        return cls(space=given["space"], **{key: part(**parts[key]) for key, part in _PARTS.items()})

    @classmethod
    def read_stored(cls, data: Mapping[str, Any]) -> "SearchConfig":
        """A stored run's config for the pages (:attr:`nasviz.store.StoredRun.search`): what
        :meth:`from_dict` reads, and where it cannot (an older config naming a strategy this
        installation no longer has, a setting of the wrong type), the stored settings as they
        are, each missing one at its part's default, checked by nothing: a page shows what was
        stored and never fails on it. Never raises for a mapping."""
        try:
            return cls.from_dict(data)
        except (ValueError, TypeError, LookupError, AttributeError):
            given = {k: v for k, v in data.items() if k in FLAT and v is not None}
            for name in _MAPPINGS:
                given[name] = dict(given[name]) if isinstance(given.get(name), Mapping) else {}
            space = str(given.pop("space", cls.space))
            if "kernel" not in data:  # stored before the kernel was: the strategy's, if this installation knows it
                given["kernel"] = _known_kernel(given.get("strategy"), given["strategy_options"])
            parts = _grouped(given)
            return cls(space=space, **{key: part(**parts[key]) for key, part in _PARTS.items()})

    def to_dict(self) -> dict[str, Any]:
        """The flat settings as plain JSON-able data (the run store's form; :meth:`from_dict`
        reads it back)."""
        out: dict[str, Any] = {}
        for name, (part, attribute) in FLAT.items():
            value = getattr(self if part is None else getattr(self, part), attribute)
            out[name] = dict(value) if name in _MAPPINGS else value
        return out

    def with_metric(self, metric: str) -> "SearchConfig":
        """The same config with the metric filled in (once the table says what its first metric is)."""
        return replace(self, objective=replace(self.objective, metric=metric))

    def label(self) -> str:
        """The configuration in one line, for grouping runs on the Compare page: everything that
        changes results except the seed."""
        objective, run = self.objective, self.run
        source = f"table {objective.table}" if objective.kind == TABLE else f"training on {objective.dataset}"
        options = ",".join(f"{k}={v}" for k, v in sorted(self.strategy.options.items()))
        return (f"{self.strategy.name}{'(' + options + ')' if options else ''} · {self.space} · {source} · "
                f"{objective.metric} · B={run.batch_size} · budget {run.budget}")


def _known_kernel(strategy: Any, options: Mapping[str, Any]) -> str | None:
    """The kernel of ``strategy``'s GP with ``options`` by its registry entry; ``None`` for a
    strategy without a model or one this installation does not know."""
    from nasviz.components import STRATEGIES, strategy_kernel

    if strategy not in STRATEGIES:
        return None
    try:
        return strategy_kernel(str(strategy), options)
    except (TypeError, ValueError, AttributeError):
        return None


def _grouped(flat: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Flat settings (names of :data:`FLAT`, without ``space``) as each part's keywords."""
    grouped: dict[str, dict[str, Any]] = {key: {} for key in _PARTS}
    for name, value in flat.items():
        part, attribute = FLAT[name]
        if part is not None:
            grouped[part][attribute] = value
    return grouped
