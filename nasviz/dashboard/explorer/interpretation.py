"""The Interpretability page (paper 002, NAS-BOWL): a WL GP fitted on a sample, its feature
gradients (Eq. 3.2, Fig. 2), WL feature names parsed into trees, and how gradient-guided mutation
(App. C) would change an architecture of a space with operation slots."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from nasviz.arch import Architecture
from nasviz.dashboard.explorer.samples import Sample
from nasviz.dashboard.kernels import KernelSet
from nasviz.spaces import get_space
from nasviz.spaces.base import OPERATION_SLOTS
from nasviz.defaults import DEFAULT_SPACE


@dataclass
class Interpretation:
    """A WL GP fitted on a sample and its feature gradients (paper 002 §3.2, Fig. 2).

    ``gradients`` is a :class:`nasviz.interpret.FeatureGradients` over the sample's candidates;
    ``profiles`` the :func:`~nasviz.interpret.operation_gradient_profile` of its ``h = 0`` features
    with true values; ``op_gradients`` the mean gradient per operation (what gradient-guided
    mutation uses); ``sample`` the architectures and values.
    """

    sample: Sample
    gradients: Any
    profiles: list
    op_gradients: dict[str, float]
    h: int
    transform: str
    fit_seconds: float = 0.0
    top_positive: list[tuple[str, float, int]] = field(default_factory=list)
    top_negative: list[tuple[str, float, int]] = field(default_factory=list)


@dataclass
class WLFit:
    """What the expensive part of an interpretation computes (in a worker process on the page):
    the WL feature gradients (:class:`nasviz.interpret.FeatureGradients`) of a GP fitted on
    ``sample``, its target ``transform`` and how long the fit took. Everything else of an
    :class:`Interpretation` follows from it in milliseconds (:func:`interpret_fit`)."""

    sample: Sample
    gradients: Any
    transform: str
    fit_seconds: float


def fit_wl(sample: Sample, *, seed: int = 0, n_restarts: int = 1, kernels: KernelSet | None = None) -> WLFit:
    """Fit a GP with the WL kernel (ML-II) on ``sample`` and compute the WL feature gradients of
    its posterior mean at the same architectures (paper 002 Eq. 3.2)."""
    from nasviz.gp import GaussianProcess
    from nasviz.interpret import wl_feature_gradients
    from nasviz.surrogate import choose_transform

    if len(sample.archs) < 3:
        raise ValueError(f"interpretation needs at least 3 architectures, got {len(sample.archs)}")
    transform = choose_transform(sample.values, "auto")
    kernel = (kernels or KernelSet()).get("wl", sample.space)
    gp = GaussianProcess(kernel, transform=transform, n_restarts=n_restarts, seed=seed)
    t0 = time.perf_counter()
    gp.fit(sample.archs, sample.values)
    fit_seconds = time.perf_counter() - t0
    return WLFit(sample, wl_feature_gradients(gp, sample.archs), transform, fit_seconds)


def interpret_fit(fit: WLFit, *, top: int = 5) -> Interpretation:
    """The Fig. 2 profiles, the mean gradient per operation and the ``top`` most positive /
    negative features present in the sample, from a :class:`WLFit`."""
    from nasviz.interpret import operation_gradient_profile

    fg, sample = fit.gradients, fit.sample
    profiles = operation_gradient_profile(fg, sample.values)
    h0 = fg.depths == 0
    op_gradients = {fg.names[j]: float(fg.mean_gradient[j]) for j in np.flatnonzero(h0)
                    if fg.names[j] not in ("input", "output")}
    present = (fg.counts > 0).any(axis=0)
    order = [j for j in np.argsort(-fg.mean_gradient, kind="stable") if present[j]]  # ties as in the figure
    pos = [(fg.names[j], float(fg.mean_gradient[j]), int(fg.depths[j])) for j in order[:top] if fg.mean_gradient[j] > 0]
    neg = [(fg.names[j], float(fg.mean_gradient[j]), int(fg.depths[j])) for j in order[::-1][:top]
           if fg.mean_gradient[j] < 0]
    return Interpretation(sample, fg, profiles, op_gradients, fg.h, fit.transform, fit.fit_seconds, pos, neg)


def interpret_sample(sample: Sample, *, top: int = 5, seed: int = 0, n_restarts: int = 1,
                     kernels: KernelSet | None = None) -> Interpretation:
    """Fit a GP with the WL kernel (ML-II) on ``sample`` and compute the WL feature gradients of
    its posterior mean at the same architectures (paper 002 Eq. 3.2), the Fig. 2 profiles and the
    ``top`` most positive / negative features present in the sample."""
    return interpret_fit(fit_wl(sample, seed=seed, n_restarts=n_restarts, kernels=kernels), top=top)


_TOKEN = re.compile(r"<-|->|\(|\)|,|[^\s(),]+")


@dataclass
class FeatureTree:
    """A WL feature (unfolding tree, :func:`nasviz.kernels.wl.wl_labels`) parsed into nodes:
    ``labels[i]`` and ``parent[i]`` (``-1`` for the root), ``direction[i]`` ``"<-"`` (an
    in-neighbour of its parent) or ``"->"`` (an out-neighbour)."""

    labels: list[str]
    parent: list[int]
    direction: list[str]


class _FeatureParser:
    """Recursive descent over the tokens of a WL feature name (see :func:`parse_wl_feature`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.tokens = [t.strip() for t in _TOKEN.findall(name) if t.strip()]
        self.pos = 0
        self.tree = FeatureTree([], [], [])

    def fail(self) -> ValueError:
        return ValueError(f"not a WL feature name: {self.name!r}")

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def node(self, parent: int, direction: str) -> None:
        label = self.peek()
        if label is None or label in ("<-", "->", "(", ")", ","):
            raise self.fail()
        me = len(self.tree.labels)
        self.tree.labels.append(label)
        self.tree.parent.append(parent)
        self.tree.direction.append(direction)
        self.pos += 1
        while self.peek() in ("<-", "->"):
            arrow = self.tokens[self.pos]
            if self.pos + 1 >= len(self.tokens) or self.tokens[self.pos + 1] != "(":
                raise self.fail()
            self.pos += 2
            self.node(me, arrow)
            while self.peek() == ",":
                self.pos += 1
                self.node(me, arrow)
            if self.peek() != ")":
                raise self.fail()
            self.pos += 1

    def parse(self) -> FeatureTree:
        self.node(-1, "")
        if self.pos != len(self.tokens):
            raise self.fail()
        return self.tree


def parse_wl_feature(name: str) -> FeatureTree:
    """Parse ``"nor_conv_3x3 -> (output, avg_pool_3x3 -> (output))"`` into a :class:`FeatureTree`.
    ``ValueError`` on text that is not a WL feature name."""
    return _FeatureParser(name).parse()


def mutation_probabilities(arch: Architecture, op_gradients: Mapping[str, float],
                           space: str = DEFAULT_SPACE) -> dict[str, Any]:
    """How gradient-guided mutation (paper 002 App. C,
    :func:`nasviz.candidates.gradient_mutation_probabilities`) would mutate ``arch``: ``ops`` (its
    slot operations, length E), ``where`` ``(E,)`` the probability of mutating each slot, ``to``
    ``(E, n_ops)`` the replacement probabilities, ``joint`` ``(E, n_ops)`` = ``where[:, None] * to``,
    ``operations`` the column names. ``ValueError`` for a space without operation slots."""
    from nasviz.candidates import gradient_mutation_probabilities

    sp = get_space(space)
    if not sp.provides(OPERATION_SLOTS):
        raise ValueError(f"space {space!r} has no operation slots for gradient-guided mutation")
    ops = list(sp.slots(arch))
    choices = list(sp.slot_choices())
    where, to = gradient_mutation_probabilities(ops, choices, op_gradients)
    return {"ops": ops, "where": where, "to": to, "joint": where[:, None] * to, "operations": choices}


#: Shuffles of each slot in a slot importance (the page's; :func:`slot_importance`).
IMPORTANCE_REPEATS = 5


@dataclass
class SlotImportance:
    """Permutation importance of each operation slot for a GP surrogate: ``drop[j]`` is the mean
    fall of the Spearman correlation between the GP's predictions and the true values when slot
    ``j``'s operations are shuffled across the sample (``se[j]`` its standard error over repeats),
    ``baseline`` the correlation before shuffling. Shapes ``(n_slots,)``."""

    slots: list[str]
    drop: np.ndarray
    se: np.ndarray
    baseline: float
    repeats: int


def slot_importance(sample: Sample, *, kernel: str = "slots", repeats: int = IMPORTANCE_REPEATS, seed: int = 0,
                    kernels: KernelSet | None = None) -> SlotImportance:
    """Which operation slots the surrogate relies on (as Optuna's parameter importances say which
    parameters matter): fit a GP (``kernel``, ML-II) on the sample, then for each slot shuffle its
    operations across the sample's architectures ``repeats`` times and measure how much the rank
    correlation of the predictions with the true values falls. A slot whose operation the GP
    ignores costs nothing when shuffled. Spaces with operation slots only (``ValueError`` else).

    The default kernel is ``slots`` (an exponentiated Hamming kernel with one lengthscale per
    slot), which tells the slots apart; WL and TW read the reduced graph, where an operation's
    slot is only partly visible, so their importances smear across slots (on a value that depends
    on two slots only, a WL GP ranked the sample at rho 0.42, the slot kernel above 0.8).
    """
    from scipy.stats import spearmanr

    from nasviz.gp import GaussianProcess
    from nasviz.surrogate import choose_transform

    sp = get_space(sample.space)
    if not sp.provides(OPERATION_SLOTS):
        raise ValueError(f"space {sample.space!r} has no operation slots to shuffle")
    if len(sample.archs) < 5:
        raise ValueError(f"slot importance needs at least 5 architectures, got {len(sample.archs)}")
    values = np.asarray(sample.values, dtype=float)
    gp = GaussianProcess((kernels or KernelSet()).get(kernel, sample.space), transform=choose_transform(values, "auto"),
                         n_restarts=1, seed=seed)
    gp.fit(sample.archs, values)

    def rho(archs: list[Architecture]) -> float:
        mean, _ = gp.predict(archs, full_cov=False)
        r = spearmanr(mean, values)[0]
        return float(r) if np.isfinite(r) else 0.0

    ops = [list(sp.slots(a)) for a in sample.archs]
    baseline = rho(list(sample.archs))
    rng = np.random.default_rng(seed)
    names = list(sp.slot_names())
    drops = np.zeros((len(names), repeats))
    for j in range(len(names)):
        for r in range(repeats):
            perm = rng.permutation(len(ops))
            shuffled = [sp.from_slots([*row[:j], ops[perm[i]][j], *row[j + 1:]]) for i, row in enumerate(ops)]
            drops[j, r] = baseline - rho(shuffled)
    se = drops.std(axis=1, ddof=1) / np.sqrt(repeats) if repeats > 1 else np.zeros(len(names))
    return SlotImportance(names, drops.mean(axis=1), se, baseline, repeats)
