"""The five parts :class:`~nasviz.strategies.bo.BayesianOptimisation` is composed of (issue 49).

A BO strategy is built from small frozen dataclasses instead of some forty keywords, in the
spirit of BoTorch's split into model, acquisition and optimiser:

- :class:`ModelPart`: the GP (kernel, target transform, ML-II restarts, noise floor,
  hyperparameter prior and box) and how evaluations become its data (``targets``, ``failures``);
- :class:`AcquisitionPart`: the acquisition and how much a step explores (``beta0``, ``kappa``,
  the schedule, what a stalled search does);
- :class:`PoolPart`: the candidate-pool generator, its options and size, the parents of mutation
  pools, table neighbourhoods, the local search;
- :class:`BatchPart`: the batch selector, the batch it is designed for, the k-DPP quality;
- :class:`RunSettings`: where a search starts (``n_init``, ``init``), what counts as a repeat
  (``dedupe``) and the strategy's name.

Each field's default is written here and nowhere else: the registry's ``bo`` entries build the
parts from their flat options with :func:`parts_from_options` (a field's name *is* the option's
name), and the factory the registry loads, :func:`nasviz.strategies.bo.bayesian_optimisation`,
shows these defaults as its signature (:func:`options_signature`), which is what
:meth:`nasviz.registry.Entry.defaults` reads. A part checks its own values once, when it is
created (:class:`~nasviz.errors.ConfigError` naming the option); what also depends on the space
searched is :meth:`PoolPart.check`.
"""

from __future__ import annotations

import dataclasses
import inspect
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping

from nasviz.components import POOLS, STRATEGIES
from nasviz.errors import ConfigError
from nasviz.defaults import DEFAULT_KERNEL
from nasviz.spaces.base import PARAMETERS

if TYPE_CHECKING:
    from nasviz.kernels import Kernel
    from nasviz.spaces.base import SearchSpace

#: Allowed values of the choice options (the first is the default): the ones ``bo`` is registered
#: with in :mod:`nasviz.components`, so the page offers and the strategy accepts one list.
CHOICES: dict[str, tuple[str, ...]] = {
    option.name: tuple(option.choices) for option in STRATEGIES.get("bo").options
    if option.kind == "choice" and option.choices
}


def _set(part: Any, **values: Any) -> None:
    """Normalise fields of a frozen part in its ``__post_init__`` (``int("3")``, a read-only mapping)."""
    for key, value in values.items():
        object.__setattr__(part, key, value)


def _at_least_one(**counts: int) -> None:
    for label, value in counts.items():
        if value < 1:
            raise ConfigError(f"{label} must be at least 1, got {value}")


def _one_of(**values: str) -> None:
    for label, value in values.items():
        if value not in CHOICES[label]:
            raise ConfigError(f"{label} must be one of {', '.join(map(repr, CHOICES[label]))}, got {value!r}")


@dataclasses.dataclass(frozen=True)
class ModelPart:
    """The GP and its data.

    ``kernel`` is a registered kernel name (built for the space with ``kernel_options``) or a
    :class:`~nasviz.kernels.Kernel` instance; ``transform`` the GP's target transform
    (``"standardize"``, ``"log_error"``, ``"none"``); ``n_restarts`` the L-BFGS-B starts of each
    fit; ``min_noise`` the lower bound of the noise variance in standardised units (benchmark
    tables are noisy, and a GP that interpolates them is overconfident next to its observations).
    ``hyper_prior``: ``"none"`` (ML-II within the bounds) or ``"optuna"`` (MAP under Optuna
    GPSampler's priors, :mod:`nasviz.gp.prior`); ``hyper_bounds``: the box the fit searches
    (``"wide"``, ``"optuna-rates"``, ``"optuna"``: :data:`nasviz.gp.prior.HYPER_BOXES`).
    ``targets``: ``"raw"`` values or ``"robust"`` (clipped from below at the Tukey fence);
    ``failures``: ``"skip"`` or ``"worst"`` (failed evaluations enter the GP at the worst target).
    ``stopped``: what a training that an early-stopping rule ended (an evaluation that is not
    :attr:`~nasviz.objectives.base.Evaluation.full`) is to the model: ``"observe"``, GP data at the
    value it reached at its rung; ``"skip"``, seen (never proposed again, and counted among the
    initial proposals) but neither GP data nor a parent. A rung's value is an earlier epoch's, not
    what the network would reach: under ``"observe"`` a search that stops two thirds of its
    trainings at 1 or 3 of 12 epochs models mostly such values, and Auto-Keras morphs children
    from networks trained for 1 epoch.
    """

    kernel: "str | Kernel" = DEFAULT_KERNEL
    kernel_options: Mapping[str, Any] | None = None  # read-only once created
    transform: str = "standardize"
    n_restarts: int = 3
    min_noise: float = 1e-6
    hyper_prior: str = "none"
    hyper_bounds: str = "wide"
    targets: str = "raw"
    failures: str = "skip"
    stopped: str = "observe"

    def __post_init__(self) -> None:
        _set(self, kernel_options=MappingProxyType(dict(self.kernel_options or {})), n_restarts=int(self.n_restarts),
             min_noise=float(self.min_noise))
        _one_of(targets=self.targets, failures=self.failures, hyper_prior=self.hyper_prior,
                hyper_bounds=self.hyper_bounds, stopped=self.stopped)
        if not 0 < self.min_noise <= 2:
            raise ConfigError(f"need 0 < min_noise <= 2; got {self.min_noise}")

    @property
    def kernel_name(self) -> str:
        return self.kernel if isinstance(self.kernel, str) else self.kernel.name


@dataclasses.dataclass(frozen=True)
class AcquisitionPart:
    """The acquisition and how much a step explores.

    ``acquisition``: a registered acquisition (``ucb``: ``mu + kappa sigma``; ``ei``: expected
    improvement over the best observation). UCB's weight is ``kappa`` when given (Auto-Keras's
    ``beta``; also BUCB's), else ``schedule``'s: ``"bowl"`` from ``beta0`` (paper 002 App. E.5),
    ``"srinivas"`` ``sqrt(beta_scale * beta_t)`` with confidence ``delta``
    (:func:`nasviz.acquisition.exploration_weight`). After ``stall_patience`` evaluations without
    a new best (0: never) a step does what ``stall_action`` says: ``"ucb"`` with the weight times
    ``stall_boost``, or ``"neighbours"``: among the best cell's unevaluated one-edit neighbours.
    """

    acquisition: str = "ucb"
    beta0: float = 1.5
    kappa: float | None = None
    schedule: str = "bowl"
    beta_scale: float = 0.2
    delta: float = 0.1
    stall_patience: int = 0
    stall_boost: float = 2.0
    stall_action: str = "ucb"

    def __post_init__(self) -> None:
        _set(self, beta0=float(self.beta0), kappa=None if self.kappa is None else float(self.kappa),
             beta_scale=float(self.beta_scale), delta=float(self.delta), stall_patience=int(self.stall_patience),
             stall_boost=float(self.stall_boost))
        _one_of(schedule=self.schedule, stall_action=self.stall_action)
        if self.kappa is not None and not self.kappa >= 0:
            raise ConfigError(f"kappa must be >= 0 or None, got {self.kappa}")
        if self.stall_patience < 0 or not self.stall_boost >= 1 or not 0 < self.delta < 1 or not self.beta_scale >= 0:
            raise ConfigError(f"need stall_patience >= 0, stall_boost >= 1, 0 < delta < 1 and beta_scale >= 0; got "
                              f"{self.stall_patience}, {self.stall_boost}, {self.delta}, {self.beta_scale}")


@dataclasses.dataclass(frozen=True)
class PoolPart:
    """The candidates a step scores.

    ``pool``: a registered generator (:mod:`nasviz.candidates`) with ``pool_options`` (validated
    by its entry), ``pool_size`` candidates per step (100, paper 000; also how many the state
    reports); ``top_parents`` the best observed architectures mutation pools start from (10,
    paper 002 App. E.2). ``table_neighbours``: on a table holding part of a finite space, a
    parent's children are its one-edit neighbours in the table (``"edit"``) or also its nearest
    members in Hamming distance (``"nearest"``, :class:`nasviz.candidates.nearest.
    TableNeighbourhood`). ``local_search``: climb the acquisition over the neighbour graph from
    this many starts and add what the climbs scored (0: off; :mod:`nasviz.candidates.local_search`).
    """

    pool: str = "evolution"
    pool_options: Mapping[str, Any] | None = None  # read-only once created
    pool_size: int = 100
    top_parents: int = 10
    table_neighbours: str = "edit"
    local_search: int = 0

    def __post_init__(self) -> None:
        _set(self, pool_options=MappingProxyType(dict(self.pool_options or {})), pool_size=int(self.pool_size),
             top_parents=int(self.top_parents), local_search=int(self.local_search))
        _at_least_one(pool_size=self.pool_size, top_parents=self.top_parents)
        _one_of(table_neighbours=self.table_neighbours)
        if self.local_search < 0:
            raise ConfigError(f"local_search must be >= 0 (0: off), got {self.local_search}")

    def check(self, space: "SearchSpace") -> None:
        """Refuse a generator, or table neighbourhood, that needs a representation ``space`` lacks."""
        missing = sorted(set(POOLS.get(self.pool).capabilities.get("needs", ())) - space.provided_representations())
        if missing:
            raise ConfigError(f"candidate pool {self.pool!r} needs the {', '.join(missing)} representation, "
                              f"which the {space.name!r} space lacks")
        if self.table_neighbours == "nearest" and not space.provides(PARAMETERS):
            raise ConfigError(f"table_neighbours='nearest' needs the {PARAMETERS!r} representation, "
                              f"which the {space.name!r} space lacks")


@dataclasses.dataclass(frozen=True)
class BatchPart:
    """How a step chooses its proposals from the scored pool.

    ``batch``: a registered selector (:mod:`nasviz.batch`; with one proposal per step ``topk`` is
    the acquisition's argmax); ``batch_size`` the proposals per step it is designed for (the
    runner's; ``ask(n)`` honours any ``n``). k-DPP quality ``q = exp(z / quality_temperature)``
    of ``quality``: ``"mean"`` (paper 000 Eq. (12)) or ``"acquisition"`` (counts the variance
    twice); ``kdpp_anchor`` conditions the sample on containing the acquisition's argmax.
    """

    batch: str = "topk"
    batch_size: int = 1
    quality: str = "mean"
    quality_temperature: float = 0.5
    kdpp_anchor: bool = False

    def __post_init__(self) -> None:
        _set(self, batch_size=int(self.batch_size), quality_temperature=float(self.quality_temperature),
             kdpp_anchor=bool(self.kdpp_anchor))
        _at_least_one(batch_size=self.batch_size)
        _one_of(quality=self.quality)


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """Where a search starts and what counts as a repeat.

    ``n_init`` proposals before the first GP fit (10 in papers 000, 001, 002): ``init="random"``
    uniform samples, ``"pool"`` the space's initial pool first (topped up with samples).
    ``dedupe``: never the same architecture twice (``"exact"``, right for benchmark tables,
    where equivalent cells were trained separately) or never two with one canonical key
    (``"canonical"``). ``name``: how runs and tables call the strategy (default ``bo-<kernel>-...``).
    """

    n_init: int = 10
    init: str = "random"
    dedupe: str = "exact"
    name: str | None = None

    def __post_init__(self) -> None:
        _set(self, n_init=int(self.n_init))
        _at_least_one(n_init=self.n_init)
        _one_of(init=self.init, dedupe=self.dedupe)


@dataclasses.dataclass(frozen=True)
class BOParts:
    """The five parts of one strategy, as it holds them (``BayesianOptimisation.parts``)."""

    model: ModelPart = ModelPart()
    acquisition: AcquisitionPart = AcquisitionPart()
    pool: PoolPart = PoolPart()
    batch: BatchPart = BatchPart()
    run: RunSettings = RunSettings()

    def keywords(self) -> dict[str, Any]:
        """The parts as :class:`~nasviz.strategies.bo.BayesianOptimisation`'s keywords."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


#: The parts in the order :class:`~nasviz.strategies.bo.BayesianOptimisation` takes them, by keyword.
PARTS: dict[str, type] = {"model": ModelPart, "acquisition": AcquisitionPart, "pool": PoolPart, "batch": BatchPart,
                          "run": RunSettings}


def parts_from_options(options: Mapping[str, Any]) -> BOParts:
    """The five parts from flat options named as the parts' fields (the
    registry's ``bo`` options); a part's fields that are not given keep their defaults.

    Raises :class:`TypeError` for a name no part has, as a function called with an unknown
    keyword would.
    """
    owner = {f.name: key for key, part in PARTS.items() for f in dataclasses.fields(part)}
    unknown = sorted(set(options) - set(owner))
    if unknown:
        raise TypeError(f"no part of BayesianOptimisation takes {', '.join(map(repr, unknown))}")
    grouped: dict[str, dict[str, Any]] = {key: {} for key in PARTS}
    for name, value in options.items():
        grouped[owner[name]][name] = value
    return BOParts(**{key: part(**grouped[key]) for key, part in PARTS.items()})


def options_signature() -> inspect.Signature:
    """``(space, seed=0, domain=None, *, <every part's field with its default>)``: the signature
    of the registry's flat-option factory, so that its defaults are read from the parts."""
    head = [inspect.Parameter("space", inspect.Parameter.POSITIONAL_OR_KEYWORD),
            inspect.Parameter("seed", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=0),
            inspect.Parameter("domain", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)]
    fields = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default)
              for part in PARTS.values() for f in dataclasses.fields(part)]
    return inspect.Signature(head + fields)
