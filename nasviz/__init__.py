"""nasviz: see neural architecture search work.

The engine behind the dashboard: architectures and search spaces (:mod:`nasviz.spaces`),
objectives (:mod:`nasviz.objectives`), kernels, Gaussian processes, strategies and the search
loop. See the README for the two commands that run the app and the tests.
"""

from nasviz.arch import Architecture

__version__ = "0.1.0"

__all__ = ["Architecture", "__version__"]
