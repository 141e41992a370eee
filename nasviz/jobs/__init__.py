"""Explorer computations (kernel matrices) run as budgeted, cached, cancellable jobs in worker
processes: :mod:`nasviz.jobs.manager` runs them, :mod:`nasviz.workers.explorer` computes one."""
