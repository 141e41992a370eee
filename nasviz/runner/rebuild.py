"""Rebuilding a search from its config (what the store keeps, what the CLI and the app send):
:func:`build_search` gives a :class:`SearchSetup`; :func:`start_run`, :func:`resume_setup` and
:func:`resume_run` run one against a store (see :mod:`nasviz.runner`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

from nasviz.config import FLAT, TABLE, SearchConfig
from nasviz.errors import InputError
from nasviz.objectives.base import Objective
from nasviz.runner.loop import RunResult, Snapshot, run_search
from nasviz.spaces.base import SearchSpace
from nasviz.strategies.base import Strategy

if TYPE_CHECKING:
    from nasviz.store import RunStore


@dataclass
class SearchSetup:
    """What :func:`build_search` returns: everything :func:`run_search` needs.

    ``config`` is the stored form (:meth:`SearchConfig.to_dict` with every default filled in,
    plus the table's ``skipped_rows``, ``direction`` and ``value_decimals``); ``search_config`` the
    validated config itself, the one the search is built from and run by. Call
    :meth:`close` when done: it shuts down the executor's workers, if any.
    """

    config: dict[str, Any]
    search_config: SearchConfig
    space: SearchSpace
    objective: Objective
    strategy: Strategy
    table: Any = None
    executor: Any = None
    #: The lease this process holds on the stored run it resumes (:func:`resume_setup`).
    lease: int | None = None

    def close(self) -> None:
        if self.executor is not None:
            self.executor.close()
            self.executor = None

    def cost_budget(self) -> float | None:
        """The config's ``cost_budget`` (full evaluations) in the objective's cost units, or ``None``."""
        full = self.search_config.run.cost_budget
        if full is None:
            return None
        unit = getattr(self.objective, "full_cost_unit", None)
        if unit is None:
            raise ValueError("a cost budget needs an objective that knows the cost of a full evaluation (a table)")
        return float(full) * float(unit())

    def __enter__(self) -> SearchSetup:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def build_search(config: SearchConfig | Mapping[str, Any]) -> SearchSetup:
    """Rebuild the objective and the strategy from a :class:`~nasviz.config.SearchConfig` or its
    stored dictionary (deterministic given it).

    A dictionary is read by :meth:`SearchConfig.from_dict` (a stored one as it was validated,
    one that lacks settings validated now: errors name the field, see
    :class:`~nasviz.errors.ConfigError`); the strategy is built from the config's parsed options
    without parsing or checking them again (:func:`nasviz.strategies.factory.build_strategy`); keys that are not settings (a run's ``skipped_rows``)
    are kept in the returned ``config``. A table objective looks architectures up in the CSV
    ``table`` (``metric`` defaults to its first metric); a training objective trains them on the
    bundled ``dataset`` with :class:`nasviz.objectives.training.TrainingObjective`, on ``workers``
    local processes or a ``dask`` scheduler (:func:`nasviz.executors.make_executor`).

    The returned ``config`` has every default filled in (e.g. the metric), so storing it makes
    the run reproducible.
    """
    from nasviz.spaces import get_space
    from nasviz.strategies.factory import build_strategy

    extras: dict[str, Any] = {}
    if not isinstance(config, SearchConfig):
        extras = {k: v for k, v in config.items() if k not in FLAT}
        config = SearchConfig.from_dict(config)
    space = get_space(config.space)
    objective, table, executor = _build_objective(config)
    if table is not None:
        config = config.with_metric(objective.metric)
        extras.setdefault("skipped_rows", table.skipped_rows())
        # values are scores; displays turn them back (an objective without a direction maximises its values)
        extras["direction"] = getattr(objective, "direction", "maximise")
        extras.setdefault("value_decimals", table.decimals.get(objective.metric))  # nasviz.rounding
    try:
        # The validated config's options, parsed and checked once by SearchConfig.create: built as they are.
        strategy = build_strategy(config.strategy, space=space, seed=config.run.seed, domain=objective.domain(),
                                  batch_size=config.run.batch_size)
        if hasattr(strategy, "attach"):
            strategy.attach(objective)  # e.g. Auto-Keras: warm starts through the objective's builder
    except BaseException:
        if executor is not None:
            executor.close()
        raise
    return SearchSetup(config={**config.to_dict(), **extras}, search_config=config, space=space, objective=objective,
                       strategy=strategy, table=table, executor=executor)


def _build_objective(config: SearchConfig) -> tuple[Objective, Any, Any]:
    """``(objective, table or None, executor or None)`` of a validated config."""
    settings, run = config.objective, config.run
    if settings.kind == TABLE:
        from nasviz.objectives import TableObjective, load_table

        table = load_table(settings.table, space=config.space)
        metric = settings.metric or table.metrics[0]
        if settings.fidelity is not None:
            from nasviz.objectives.fidelity_table import FidelityTableObjective

            return FidelityTableObjective(table, metric, settings.fidelity), table, None
        return TableObjective(table, metric), table, None
    from nasviz.objectives.training import TrainingSpec

    spec = TrainingSpec(space=config.space, dataset=settings.dataset, dataset_seed=settings.dataset_seed,
                        metric=settings.metric, seed=settings.train_seed,
                        model_options=tuple(sorted(dict(settings.model_options).items())),
                        training=tuple(sorted(dict(settings.training).items())), data_folder=settings.data_folder)
    objective = spec.build()
    if settings.early_stopping is not None:
        from nasviz.fidelity.stopping import parse_rule

        objective.setup_fidelity(parse_rule(settings.early_stopping))
    if run.dask or run.workers > 1:
        from nasviz.executors import ExecutorObjective, make_executor

        executor = make_executor(spec, workers=run.workers, dask=run.dask)
        return ExecutorObjective(objective, executor), None, executor
    return objective, None, None


def start_run(store: RunStore, config: SearchConfig | Mapping[str, Any], *, name: str | None = None,
              on_step: Callable[[Snapshot], None] | None = None,
              should_stop: Callable[[], bool] | None = None) -> RunResult:
    """Create a run in ``store`` from ``config`` (see :func:`build_search`) and run it to the end.

    The stored config is complete, so :func:`resume_run` can continue the run if this process
    dies. ``result.run_id`` is the new run's id (also visible in ``store.list_runs()`` from the
    first step on).
    """
    setup = build_search(config)
    run_id = store.create_run(setup.config, name=name)
    return _run_setup(setup, store, run_id, resume=False, on_step=on_step, should_stop=should_stop)


def resume_setup(store: RunStore, run_id: int, *, force: bool = False) -> SearchSetup:
    """Claim stored run ``run_id`` for this process and rebuild its search from the stored config.

    Refused (``StoreError``, a ``ValueError``) while another live process runs it, unless
    ``force=True``. If the search cannot be rebuilt (e.g. the table moved), the run is marked
    ``failed`` with the reason and the error is raised.
    """
    run = store.claim_run(run_id, force=force)  # atomic: of two resumers, one wins
    try:
        setup = build_search(run.config)
    except Exception as err:
        # The store's message is shown on the page: no text quoted from a file (InputError.redacted).
        why = err.redacted() if isinstance(err, InputError) else str(err)
        store.set_status(run_id, "failed", error=f"cannot rebuild the search: {why}", lease=run.lease)
        raise
    setup.lease = run.lease
    return setup


def resume_run(store: RunStore, run_id: int, *, on_step: Callable[[Snapshot], None] | None = None,
               should_stop: Callable[[], bool] | None = None, force: bool = False) -> RunResult:
    """Continue stored run ``run_id`` from its last stored evaluation (see the module docstring).

    Works for ``interrupted``, ``stopped`` and ``failed`` runs (a ``finished`` run is replayed
    and finishes again at once). A run still ``running`` in a live process is refused unless
    ``force=True``. With the same seed the result is the evaluation set of an uninterrupted run.
    """
    setup = resume_setup(store, run_id, force=force)
    return _run_setup(setup, store, int(run_id), resume=True, on_step=on_step, should_stop=should_stop)


def _run_setup(setup: SearchSetup, store: RunStore, run_id: int, *, resume: bool, on_step, should_stop) -> RunResult:
    plan = setup.search_config.run
    with setup:
        return run_search(
            setup.strategy, setup.objective, plan.budget, format_arch=setup.space.format,
            parse_arch=setup.space.parse, batch_size=plan.batch_size, on_step=on_step,
            should_stop=should_stop, store=store, run_id=run_id, resume=resume, lease=setup.lease,
            overlap=plan.overlap, cost_budget=setup.cost_budget())
