"""Kernels for the dashboard's views: one :class:`KernelSet` per browser session, never shared.

Kernels keep per-architecture work between calls (prepared graphs, measures), which is what
makes a live view cheap on its next refresh, but it also makes a kernel object mutable. The
dashboard used to keep one instance per kernel name in a process-wide cache, so every browser
session computed with (and changed) the same objects. Now each session holds its own
:class:`KernelSet` (in the :class:`~nasviz.dashboard.watching.RunWatcher` it watches with, or in
its session state on the explorer pages); what is shared between sessions is only immutable
data (tables, and read-only result arrays cached by Streamlit).
"""

from __future__ import annotations

import threading
from typing import Mapping, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.kernels import Kernel, make_kernel
from nasviz.kernels.base import induced_distance  # re-exported: the Explorer pages call it from here
from nasviz.spaces import get_space
from nasviz.defaults import DEFAULT_SPACE


class KernelSet:
    """The kernels one session computes with, by ``(kernel name, space name)``, built on first use
    by :func:`nasviz.kernels.make_kernel` for that space (so TW reads its operation groups)."""

    def __init__(self) -> None:
        self._kernels: dict[tuple[str, str], Kernel] = {}
        self._lock = threading.Lock()  # a page's fragment and its full rerun may overlap

    def get(self, name: str, space: str = DEFAULT_SPACE) -> Kernel:
        key = (str(name), str(space))
        with self._lock:
            if key not in self._kernels:
                self._kernels[key] = make_kernel(name, space=get_space(space))
            return self._kernels[key]

    def __len__(self) -> int:
        return len(self._kernels)


def parse_archs(strings: Sequence[str], space: str = DEFAULT_SPACE) -> list[Architecture]:
    """Architectures from their strings; ``ValueError`` names the first bad one and its position."""
    sp = get_space(space)
    out = []
    for i, s in enumerate(strings):
        try:
            out.append(sp.parse(s))
        except ValueError as err:
            raise ValueError(f"architecture {i + 1} ({s!r}) is invalid: {err}") from None
    return out


def theta_vector(kernel: Kernel, theta: Mapping[str, float] | None) -> np.ndarray:
    """The kernel's hyperparameter vector with the values of ``theta`` (by name, as a
    :class:`~nasviz.state.GPFit` stores them); missing or unknown names keep their defaults."""
    values = kernel.default_theta()
    for i, h in enumerate(kernel.hyperparameters):
        if theta and theta.get(h.name) is not None:
            values[i] = float(theta[h.name])
    return values


def kernel_distance(kernel: Kernel, archs: Sequence[Architecture], theta: Mapping[str, float] | None = None) -> np.ndarray:
    """The distance ``(n, n)`` the kernel itself induces between ``archs`` with the GP's learned
    ``theta`` (defaults where missing): what the candidate-pool view embeds."""
    archs = list(archs)
    return induced_distance(kernel.combine(kernel.components(archs, archs), theta_vector(kernel, theta)))


def distance_components(kernel: Kernel, archs: Sequence[Architecture]) -> dict[str, np.ndarray]:
    """The kernel's distance components between ``archs``, each ``(n, n)``, read-only (the
    arrays may be cached and shown to several views)."""
    archs = list(archs)
    out = {name: np.array(D, dtype=float) for name, D in kernel.distances(archs, archs).items()}
    for D in out.values():
        D.setflags(write=False)
    return out
