"""The Interpretability page's computation as an explorer job (:mod:`nasviz.jobs.manager`).

An :class:`InterpretRequest` names a table file, a metric, the sample's size and seed; its worker
draws the same sample, fits the WL GP and computes its feature gradients
(:func:`nasviz.dashboard.explorer.interpretation.fit_wl`) and, for a space with operation slots,
the slot importances (a second GP, with the slot kernel, predicting shuffled samples). The result
travels as plain arrays (strings as NumPy unicode arrays, never pickled objects) and is rebuilt in
the page as an :class:`InterpretResult`. The page's ``Top features`` is not an input: it only
chooses what to show of the same fit (:func:`~nasviz.dashboard.explorer.interpretation.interpret_fit`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from nasviz.jobs.request import TableJobRequest

#: A slot importance needs this many architectures (:func:`~nasviz.dashboard.explorer.interpretation.slot_importance`).
MIN_IMPORTANCE_SAMPLE = 5


@dataclass
class InterpretResult:
    """What an :class:`InterpretRequest` computes: ``fit`` a
    :class:`~nasviz.dashboard.explorer.interpretation.WLFit`, ``importance`` a
    :class:`~nasviz.dashboard.explorer.interpretation.SlotImportance` (``None`` for a space
    without operation slots or a sample under :data:`MIN_IMPORTANCE_SAMPLE`)."""

    fit: Any
    importance: Any | None


@dataclass(frozen=True)
class InterpretRequest(TableJobRequest):
    """A WL GP with feature gradients (and slot importances) on ``n`` architectures drawn with
    ``seed`` from the table at ``table``."""

    space: str
    metric: str
    n: int
    seed: int

    @property
    def label(self) -> str:
        return "the WL GP and its feature gradients"

    def to_json(self) -> dict:
        return {"kind": "interpret", "table": self.table, "space": self.space, "metric": self.metric,
                "n": self.n, "seed": self.seed}

    @classmethod
    def from_json(cls, data: dict) -> "InterpretRequest":
        return cls(str(data["table"]), str(data["space"]), str(data["metric"]), int(data["n"]), int(data["seed"]))

    def compute(self) -> dict[str, np.ndarray]:
        """The arrays of :class:`InterpretResult` (in the worker process)."""
        from nasviz.dashboard.explorer.interpretation import fit_wl, slot_importance
        from nasviz.dashboard.explorer.samples import sample_table
        from nasviz.dashboard.sources import table_from_path
        from nasviz.spaces import get_space
        from nasviz.spaces.base import OPERATION_SLOTS

        sample = sample_table(table_from_path(self.table, self.space), self.metric, self.n, self.seed)
        fit = fit_wl(sample, seed=self.seed)
        fg = fit.gradients
        arrays = {"strings": _texts(sample.strings), "values": np.asarray(sample.values, dtype=float),
                  "names": _texts(fg.names), "depths": np.asarray(fg.depths), "operations": _texts(fg.operations),
                  "gradients": np.asarray(fg.gradients), "counts": np.asarray(fg.counts),
                  "mean_gradient": np.asarray(fg.mean_gradient), "h": np.int64(fg.h),
                  "transform": np.str_(fit.transform), "fit_seconds": np.float64(fit.fit_seconds)}
        if get_space(self.space).provides(OPERATION_SLOTS) and len(sample.archs) >= MIN_IMPORTANCE_SAMPLE:
            imp = slot_importance(sample, seed=self.seed)
            arrays.update({"imp.slots": _texts(imp.slots), "imp.drop": imp.drop, "imp.se": imp.se,
                           "imp.baseline": np.float64(imp.baseline), "imp.repeats": np.int64(imp.repeats)})
        return arrays

    def result(self, arrays: dict[str, np.ndarray]) -> InterpretResult:
        from nasviz.dashboard.explorer.interpretation import SlotImportance, WLFit
        from nasviz.dashboard.explorer.samples import Sample
        from nasviz.dashboard.kernels import parse_archs
        from nasviz.interpret import FeatureGradients

        strings = [str(s) for s in arrays["strings"]]
        sample = Sample(parse_archs(strings, self.space), strings, np.array(arrays["values"]), self.metric, "table",
                        self.space)
        fg = FeatureGradients([str(s) for s in arrays["names"]], arrays["depths"],
                              [str(s) for s in arrays["operations"]], arrays["gradients"], arrays["counts"],
                              arrays["mean_gradient"], int(arrays["h"]))
        fit = WLFit(sample, fg, str(arrays["transform"]), float(arrays["fit_seconds"]))
        importance = None
        if "imp.slots" in arrays:
            importance = SlotImportance([str(s) for s in arrays["imp.slots"]], arrays["imp.drop"], arrays["imp.se"],
                                        float(arrays["imp.baseline"]), int(arrays["imp.repeats"]))
        return InterpretResult(fit, importance)


def _texts(items) -> np.ndarray:
    """Strings as a NumPy unicode array (saved and loaded without pickling, even when empty)."""
    return np.array([str(s) for s in items], dtype=str)
