"""nasviz's GP-BO as an Optuna sampler: switch an Optuna study to TW / WL-BO in one line.

::

    import optuna
    import nasviz.optuna_sampler

    def objective(trial):
        ops = [trial.suggest_categorical(name, nasviz.optuna_sampler.operations("nb201"))
               for name in nasviz.optuna_sampler.slot_names("nb201")]
        return train_and_score(ops)          # the user's own evaluation

    study = optuna.create_study(direction="maximize", storage="sqlite:///nas.db",
                                sampler=nasviz.optuna_sampler.NASVizSampler(space="nb201", kernel="tw2g", seed=0))
    study.optimize(objective, n_trials=100)

The study keeps its storage, its trials and optuna-dashboard; only the proposals come from
nasviz. The cell is given to Optuna as the space's ``categorical-parameters`` representation
(:func:`parameters`): for NAS-Bench-201 one parameter per edge, named ``"0->1"`` ... ``"2->3"``,
each one of five operations (:func:`slot_names`, :func:`operations`); for NAS-Bench-101 the 21
upper-triangular edge bits and five interior operations of NAS-Bench-101 Sec. 5, as its own
baselines encode a cell::

    def objective(trial):
        params = {name: trial.suggest_categorical(name, choices)
                  for name, choices in nasviz.optuna_sampler.parameters("nb101").items()}
        cell = nasviz.optuna_sampler.architecture("nb101", params)
        if cell is None:                     # a spec NAS-Bench-101 rejects
            raise optuna.TrialPruned()
        return train_and_score(cell)

``params=`` maps other parameter names onto the space's, in parameter order. A parameter may offer
fewer choices than the space has: the candidates are then the cells those choices allow.

How it works (Optuna's relative sampling, :class:`optuna.samplers.BaseSampler`):

* :meth:`NASVizSampler.infer_relative_search_space` is the space's parameters, once the study's
  completed and pruned trials all hold them with categorical distributions (the intersection
  search space; the first trial is sampled independently, as with Optuna's own samplers);
* :meth:`NASVizSampler.sample_relative` tells a nasviz BO strategy (built by
  :func:`nasviz.strategies.factory.make_strategy`, by default :data:`nasviz.components.DEFAULT_STRATEGY`)
  every trial it has not seen yet -- completed trials as observations (negated for a minimised
  study), failed and pruned ones as failures, running ones as pending; trials whose parameters
  describe no cell are skipped -- and returns its next proposal as the parameters; the strategy
  keeps its GP caches between trials;
* any other parameter of the objective is sampled by ``independent_sampler`` (Optuna's
  ``RandomSampler(seed)`` by default), as Optuna's own samplers do.

This module imports Optuna; the rest of nasviz does not (``pip install "nasviz[peers]"``).
"""

from __future__ import annotations

import itertools
import threading
from typing import Any, Sequence

try:
    import optuna
    from optuna.distributions import BaseDistribution, CategoricalDistribution
    from optuna.samplers import BaseSampler
    from optuna.study import Study, StudyDirection
    from optuna.trial import FrozenTrial, TrialState
except ImportError as err:  # pragma: no cover - exercised where Optuna is missing
    raise ImportError(f"nasviz.optuna_sampler needs Optuna: pip install \"nasviz[peers]\" ({err})") from None

from nasviz.arch import Architecture
from nasviz.errors import ConfigError
from nasviz.objectives.base import FAILED, Evaluation
from nasviz.spaces import get_space
from nasviz.spaces.base import OPERATION_SLOTS, PARAMETERS, SearchSpace
from nasviz.defaults import DEFAULT_SPACE

#: Largest number of cells the allowed choices may span to be listed as the strategy's domain.
MAX_DOMAIN = 100_000


def parameters(space: str | SearchSpace = DEFAULT_SPACE) -> dict[str, tuple[str, ...]]:
    """The space's categorical parameters, ``{name: choices}`` in parameter order: what an
    objective suggests (``trial.suggest_categorical(name, choices)`` for each)."""
    return {name: tuple(choices) for name, choices in _parameter_space(space).parameter_choices().items()}


def architecture(space: str | SearchSpace, params: dict[str, str]) -> Architecture | None:
    """The cell of a full assignment of :func:`parameters`, or ``None`` where it describes none
    (an NB101 spec NAS-Bench-101 rejects); ``ValueError`` names a missing or unknown value."""
    return _parameter_space(space).from_parameters(params)


def slot_names(space: str | SearchSpace = DEFAULT_SPACE) -> tuple[str, ...]:
    """The parameter names of a space with operation slots: its slot names, in slot order."""
    return tuple(_slot_space(space).slot_names())


def operations(space: str | SearchSpace = DEFAULT_SPACE) -> tuple[str, ...]:
    """The operations a slot may hold (the choices of each of :func:`slot_names`)."""
    return tuple(_slot_space(space).slot_choices())


def _slot_space(space: str | SearchSpace) -> SearchSpace:
    space = get_space(space)
    if not space.provides(OPERATION_SLOTS):
        raise ConfigError(f"the {space.name!r} space has no operation slots; use nasviz.optuna_sampler.parameters()")
    return space


def _parameter_space(space: str | SearchSpace) -> SearchSpace:
    space = get_space(space)
    if not space.provides(PARAMETERS):
        raise ConfigError(f"the {space.name!r} space has no categorical parameters to map an Optuna trial onto")
    return space


class NASVizSampler(BaseSampler):
    """An Optuna sampler whose proposals come from a nasviz BO strategy (module docstring).

    Parameters
    ----------
    space : str or SearchSpace
        A space with categorical parameters (``"nb201"``, ``"nb101"``, ``"darts"``: each edge's
        operation and input, :data:`nasviz.spaces.darts.PARAMETER_CHOICES`).
    kernel : str, optional
        The GP kernel (``"tw2g"``, ``"wl"``, ...); default: the strategy's.
    strategy : str, optional
        A registered model-based strategy (default :data:`nasviz.components.DEFAULT_STRATEGY`).
    seed : int, optional
        Seeds the strategy and the independent sampler (default 0: Optuna studies are often
        created without a seed, and a nasviz strategy is deterministic given one).
    params : sequence of str, optional
        The study's name for each of the space's parameters, in parameter order (default: the
        names of :func:`parameters`).
    independent_sampler : BaseSampler, optional
        Samples the study's other parameters (default ``RandomSampler(seed)``).
    domain : sequence of Architecture, optional
        Only these cells are proposed: the rows of a table the objective looks values up in
        (NAS-Bench-101's tables hold a small part of its 423,624 cells). Default: every cell the
        study's choices allow.
    **options
        Options of the strategy (``n_init``, ``pool``, ``acquisition``, ...), validated by its
        registry entry.
    """

    def __init__(self, space: str | SearchSpace = DEFAULT_SPACE, kernel: str | None = None, *, strategy: str | None = None,
                 seed: int | None = None, params: Sequence[str] | None = None,
                 independent_sampler: BaseSampler | None = None, domain: Sequence[Architecture] | None = None,
                 **options: Any) -> None:
        from nasviz.components import DEFAULT_STRATEGY, STRATEGIES

        self.space = _parameter_space(space)
        own = parameters(self.space)
        #: the space's parameter names and each one's choices, in parameter order
        self.space_params: tuple[str, ...] = tuple(own)
        self.space_choices: tuple[tuple[str, ...], ...] = tuple(own.values())
        self.strategy_name = strategy or DEFAULT_STRATEGY
        if not STRATEGIES.get(self.strategy_name).capabilities.get("model"):
            raise ConfigError(f"NASVizSampler needs a model-based strategy, got {self.strategy_name!r}")
        self.options = dict(options, **({"kernel": kernel} if kernel is not None else {}))
        self.seed = 0 if seed is None else int(seed)
        self.params = tuple(params) if params is not None else self.space_params
        if len(self.params) != len(self.space_params) or len(set(self.params)) != len(self.params):
            raise ConfigError(f"params must name each of the {len(self.space_params)} parameters of the "
                              f"{self.space.name!r} space once, got {list(self.params)}")
        self.domain = None if domain is None else list(dict.fromkeys(domain))
        if self.domain is not None and not self.domain:
            raise ConfigError("domain is empty: give the cells the objective can evaluate, or None")
        self._independent = independent_sampler or optuna.samplers.RandomSampler(seed=self.seed)
        self._lock = threading.Lock()
        # Optuna's incremental intersection: each call reads only the trials finished since the last
        self._search_space = optuna.search_space.IntersectionSearchSpace(include_pruned=True)
        self._strategy: Any = None
        self._choices: tuple[tuple[str, ...], ...] | None = None
        self._told: set[int] = set()
        self._pending: set[int] = set()
        # build once now so bad options fail here, not inside study.optimize
        self._build(self.space_choices)

    # ------------------------------------------------------------------ Optuna's protocol
    def infer_relative_search_space(self, study: Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        """The space's parameters, when every completed or pruned trial holds them as categorical
        parameters whose choices are choices of the space's (else ``{}``: independent sampling)."""
        # pruned trials count: on a table that holds a small part of a space (NB101) the first,
        # independently sampled trials are pruned, and the sampler must still take over after them
        space = self._search_space.calculate(study)
        chosen = {}
        for name, allowed in zip(self.params, self.space_choices):
            dist = space.get(name)
            if not isinstance(dist, CategoricalDistribution) or not set(dist.choices) <= set(allowed):
                return {}
            chosen[name] = dist
        return chosen

    def sample_relative(self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        """The strategy's next cell as ``{param: choice}``, after telling it the new trials."""
        self._raise_error_if_multi_objective(study)
        if not search_space:
            return {}
        choices = tuple(tuple(search_space[name].choices) for name in self.params)
        with self._lock:
            if choices != self._choices:
                self._build(choices)
            self._sync(study, trial.number)
            proposals = self._strategy.ask(1)
        if not proposals:  # every allowed cell is taken: let Optuna sample independently
            return {}
        values = self.space.to_parameters(proposals[0])
        return {param: values[name] for param, name in zip(self.params, self.space_params)}

    def sample_independent(self, study: Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        return self._independent.sample_independent(study, trial, param_name, param_distribution)

    def reseed_rng(self) -> None:
        self._independent.reseed_rng()

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        self._independent.before_trial(study, trial)

    def after_trial(self, study: Study, trial: FrozenTrial, state: TrialState, values: Sequence[float] | None) -> None:
        self._independent.after_trial(study, trial, state, values)

    # ------------------------------------------------------------------ the nasviz side
    @property
    def strategy(self) -> Any:
        """The BO strategy behind the sampler (its ``state()`` is the last step's GP, pool, batch)."""
        return self._strategy

    def _build(self, choices: tuple[tuple[str, ...], ...]) -> None:
        """A fresh strategy over the cells ``choices`` allow (all trials are told again)."""
        from nasviz.strategies.factory import make_strategy

        size = 1
        for c in choices:
            size *= len(c)
        full = all(set(c) == set(allowed) for c, allowed in zip(choices, self.space_choices))
        domain = None
        if self.domain is not None:  # the given cells that the study's choices allow
            allowed = {name: set(c) for name, c in zip(self.space_params, choices)}
            domain = [cell for cell in self.domain
                      if all(v in allowed[name] for name, v in self.space.to_parameters(cell).items())]
            if not domain:
                raise ConfigError("no cell of the domain is allowed by the choices the study offers")
        elif not full and size <= MAX_DOMAIN:
            cells = (self.space.from_parameters(dict(zip(self.space_params, values)))
                     for values in itertools.product(*choices))
            domain = list(dict.fromkeys(c for c in cells if c is not None))  # NB101: valid specs, once each
            if not domain:
                raise ConfigError(f"the choices the study offers describe no {self.space.name!r} cell")
        self._strategy = make_strategy(self.strategy_name, space=self.space, seed=self.seed, domain=domain, **self.options)
        self._choices = choices
        self._told, self._pending = set(), set()

    def _arch(self, trial: FrozenTrial) -> Architecture | None:
        try:
            values = [trial.params[name] for name in self.params]
        except KeyError:
            return None
        if self._choices is not None and any(v not in c for v, c in zip(values, self._choices)):
            return None
        return self.space.from_parameters(dict(zip(self.space_params, values)))  # None: no such cell

    def _sync(self, study: Study, current: int) -> None:
        """Tell the strategy every finished trial it has not been told (values negated for a
        minimised study); trials of other workers still running count as evaluated-to-be."""
        sign = -1.0 if study.direction == StudyDirection.MINIMIZE else 1.0
        news: list[Evaluation] = []
        for t in study.get_trials(deepcopy=False):
            if t.number in self._told or t.number == current:
                continue
            arch = self._arch(t)
            if arch is None:
                self._told.add(t.number)
                continue
            if t.state == TrialState.COMPLETE and t.value is not None:
                news.append(Evaluation(arch, sign * float(t.value), 0.0))
            elif t.state in (TrialState.FAIL, TrialState.PRUNED):
                news.append(Evaluation(arch, None, 0.0, FAILED, f"trial {t.number} {t.state.name.lower()}"))
            else:
                if t.state == TrialState.RUNNING and t.number not in self._pending:
                    self._pending.add(t.number)
                    self._strategy.seen.add(arch)  # another worker evaluates it: do not propose it
                continue
            self._told.add(t.number)
        if news:
            self._strategy.tell(news)


__all__ = ["MAX_DOMAIN", "NASVizSampler", "architecture", "operations", "parameters", "slot_names"]
