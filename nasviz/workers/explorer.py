"""The explorer worker: ``python -m nasviz.workers.explorer JOB.json SERVER_PID``.

Computes one request of :mod:`nasviz.jobs.manager` (kernel matrices, a surrogate protocol, an
Interpretability fit) read from ``JOB.json`` (plain JSON) at
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

from nasviz.jobs.manager import request_from_json, save_arrays


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
    request = request_from_json(data)
    key = request.key
    try:
        arrays = request.compute()
    except ValueError as err:
        (spec.parent / f"{key}.error.txt").write_text(f"{request.label} cannot be computed: {str(err)[:300]}")
        return 1
    finally:
        spec.unlink(missing_ok=True)
    save_arrays(spec.parent / f"{key}.npz", arrays)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
