"""The progress bar of a tabulation: one line on stderr with rate and ETA."""

from __future__ import annotations

import math
import sys
import time
from typing import TextIO


class ProgressBar:
    """A one-line text progress bar with rate and ETA, redrawn on ``stream`` (stderr)."""

    def __init__(self, total: int, done: int = 0, stream: TextIO | None = None, width: int = 30,
                 unit: str = "trainings") -> None:
        self.total, self.done, self.start_done = total, done, done
        self.stream = stream if stream is not None else sys.stderr
        self.width, self.unit = width, unit
        self.t0 = time.perf_counter()

    def update(self, n: int = 1, note: str = "") -> None:
        self.done += n
        elapsed = time.perf_counter() - self.t0
        rate = (self.done - self.start_done) / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else math.inf
        filled = int(self.width * self.done / max(self.total, 1))
        eta_text = f"{eta / 60:.1f} min" if math.isfinite(eta) else "?"
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} {self.unit}, "
            f"{rate:.2f}/s, ETA {eta_text} {note}"
        )
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()

