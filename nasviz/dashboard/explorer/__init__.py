"""Computations behind the explorer pages, one module per concern. Plain data in, plain data
out: no Streamlit, no plotting (figures are in :mod:`nasviz.viz`), no benchmark code.

* :mod:`.samples`: architectures with values, from a table or a run (every page);
* :mod:`.kernels`: distance components, Gram matrices, surrogate quality (Kernels page);
* :mod:`.pairs`: two architectures compared kernel by kernel, OT plans, neighbours (Architectures);
* :mod:`.interpretation`: WL feature gradients, gradient-guided mutation (Interpretability);
* :mod:`.comparison`: runs side by side, parallel coordinates (Compare).

Kernels come from the caller's :class:`~nasviz.dashboard.kernels.KernelSet` (one per browser
session), tables from :func:`nasviz.dashboard.sources.table_from_path`.
"""
