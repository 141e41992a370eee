"""The Kernels page's computations as explorer jobs (:mod:`nasviz.jobs.manager`).

A :class:`KernelRequest` is one kernel's distance components and Gram matrix on a sample of
architectures, rebuilt in the page as a :class:`KernelResult`; a :class:`SurrogateRequest` is
the surrogate-quality protocol of one kernel on a table, rebuilt as
:class:`~nasviz.dashboard.explorer.kernels.SurrogateQuality`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nasviz.jobs.request import JobRequest, TableJobRequest


@dataclass(frozen=True)
class KernelRequest(JobRequest):
    """One kernel's distance components and Gram matrix on ``strings`` (architectures of ``space``)."""

    kernel: str
    space: str
    strings: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"the {self.kernel} matrices"

    def to_json(self) -> dict:
        return {"kind": "kernel", "kernel": self.kernel, "space": self.space, "strings": list(self.strings)}

    @classmethod
    def from_json(cls, data: dict) -> "KernelRequest":
        return cls(str(data["kernel"]), str(data["space"]), tuple(str(s) for s in data["strings"]))

    def compute(self) -> dict[str, np.ndarray]:
        """The arrays of :class:`KernelResult` (in the worker process)."""
        from nasviz.dashboard.explorer.kernels import kernel_views
        from nasviz.dashboard.kernels import parse_archs

        distances, gram = kernel_views(self.kernel, parse_archs(self.strings, self.space), self.space)
        return {"gram": gram, **{f"dist.{k}": v for k, v in distances.items()}}

    @staticmethod
    def result(arrays: dict[str, np.ndarray]) -> "KernelResult":
        return KernelResult({k[5:]: v for k, v in arrays.items() if k.startswith("dist.")}, arrays["gram"])


@dataclass(frozen=True)
class SurrogateRequest(TableJobRequest):
    """The surrogate-quality protocol (paper 002 §5.1) of one kernel on the table at ``table``."""

    space: str
    metric: str
    kernel: str
    n_train: int
    n_test: int
    trials: int
    seed: int

    @property
    def label(self) -> str:
        return f"the {self.kernel} surrogate protocol"

    def to_json(self) -> dict:
        return {"kind": "surrogate", "table": self.table, "space": self.space, "metric": self.metric,
                "kernel": self.kernel, "n_train": self.n_train, "n_test": self.n_test, "trials": self.trials,
                "seed": self.seed}

    @classmethod
    def from_json(cls, data: dict) -> "SurrogateRequest":
        return cls(str(data["table"]), str(data["space"]), str(data["metric"]), str(data["kernel"]),
                   int(data["n_train"]), int(data["n_test"]), int(data["trials"]), int(data["seed"]))

    def compute(self) -> dict[str, np.ndarray]:
        from nasviz.dashboard.explorer.kernels import surrogate_quality
        from nasviz.dashboard.sources import table_from_path

        q = surrogate_quality(table_from_path(self.table, self.space), self.metric, self.kernel,
                              n_train=self.n_train, n_test=self.n_test, trials=self.trials, seed=self.seed)
        return {"spearman": q.spearman, "spearman_mean": np.float64(q.spearman_mean),
                "spearman_se": np.float64(q.spearman_se), "coverage_95": np.float64(q.coverage_95),
                "truth": q.truth, "mean": q.mean, "std": q.std, "transform": np.str_(q.transform)}

    def result(self, arrays: dict[str, np.ndarray]):
        from nasviz.dashboard.explorer.kernels import SurrogateQuality

        return SurrogateQuality(self.kernel, arrays["spearman"], float(arrays["spearman_mean"]),
                                float(arrays["spearman_se"]), float(arrays["coverage_95"]), arrays["truth"],
                                arrays["mean"], arrays["std"], str(arrays["transform"]))


@dataclass
class KernelResult:
    """What a :class:`KernelRequest` computes: ``distances`` ``{component: (n, n)}`` and ``gram`` ``(n, n)``."""

    distances: dict[str, np.ndarray]
    gram: np.ndarray
