"""NAS-BOWL's gradient-guided mutation (paper 002 Sec. 3.2, App. C): which part of an architecture
to mutate and what to change it to follow the sigmoid of the negative GP feature gradients.

The architecture is read as its categorical parameters (the ``categorical-parameters``
representation: NB201's six edges, NAS-Bench-101's vertex operations, a declared space's
positions); the space says which node label each choice puts in the graph
(:meth:`~nasviz.spaces.base.SearchSpace.parameter_label`), and that label's ``h = 0`` WL feature
gradient is the choice's gradient. Labels that depend on the position (``layer_3:conv``) are
looked up as they are, so a space whose labels say where they stand gets its gradients too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Collection, Container, Mapping, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.candidates.pools import AnyOf, Pool, PoolFilter, mutation_pool, random_pool

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace

#: Draws of a gradient-guided mutation before it falls back to the space's own mutation: an
#: assignment may describe no architecture (an NB101 spec NAS-Bench-101 rejects).
MAX_DRAWS = 10


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def scale_gradients(gradients: np.ndarray, known: np.ndarray) -> np.ndarray:
    """The gradients divided by their root mean square over the ``known`` ones (unknown: 0).

    App. C turns gradients into pseudo-probabilities with a sigmoid and notes that their
    magnitudes "do not matter as much"; dividing by a scale makes the probabilities independent
    of the metric's units (accuracy in points or in fractions). The scale is the root mean square,
    not the standard deviation, for two reasons:

    * it keeps the sign, which is what App. C reads (a positive gradient means the feature helps,
      so it is kept); centring would turn the smaller of two helpful features into a harmful one;
    * it bounds the result: no scaled value exceeds ``sqrt(k)`` for ``k`` known gradients, so
      ``sigmoid(-g)`` never underflows. Dividing by the standard deviation without centring did
      the opposite of what it meant to: two nearly equal gradients (0.33516 and 0.33584, s.d.
      3.4e-4) became about 1000, every ``sigmoid(-g)`` was 0 and the normalisation 0 / 0 (NaN).

    ``gradients`` and ``known`` have one shape; all-zero gradients stay zero.
    """
    g = np.where(known, np.asarray(gradients, dtype=float), 0.0)
    if known.any():
        rms = float(np.sqrt(np.mean(g[known] ** 2)))
        if rms > 0:
            g = g / rms
    return g


def gradient_mutation_probabilities(
    ops: Sequence[str], operations: Sequence[str], op_gradients: Mapping[str, float]
) -> tuple[np.ndarray, np.ndarray]:
    """NAS-BOWL's pseudo-probabilities (paper 002 App. C) for a cell whose positions all choose
    among ``operations`` and hold ``ops`` now (NB201's six edges).

    ``op_gradients`` maps an operation label to the mean derivative of the GP posterior mean
    with respect to its ``h = 0`` WL feature (its count). Returns

    * ``where`` ``(len(ops),)``: probability of mutating each position,
      ``sigmoid(-g[op]) / sum`` -- operations that help accuracy are kept;
    * ``to`` ``(len(ops), len(operations))``: for each position, probability of each
      replacement, ``sigmoid(g[new]) / sum`` over the other operations (0 for the current one).

    Operations without a feature (``none`` and ``skip_connect`` vanish from the reduced graph
    the WL kernel reads) get gradient 0, i.e. sigmoid 1/2. Gradients are scaled by their root mean
    square first (:func:`scale_gradients` says why not by their standard deviation).
    """
    names = list(operations)
    known = np.array([op in op_gradients for op in names])
    g = scale_gradients(np.array([float(op_gradients.get(op, 0.0)) for op in names]), known)
    index = {op: i for i, op in enumerate(names)}
    current = np.array([index[op] for op in ops])
    where = _sigmoid(-g[current])
    where /= where.sum()
    to = np.tile(_sigmoid(g), (len(ops), 1))
    to[np.arange(len(ops)), current] = 0.0
    to /= to.sum(axis=1, keepdims=True)
    return where, to


@dataclass(frozen=True)
class MutationProbabilities:
    """Gradient-guided mutation of one architecture over its categorical parameters.

    ``parameters`` (P names) and ``current`` (P choices) are the architecture; ``where`` ``(P,)``
    the probability of changing each parameter (0 for one with a single choice); ``choices[p]``
    the parameter's choices and ``to[p]`` ``(len(choices[p]),)`` the probability of each (0 for
    the current one). ``guided`` is False when no choice has a gradient: every probability is
    then uniform.
    """

    parameters: tuple[str, ...]
    current: tuple[str, ...]
    where: np.ndarray
    choices: tuple[tuple[str, ...], ...]
    to: tuple[np.ndarray, ...]
    guided: bool


def parameter_mutation_probabilities(space: SearchSpace, arch: Architecture,
                                     op_gradients: Mapping[str, float]) -> MutationProbabilities:
    """App. C's pseudo-probabilities over ``arch``'s categorical parameters: a parameter whose
    current choice's label has a large positive gradient is rarely changed (``sigmoid(-g)``),
    and a replacement is drawn by ``sigmoid(g)`` of the label it would put in the graph. A choice
    whose label has no ``h = 0`` feature (the space's :meth:`parameter_label` is ``None``, or the
    label vanishes from the reduced graph) counts as gradient 0. On a slot space this is
    :func:`gradient_mutation_probabilities`."""
    choices = space.parameter_choices()
    current = space.to_parameters(arch)
    names = tuple(choices)
    labels = [[space.parameter_label(name, c) for c in choices[name]] for name in names]
    flat = [lab for row in labels for lab in row]
    known = np.array([lab is not None and lab in op_gradients for lab in flat])
    raw = np.array([float(op_gradients[lab]) if k else 0.0 for lab, k in zip(flat, known)])
    g = scale_gradients(raw, known)
    where, to, start = np.zeros(len(names)), [], 0
    for p, name in enumerate(names):
        row = g[start:start + len(choices[name])]
        start += len(choices[name])
        at = choices[name].index(current[name])
        weights = _sigmoid(row)
        weights[at] = 0.0
        if len(choices[name]) > 1:
            where[p] = _sigmoid(-row[at])
            to.append(weights / weights.sum())
        else:
            to.append(weights)
    where /= where.sum()
    return MutationProbabilities(names, tuple(current[n] for n in names), where,
                                 tuple(tuple(choices[n]) for n in names), tuple(to), bool(known.any()))


def gradient_mutate(
    space: SearchSpace, arch: Architecture, rng: np.random.Generator, op_gradients: Mapping[str, float]
) -> Architecture:
    """One gradient-guided mutation (paper 002 §3.2 / App. C) of ``arch``'s categorical parameters.

    One parameter is drawn by ``where`` and its new choice by ``to``
    (:func:`parameter_mutation_probabilities`). On NB201 the parameters are the operations on its
    fixed edges, so only node mutations apply; App. C's edge probabilities (mean gradient of the
    ``h = 1`` features an edge appears in) would need the edges' own features. An assignment that
    describes no architecture is drawn again, up to :data:`MAX_DRAWS` times, then the space's
    own mutation is used.
    """
    probs = parameter_mutation_probabilities(space, arch, op_gradients)
    params = dict(zip(probs.parameters, probs.current))
    for _ in range(MAX_DRAWS):
        k = int(rng.choice(len(probs.parameters), p=probs.where))
        new = probs.choices[k][int(rng.choice(len(probs.choices[k]), p=probs.to[k]))]
        child = space.from_parameters({**params, probs.parameters[k]: new})
        if child is not None:
            return child
    return space.mutate(arch, rng)


def supports_gradient_mutation(space: SearchSpace) -> bool:
    """True if ``space`` provides the ``categorical-parameters`` representation :func:`gradient_mutate`
    reads and at least one choice names a node label (:meth:`SearchSpace.parameter_label`)."""
    from nasviz.spaces.base import PARAMETERS

    if not space.provides(PARAMETERS):
        return False
    return any(space.parameter_label(name, c) is not None
               for name, choices in space.parameter_choices().items() for c in choices)


def _fallback(space: SearchSpace, op_gradients: Mapping[str, float] | None) -> str | None:
    """Why the pool cannot be gradient-guided (``None`` when it can)."""
    if not op_gradients:
        return "uniform mutation: no WL feature gradients available"
    if not supports_gradient_mutation(space):
        return (f"uniform mutation: space {space.name!r} has no categorical parameters whose choices name "
                "node labels to mutate")
    return None


def gradient_pool(
    space: SearchSpace,
    rng: np.random.Generator,
    parents: Sequence[Architecture],
    n: int = 100,
    *,
    op_gradients: Mapping[str, float] | None,
    exclude: Container[Architecture] = (),
    domain: Sequence[Architecture] | None = None,
    domain_set: Collection[Architecture] | None = None,
) -> Pool:
    """NAS-BOWL's pool: gradient-guided mutations of ``parents`` (paper 002 App. E.2 on NB201:
    the whole pool comes from mutation), topped up with random samples if the mutations run out.

    Falls back to the space's own mutation, and says so in ``info["fallback"]``, when there are
    no gradients (the kernel is not WL) or the space has no categorical parameters whose choices
    name node labels (the registry lets the pool run on every space for this reason).
    """
    flt = PoolFilter(exclude, domain_set if domain_set is not None else (set(domain) if domain is not None else None))
    info: dict[str, Any] = {}
    why_not = _fallback(space, op_gradients)
    if why_not is None:
        grads = dict(op_gradients or {})

        def mutate(a: Architecture, r: np.random.Generator) -> Architecture:
            return gradient_mutate(space, a, r, grads)

        label = "gradient"
        info["op_gradients"] = {k: float(v) for k, v in grads.items()}
    else:
        mutate, label = None, "mutation"
        info["fallback"] = why_not
    archs = mutation_pool(space, rng, list(parents), n, mutate=mutate, _filter=flt)
    origin = [label] * len(archs)
    if len(archs) < n:
        fresh = [a for a in random_pool(space, rng, n - len(archs), exclude=AnyOf(exclude, flt.taken), domain=domain) if flt.accept(a)]
        archs += fresh
        origin += ["random"] * len(fresh)
    return Pool(archs, origin, info)
