"""ARCHITECTURE.md's kernel rule: a kernel's configuration (its public attributes) does not change
when it computes covariances. What it keeps from the architectures it saw (the edit kernel's
reference set, a graph kernel's fitted vocabulary, memoised distances) is private state, and
``last_jitter`` is a diagnostic of the last Gram matrix; the GP's fitted state lives in the GP.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from nasviz.components import kernels_for
from nasviz.kernels import make_kernel
from nasviz.spaces import get_space

#: Public attributes that report on the last call instead of configuring the kernel.
DIAGNOSTICS = frozenset({"last_jitter"})


def public_state(value, depth: int = 0):
    """``value``'s public attributes, recursively for objects (a tree's memoised paths are private),
    else its pickled bytes (arrays and containers compare by value)."""
    if hasattr(value, "__dict__") and not isinstance(value, type) and depth < 4:
        return {k: public_state(v, depth + 1) for k, v in vars(value).items() if not k.startswith("_")}
    return pickle.dumps(value)


def configuration(kernel) -> dict[str, object]:
    """The kernel's public attributes but its diagnostics, as :func:`public_state`."""
    return {k: public_state(v) for k, v in vars(kernel).items() if not k.startswith("_") and k not in DIAGNOSTICS}


@pytest.mark.slow
@pytest.mark.parametrize("space_name", ["nb201", "cnn"])
def test_computing_covariances_leaves_a_kernels_configuration_unchanged(space_name):
    space = get_space(space_name)
    rng = np.random.default_rng(0)
    first, second = space.sample(rng, 3), space.sample(rng, 5)
    checked = []
    for name in kernels_for(space_name):
        kernel = make_kernel(name, space)
        before = configuration(kernel)
        kernel.components(first, first)
        kernel.components(second, second)  # a different, larger training set
        kernel.components(second, first)
        changed = sorted(k for k, v in configuration(kernel).items() if before.get(k) != v)
        assert changed == [] and set(configuration(kernel)) == set(before), (name, changed)
        checked.append(name)
    assert len(checked) >= 3, checked
