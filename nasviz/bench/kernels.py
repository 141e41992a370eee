"""Kernel speed: seconds for a full n x n kernel matrix from architectures, vectorised vs per pair.

``python -m nasviz bench kernels --space nb201 --n 1000 --json`` prints::

    {"kernels": {"tw": {"n": 1000, "seconds": ..., "plain": {"n": 200, "seconds": ...,
                  "vectorised_seconds": ..., "speedup": ...}}, "otmann": {"n": 200, ...}, ...}}

* ``seconds``: ``kernel.matrix(archs)`` -- components and the kernel at default
  hyperparameters -- for ``n`` architectures with a *fresh* kernel instance and freshly built
  architecture objects (nothing cached: reduction, per-architecture features and pair solutions
  are all part of the time). The best of ``--repeats`` runs. ``--n`` applies to the fast kernels
  (tw, wl, wl_oa, path); the per-pair solvers (otmann, edit, ot, gw) use ``--slow-n`` (200).
* ``plain``: the same distances at ``--plain-n`` (200) computed one pair at a time, as a
  straightforward implementation would, over the ``n (n - 1) / 2`` pairs of the upper triangle:
  the kernel's own single-pair routine (``pair_distances``: Eq. (2) edge by edge for TW, the
  path sets for path, POT's public ``ot.emd2`` / ``gromov_wasserstein2`` for ot / gw;
  ``edit_distance`` for edit; one
  ``transport_plan`` per ``nu_str`` for OTMANN; a fresh kernel's ``components([x], [z])`` for WL,
  which has no single-pair routine). ``vectorised_seconds`` is ``seconds`` at the same n, and
  ``speedup`` their ratio. By default 2,000 random pairs are timed and the time is extrapolated
  to all pairs (``"extrapolated": true``, ``pairs_timed``), because the slowest baselines take
  minutes; ``--plain-pairs 0`` times every pair.
* ``cpu_seconds``: CPU time of this process for the same best run (worker processes, which
  OTMANN may start, are not included); on a shared, busy machine it shows the work done when
  ``seconds`` is inflated by waiting for a core.
* ``jitter``: for the kernels that are not positive definite, the diagonal jitter the Gram
  needed (``last_jitter``), where the kernel reports it.

Kernels whose module does not exist are listed under ``"skipped"``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.errors import InputError
from nasviz.kernels import make_kernel
from nasviz.spaces import get_space, space_names

DESCRIPTION = "seconds to compute full kernel matrices from architectures (vectorised vs one pair at a time)"

#: benchmark entry -> (registry name, options, fast?)
KERNELS: dict[str, tuple[str, dict[str, Any], bool]] = {
    "tw": ("tw", {"ngram": 2}, True),
    "wl": ("wl", {"h_max": 2, "base": "dot"}, True),
    "wl_oa": ("wl", {"h_max": 2, "base": "oa"}, True),
    "path": ("path", {}, True),
    "otmann": ("otmann", {}, False),
    "edit": ("edit", {}, False),
    "ot": ("ot", {}, False),
    "gw": ("gw", {}, False),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--space", default="nb201", choices=space_names(), help="search space to sample from (default: nb201)")
    parser.add_argument("--n", type=int, default=1000, help="architectures for the fast kernels tw, wl, wl_oa, path (default: 1000)")
    parser.add_argument("--slow-n", type=int, default=200, help="architectures for otmann, edit, ot, gw (default: 200)")
    parser.add_argument("--plain-n", type=int, default=200, help="architectures for the per-pair baseline (default: 200; 0 skips it)")
    parser.add_argument(
        "--plain-pairs", type=int, default=2000,
        help="time this many random pairs of the plain baseline and extrapolate to all n(n-1)/2 (default: 2000; 0 = time all pairs)",
    )
    parser.add_argument("--kernels", default=",".join(KERNELS), help=f"comma-separated entries (default: {','.join(KERNELS)})")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs for the fast kernels (default: 3; slow ones: 1)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the sampled architectures (default: 0)")
    parser.add_argument("--json", action="store_true", help="print JSON (the only output format; accepted for symmetry)")


def _fresh(archs: Sequence[Architecture]) -> list[Architecture]:
    """New objects equal to ``archs``, with empty caches (no reduction done yet)."""
    return [Architecture(a.labels, a.edges, a.widths) for a in archs]


def _time_matrix(name: str, options: dict[str, Any], archs: Sequence[Architecture], repeats: int) -> tuple[float, float, Any]:
    """Best wall-clock and CPU seconds (this process) of ``kernel.matrix`` over ``repeats`` runs."""
    best, best_cpu, kernel = float("inf"), float("inf"), None
    for _ in range(max(1, repeats)):
        fresh = _fresh(archs)
        kernel = make_kernel(name, **options)
        start, start_cpu = time.perf_counter(), time.process_time()
        K = kernel.matrix(fresh)
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
        if K.shape != (len(archs), len(archs)) or not np.all(np.isfinite(K)):
            raise RuntimeError(f"kernel {name} returned a bad matrix of shape {K.shape}")
    return best, best_cpu, kernel


def _pair_routine(name: str, options: dict[str, Any]) -> tuple[str, Callable[[Architecture, Architecture], Any]]:
    kernel = make_kernel(name, **options)
    if hasattr(kernel, "pair_distances"):
        return "pair_distances", kernel.pair_distances
    if name == "edit":
        from nasviz.kernels.edit import edit_distance

        return "edit_distance", lambda x, z: edit_distance(x, z, kernel.lam, kernel.cell_width)
    if name == "otmann":
        from nasviz.kernels.otmann import transport_plan

        nus = kernel.nu_str
        return "transport_plan per nu_str", lambda x, z: [transport_plan(x, z, nu) for nu in nus]
    return "fresh kernel components([x], [z])", lambda x, z: make_kernel(name, **options).components([x], [z])


def _time_plain(name: str, options: dict[str, Any], archs: Sequence[Architecture], n_pairs: int, rng) -> dict[str, Any]:
    method, routine = _pair_routine(name, options)
    fresh = _fresh(archs)
    n = len(fresh)
    iu, ju = np.triu_indices(n, 1)
    total = len(iu)
    extrapolated = 0 < n_pairs < total
    if extrapolated:
        pick = rng.choice(total, size=n_pairs, replace=False)
        iu, ju = iu[pick], ju[pick]
    start = time.perf_counter()
    for i, j in zip(iu.tolist(), ju.tolist()):
        routine(fresh[i], fresh[j])
    seconds = time.perf_counter() - start
    out: dict[str, Any] = {"n": n, "pairs": total, "method": method}
    if extrapolated:
        out.update(extrapolated=True, pairs_timed=int(len(iu)), seconds=seconds * total / len(iu))
    else:
        out["seconds"] = seconds
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    for flag in ("n", "slow_n"):
        if getattr(args, flag) < 2:
            raise InputError(f"--{flag.replace('_', '-')} must be at least 2")
    wanted = [k.strip() for k in args.kernels.split(",") if k.strip()]
    unknown = [k for k in wanted if k not in KERNELS]
    if unknown:
        raise InputError(f"unknown kernel entries {', '.join(unknown)}; known: {', '.join(KERNELS)}")
    space = get_space(args.space)
    rng = np.random.default_rng(args.seed)
    largest = max(args.n, args.slow_n, args.plain_n)
    pool = space.sample(rng, largest)
    result: dict[str, Any] = {
        "space": args.space,
        "seed": args.seed,
        "note": "wall-clock seconds on this machine; fresh kernel and architecture objects per run",
        "kernels": {},
        "skipped": {},
    }
    for entry in wanted:
        name, options, fast = KERNELS[entry]
        n = args.n if fast else args.slow_n
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # POT's convergence chatter on tiny problems
            seconds, cpu, kernel = _time_matrix(name, options, pool[:n], args.repeats if fast else 1)
            info: dict[str, Any] = {"n": n, "seconds": round(seconds, 4), "cpu_seconds": round(cpu, 4)}
            if options:
                info["options"] = options
            if hasattr(kernel, "last_jitter") and not kernel.positive_definite:
                if name == "otmann" and hasattr(kernel, "psd_matrix"):
                    kernel.psd_matrix(kernel.components(pool[:n], pool[:n]))
                info["jitter"] = float(kernel.last_jitter)
            if args.plain_n >= 2:
                plain = _time_plain(name, options, pool[: args.plain_n], args.plain_pairs, rng)
                same_n = seconds if n == args.plain_n else _time_matrix(name, options, pool[: args.plain_n], args.repeats if fast else 1)[0]
                plain["seconds"] = round(plain["seconds"], 4)
                plain["vectorised_seconds"] = round(same_n, 4)
                plain["speedup"] = round(plain["seconds"] / max(same_n, 1e-9), 1)
                info["plain"] = plain
        result["kernels"][entry] = info
    return result
