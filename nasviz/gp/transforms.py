"""Target transforms: observed ``y`` -> latent ``u`` -> standardised ``z``, and back.

The GP models ``z`` (shape ``(n,)``); this module maps targets into that space before a fit and
maps posterior moments back to ``y`` after a prediction.

``"standardize"``
    ``u = y``, ``z = (u - mean(u)) / std(u)``.
``"log_error"``
    Paper 002 (NAS-BOWL) App. D: "we transform the validation errors into log-scale, normalise
    the data and transform it back". For accuracy-like targets with a known maximum
    ``max_value`` (100 for percent), ``u = -log(max_value - y)`` (the sign flip keeps "higher is
    better"), then standardised. Predictions are mapped back with the exact moments of the
    resulting shifted log-normal ``y = max_value - exp(-u)``.
``"none"``
    ``z = u = y`` (zero prior mean in the original units).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TRANSFORMS = ("standardize", "log_error", "none")


@dataclass(frozen=True)
class TargetTransform:
    """One of :data:`TRANSFORMS` with its parameter ``max_value`` (used by ``"log_error"``)."""

    name: str = "standardize"
    max_value: float = 100.0

    def __post_init__(self) -> None:
        if self.name not in TRANSFORMS:
            raise ValueError(f"transform must be one of {', '.join(TRANSFORMS)}, got {self.name!r}")

    def to_latent(self, y: np.ndarray) -> np.ndarray:
        """``u`` (n,) from ``y`` (n,): identity, or ``-log(max_value - y)`` for ``log_error``."""
        if self.name != "log_error":
            return y
        bad = np.flatnonzero(y > self.max_value)
        if bad.size:
            raise ValueError(
                f"log_error transform needs y <= max_value={self.max_value}; y[{bad[0]}] = {y[bad[0]]}"
            )
        # y == max_value would give log(0): floor the error at a tiny fraction of the range.
        err = np.maximum(self.max_value - y, 1e-6 * max(abs(self.max_value), 1.0))
        return -np.log(err)

    def from_latent(self, u: np.ndarray) -> np.ndarray:
        """``y`` from ``u`` (any shape): the monotone inverse of :meth:`to_latent`, so latent
        quantiles map to ``y`` quantiles."""
        return self.max_value - np.exp(-u) if self.name == "log_error" else u

    def standardisation(self, u: np.ndarray) -> tuple[float, float]:
        """``(mean, std)`` with ``z = (u - mean) / std``; ``(0, 1)`` for ``"none"``, and
        ``std = 1`` when the targets are constant (no scale to learn from)."""
        if self.name == "none":
            return 0.0, 1.0
        mu = float(np.mean(u))
        sd = float(np.std(u))
        return mu, (sd if sd > 1e-12 else 1.0)

    def moments(self, mean_u: np.ndarray, second: np.ndarray, full_cov: bool) -> tuple[np.ndarray, np.ndarray]:
        """Posterior moments in ``y`` units from those of ``u``.

        ``mean_u`` (m,); ``second`` is the covariance (m, m) if ``full_cov`` else the variance
        (m,). Returns ``mean (m,)`` and ``cov (m, m)`` or ``std (m,)``. For ``log_error`` these
        are the exact moments of the shifted log-normal ``y = max - exp(-u)``:
        ``E y = max - exp(-mu + v/2)``,
        ``Cov(y_i, y_j) = exp(-mu_i - mu_j + (v_i + v_j)/2) (exp(S_ij) - 1)``.
        """
        if self.name != "log_error":
            return mean_u, (second if full_cov else np.sqrt(np.maximum(second, 0.0)))
        var_u = np.diag(second) if full_cov else second
        e_mean = np.exp(-mean_u + 0.5 * var_u)
        mean = self.max_value - e_mean
        if full_cov:
            return mean, np.outer(e_mean, e_mean) * np.expm1(second)
        return mean, e_mean * np.sqrt(np.expm1(var_u))

    def noise_variance(self, var_u: float, u_train: np.ndarray) -> float:
        """A noise variance ``var_u`` in ``u`` units expressed in ``y`` units.

        Exact for ``standardize`` / ``none``. For ``log_error`` the noise is homoscedastic in
        ``u``; it is reported by the delta method at the median training error ``max - y``
        (``var_u * median(exp(-u))^2``), ``u_train`` shape ``(n,)``.
        """
        if self.name != "log_error":
            return float(var_u)
        return float(var_u * np.median(np.exp(-u_train)) ** 2)


__all__ = ["TRANSFORMS", "TargetTransform"]
