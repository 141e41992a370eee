"""Explorer computations (kernel matrices, surrogate protocols, Interpretability fits, a run's
network retrained for download) run as budgeted, cached, cancellable jobs in worker processes:
:mod:`nasviz.jobs.manager` runs them, :mod:`nasviz.workers.explorer` computes one."""
