"""nasviz: see neural architecture search work.

The engine behind the dashboard: architectures and search spaces (:mod:`nasviz.spaces`),
objectives (:mod:`nasviz.objectives`), kernels, Gaussian processes, strategies and the search
loop. See the README for the two commands that run the app and the tests.
"""

from nasviz.arch import Architecture

__version__ = "0.1.0"

__all__ = ["Architecture", "__version__"]


def __getattr__(name: str):
    """``nasviz.optuna_sampler`` (the Optuna sampler) is imported on first use: nasviz itself imports
    without Optuna, the optional extra ``nasviz[peers]``."""
    if name == "optuna_sampler":
        import importlib

        return importlib.import_module("nasviz.optuna_sampler")
    raise AttributeError(f"module 'nasviz' has no attribute {name!r}")
