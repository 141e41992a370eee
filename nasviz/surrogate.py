"""Surrogate quality: one trial of the protocol of paper 002 §5.1 (NAS-BOWL Table 1, Fig. 8).

A trial fits a GP by ML-II on some rows of a benchmark table and scores its posterior mean on
other rows by Spearman's rank correlation with the true values. The Kernels page runs it
(:func:`nasviz.dashboard.explorer.kernels.surrogate_quality`) and so does the benchmark
``python -m nasviz bench surrogate`` (:mod:`nasviz.bench.surrogate`), from this one definition.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import spearmanr

from nasviz.gp import GaussianProcess
from nasviz.kernels import make_kernel


def choose_transform(values: np.ndarray, transform: str) -> str:
    """``transform`` unless it is ``"auto"``: then ``log_error`` (paper 002 App. D) when every
    value lies in [0, 100] (accuracy in percent), else ``standardize``."""
    if transform != "auto":
        return transform
    return "log_error" if values.min() >= 0 and values.max() <= 100 else "standardize"


def trial(table, values: np.ndarray, train: np.ndarray, test: np.ndarray, kernel_name: str, options: dict,
          transform: str, *, n_restarts: int = 3, seed: int = 0, learn: bool = True) -> dict[str, Any]:
    """One split of the protocol: fit a GP (ML-II) on rows ``train`` of ``table``, predict rows ``test``.

    ``values`` has shape ``(len(table),)``; ``train`` / ``test`` are row indices. The kernel is
    built for the table's space. Returns ``spearman`` (rank correlation of the posterior mean
    with the truth; 0 if undefined), ``coverage_95``, ``fit`` (the :class:`~nasviz.gp.FitResult`)
    and, each of shape ``(len(test),)``, ``truth``, ``mean`` and ``std`` (posterior, without
    observation noise: the error bars of paper 002 Fig. 8).
    """
    gp = GaussianProcess(make_kernel(kernel_name, space=table.space, **options), transform=transform,
                         n_restarts=n_restarts, seed=seed, learn=learn)
    fit = gp.fit([table.archs[i] for i in train], values[train])
    test_archs = [table.archs[i] for i in test]
    mean, std = gp.predict(test_archs, full_cov=False)
    lo, hi = gp.predict_interval(test_archs, level=0.95, include_noise=True)
    truth = values[test]
    rho = spearmanr(mean, truth)[0]
    return {"spearman": float(rho) if np.isfinite(rho) else 0.0,
            "coverage_95": float(np.mean((truth >= lo) & (truth <= hi))), "fit": fit,
            "truth": truth, "mean": mean, "std": std}
