"""A trained run's best network retrained and exported as an explorer job (:mod:`nasviz.jobs.manager`).

Most runs keep no trained weights (only warm-starting strategies need them), so exporting their
best network trains it again from the run's stored config (:mod:`nasviz.export`). An
:class:`ExportRequest` does that in a worker process, held to the same budgets as the explorer's
other jobs (its estimate: the search's own training time of that network), with Cancel; the
``.zip`` comes back as a plain ``uint8`` array.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nasviz.jobs.request import JobRequest


@dataclass(frozen=True)
class ExportRequest(JobRequest):
    """The ``.zip`` (TorchScript + ``network.json``) of network ``arch`` of run ``run_id`` in the
    store at ``store``, retrained if the run did not keep its weights. ``created``: the run's
    creation time, so a deleted run's id given to a new run is another request. Its ``key`` hashes
    these inputs alone, not the store file's identity: the result depends on the run's stored
    config only (same split, settings and seed: the same training), not on the file's other changes."""

    store: str
    run_id: int
    arch: str
    created: float

    @property
    def label(self) -> str:
        return f"the export of run {self.run_id}'s network"

    def to_json(self) -> dict:
        return {"kind": "export", "store": self.store, "run_id": self.run_id, "arch": self.arch,
                "created": self.created}

    @classmethod
    def from_json(cls, data: dict) -> "ExportRequest":
        return cls(str(data["store"]), int(data["run_id"]), str(data["arch"]), float(data["created"]))

    def compute(self) -> dict[str, np.ndarray]:
        """``{"zip": uint8 array}`` (in the worker process)."""
        from nasviz.export import export_zip

        return {"zip": np.frombuffer(export_zip(self.store, self.run_id, arch=self.arch), dtype=np.uint8)}

    @staticmethod
    def result(arrays: dict[str, np.ndarray]) -> bytes:
        return arrays["zip"].tobytes()
