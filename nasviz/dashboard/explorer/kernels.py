"""The Kernels page: each kernel's distance components and Gram matrix on a sample, and the
surrogate-quality protocol of paper 002 §5.1 (Fig. 8)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.dashboard.kernels import KernelSet, induced_distance
from nasviz.kernels.base import Kernel
from nasviz.objectives import Table
from nasviz.defaults import DEFAULT_SPACE

__all__ = ["SurrogateQuality", "induced_distance", "kernel_distance", "kernel_distances", "kernel_matrix",
           "kernel_views", "surrogate_quality"]


def _kernel(spec: str, space: str, kernels: KernelSet | None) -> Kernel:
    return (kernels or KernelSet()).get(spec, space)


def kernel_distances(spec: str, archs: Sequence[Architecture], space: str = DEFAULT_SPACE,
                     kernels: KernelSet | None = None) -> dict[str, np.ndarray]:
    """The kernel's distance components between ``archs``, each ``(n, n)`` (TW: ``operations``,
    ``in_degree``, ``out_degree`` as in paper 000 Fig. 10)."""
    archs = list(archs)
    return _kernel(spec, space, kernels).distances(archs, archs)


def kernel_matrix(spec: str, archs: Sequence[Architecture], space: str = DEFAULT_SPACE,
                  kernels: KernelSet | None = None) -> np.ndarray:
    """The Gram matrix ``(n, n)`` with the kernel's default hyperparameters."""
    k = _kernel(spec, space, kernels)
    archs = list(archs)
    return k.combine(k.components(archs, archs), k.default_theta())


def kernel_distance(spec: str, archs: Sequence[Architecture], space: str = DEFAULT_SPACE,
                    kernels: KernelSet | None = None) -> np.ndarray:
    """One distance per pair, the one the kernel induces with its default hyperparameters
    (:func:`induced_distance` of :func:`kernel_matrix`). Shape ``(n, n)``."""
    return induced_distance(kernel_matrix(spec, archs, space, kernels))


def kernel_views(spec: str, archs: Sequence[Architecture], space: str = DEFAULT_SPACE,
                 kernels: KernelSet | None = None) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Distance components (each ``(n, n)``) and the Gram matrix ``(n, n)`` with default
    hyperparameters, computing the expensive components once: for distance kernels (OTMANN,
    OT, GW, ...) the distance components *are* the kernel's components."""
    k = _kernel(spec, space, kernels)
    archs = list(archs)
    dist = k.distances(archs, archs)
    comps = dist if type(k).distances is Kernel.distances else k.components(archs, archs)
    return dist, k.combine(comps, k.default_theta())


@dataclass
class SurrogateQuality:
    """Paper 002 §5.1 for one kernel: Spearman's rho per trial ``(trials,)``, its mean and standard
    error, and the last trial's test set for Fig. 8: ``truth``, ``mean``, ``std`` each ``(n_test,)``."""

    kernel: str
    spearman: np.ndarray
    spearman_mean: float
    spearman_se: float
    coverage_95: float
    truth: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    transform: str


def surrogate_quality(table: Table, metric: str, spec: str, *, n_train: int = 50, n_test: int = 100,
                      trials: int = 5, seed: int = 0, n_restarts: int = 1,
                      on_trial: Callable[[int], None] | None = None) -> SurrogateQuality:
    """The rank-correlation protocol of paper 002 §5.1 (one trial is :func:`nasviz.surrogate.trial`):
    per trial ``n_train`` + ``n_test`` distinct rows, GP fitted by ML-II on the first, Spearman's
    rho of its posterior mean on the others. ``on_trial(i)`` is called after trial ``i`` (progress
    bars). ``ValueError`` if the table is too small or a count is below 1.
    """
    from nasviz.surrogate import choose_transform, trial

    metric = table.check_metric(metric)
    for name, v in (("training architectures", n_train), ("test architectures", n_test), ("trials", trials)):
        if int(v) < 1:
            raise ValueError(f"the number of {name} must be at least 1, got {v}")
    values = np.asarray(table.values[metric], dtype=float)
    ok = np.flatnonzero(np.isfinite(values))
    if n_train + n_test > len(ok):
        raise ValueError(f"{n_train} training + {n_test} test architectures exceed the {len(ok)} rows with a "
                         f"{metric} value")
    transform = choose_transform(values[ok], "auto")
    rhos, cover, last = [], [], None
    for i, child in enumerate(np.random.SeedSequence(seed).spawn(int(trials))):
        rng = np.random.default_rng(child)
        idx = ok[rng.choice(len(ok), n_train + n_test, replace=False)]
        last = trial(table, values, idx[:n_train], idx[n_train:], spec, {}, transform,
                     n_restarts=n_restarts, seed=int(rng.integers(2**31)))
        rhos.append(last["spearman"])
        cover.append(last["coverage_95"])
        if on_trial is not None:
            on_trial(i)
    rho = np.asarray(rhos)
    se = float(rho.std(ddof=1) / np.sqrt(len(rho))) if len(rho) > 1 else 0.0
    return SurrogateQuality(spec, rho, float(rho.mean()), se, float(np.mean(cover)), last["truth"], last["mean"],
                            last["std"], transform)
