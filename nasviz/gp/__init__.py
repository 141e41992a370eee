"""Gaussian-process regression on architecture kernels, with type-II maximum likelihood.

The modules follow the flow model -> posterior:

==================  ===========================================================================
``transforms``      targets ``y`` -> latent ``u`` -> standardised ``z`` and back
                    (standardize, log_error of paper 002 App. D, none)
``linalg``          the project's one PSD-repair policy (:func:`psd_factor` for solves,
                    :func:`psd_sqrt` for sampling), LAPACK solves, BLAS thread limits
``likelihood``      log marginal likelihood and gradient (paper 000 Eqs. (27), (28); R&W Eq.
                    2.30, Algorithm 2.1, Eq. 5.9) and ML-II fitting (multi-start L-BFGS-B,
                    discrete hyperparameters such as WL's depth ``h``)
``model``           :class:`GaussianProcess` (fit / predict), :class:`FitResult`; its kernel
                    components kept across fits: :class:`ComponentsCache` (``components_cache``)
``posterior``       predictive mean / covariance (paper 000 Eqs. (8), (9)), intervals, joint
                    posterior draws (:func:`sample_posterior`, Thompson sampling)
==================  ===========================================================================

Public names are importable from ``nasviz.gp`` and loaded on first use (PEP 562). The lazy
loading is what keeps the package free of import cycles: ``nasviz.kernels.base`` re-exports
:func:`make_psd` from :mod:`nasviz.linalg`, and :mod:`nasviz.gp.model` needs
``nasviz.kernels.base``; an ``__init__`` that imported the model eagerly would make importing the
kernels import the model, which imports the kernels.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    "GaussianProcess": "nasviz.gp.model",
    "FitResult": "nasviz.gp.model",
    "ComponentsCache": "nasviz.gp.components_cache",
    "TRANSFORMS": "nasviz.gp.transforms",
    "TargetTransform": "nasviz.gp.transforms",
    "PSD_REL_FLOOR": "nasviz.linalg",
    "SINGLE_THREAD_BELOW": "nasviz.linalg",
    "cholesky_with_jitter": "nasviz.linalg",
    "make_psd": "nasviz.linalg",
    "psd_factor": "nasviz.linalg",
    "psd_sqrt": "nasviz.linalg",
    "MarginalLikelihood": "nasviz.gp.likelihood",
    "fit_hyperparameters": "nasviz.gp.likelihood",
    "PosteriorSampler": "nasviz.gp.posterior",
    "TrainingPosterior": "nasviz.gp.posterior",
    "sample_posterior": "nasviz.gp.posterior",
}

if TYPE_CHECKING:  # what the lazy names resolve to, for type checkers and IDEs
    from nasviz.gp.likelihood import MarginalLikelihood, fit_hyperparameters
    from nasviz.linalg import (
        PSD_REL_FLOOR, SINGLE_THREAD_BELOW, cholesky_with_jitter, make_psd, psd_factor, psd_sqrt,
    )
    from nasviz.gp.components_cache import ComponentsCache
    from nasviz.gp.model import FitResult, GaussianProcess
    from nasviz.gp.posterior import PosteriorSampler, TrainingPosterior, sample_posterior
    from nasviz.gp.transforms import TRANSFORMS, TargetTransform


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


__all__ = sorted(_EXPORTS)
