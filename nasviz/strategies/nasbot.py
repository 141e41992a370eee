"""NASBOT (paper 001): GP-BO with the OTMANN kernel ensemble, EI, and an EA acquisition optimiser.

One step (Sec. 4):

1. The first ``n_init`` proposals are the feed-forward initial pool
   (:func:`nasviz.spaces.layers.initial_pool`, "we bootstrap NASBOT ... with an initial set of 10
   networks having feed forward architecture", Sec. 5).
2. Afterwards a GP with the OTMANN ensemble kernel (Eq. (4), :class:`~nasviz.kernels.otmann.
   OTMANNKernel`) is fitted to the evaluations and expected improvement over the best
   observed value is maximised by :func:`ea_optimise` (Sec. 4.2, App. B.2), whose initial pool
   is the 10 feed-forward networks of the paper (Sec. 5, App. B.2) plus, by default, the 10
   best networks evaluated so far (``ea_init``, below).

Deviations, and why:

* Kernel hyperparameters: the paper samples them from the posterior; the project's GP
  (:mod:`nasviz.gp`) maximises the marginal likelihood (ML-II) with restarts. One fit per step.
* Outlying scores: networks that train badly (a few of the initial pool reach 10-25% on
  digits while the rest reach ~96%) are clipped to the lower Tukey fence
  ``Q1 - 1.5 IQR`` of the observed scores before the GP fit (:func:`robust_targets`). Unclipped,
  one such value sets the standardised scale and the good networks all look alike to the GP
  (on a 73-network digits run with failures at 10-23%, ML-II on raw scores gave a held-out
  Spearman of 0.08-0.33 over the non-failed networks; on a run with one mild outlier,
  clipping changed it from 0.46/0.72/0.63 to 0.47/0.74/0.72 on three splits). EI's
  incumbent is still the best raw score. The paper (with much longer training) does not
  discuss this.
* Acquisition budget: the paper lets ``n_EA`` grow as O(sqrt t) and notes that its
  acquisition optimisation is cheap next to training a network (hours). Here a network trains
  in ~0.5-2 s, and scoring one candidate costs OTMANN transport problems against every
  observation, so the schedule is additionally capped (:meth:`NASBOT._ea_budget`) so that one
  step's acquisition work takes at most ``acq_fraction`` (default 0.25) of the mean measured
  training time of a network. With slow training the cap never binds and the paper's schedule
  applies unchanged. The cap follows measured seconds, so two runs with one seed may propose
  differently, and a resumed run replays with a ``ReplayMismatchWarning`` (keeping the stored
  results); ``acq_fraction=None`` makes the proposals depend on the seed and the scores alone.
* EA initial pool (``ea_init``): ``"paper+best"`` (default) starts every step's EA from the
  paper's 10 feed-forward networks plus the 10 best evaluated so far; ``"paper"`` uses the 10
  networks only, as the paper does, and ``"observed"`` every evaluated network. Why: with the
  acquisition budget capped as above, an EA that restarts from the initial pool each step only
  ever scores a few mutations of it. On digits at 90 s per run (two seeds) the mean best
  validation accuracy was 98.22 / 98.19 / 98.47 for paper / observed / paper+best; on friedman1
  at 180 s (seeds 0-2) 0.9473 for "paper" and 0.9510 for "paper+best". (A three-seed digits run
  at 180 s outside the benchmark harness had favoured "paper", by less than one validation
  example.)
* Failed trainings (diverged, too large) enter the GP at the worst observed score
  (:func:`nasviz.strategies.base.with_failures`), so that EI steers away from regions that fail.
* Batches (``ask(n)`` with ``n > 1``): the ``n`` best distinct EA candidates by EI, instead of
  the paper's hallucinated (Ginsbourger et al.) sequential picks, which would refit the GP
  ``n`` times.

Measured (``bench layer-search --dataset friedman1 --seconds 180 --seeds S --workers 2 --json``,
idle 2-core machine): best validation R^2 found, mean +- std over the seeds (mean evaluations per
run in brackets). Every strategy starts from the same 10 initial networks, as in paper 001
Sec. 5 ("we bootstrap NASBOT and other methods with an initial set of 10 networks"). Seeds 6-8
took no part in choosing any setting; seeds 0-2 did (Auto-Keras there ran before diverged warm
starts were retrained from scratch). "Retrained" is ``bench layer-retrain --from RESULT --seeds
10,11``: each run's best network trained again from scratch on two other seeds, mean over runs
(a run's best score is a maximum over hundreds of noisy trainings; this is what the
architecture is worth without that luck):

==========  ===========================  ==========  ==========================  ==========
strategy    seeds 6-8, found             retrained   seeds 0-2, found            retrained
==========  ===========================  ==========  ==========================  ==========
nasbot      **0.9518 +- 0.0007** (223)   **0.9501**  **0.9526 +- 0.0005** (218)  **0.9499**
evolution   0.9502 +- 0.0017 (299)       0.9454      0.9520 +- 0.0005 (295)      0.9496
autokeras   0.9479 +- 0.0008 (170)       0.9432      0.9479 +- 0.0010 (145)      0.9357
random      0.9472 +- 0.0013 (529)       0.9479      0.9464 +- 0.0007 (577)      0.9401
==========  ===========================  ==========  ==========================  ==========

Per seed, NASBOT against evolution (found): 0.9523 / 0.9508 / 0.9521 vs 0.9495 / 0.9486 /
0.9526 on seeds 6-8 and 0.9519 / 0.9529 / 0.9531 vs 0.9527 / 0.9516 / 0.9518 on seeds 0-2:
higher on average and on four of the six seeds; retrained, NASBOT's networks are the best on
both seed sets. Evolution started from random networks instead (``--option evolution.init=
random``, seeds 6-8) found 0.9484 +- 0.0041 (retrained 0.9442). Why Auto-Keras trails:
:mod:`nasviz.strategies.autokeras`. On digits the ranking flips between seed sets (validation
accuracy in %, same command with ``--dataset digits``; seeds 6-8: nasbot 98.61 on every seed =
the best five-epoch mean any run reaches, autokeras 98.27, random 98.24, evolution 98.22; seeds
12-14: evolution 98.57, autokeras 98.31, nasbot 98.29, random 98.22): one validation example
is 0.28 points, so there the ranking is noise.

At 10 minutes per run (``--seconds 600``, friedman1, fresh seeds 20-22 that nothing was chosen
on; 2 runs at a time, idle machine, 60 min in all): nasbot **0.9527 +- 0.0009** (406
evaluations; retrained **0.9490**), evolution 0.9522 +- 0.0012 (730; 0.9476), random 0.9494 +-
0.0015 (1836; 0.9472), autokeras 0.9490 +- 0.0012 (399; 0.9236, one retraining diverged). Per
seed, NASBOT vs evolution: 0.9537 / 0.9528 / 0.9516 vs 0.9529 / 0.9532 / 0.9505.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.errors import ConfigError
from nasviz.objectives.base import Evaluation
from nasviz.spaces.base import SearchSpace
from nasviz.state import StepState
from nasviz.spaces import layers as L
from nasviz.spaces.layers import DEFAULT_CONSTRAINTS, Constraints
from nasviz.strategies.base import affordable_items, robust_targets, with_failures

#: ``acquisition(archs) -> (len(archs),)`` values, higher is better.
AcquisitionFn = Callable[[Sequence[Architecture]], np.ndarray]


def ea_schedule(t: int, base: int = 10, cap: int = 150) -> tuple[int, int]:
    """``(n_EA, N_mut)`` at BO step ``t >= 1`` (App. B.2).

    ``n_EA = min(cap, ceil(base * sqrt(t)))`` acquisition evaluations grow as O(sqrt t) and
    ``N_mut = ceil(sqrt(n_EA))`` mutations per generation grow as O(sqrt n_EA). The paper gives
    only the rates; ``base = 10`` keeps one step's acquisition optimisation (OTMANN distances
    of every candidate to every observation) at a few seconds with ~50 observations, so that
    on small datasets the optimiser does not cost more time than training.
    """
    if t < 1:
        raise ValueError(f"the BO step t must be >= 1, got {t}")
    n_ea = min(int(cap), int(math.ceil(base * math.sqrt(t))))
    return n_ea, int(math.ceil(math.sqrt(n_ea)))


def selection_probabilities(g: np.ndarray) -> np.ndarray:
    """``pi_i ∝ exp(g_i / sigma)`` with ``sigma = std(g)`` (App. B.2); shape ``(m,) -> (m,)``.

    ``sigma = 0`` (all values equal, or one value) gives the uniform distribution.
    """
    g = np.asarray(g, dtype=float)
    if g.ndim != 1 or len(g) == 0 or not np.all(np.isfinite(g)):
        raise ValueError(f"acquisition values must be a non-empty finite vector, got shape {g.shape}")
    sigma = float(np.std(g))
    logits = (g - g.max()) / sigma if sigma > 1e-12 else np.zeros_like(g)
    p = np.exp(logits)
    return p / p.sum()


def ea_optimise(
    acquisition: AcquisitionFn,
    initial: Sequence[Architecture],
    rng: np.random.Generator,
    n_evals: int,
    n_mut: int,
    constraints: Constraints = DEFAULT_CONSTRAINTS,
) -> tuple[list[Architecture], np.ndarray]:
    """NASBOT's evolutionary acquisition optimiser (paper 001 Sec. 4.2, App. B.2).

    The pool starts as ``initial`` (their acquisition is evaluated first). Each generation
    draws ``n_mut`` parents with probability ``pi(z_i) ∝ exp(g(z_i) / sigma)``, ``sigma`` the
    standard deviation of every acquisition value computed so far, applies the compound
    mutation (:func:`nasviz.spaces.layers.modifiers.mutate`) to each, evaluates the distinct new children and
    adds them to the pool; it stops once ``n_evals`` new acquisition values have been computed.

    Returns all pool members (initial ones first) and their acquisition values, shape ``(m,)``.
    The pool may hold already-evaluated networks: the caller picks the best *new* one.
    """
    from nasviz.spaces.layers.modifiers import mutate

    if n_evals < 1 or n_mut < 1:
        raise ValueError(f"n_evals and n_mut must be >= 1, got {n_evals}, {n_mut}")
    pool = list(dict.fromkeys(initial))
    if not pool:
        raise ValueError("the EA needs at least one initial network")
    values = list(np.asarray(acquisition(pool), dtype=float))
    seen = set(pool)
    evaluated, stale = 0, 0
    while evaluated < n_evals and stale < 10:
        parents = rng.choice(len(pool), size=n_mut, p=selection_probabilities(np.asarray(values)))
        children = []
        for i in parents:
            try:
                child = mutate(pool[int(i)], rng, constraints)
            except ValueError:
                continue
            if child not in seen:
                seen.add(child)
                children.append(child)
        children = children[: n_evals - evaluated]
        if not children:
            stale += 1
            continue
        stale = 0
        values.extend(np.asarray(acquisition(children), dtype=float))
        pool.extend(children)
        evaluated += len(children)
    return pool, np.asarray(values)


class NASBOT:
    """NASBOT with ask/tell.

    Parameters
    ----------
    space : the layer space module (``nasviz.spaces.layers``)
    seed : seeds the EA and the GP restarts
    kernel : a kernel instance (default: ``OTMANNKernel()``, the paper's ensemble)
    n_init : how many initial-pool networks to evaluate first (paper: 10)
    ea_base, ea_cap : :func:`ea_schedule` parameters
    constraints : the domain (App. B.1)
    n_restarts : GP ML-II restarts
    ea_init : the EA's initial pool: ``"paper+best"`` (default), ``"paper"`` or ``"observed"``
        (see the module docstring)
    acq_fraction : cap of one step's acquisition time as a fraction of the mean training time
        of a network (measured); ``None`` disables the cap (the paper's schedule alone)
    """

    name = "nasbot"

    def __init__(
        self,
        space: SearchSpace,
        seed: int = 0,
        domain: Sequence[Architecture] | None = None,
        *,
        kernel=None,
        n_init: int = 10,
        ea_base: int = 10,
        ea_cap: int = 150,
        constraints: Constraints = DEFAULT_CONSTRAINTS,
        n_restarts: int = 2,
        acq_fraction: float | None = 0.25,
        ea_init: str = "paper+best",
    ) -> None:
        if space.name != L.NAME:
            raise ConfigError(f"nasbot searches the {L.NAME!r} space, got {space.name!r}")
        if domain is not None:
            raise ValueError("nasbot searches the unbounded layer space; a finite domain is not supported")
        if acq_fraction is not None and not acq_fraction > 0:
            raise ValueError(f"acq_fraction must be > 0 or None, got {acq_fraction}")
        if ea_init not in ("paper", "observed", "paper+best"):
            raise ValueError(f"ea_init must be 'paper', 'observed' or 'paper+best', got {ea_init!r}")
        self.ea_init = ea_init
        if n_init < 1:
            raise ValueError(f"n_init must be >= 1, got {n_init}")
        from nasviz.gp import GaussianProcess
        from nasviz.kernels import make_kernel

        self.space = space
        self.rng = np.random.default_rng(seed)
        self.kernel = kernel if kernel is not None else make_kernel("otmann")
        self.gp = GaussianProcess(self.kernel, n_restarts=n_restarts, seed=seed)
        self.constraints = constraints
        self.initial = [a for a in L.initial_pool() if L.is_valid(a, constraints)][:n_init]
        self.ea_base, self.ea_cap = int(ea_base), int(ea_cap)
        self.observed: list[Architecture] = []
        self.values: list[float] = []
        self.failed: list[Architecture] = []  # evaluations that failed (diverged, too large)
        self.seen: set[str] = set()
        self.step = 0
        self.acq_fraction = acq_fraction
        self._costs: list[float] = []  # training seconds of each evaluation told
        self._sec_per_candidate: float | None = None  # measured acquisition seconds per new candidate
        self._state: dict[str, Any] = {"strategy": self.name}

    def _key(self, arch: Architecture) -> str:
        return arch.canonical_key()

    def _unseen(self, archs: Sequence[Architecture]) -> list[Architecture]:
        out, keys = [], set()
        for a in archs:
            k = self._key(a)
            if k not in self.seen and k not in keys:
                keys.add(k)
                out.append(a)
        return out

    def ask(self, n: int) -> list[Architecture]:
        proposals = self._unseen(self.initial)[:n]
        phase = "init"
        if len(proposals) < n:
            phase = "bo"
            proposals += self._bo_proposals(n - len(proposals), proposals)
        for a in proposals:
            self.seen.add(self._key(a))
        self._state["phase"] = phase
        self._state["proposals"] = [L.format(a) for a in proposals]
        return proposals

    def _ea_initial(self) -> list[Architecture]:
        if self.ea_init == "observed":
            return list(self.observed)
        if self.ea_init == "paper":
            return list(self.initial)
        top = np.argsort(-np.asarray(self.values), kind="stable")[: len(self.initial)]
        return list(self.initial) + [self.observed[i] for i in top]

    def _ea_budget(self, n_ea: int, n_mut: int) -> tuple[int, int]:
        """The schedule's ``(n_EA, N_mut)``, capped so that the acquisition work of a step
        (``n_EA`` new candidates at the measured seconds per candidate, GP fit included) stays within
        ``acq_fraction`` of the mean training time of a network; at least ``N_mut`` evaluations."""
        affordable = affordable_items(self.acq_fraction, self._costs, self._sec_per_candidate)
        if affordable is None:
            return n_ea, n_mut
        capped = int(max(n_mut, min(n_ea, affordable)))
        return capped, min(n_mut, capped)

    def _bo_proposals(self, n: int, already: list[Architecture]) -> list[Architecture]:
        from nasviz.acquisition import expected_improvement

        self.step += 1
        n_ea, n_mut = self._ea_budget(*ea_schedule(self.step, self.ea_base, self.ea_cap))
        started = time.perf_counter()
        if len(self.observed) < 2:  # nothing to fit yet: mutate what we have
            base = self.observed or self.initial
            pool, values = ea_optimise(lambda a: self.rng.random(len(a)), base, self.rng, n_ea, n_mut, self.constraints)
            acq_name = "random"
        else:
            y = np.asarray(self.values)
            fit = self.gp.fit(*with_failures(self.observed, robust_targets(y), self.failed))
            best = float(y.max())

            def acquisition(archs: Sequence[Architecture]) -> np.ndarray:
                mean, std = self.gp.predict(list(archs), full_cov=False)
                return expected_improvement(mean, std, best)

            pool, values = ea_optimise(acquisition, self._ea_initial(), self.rng, n_ea, n_mut, self.constraints)
            acq_name = "ei"
            # per new candidate: the observed networks' distances are cached and cost ~nothing
            self._sec_per_candidate = (time.perf_counter() - started) / max(1, len(pool) - len(self._ea_initial()))
            self._state["gp"] = fit.as_dict() if hasattr(fit, "as_dict") else {}
        order = np.argsort(-values, kind="stable")
        ranked = self._unseen([pool[i] for i in order if pool[i] not in already])
        chosen = ranked[:n]
        if len(chosen) < n:  # the EA found too few new networks: fall back to fresh mutations
            tries = 0
            while len(chosen) < n and tries < 100 * n:
                tries += 1
                parent = (self.observed or self.initial)[int(self.rng.integers(len(self.observed or self.initial)))]
                chosen = self._unseen(chosen + [L.mutate(parent, self.rng, self.constraints)])
        top = order[:20]
        self._state.update(
            {
                "acquisition": acq_name,
                "bo_step": self.step,
                "n_ea": n_ea,
                "n_mut": n_mut,
                "pool_size": len(pool),
                "pool_top": [L.format(pool[i]) for i in top],
                "pool_top_values": [float(values[i]) for i in top],
            }
        )
        return chosen

    def tell(self, evaluations: Sequence[Evaluation]) -> None:
        for ev in evaluations:
            self.seen.add(self._key(ev.arch))
            if ev.cost is not None and math.isfinite(ev.cost) and ev.cost > 0:
                self._costs.append(float(ev.cost))
            if ev.ok and ev.value is not None and math.isfinite(ev.value):
                self.observed.append(ev.arch)
                self.values.append(float(ev.value))
            else:
                self.failed.append(ev.arch)  # enters the GP at the worst score (with_failures)

    def state(self) -> StepState:
        return StepState.from_legacy({**self._state, "kernel": "otmann"})
