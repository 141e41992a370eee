"""The NASBOT kernel: an ensemble over OTMANN distances (paper 001 Sec. 4.1, Eq. (4)).

    k(x, x') = alpha * exp(-sum_i beta_i d_i^p) + alpha_bar * exp(-sum_i beta_bar_i dbar_i^p_bar)

over ``nu_str in {0.1, 0.2, 0.4, 0.8}`` with ``p = 1``, ``p_bar = 2`` (the paper's values). ``d_i``
is the OTMANN distance of :mod:`.transport` computed with ``nu_str = nu_str_i`` and ``dbar_i`` its
normalised counterpart. The distances for every ``nu_str`` are the kernel's components, so a GP
re-weights them without recomputing a single transport problem.

The kernel is an immutable configuration. Its hyperparameter defaults and bounds follow from the
configuration alone (:class:`OTMANNScales`): the paper samples the betas from a prior whose
bounds cannot depend on the data seen, and a kernel shared between searches or dashboard
sessions must not change with the order of their calls. :meth:`OTMANNKernel.hyperparameters_for`
derives data-dependent defaults from a given set of components as a pure function, for a caller
(a GP fit) that owns the result. The memo of solved pairs (:mod:`.memo`) is pure memoisation.

The kernel is not positive definite (``positive_definite = False``);
:meth:`OTMANNKernel.psd_matrix` adds the smallest jitter that makes a Gram matrix
Cholesky-factorable (:func:`~nasviz.kernels.base.make_psd`) and reports how much.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.kernels.base import Components, Hyperparameter, Kernel, make_psd
from nasviz.kernels.otmann.labels import BUILTIN, LabelTable
from nasviz.kernels.otmann.masses import ZETA
from nasviz.kernels.otmann.memo import DistanceMemo
from nasviz.kernels.otmann.paths import check_structure
from nasviz.kernels.otmann.transport import TransportPlan, transport_plan
from nasviz.spaces.base import LABELLED_DAG, LAYERS

#: The paper's nu_str ensemble (Sec. 4.1).
DEFAULT_NU_STR: tuple[float, ...] = (0.1, 0.2, 0.4, 0.8)
#: Typical ``d`` (mass units) behind the default ``beta_i``. Median ``d`` of random pairs: ~620
#: for NAS-Bench-201 cells (16 channels), ~2.4e4-3.4e4 for layer-space networks; this value lies
#: between them (geometric mean, rounded), so the bounds (1e-3..1e3 times the default) hold both.
DEFAULT_D_SCALE = 4000.0
#: Typical ``dbar`` (in [0, 1]) behind the default ``beta_bar_i``. Median of random pairs: ~0.5
#: for NAS-Bench-201 cells, ~0.8-0.9 for layer-space networks.
DEFAULT_DBAR_SCALE = 0.6
#: Bounds of every beta are ``default / BETA_RANGE .. default * BETA_RANGE``.
BETA_RANGE = 1e3


@dataclass(frozen=True)
class OTMANNScales:
    """Typical sizes of ``d_i`` and ``dbar_i`` per ``nu_str`` (tuples of length ``K``).

    They set the default betas of Eq. (4): ``beta_i = 1 / (K d_i^p)`` and ``beta_bar_i = 1 /
    (K dbar_i^p_bar)``, so a pair at exactly these distances gets ``exp(-1)`` in each half.
    """

    d: tuple[float, ...]
    dbar: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.d) != len(self.dbar) or not self.d:
            raise ValueError(f"OTMANNScales needs as many d as dbar scales (>= 1), got {len(self.d)} and {len(self.dbar)}")
        values = np.array(self.d + self.dbar, dtype=float)
        if not np.all(np.isfinite(values) & (values > 0)):
            raise ValueError(f"OTMANN scales must be finite and positive, got d={self.d}, dbar={self.dbar}")

    @classmethod
    def broadcast(cls, d: float | Sequence[float], dbar: float | Sequence[float], k: int) -> OTMANNScales:
        """Scales for ``k`` values of ``nu_str`` from one number each or ``k`` numbers each."""
        def per_nu(value: float | Sequence[float], name: str) -> tuple[float, ...]:
            values = np.atleast_1d(np.asarray(value, dtype=float))
            values = np.repeat(values, k) if values.shape == (1,) else values
            if values.shape != (k,):
                raise ValueError(f"{name} must be one number or {k} numbers (one per nu_str), got {value!r}")
            return tuple(float(v) for v in values)

        return cls(per_nu(d, "d_scale"), per_nu(dbar, "dbar_scale"))

    @classmethod
    def from_distances(cls, d: np.ndarray, dbar: np.ndarray, fallback: OTMANNScales) -> OTMANNScales:
        """The medians of the positive entries of each ``d[i]`` / ``dbar[i]`` (arrays ``(K, n, m)``),
        a pure function of them; ``fallback``'s values where a component has no positive entry."""
        sd, sb = list(fallback.d), list(fallback.dbar)
        for i in range(len(sd)):
            vd, vb = d[i][d[i] > 0], dbar[i][dbar[i] > 0]
            if len(vd):
                sd[i], sb[i] = float(np.median(vd)), float(np.median(vb))
        return cls(tuple(sd), tuple(sb))


class OTMANNKernel(Kernel):
    """The NASBOT kernel ensemble over OTMANN distances (paper 001 Sec. 4.1, Eq. (4)).

    Parameters
    ----------
    nu_str : sequence of float
        Structural trade-offs of the ensemble (paper: 0.1, 0.2, 0.4, 0.8).
    p, p_bar : float
        Exponents of ``d`` and ``dbar`` in Eq. (4) (paper: 1 and 2).
    zeta : float
        Mass fraction of input / output / decision layers (paper: 0.1).
    cell_channels : int
        Channels of every operation in cells without widths (NB201).
    structure : {"paths", "grouped"}
        ``"paths"``: the six path lengths of Sec. 3; ``"grouped"``: App. A's average with the
        path lengths through each layer group.
    d_scale, dbar_scale : float or sequence of float
        Typical ``d`` and ``dbar`` (one number, or one per ``nu_str``) that set the default
        betas and their bounds (:class:`OTMANNScales`; defaults :data:`DEFAULT_D_SCALE`,
        :data:`DEFAULT_DBAR_SCALE`).
    n_jobs : int or None
        Worker processes for large matrices. ``None``: up to 2 (as many as the load average
        leaves idle) when more than ``parallel_min_pairs`` transport problems are new (a pool
        costs ~0.1 s to start and is slower than one process on a saturated machine).
    layer_kinds, label_mismatch : optional
        A space's ``layers`` representation (``label -> kind``; ``(labels, matrix)``), which
        ``make_kernel("otmann", space=...)`` passes (:meth:`options_from_space`). Without them
        the built-in tables (:data:`~nasviz.kernels.otmann.labels.BUILTIN`: NB201 cells, NASBOT's
        MLP and CNN layers) are used.

    Components (each ``(len(a), len(b))``): ``"d_{nu}"`` and ``"dbar_{nu}"`` per ``nu_str``.
    Hyperparameters: ``alpha``, ``alpha_bar``, ``beta_{nu}``, ``beta_bar_{nu}``.
    """

    name = "otmann"
    reads = frozenset({LABELLED_DAG, LAYERS})
    positive_definite = False

    def __init__(
        self,
        nu_str: Sequence[float] = DEFAULT_NU_STR,
        p: float = 1.0,
        p_bar: float = 2.0,
        zeta: float = ZETA,
        cell_channels: int = 16,
        structure: str = "paths",
        d_scale: float | Sequence[float] = DEFAULT_D_SCALE,
        dbar_scale: float | Sequence[float] = DEFAULT_DBAR_SCALE,
        n_jobs: int | None = None,
        parallel_min_pairs: int = 20000,
        layer_kinds: Mapping[str, str] | None = None,
        label_mismatch: tuple[Sequence[str], np.ndarray] | None = None,
    ) -> None:
        nus = tuple(float(v) for v in nu_str)
        if not nus or any(v <= 0 for v in nus):
            raise ValueError(f"nu_str must be a non-empty list of positive numbers, got {nu_str!r}")
        if not (0 < zeta < 1):
            raise ValueError(f"zeta must lie in (0, 1) (paper 001 Sec. 3), got {zeta!r}")
        if p <= 0 or p > 2 or p_bar <= 0 or p_bar > 2:
            raise ValueError(f"p and p_bar must lie in (0, 2] (paper 001 Sec. 2.2), got {p!r}, {p_bar!r}")
        if cell_channels <= 0:
            raise ValueError(f"cell_channels must be positive, got {cell_channels!r}")
        check_structure(structure)
        if (layer_kinds is None) != (label_mismatch is None):
            raise ValueError("OTMANN: give both layer_kinds and label_mismatch (a space's layers representation), or neither")
        self.table = BUILTIN if layer_kinds is None else LabelTable.build(layer_kinds, tuple(label_mismatch[0]), label_mismatch[1])
        self.nu_str = nus
        self.p, self.p_bar = float(p), float(p_bar)
        self.zeta = float(zeta)
        self.cell_channels = int(cell_channels)
        self.structure = structure
        #: Scales behind the default betas: configuration, never changed by a call.
        self.scales = OTMANNScales.broadcast(d_scale, dbar_scale, len(nus))
        self.n_jobs = n_jobs
        self.parallel_min_pairs = int(parallel_min_pairs)
        self._memo = DistanceMemo(nus, self.zeta, self.cell_channels, structure, n_jobs, self.parallel_min_pairs,
                                  self.table)
        #: Jitter added by the latest :meth:`psd_matrix` call (a diagnostic: nothing reads it back).
        self.last_jitter = 0.0

    # ------------------------------------------------------------------ names and hyperparameters
    def _d_name(self, nu: float) -> str:
        return f"d_{nu:g}"

    def _dbar_name(self, nu: float) -> str:
        return f"dbar_{nu:g}"

    @property
    def component_names(self) -> list[str]:
        return [self._d_name(v) for v in self.nu_str] + [self._dbar_name(v) for v in self.nu_str]

    @classmethod
    def options_from_space(cls, space) -> dict:
        """The space's layer kinds and label-mismatch table (its ``layers`` representation)."""
        return {"layer_kinds": dict(space.layer_kinds()), "label_mismatch": space.label_mismatch()}

    def _hyperparameters(self, scales: OTMANNScales) -> list[Hyperparameter]:
        """``alpha``, ``alpha_bar`` (default 1), then the betas that ``scales`` imply."""
        k = len(self.nu_str)
        hps = [Hyperparameter("alpha", 1.0, (1e-3, 1e3)), Hyperparameter("alpha_bar", 1.0, (1e-3, 1e3))]
        for names, values, power in (("beta", scales.d, self.p), ("beta_bar", scales.dbar, self.p_bar)):
            for nu, s in zip(self.nu_str, values):
                b = 1.0 / (k * s**power)
                hps.append(Hyperparameter(f"{names}_{nu:g}", b, (b / BETA_RANGE, b * BETA_RANGE)))
        return hps

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        """Defaults and bounds from :attr:`scales` (the configuration only)."""
        return self._hyperparameters(self.scales)

    def hyperparameters_for(self, components: Mapping[str, np.ndarray]) -> list[Hyperparameter]:
        """Hyperparameters whose default betas put the median pair of ``components`` (usually a
        training Gram) at ``exp(-1)`` in each half of Eq. (4); bounds :data:`BETA_RANGE` around.

        A pure function of ``components``: the caller that fits keeps the result. Components
        without a positive entry keep the configured scales.
        """
        d, dbar = self._stacks(components, powers=False)
        return self._hyperparameters(OTMANNScales.from_distances(d, dbar, self.scales))

    # ------------------------------------------------------------------ distances
    def otmann_distances(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> np.ndarray:
        """Raw OTMANN ``d`` for every ``nu_str``, shape ``(len(nu_str), len(a), len(b))``.

        Memoised (:class:`~nasviz.kernels.otmann.memo.DistanceMemo`): per-architecture masses
        and path lengths once per canonical key (isomorphic graphs have the same distance), each
        pair once, so a growing training set only solves its new pairs; every value is the same
        whatever was computed before.
        """
        return self._memo.distances(archs_a, archs_b)

    def total_masses(self, archs: Sequence[Architecture]) -> np.ndarray:
        """``tm(G)`` of each architecture, shape ``(len(archs),)``."""
        return np.array([self._memo.summary(a).total for a in archs])

    def components(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        """``d_{nu}`` and ``dbar_{nu} = d / (tm_a + tm_b)`` per ``nu_str``, each ``(len(a), len(b))``."""
        d = self.otmann_distances(archs_a, archs_b)
        tm = self.total_masses(archs_a)[:, None] + self.total_masses(archs_b)[None, :]
        dbar = d / tm[None]
        comps: Components = {}
        for i, nu in enumerate(self.nu_str):
            comps[self._d_name(nu)] = d[i]
        for i, nu in enumerate(self.nu_str):
            comps[self._dbar_name(nu)] = dbar[i]
        return comps

    # ------------------------------------------------------------------ Eq. (4)
    def _split_theta(self, theta: Sequence[float] | None) -> tuple[float, float, np.ndarray, np.ndarray]:
        """``(alpha, alpha_bar, beta (K,), beta_bar (K,))`` from ``theta`` (``2 + 2K``,)."""
        theta = self.default_theta() if theta is None else np.asarray(theta, dtype=float)
        k = len(self.nu_str)
        if theta.shape != (2 + 2 * k,):
            raise ValueError(f"theta must have {2 + 2 * k} entries (alpha, alpha_bar, {k} betas, {k} beta_bars), got shape {theta.shape}")
        return float(theta[0]), float(theta[1]), theta[2 : 2 + k], theta[2 + k :]

    def _stacks(self, components: Mapping[str, np.ndarray], powers: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """``d^p`` and ``dbar^p_bar`` stacked over ``nu_str``, each ``(K, n, m)`` (without the
        powers if ``powers`` is false)."""
        try:
            d = np.stack([np.asarray(components[self._d_name(v)]) for v in self.nu_str])
            dbar = np.stack([np.asarray(components[self._dbar_name(v)]) for v in self.nu_str])
        except KeyError as exc:
            raise ValueError(f"components lack {exc.args[0]!r}; expected {self.component_names}") from None
        return (d**self.p, dbar**self.p_bar) if powers else (d, dbar)

    def combine(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> np.ndarray:
        """Eq. (4): ``alpha exp(-sum beta_i d_i^p) + alpha_bar exp(-sum beta_bar_i dbar_i^p_bar)``."""
        alpha, alpha_bar, beta, beta_bar = self._split_theta(theta)
        dp, dbp = self._stacks(components)
        return alpha * np.exp(-np.tensordot(beta, dp, 1)) + alpha_bar * np.exp(-np.tensordot(beta_bar, dbp, 1))

    def combine_with_gradients(
        self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """``K`` and analytic ``dK/dtheta``: ``dK/dalpha = E``, ``dK/dbeta_i = -alpha E d_i^p``
        (likewise for the normalised half), in the order of :attr:`hyperparameters`."""
        alpha, alpha_bar, beta, beta_bar = self._split_theta(theta)
        dp, dbp = self._stacks(components)
        e = np.exp(-np.tensordot(beta, dp, 1))
        eb = np.exp(-np.tensordot(beta_bar, dbp, 1))
        grads = [e, eb] + [-alpha * e * dp[i] for i in range(len(beta))] + [-alpha_bar * eb * dbp[i] for i in range(len(beta_bar))]
        return alpha * e + alpha_bar * eb, grads

    def psd_matrix(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> tuple[np.ndarray, float]:
        """A square Gram matrix made Cholesky-factorable with :func:`make_psd`; returns
        ``(K, jitter)`` (the jitter is also left in :attr:`last_jitter`)."""
        K, jitter = make_psd(self.combine(components, theta))
        self.last_jitter = jitter
        return K, jitter

    def transport_plan(self, arch_a: Architecture, arch_b: Architecture, nu_str: float | None = None) -> TransportPlan:
        """:func:`transport_plan` with this kernel's settings (``nu_str`` defaults to the first)."""
        return transport_plan(
            arch_a, arch_b, self.nu_str[0] if nu_str is None else nu_str,
            zeta=self.zeta, cell_channels=self.cell_channels, structure=self.structure, table=self.table,
        )


__all__ = ["BETA_RANGE", "DEFAULT_DBAR_SCALE", "DEFAULT_D_SCALE", "DEFAULT_NU_STR", "OTMANNKernel", "OTMANNScales"]
