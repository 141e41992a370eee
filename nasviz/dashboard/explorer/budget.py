"""What an explorer request would cost, known before it starts, and the answer when it is too much.

The Kernels page computes every chosen kernel on N architectures: N (N + 1) / 2 pairs. A pair
costs from microseconds (TW, Hamming) to a tenth of a second (the random-walk graph kernel on a
DARTS cell), so "N up to 1000" ranges from a blink to ten CPU-hours. What a kernel costs is
*measured* for the kernel and the space in question, on the request's own first architectures at
two sizes (:func:`measure`: what it costs per architecture, such as WL's features, apart from
what it costs per pair; the pages time it in a child process, :func:`measured_in_child`, and keep
it per kernel and space (:func:`kept`) for the server process's life, for every session and page), and the request's
estimate follows from N (:class:`Estimate`). A request over the operator's ``max_explorer_seconds``
(``NASVIZ_MAX_EXPLORER_SECONDS``, :class:`~nasviz.settings.Limits`) is refused with one sentence
that says what would fit (:func:`refusal`).

The surrogate protocol (paper 002 §5.1) fits a GP per trial and kernel on ``n_train`` architectures
and predicts ``n_test``: its kernel matrices hold ``(n_train + n_test)^2 / 2`` pairs a trial, and
ML-II fitting costs a few times that (:data:`FIT_FACTOR`). The Interpretability page's WL GP is the
same with one trial and N architectures.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

#: Sizes a kernel is timed at before a request (its first architectures): two sizes separate what
#: it costs per architecture (features, graph reductions) from what it costs per pair.
CALIBRATION_SIZES = (4, 8)
#: A GP fitted by ML-II evaluates its kernel matrix and its Cholesky factor many times: the
#: protocol's cost counts its kernel work this many times (a rough upper bound).
FIT_FACTOR = 3.0


def pairs(n: int) -> int:
    """Distinct pairs of ``n`` architectures (a symmetric matrix's upper triangle with its diagonal)."""
    return n * (n + 1) // 2


@dataclass(frozen=True)
class KernelCost:
    """What one kernel costs on one space: ``per_arch`` and ``per_pair`` seconds."""

    per_arch: float
    per_pair: float

    def seconds(self, n: int) -> float:
        """The kernel's matrix on ``n`` architectures."""
        return self.per_arch * n + self.per_pair * pairs(n)


def measure(compute: Callable[[int], object], sizes: tuple[int, int] = CALIBRATION_SIZES) -> KernelCost:
    """Time ``compute(n)`` (a kernel's matrix on the request's first ``n`` architectures) at two
    sizes and solve ``t(n) = per_arch n + per_pair pairs(n)`` (each at least 0: timings are noisy)."""
    times = []
    for n in sizes:
        start = time.perf_counter()
        compute(n)
        times.append(time.perf_counter() - start)
    (n1, n2), (t1, t2) = sizes, times
    # t2 - (n2/n1) t1 = per_pair (pairs(n2) - (n2/n1) pairs(n1))
    per_pair = max((t2 - n2 / n1 * t1) / (pairs(n2) - n2 / n1 * pairs(n1)), 0.0)
    per_arch = max((t1 - per_pair * pairs(n1)) / n1, 0.0)
    if per_arch == 0.0 and per_pair == 0.0:
        per_pair = max(t1, t2) / pairs(n2)
    return KernelCost(per_arch, per_pair)


_MEASURED: dict[tuple[str, str], KernelCost] = {}
_MEASURING: dict[tuple[str, str], threading.Lock] = {}
_MEASURING_LOCK = threading.Lock()


#: Seconds a kernel's timing may take in its child process; a slower one is counted as too costly.
TIMING_TIMEOUT = 60.0


def measure_in_child(kernel: str, space: str, strings: Sequence[str], timeout: float = TIMING_TIMEOUT) -> KernelCost:
    """:func:`measure` of ``kernel`` on the first :data:`CALIBRATION_SIZES` of ``strings``, run in a
    child process (``python -m nasviz.workers.kernel_timing``): seconds of a slow kernel's Python
    (and POT's import of torch) held the web server's one interpreter, and every visitor waited.
    A kernel that cannot read them raises ``ValueError``; one whose timing outlasts ``timeout``
    costs infinitely much (the request is refused as over budget)."""
    import json
    import subprocess
    import sys

    try:
        done = subprocess.run([sys.executable, "-m", "nasviz.workers.kernel_timing", str(kernel), str(space)],
                              input=json.dumps(list(strings[:max(CALIBRATION_SIZES)])), capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return KernelCost(math.inf, math.inf)
    lines = done.stdout.strip().splitlines()
    answer = json.loads(lines[-1]) if lines else {"error": f"the timing of {kernel} failed"}
    if "error" in answer:
        raise ValueError(answer["error"])
    return KernelCost(float(answer["per_arch"]), float(answer["per_pair"]))


def measured_in_child(kernel: str, space: str, strings: Sequence[str]) -> KernelCost:
    """:func:`measure_in_child`, :func:`kept` per kernel and space."""
    return kept(kernel, space, lambda: measure_in_child(kernel, space, strings), len(strings))


def kept(kernel: str, space: str, timing: Callable[[], KernelCost], available: int) -> KernelCost:
    """``timing()`` of ``kernel`` on ``space``, kept for the server process: a later request, from
    any session or page, reuses it. Visitors asking at once for a kernel not timed yet wait for one
    timing, not one each. ``available``: the request's architectures; fewer than the larger
    calibration size time smaller matrices than :func:`measure` assumes, so that timing serves
    this request only."""
    if available < max(CALIBRATION_SIZES):
        return timing()
    key = (str(kernel), str(space))
    with _MEASURING_LOCK:
        lock = _MEASURING.setdefault(key, threading.Lock())
    with lock:
        if key not in _MEASURED:
            _MEASURED[key] = timing()
        return _MEASURED[key]


@dataclass(frozen=True)
class Estimate:
    """A request's cost: each kernel's :class:`KernelCost` on ``n`` architectures, ``repeats``
    times (trials x :data:`FIT_FACTOR` for GP fits)."""

    costs: Mapping[str, KernelCost]
    n: int
    repeats: float = 1.0

    @property
    def seconds(self) -> float:
        return self.repeats * sum(c.seconds(self.n) for c in self.costs.values())

    def fits(self, budget_seconds: float) -> bool:
        return self.seconds <= budget_seconds


def importance_cost(slots: KernelCost, n_slots: int, repeats: int) -> KernelCost:
    """The slot kernel's :class:`KernelCost` scaled to what a slot importance
    (:func:`~nasviz.dashboard.explorer.interpretation.slot_importance`) does with it, counted
    like a GP fit (:data:`FIT_FACTOR` times a matrix): the fit, then one prediction of the sample
    per slot and shuffle, each a full ``n x n`` cross-covariance (twice a symmetric matrix's pairs)."""
    scale = (FIT_FACTOR + 2.0 * n_slots * repeats) / FIT_FACTOR
    return KernelCost(slots.per_arch * scale, slots.per_pair * scale)


def largest_n(costs: Mapping[str, KernelCost], budget_seconds: float, repeats: float = 1.0, extra: int = 0) -> int:
    """The largest ``n`` (plus ``extra`` fixed architectures) whose request fits ``budget_seconds``;
    0 when none does (bisection: the cost grows with ``n``)."""
    def cost(n: int) -> float:
        return Estimate(costs, n + extra, repeats).seconds

    if cost(1) > budget_seconds:
        return 0
    lo, hi = 1, 2
    while hi < 10**7 and cost(hi) <= budget_seconds:
        hi *= 2
    while lo < hi - 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if cost(mid) <= budget_seconds else (lo, mid)
    return lo


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def refusal(estimate: Estimate, budget_seconds: float, what: str, fits_n: int | None = None,
            noun: str = "N") -> str | None:
    """``None`` when the request fits ``budget_seconds``; else one sentence: what it would cost,
    which kernel costs most, and what fits (``fits_n``: the largest ``noun`` that fits with the
    same kernels)."""
    if estimate.fits(budget_seconds):
        return None
    dearest = max(estimate.costs, key=lambda k: estimate.costs[k].seconds(estimate.n))
    fits = (f"{noun} = {fits_n} fits with these kernels" if fits_n and fits_n >= 2
            else "no size fits with these kernels")
    hint = f", or leave out {dearest}" if len(estimate.costs) > 1 else ""
    share = estimate.repeats * estimate.costs[dearest].seconds(estimate.n)
    return (f"{what} would take about {_duration(estimate.seconds)} of CPU here ({dearest} alone "
            f"{_duration(share)}); this server allows {_duration(budget_seconds)} per request: {fits}{hint}.")


__all__ = ["CALIBRATION_SIZES", "Estimate", "FIT_FACTOR", "importance_cost", "KernelCost", "largest_n", "kept", "measure", "measure_in_child", "measured_in_child", "pairs",
           "refusal"]
