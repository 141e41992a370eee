"""The catalogue: every search space, kernel, strategy, candidate pool, batch selector,
acquisition, objective and dataset nasviz has, registered once (see :mod:`nasviz.registry`).

CLI choices and help, the dashboard's select boxes, the compatibility checks and the
README's component table (``python -m nasviz components --markdown``) are generated from these
registries; the Search page builds one tab per entry of :data:`VIEWS` (:mod:`nasviz.dashboard.views`).

Compatibility (:func:`check_compatible`) follows from declared capabilities only:

* a kernel fits a space when the space provides every representation the kernel's class
  ``reads`` (:mod:`nasviz.spaces.base`);
* a strategy fits a space when its entry lists no ``spaces`` or lists that one, and, for model-based
  strategies, when its kernel fits; its pool may need a representation too (``nasbot-ea`` needs
  ``modifiers``);
* a batch selector that samples a diverse set (k-DPP) needs a batch of at least two;
* a strategy may need a representation (``needs``: the Optuna peers read ``categorical-parameters``) or
  an optional package (``requires``: ``(import name, what to pip install)``).

The catalogue is a package of small modules; everything is imported from here
(``from nasviz.components import STRATEGIES, problems``):

* :mod:`nasviz.components.registries`: the registries, the built-in spaces, kernels, pools, batch
  selectors, acquisitions, objectives, datasets and views, and the plugin groups;
* :mod:`nasviz.components.strategy_entries`: the built-in strategies;
* :mod:`nasviz.components.compatibility`: what fits what, and the one parse and check of a
  search's strategy options (:func:`checked_options`);
* :mod:`nasviz.components.choices`: what the page and the command line offer and default to;
* :mod:`nasviz.components.listings`: the catalogue as Markdown and text.
"""

from __future__ import annotations

from nasviz.components.registries import (ACQUISITIONS, BATCH_SELECTORS, DATASETS, KERNELS, OBJECTIVES,
                                          PLUGIN_GROUPS, POOLS, SPACES, STRATEGIES, VIEWS, load_plugins)
from nasviz.components.strategy_entries import DEFAULT_STRATEGY  # registers the strategies
from nasviz.components.compatibility import (IncompatibleError, check_compatible, checked_options,
                                             default_batch_size, kernel_fits, kernel_reads, kernels_for,
                                             package_available, problems, space_provides, strategy_kernel)
from nasviz.components.choices import default_strategy, is_multi_fidelity, model_never_fitted, strategies_for
from nasviz.components.listings import (CATALOGUE, README_BEGIN, README_END, catalogue_markdown, catalogue_text,
                                        readme_with_catalogue)
from nasviz.registry import set_read_hook

# Plugins are loaded at the first read of any registry, once every built-in entry is registered.
set_read_hook(load_plugins)

__all__ = [
    "ACQUISITIONS", "BATCH_SELECTORS", "CATALOGUE", "DATASETS", "DEFAULT_STRATEGY", "IncompatibleError", "KERNELS",
    "OBJECTIVES", "PLUGIN_GROUPS", "POOLS", "README_BEGIN", "README_END", "SPACES", "STRATEGIES", "VIEWS",
    "catalogue_markdown", "catalogue_text", "check_compatible", "checked_options", "default_batch_size",
    "default_strategy", "is_multi_fidelity", "kernel_fits", "kernel_reads", "kernels_for", "load_plugins",
    "model_never_fitted", "package_available", "problems", "readme_with_catalogue", "space_provides",
    "strategies_for", "strategy_kernel",
]
