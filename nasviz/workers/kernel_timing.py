"""Time one kernel for an explorer request's estimate, apart from the web server:
``python -m nasviz.workers.kernel_timing KERNEL SPACE`` with the request's first architecture
strings as a JSON list on standard input; prints ``{"per_arch": s, "per_pair": s}``
(:func:`nasviz.dashboard.explorer.budget.measure`), or ``{"error": "..."}`` for architectures the
kernel cannot read.

Timing a slow kernel takes seconds of Python (the OTMANN transport, GraKeL's random walks, and
importing POT, which imports torch): in the server's own process that held its one interpreter
and every visitor's page waited (measured during ``bench classroom``).
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    kernel, space = argv[0], argv[1]
    strings = json.loads(sys.stdin.read())
    from nasviz.dashboard.explorer import budget
    from nasviz.dashboard.explorer.kernels import kernel_views
    from nasviz.dashboard.kernels import KernelSet, parse_archs

    try:
        archs = parse_archs(strings, space)
        kernels = KernelSet()
        # once untimed first: a fresh process pays its first call's imports and caches (POT's
        # import of torch: seconds), which the timing would read as seconds per architecture
        kernel_views(kernel, archs[:2], space, KernelSet())
        cost = budget.measure(lambda n: kernel_views(kernel, archs[:n], space, kernels))
    except ValueError as err:
        print(json.dumps({"error": str(err)[:300]}))
        return 1
    print(json.dumps({"per_arch": cost.per_arch, "per_pair": cost.per_pair}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
