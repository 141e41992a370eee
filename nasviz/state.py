"""Typed step state: what a strategy did in one step, as frozen plain data every view reads.

Every strategy's :meth:`state` returns a :class:`StepState`. Model-based strategies (the BO
presets, NASBOT, Auto-Keras) fill the same parts, so every view works for all of them:

* :class:`GPFit`: the surrogate's kernel, learned hyperparameters and which sit on a bound;
* :class:`PoolState`: the candidates the acquisition was maximised over, with the posterior
  mean / std and acquisition value of each (NASBOT's EA and Auto-Keras's tree search report the
  candidates they scored);
* :class:`BatchChoice`: which candidates were chosen and why (k-DPP qualities, ...);
* :class:`FeatureGradients`: WL feature gradients (paper 002 Eq. 3.2) when the kernel is WL;
* ``decisions``: multi-fidelity strategies' promotions and stops at a rung
  (:class:`~nasviz.fidelity.RungDecision`: the trial's rank, the rule).

``notes`` keeps strategy-specific plain data (the EA's schedule, the tree search's counts).
:meth:`StepState.to_dict` / :meth:`StepState.from_dict` are the stored form (store schema 3);
:meth:`StepState.from_legacy` reads the untyped dictionaries older stores hold (schema <= 2).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

from nasviz.fidelity.decisions import RungDecision

#: Version of :meth:`StepState.to_dict`'s layout.
STATE_VERSION = 3


def _floats(values: Sequence[Any] | None) -> tuple[float, ...]:
    out = []
    for v in values or ():
        try:
            f = float(v)
        except (TypeError, ValueError):
            f = math.nan
        out.append(f)
    return tuple(out)


@dataclass(frozen=True)
class GPFit:
    """One fit of the GP surrogate: ML-II, or MAP under a hyperparameter prior (``prior`` names
    it, e.g. ``"optuna"``; empty for ML-II).

    ``hyperparameters`` are the kernel's learned values by name (TW's ``lambda_1..3``, WL's
    ``h``, ...); ``amplitude`` and ``noise`` are in the units of the transformed, standardised
    targets; ``bounds_hit`` names the hyperparameters that ended on a bound of their search box
    (the dashboard warns: the data could not pin them down); ``floors_hit`` names those resting
    on a floor the strategy chose on purpose (the noise at ``min_noise``,
    :meth:`nasviz.gp.GaussianProcess.floors`): the data alone would fit less, and the value is the
    chosen one, so the dashboard says so without a warning; ``switched_off`` names the rates of
    distance components (TW's ``lambda_k``, the Hamming factor's ``l[...]``) that ended on the low
    end of their box: ``exp(-rate x distance)`` is then about 1, the data say that component does
    not help predict, and the kernel goes on with the others, an expected outcome the dashboard
    says in plain words, not a warning; ``box`` names a search box narrower than the wide default
    (``"optuna-rates"``, ...; empty for the default).
    """

    kernel: str
    hyperparameters: dict[str, float]
    amplitude: float
    noise: float
    log_likelihood: float
    n_observations: int
    seconds: float = 0.0
    bounds_hit: tuple[str, ...] = ()
    transform: str = "standardize"
    prior: str = ""
    box: str = ""
    floors_hit: tuple[str, ...] = ()
    switched_off: tuple[str, ...] = ()

    def traced(self) -> dict[str, float]:
        """The values the hyperparameter traces draw: kernel hyperparameters, amplitude, noise."""
        return {**self.hyperparameters, "amplitude": self.amplitude, "noise": self.noise}


@dataclass(frozen=True)
class PoolState:
    """The candidates of one step (M of them) with the surrogate's view of each.

    ``candidates`` are architecture strings; ``mean`` / ``std`` the posterior (in the metric's
    units), ``acquisition`` the acquisition value (``acquisition_name``: ``ucb``, ``ei``, ...);
    ``origin`` says where each came from (``random``, ``mutation``, ``evolution-2``, ``morph``).
    """

    candidates: tuple[str, ...]
    mean: tuple[float, ...]
    std: tuple[float, ...]
    acquisition: tuple[float, ...]
    acquisition_name: str
    origin: tuple[str, ...] = ()
    info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.candidates)


@dataclass(frozen=True)
class BatchChoice:
    """Which pool members were chosen (``indices`` into :attr:`PoolState.candidates`) and why.

    ``method`` is the selector; ``qualities`` the k-DPP quality of each candidate (``(M,)``,
    quality k-DPP), ``eigenvalues`` the k-DPP kernel's spectrum (``(M,)``, k-DPP selectors: how
    much diversity there was to choose from), ``std_after`` the posterior standard deviation on
    the pool before each pick (``(B, M)``, BUCB: the variance shrinking), ``draws_argmax`` the
    argmax of every Thompson draw; ``info`` plain extras (temperature, kappa, fallbacks).
    """

    method: str
    indices: tuple[int, ...]
    qualities: tuple[float, ...] | None = None
    eigenvalues: tuple[float, ...] | None = None
    std_after: tuple[tuple[float, ...], ...] | None = None
    draws_argmax: tuple[int, ...] | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, selection: Any, **info: Any) -> "BatchChoice":
        """From a :class:`nasviz.batch.BatchSelection` (arrays become tuples), plus ``info``."""
        def floats(x: Any) -> tuple[float, ...] | None:
            return None if x is None else tuple(float(v) for v in x)

        return cls(method=selection.method, indices=tuple(int(i) for i in selection.indices),
                   qualities=floats(selection.qualities), eigenvalues=floats(selection.eigenvalues),
                   std_after=None if selection.std_after is None else tuple(floats(row) for row in selection.std_after),
                   draws_argmax=None if selection.draws_argmax is None else tuple(int(i) for i in selection.draws_argmax),
                   info={**{k: v for k, v in selection.info.items() if isinstance(v, (int, float, str, bool))}, **info})


@dataclass(frozen=True)
class FeatureGradients:
    """Mean derivative of the GP mean w.r.t. each WL feature (paper 002 Eq. 3.2) at depth ``h``.

    ``depths[j]`` is the WL iteration of feature ``j`` (empty in snapshots stored before it was
    kept): two iterations can write the same unfolding tree (a node whose neighbours have no
    neighbours), and the depth tells those features apart on the page."""

    features: tuple[str, ...]
    gradients: tuple[float, ...]
    h: int
    depths: tuple[int, ...] = ()


@dataclass(frozen=True)
class StepState:
    """What one step of a strategy did (see the module docstring)."""

    strategy: str
    phase: str
    proposals: tuple[str, ...] = ()
    gp: GPFit | None = None
    pool: PoolState | None = None
    batch: BatchChoice | None = None
    features: FeatureGradients | None = None
    timings: dict[str, float] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)
    decisions: tuple[RungDecision, ...] = ()

    # ------------------------------------------------------------------ stored form
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data, tagged with :data:`STATE_VERSION`."""
        out = asdict(self)
        out["version"] = STATE_VERSION
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> "StepState":
        """Read :meth:`to_dict`'s form, or an older untyped dictionary (:meth:`from_legacy`)."""
        if not data:
            return cls(strategy="", phase="")
        if int(data.get("version") or 0) < STATE_VERSION:
            return cls.from_legacy(data)
        gp, pool, batch, features = (data.get(k) for k in ("gp", "pool", "batch", "features"))
        return cls(
            strategy=str(data.get("strategy", "")), phase=str(data.get("phase", "")),
            proposals=tuple(data.get("proposals") or ()),
            gp=None if not gp else GPFit(**{**gp, "bounds_hit": tuple(gp.get("bounds_hit") or ()),
                                          "floors_hit": tuple(gp.get("floors_hit") or ()),
                                          "switched_off": tuple(gp.get("switched_off") or ())}),
            pool=None if not pool else PoolState(
                candidates=tuple(pool["candidates"]), mean=_floats(pool.get("mean")), std=_floats(pool.get("std")),
                acquisition=_floats(pool.get("acquisition")), acquisition_name=str(pool.get("acquisition_name", "")),
                origin=tuple(pool.get("origin") or ()), info=dict(pool.get("info") or {})),
            batch=None if not batch else _batch_choice(batch),
            features=None if not features else FeatureGradients(
                tuple(features["features"]), _floats(features["gradients"]), int(features.get("h", 0)),
                tuple(int(d) for d in features.get("depths") or ())),
            timings={k: float(v) for k, v in (data.get("timings") or {}).items()},
            notes=dict(data.get("notes") or {}),
            decisions=tuple(RungDecision.from_dict(d) for d in data.get("decisions") or ()),
        )

    @classmethod
    def from_legacy(cls, data: Mapping[str, Any]) -> "StepState":
        """Read the untyped strategy dictionaries of store schemas 1-2 (BO, NASBOT, Auto-Keras).

        BO kept ``pool`` / ``mean`` / ``std`` / ``acquisition`` / ``selected`` / ``batch`` /
        ``hyperparameters`` at the top level; NASBOT ``gp`` and ``pool_top`` with
        ``pool_top_values``; Auto-Keras ``gp`` and the tree search's counts. Whatever has no
        typed place goes to ``notes``.
        """
        known = {"strategy", "phase", "proposals", "pool", "pool_origin", "pool_info", "mean", "std", "acquisition",
                 "acquisition_name", "selected", "batch", "hyperparameters", "gp", "timings", "feature_gradients"}
        fit = data.get("hyperparameters") or data.get("gp")
        gp = None
        if isinstance(fit, Mapping) and fit:
            gp = GPFit(kernel=str(data.get("kernel", "")), hyperparameters=dict(fit.get("theta") or {}),
                       amplitude=float(fit.get("amplitude", math.nan)), noise=float(fit.get("noise", math.nan)),
                       log_likelihood=float(fit.get("log_marginal_likelihood", math.nan)),
                       n_observations=int(fit.get("n_obs", 0)), seconds=float(fit.get("seconds", 0.0)),
                       transform=str(fit.get("transform", "standardize")))
        pool = None
        candidates = data.get("pool")
        if isinstance(candidates, list) and candidates:
            acq_name = data.get("acquisition_name") or (data.get("acquisition") if isinstance(data.get("acquisition"), str) else "")
            acq = data.get("acquisition") if isinstance(data.get("acquisition"), list) else None
            pool = PoolState(candidates=tuple(candidates), mean=_floats(data.get("mean")), std=_floats(data.get("std")),
                             acquisition=_floats(acq), acquisition_name=str(acq_name or ""),
                             origin=tuple(data.get("pool_origin") or ()), info=dict(data.get("pool_info") or {}))
        batch = None
        b = data.get("batch")
        selected = data.get("selected")
        if isinstance(b, Mapping) or selected:
            b = dict(b) if isinstance(b, Mapping) else {}
            b.setdefault("method", "topk")
            b["indices"] = selected or b.get("indices") or ()
            batch = _batch_choice(b)
        fg = data.get("feature_gradients")
        features = None if not fg else FeatureGradients(tuple(fg["features"]), _floats(fg["gradients"]), int(fg.get("h", 0)))
        return cls(strategy=str(data.get("strategy", "")), phase=str(data.get("phase", "")),
                   proposals=tuple(data.get("proposals") or ()), gp=gp, pool=pool, batch=batch, features=features,
                   timings={k: float(v) for k, v in (data.get("timings") or {}).items() if isinstance(v, (int, float))},
                   notes={k: v for k, v in data.items() if k not in known and k != "kernel"})


def _batch_choice(data: Mapping[str, Any]) -> BatchChoice:
    """A :class:`BatchChoice` from its stored dictionary (old or new layout)."""
    def floats(key: str) -> tuple[float, ...] | None:
        return None if data.get(key) is None else _floats(data[key])

    std_after = data.get("std_after")
    draws = data.get("draws_argmax")
    return BatchChoice(method=str(data["method"]), indices=tuple(int(i) for i in data.get("indices") or ()),
                       qualities=floats("qualities"), eigenvalues=floats("eigenvalues"),
                       std_after=None if std_after is None else tuple(_floats(row) for row in std_after),
                       draws_argmax=None if draws is None else tuple(int(i) for i in draws),
                       info=dict(data.get("info") or {}))


def bound_side(value: float, low: float, high: float, rtol: float = 0.01) -> str | None:
    """``"low"`` or ``"high"`` when ``value`` lies within ``rtol`` of that end of ``(low, high)``
    (relative to the span, on a log scale for positive bounds), else None."""
    if value is None or not math.isfinite(value):
        return None
    if low > 0 and value > 0:
        value, low, high = math.log(value), math.log(low), math.log(high)
    span, to_low, to_high = high - low, abs(value - low), abs(high - value)
    if min(to_low, to_high) > rtol * span:
        return None
    return "low" if to_low <= to_high else "high"


def bounds_hit(values: Mapping[str, float], bounds: Mapping[str, tuple[float, float]], rtol: float = 0.01) -> tuple[str, ...]:
    """Names whose value lies within ``rtol`` (relative, on a log scale for positive bounds) of
    either end of its ``(low, high)`` bound: the fit could not pin them down."""
    return tuple(name for name, value in values.items()
                 if name in bounds and bound_side(value, *bounds[name], rtol=rtol) is not None)


def gp_fit_state(fit: Any, gp: Any, kernel: str, box: str = "") -> GPFit:
    """The :class:`GPFit` of a :class:`~nasviz.gp.FitResult` of ``gp`` (a GaussianProcess),
    with the hyperparameters that sit on a bound of their search box (discrete ones, such as
    WL's depth, have no box), and apart from them those resting on a floor ``gp`` was given on
    purpose (its ``floors()``, e.g. the noise at ``min_noise``) and the component rates the fit
    switched off (a ``rate`` hyperparameter at the low end): expected values, not warnings."""
    search_box = gp.search_box()
    values = {**fit.theta, "amplitude": fit.amplitude, "noise": fit.noise}
    hit = bounds_hit(values, search_box) if gp.learn else ()
    floors = gp.floors()
    rates = {h.name for h in gp.kernel.hyperparameters if h.rate}

    def low(name: str) -> bool:
        return bound_side(values[name], *search_box[name]) == "low"

    on_floor = tuple(name for name in hit if name in floors and low(name))
    switched_off = tuple(name for name in hit if name in rates and name not in on_floor and low(name))
    return GPFit(kernel=kernel, hyperparameters={k: float(v) for k, v in fit.theta.items()},
                 amplitude=float(fit.amplitude), noise=float(fit.noise),
                 log_likelihood=float(fit.log_marginal_likelihood), n_observations=int(fit.n_obs),
                 seconds=float(fit.seconds),
                 bounds_hit=tuple(name for name in hit if name not in on_floor and name not in switched_off),
                 transform=str(fit.transform), prior=gp.prior.name if getattr(gp, "prior", None) else "", box=box,
                 floors_hit=on_floor, switched_off=switched_off)