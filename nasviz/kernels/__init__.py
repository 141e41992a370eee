"""Architecture kernels: one interface (:class:`~nasviz.kernels.base.Kernel`), one registry.

The kernels and their options are registered in :data:`nasviz.components.KERNELS` (``python -m
nasviz components`` lists them); each kernel class declares the representations of a search
space it ``reads`` (:mod:`nasviz.spaces.base`). :func:`make_kernel` builds one by name, for a
space when one is given: the space's declared representations become the kernel's
configuration (its operation groups become the TW / OT operation tree, its layer tables OTMANN's
label tables: :meth:`~nasviz.kernels.base.Kernel.options_from_space`), so the same kernel reads
NAS-Bench-201 cells, layer networks or a space added later without knowing about them.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from nasviz.errors import ConfigError
from nasviz.kernels.base import Components, Hyperparameter, Kernel, feature_distances, induced_distance, make_psd

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace


def kernel_names() -> list[str]:
    """Registered kernel names, in registry order."""
    from nasviz.components import KERNELS

    return KERNELS.names()


def make_kernel(name: str, space: "SearchSpace | None" = None, **options: Any) -> Kernel:
    """Build the kernel registered as ``name`` (``"tw2g"`` is TW with ``ngram=2``).

    ``options`` are validated against the entry's declared options; keyword arguments the
    kernel's constructor takes but the registry does not list (a hand-made ``tree``, a
    ``seed``) pass through for programmatic use. With ``space``, a kernel that cannot read the
    space is refused (:class:`~nasviz.errors.ConfigError`), and the kernel class's
    :meth:`~nasviz.kernels.base.Kernel.options_from_space` fills in what it takes from the space
    (TW / OT: the operation groups as their tree; OTMANN: the layer kinds and label-mismatch
    table), unless the caller gave those options.
    """
    from nasviz.components import KERNELS

    entry = KERNELS.get(name)
    cls = entry.load()
    declared = {k: v for k, v in options.items() if entry.option(k) is not None}
    extra = {k: v for k, v in options.items() if entry.option(k) is None}
    accepted = inspect.signature(cls).parameters
    unknown = sorted(k for k in extra if k not in accepted)
    if unknown:
        known = ", ".join(o.name for o in entry.options) or "none"
        raise ConfigError(f"kernel {name!r} does not take option(s) {', '.join(unknown)}; it takes: {known}")
    config = {**entry.preset, **entry.parse_options(declared, owner=f"kernel {name!r}"), **extra}
    if space is not None:
        missing = sorted(cls.reads - space.provided_representations())
        if missing:
            raise ConfigError(f"kernel {name!r} cannot read the {space.name!r} space: it needs {', '.join(missing)}")
        for key, value in cls.options_from_space(space).items():
            config.setdefault(key, value)
        if "space" in accepted and "space" not in config:
            config["space"] = space  # kernels that read the slots read them through the space
    elif "space" in accepted and accepted["space"].default is inspect.Parameter.empty and "space" not in config:
        raise ConfigError(f"kernel {name!r} reads a space's categorical parameters: build it with space=...")
    return cls(**config)


__all__ = [
    "Components", "Hyperparameter", "Kernel", "feature_distances", "induced_distance", "kernel_names", "make_kernel",
    "make_psd",
]
