"""The additive WL + MLP kernel of NAS-BOWL App. B (paper 002 Eq. (B.1)).

::

    k_add(G, G') = alpha k_WL(G, G') + beta k_MLP(G, G'),   alpha + beta = 1,  alpha, beta >= 0

with the Weisfeiler-Lehman kernel (:class:`~nasviz.kernels.wl.WLKernel`, cosine-normalised, its
depth ``h`` chosen by marginal likelihood as usual) and the multiscale Laplacian graph kernel
(:class:`~nasviz.kernels.graph_kernels.MultiscaleLaplacianKernel`, normalised). Both have a unit
diagonal, so ``k_add`` has one too (NAS-BOWL's code renormalises the sum by its diagonal, which
changes nothing here). Paper 002 sets ``alpha = 0.7, beta = 0.3`` and mentions that the weights
could instead be learned by maximising the GP's marginal likelihood: ``learn_alpha=True`` does
that, with ``alpha`` a continuous hyperparameter in ``[0, 1]`` (``dk/dalpha = k_WL - k_MLP``).

The sum is positive semi-definite (a convex combination of PSD kernels). Components: the WL
components ``wl:h0 .. wl:hH`` and ``mlg:gram``; hyperparameters ``h`` (discrete) and, when learned,
``alpha``. The MLP part's values depend on the set its basis was fitted on, so the sum declares
``pairwise_components = False`` as MLP does.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.kernels.base import Components, Hyperparameter, Kernel, feature_distances
from nasviz.kernels.graph_kernels import GRAM, MultiscaleLaplacianKernel
from nasviz.kernels.wl import WLKernel

__all__ = ["AdditiveWLMLGKernel"]


class AdditiveWLMLGKernel(Kernel):
    """``alpha k_WL + (1 - alpha) k_MLP`` (module docstring).

    Parameters
    ----------
    alpha : float
        Weight of the WL kernel (paper: 0.7), in ``[0, 1]``; the default when learned.
    learn_alpha : bool
        Learn ``alpha`` by marginal likelihood instead of fixing it.
    h_max, base, direction : WL options (:class:`~nasviz.kernels.wl.WLKernel`).
    mlg_options : mapping, optional
        Options of :class:`~nasviz.kernels.graph_kernels.MultiscaleLaplacianKernel`.
    """

    name = "wl+mlg"
    positive_definite = True
    pairwise_components = False

    def __init__(self, alpha: float = 0.7, learn_alpha: bool = False, h_max: int = 2, base: str = "dot",
                 direction: str = "out", mlg_options: Mapping[str, Any] | None = None) -> None:
        if not 0.0 <= float(alpha) <= 1.0:
            raise ValueError(f"alpha must lie in [0, 1] (paper 002 Eq. (B.1)), got {alpha!r}")
        self.alpha = float(alpha)
        self.learn_alpha = bool(learn_alpha)
        self.wl = WLKernel(h_max=h_max, base=base, normalize=True, direction=direction)
        self.mlg = MultiscaleLaplacianKernel(**dict(mlg_options or {}))

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        hps = list(self.wl.hyperparameters)
        if self.learn_alpha:
            hps.append(Hyperparameter("alpha", self.alpha, (0.0, 1.0), log_scale=False))
        return hps

    def _weights(self, theta: Sequence[float] | None) -> tuple[np.ndarray, float]:
        theta = self.default_theta() if theta is None else np.asarray(theta, dtype=float)
        alpha = float(theta[1]) if self.learn_alpha else self.alpha
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must lie in [0, 1], got {alpha}")
        return theta[:1], alpha

    def components(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        wl = self.wl.components(archs_a, archs_b)
        out: Components = {f"wl:{k}": v for k, v in wl.items()}
        out[f"mlg:{GRAM}"] = self.mlg.components(archs_a, archs_b)[GRAM]
        return out

    def _parts(self, components: Mapping[str, np.ndarray], theta_wl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        wl = {k[3:]: v for k, v in components.items() if k.startswith("wl:")}
        try:
            return self.wl.combine(wl, theta_wl), np.asarray(components[f"mlg:{GRAM}"], dtype=float)
        except KeyError as exc:
            raise ValueError(f"components lack {exc.args[0]!r}; compute them with AdditiveWLMLGKernel.components") from None

    def combine(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> np.ndarray:
        """Eq. (B.1) with the WL depth ``theta[0]`` and ``alpha`` (``theta[1]`` when learned)."""
        theta_wl, alpha = self._weights(theta)
        k_wl, k_mlg = self._parts(components, theta_wl)
        return alpha * k_wl + (1.0 - alpha) * k_mlg

    def combine_with_gradients(self, components: Mapping[str, np.ndarray],
                               theta: Sequence[float] | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
        """``h`` is discrete (zero gradient); ``dK/dalpha = k_WL - k_MLP``."""
        theta_wl, alpha = self._weights(theta)
        k_wl, k_mlg = self._parts(components, theta_wl)
        K = alpha * k_wl + (1.0 - alpha) * k_mlg
        grads = [np.zeros_like(K)] + ([k_wl - k_mlg] if self.learn_alpha else [])
        return K, grads

    def diagonal_components(self, archs: Sequence[Architecture]) -> dict[str, np.ndarray]:
        """Both parts are normalised: every diagonal component is 1 (0 for WL's empty graphs)."""
        out = {f"wl:{k}": v for k, v in self.wl.diagonal_components(archs).items()}
        out[f"mlg:{GRAM}"] = np.ones(len(archs))
        return out

    def distances(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        """Feature-space distance of the kernel at the default hyperparameters."""
        K = self.combine(self.components(archs_a, archs_b))
        return {"additive": feature_distances(K, np.ones(len(archs_a)), np.ones(len(archs_b)))}
