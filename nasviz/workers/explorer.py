"""The explorer worker: ``python -m nasviz.workers.explorer JOB.json SERVER_PID``.

Computes one :class:`~nasviz.jobs.manager.KernelRequest` read from ``JOB.json`` (plain JSON) at
low priority, writes the result beside it as ``KEY.npz`` (or a one-line ``KEY.error.txt`` for an
input the kernel cannot read) and exits. It also exits when the server process that started it
is gone, so an orphaned job does not keep computing.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

from nasviz.jobs.manager import KernelRequest, KernelResult, save_result


def compute(request: KernelRequest) -> KernelResult:
    """The kernel's distance components and Gram matrix on the request's architectures."""
    from nasviz.dashboard.explorer.kernels import kernel_views
    from nasviz.dashboard.kernels import parse_archs

    distances, gram = kernel_views(request.kernel, parse_archs(request.strings, request.space), request.space)
    return KernelResult(dict(distances), gram)


def _exit_with_server(server_pid: int) -> None:
    while True:
        time.sleep(1.0)
        try:
            os.kill(server_pid, 0)
        except ProcessLookupError:
            os._exit(3)


def main(argv: list[str]) -> int:
    spec, server_pid = Path(argv[0]), int(argv[1])
    os.nice(10)  # browsing visitors' pages come first
    threading.Thread(target=_exit_with_server, args=(server_pid,), daemon=True).start()
    data = json.loads(spec.read_text())
    request = KernelRequest(str(data["kernel"]), str(data["space"]), tuple(str(s) for s in data["strings"]))
    key = request.key
    try:
        result = compute(request)
    except ValueError as err:
        (spec.parent / f"{key}.error.txt").write_text(f"the {request.kernel} kernel cannot compute this sample: "
                                                      f"{str(err)[:300]}")
        return 1
    finally:
        spec.unlink(missing_ok=True)
    save_result(spec.parent / f"{key}.npz", result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
