"""Overlapping the search with training: Auto-Keras's CPU / GPU parallelism (paper 003 Sec. 4.3).

"During training the current neural architecture on GPU, CPU generates the next neural
architecture": the strategy's ``ask`` for step ``t + 1`` (the GP fit and the acquisition
optimisation) runs while the networks of step ``t`` train. :func:`nasviz.runner.run_search` does
this with ``overlap=True``: it asks one step ahead, so step ``t + 1`` is proposed knowing the
results of steps ``1 .. t - 1`` only.

Determinism, and the trade-off. What a strategy knows when it proposes is fixed by the schedule,
never by timing: ask ``t + 1`` always comes after tell ``t - 1`` and before tell ``t``, and steps
are told in order (first in, first out, whichever finishes first). So a run with overlap gives
the same evaluations whether the training actually runs beside the ask (``concurrent=True``) or
after it in the same thread (``concurrent=False``), given the same seeds (tested in
``tests/test_overlap.py``). It cannot give the same evaluations as a run *without* overlap: there
the proposal of step ``t + 1`` knows step ``t``'s result, which with overlap does not exist yet.
That is the price of the overlap in the paper too; what it buys is wall-clock time (the ask's
seconds are hidden behind training, instead of adding to them). Strategies that cap their
acquisition work by measured seconds (``acq_fraction`` of NASBOT and Auto-Keras) depend on
timing with or without overlap; ``acq_fraction=None`` removes that.

An :class:`Evaluator` starts a step's evaluations and hands their results back later:
``start(archs)`` then ``wait(handle)``. Without overlap (or with ``concurrent=False``) ``start``
does nothing and ``wait`` evaluates. With overlap, an objective that runs on an executor
(:class:`~nasviz.executors.ExecutorObjective`, worker processes) submits at once; any other
objective trains in one background thread, so that steps still train one after another. Warm-start
plans (:attr:`planner`) are made in the calling thread when the step starts, as the ask that
proposed it left the strategy.
"""

from __future__ import annotations

import concurrent.futures as cf
from typing import Any, Sequence

from nasviz.arch import Architecture
from nasviz.fidelity.ladder import arch_of
from nasviz.objectives.base import Evaluation


class Evaluator:
    """Start evaluations now, collect them later (module docstring).

    Parameters
    ----------
    objective : anything with ``evaluate(archs)``; with ``submit(archs) -> futures`` (an
        executor objective) its workers are used, with a ``planner`` its plans are made at start
    concurrent : evaluate in the background (otherwise at :meth:`wait`)
    """

    def __init__(self, objective: Any, concurrent: bool) -> None:
        self.objective = objective
        self.concurrent = bool(concurrent)
        self._thread: cf.ThreadPoolExecutor | None = None

    def start(self, archs: Sequence[Architecture]) -> Any:
        archs = list(archs)
        if not self.concurrent:
            return ("later", archs, self._plans(archs))
        if hasattr(self.objective, "submit"):
            return ("futures", self.objective.submit(archs))
        if self._thread is None:
            self._thread = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="nasviz-train")
        plans = self._plans(archs)
        return ("future", self._thread.submit(self._evaluate, archs, plans))

    def wait(self, handle: Any) -> list[Evaluation]:
        kind = handle[0]
        if kind == "later":
            return self._evaluate(handle[1], handle[2])
        if kind == "futures":
            return [f.result() for f in handle[1]]
        return handle[1].result()

    def evaluate(self, archs: Sequence[Architecture]) -> list[Evaluation]:
        """Evaluate at once (what a run without overlap does)."""
        return self.objective.evaluate(list(archs))

    def close(self) -> None:
        if self._thread is not None:
            self._thread.shutdown(wait=True)
            self._thread = None

    def _plans(self, archs: list[Architecture]) -> list | None:
        """Each proposal's plan, made in the calling thread: a warm start's network plan, and a
        budget's or an early-stopping rule's plan (whose records must not change under it)."""
        planner = getattr(self.objective, "planner", None)
        wrap = getattr(self.objective, "fidelity_plan", None)
        if hasattr(self.objective, "submit") or (planner is None and wrap is None):
            return None
        plans = [planner(arch_of(a)) if planner is not None else None for a in archs]
        return [wrap(a, p) for a, p in zip(archs, plans)] if wrap is not None else plans

    def _evaluate(self, archs: list[Architecture], plans: list | None) -> list[Evaluation]:
        if plans is None:
            return self.objective.evaluate(archs)
        return self.objective.evaluate(archs, plans)
