"""Architecture kernels: one interface (:class:`~nasviz.kernels.base.Kernel`), seven kernels.

``make_kernel(name, **options)`` builds one by name:

========  ==================================================================  ===========
name      kernel                                                              paper
========  ==================================================================  ===========
tw        tree-Wasserstein: n-gram operations + in/out-degree, Eq. (25)        000
wl        Weisfeiler-Lehman subtree kernel, depth chosen by likelihood         002
otmann    OTMANN distance ensemble, Eq. (6) / Sec. 4.1                         001
edit      Auto-Keras edit distance with a Bourgain embedding                   003
path      BANANAS-style path encoding                                          (000 baseline)
ot        plain optimal transport over node operations (not PD, jittered)      000 Sec. 4.1
gw        Gromov-Wasserstein between graphs (not PD, jittered)                 000 Sec. 4.1
========  ==================================================================  ===========
"""

from __future__ import annotations

import importlib

from nasviz.kernels.base import Components, Hyperparameter, Kernel, feature_distances, induced_distance, make_psd

_REGISTRY: dict[str, tuple[str, str]] = {
    "tw": ("nasviz.kernels.tw", "TreeWassersteinKernel"),
    "wl": ("nasviz.kernels.wl", "WLKernel"),
    "otmann": ("nasviz.kernels.otmann", "OTMANNKernel"),
    "edit": ("nasviz.kernels.edit", "EditDistanceKernel"),
    "path": ("nasviz.kernels.path", "PathEncodingKernel"),
    "ot": ("nasviz.kernels.ot", "OTKernel"),
    "gw": ("nasviz.kernels.ot", "GWKernel"),
}


def kernel_names() -> list[str]:
    return list(_REGISTRY)


def make_kernel(name: str, **options) -> Kernel:
    """Build the kernel registered as ``name`` with keyword ``options`` (e.g. ``ngram=2``)."""
    try:
        module_name, class_name = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown kernel {name!r}; known kernels: {', '.join(_REGISTRY)}") from None
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(**options)


__all__ = [
    "Components", "Hyperparameter", "Kernel", "feature_distances", "induced_distance", "kernel_names", "make_kernel",
    "make_psd",
]
