"""NAS-BOWL's gradient-guided mutation (paper 002 Sec. 3.2, App. C): which operation to mutate
and what to change it to follow the sigmoid of the negative GP feature gradients."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Collection, Container, Mapping, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.candidates.pools import PoolFilter, Pool, AnyOf, mutation_pool, random_pool

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def gradient_mutation_probabilities(
    ops: Sequence[str], operations: Sequence[str], op_gradients: Mapping[str, float]
) -> tuple[np.ndarray, np.ndarray]:
    """NAS-BOWL's pseudo-probabilities (paper 002 App. C) for a cell with operations ``ops``.

    ``op_gradients`` maps an operation label to the mean derivative of the GP posterior mean
    with respect to its ``h = 0`` WL feature (its count). Returns

    * ``where`` ``(len(ops),)``: probability of mutating each position,
      ``sigmoid(-g[op]) / sum`` -- operations that help accuracy are kept;
    * ``to`` ``(len(ops), len(operations))``: for each position, probability of each
      replacement, ``sigmoid(g[new]) / sum`` over the other operations (0 for the current one).

    Operations without a feature (``none`` and ``skip_connect`` vanish from the reduced graph
    the WL kernel reads) get gradient 0, i.e. sigmoid 1/2. Gradients are standardised first
    (App. C: "magnitudes of the gradients do not matter as much"; standardising keeps the
    sigmoid out of saturation whatever the metric's units).
    """
    names = list(operations)
    g = np.array([float(op_gradients.get(op, 0.0)) for op in names])
    known = np.array([op in op_gradients for op in names])
    if known.any():
        sd = float(np.std(g[known]))
        if sd > 0:
            g = np.where(known, g / sd, 0.0)
    index = {op: i for i, op in enumerate(names)}
    current = np.array([index[op] for op in ops])
    where = _sigmoid(-g[current])
    where /= where.sum()
    to = np.tile(_sigmoid(g), (len(ops), 1))
    to[np.arange(len(ops)), current] = 0.0
    to /= to.sum(axis=1, keepdims=True)
    return where, to


def gradient_mutate(
    space: SearchSpace, arch: Architecture, rng: np.random.Generator, op_gradients: Mapping[str, float]
) -> Architecture:
    """One gradient-guided mutation of a cell (paper 002 §3.2 / App. C).

    Needs a space with the ``operation-slots`` representation (NAS-Bench-201's six edges). In that
    space the operations *are* the nodes of the DAG and its edges are fixed, so only node
    mutations apply; App. C's edge probabilities (mean gradient of the
    ``h = 1`` features an edge appears in) would need a space with mutable edges.
    """
    ops = list(space.slots(arch))
    choices = space.slot_choices()
    where, to = gradient_mutation_probabilities(ops, choices, op_gradients)
    k = int(rng.choice(len(ops), p=where))
    ops[k] = choices[int(rng.choice(len(choices), p=to[k]))]
    return space.from_slots(ops)


def supports_gradient_mutation(space: SearchSpace) -> bool:
    """True if ``space`` provides the ``operation-slots`` representation :func:`gradient_mutate` needs."""
    from nasviz.spaces.base import OPERATION_SLOTS

    return space.provides(OPERATION_SLOTS)


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

    Falls back to uniform mutation, and says so in ``info["fallback"]``, when there are no
    gradients (the kernel is not WL) or the space has no per-operation mutation.
    """
    flt = PoolFilter(exclude, domain_set if domain_set is not None else (set(domain) if domain is not None else None))
    info: dict[str, Any] = {}
    if op_gradients and supports_gradient_mutation(space):
        grads = dict(op_gradients)

        def mutate(a: Architecture, r: np.random.Generator) -> Architecture:
            return gradient_mutate(space, a, r, grads)

        label = "gradient"
        info["op_gradients"] = {k: float(v) for k, v in grads.items()}
    else:
        mutate, label = None, "mutation"
        info["fallback"] = (
            "uniform mutation: no WL feature gradients available"
            if not op_gradients
            else f"uniform mutation: space {space.name!r} has no operation slots to mutate"
        )
    archs = mutation_pool(space, rng, list(parents), n, mutate=mutate, _filter=flt)
    origin = [label] * len(archs)
    if len(archs) < n:
        fresh = [a for a in random_pool(space, rng, n - len(archs), exclude=AnyOf(exclude, flt.taken), domain=domain) if flt.accept(a)]
        archs += fresh
        origin += ["random"] * len(fresh)
    return Pool(archs, origin, info)
