"""The protocol every architecture kernel follows.

A kernel turns architectures into *components*: named matrices computed once for a pair of
architecture lists (distances for TW / OTMANN / edit / OT / GW, Gram matrices for WL and path
encodings). Its hyperparameters ``theta`` only re-weight those components, so a Gaussian
process can run many marginal-likelihood steps without recomputing a single distance::

    comps = kernel.components(train, train)          # expensive, once
    K = kernel.combine(comps, theta)                 # cheap, per likelihood step
    K, dK = kernel.combine_with_gradients(comps, theta)

Per-architecture work (histograms, WL features, path lengths, masses) is cached by the kernel
instance, keyed by the (hashable) architecture, so it is done once per architecture.

A fixed candidate set scored at every BO step (a table's 15,625 rows) is *prepared* once
(:meth:`Kernel.prepare_rows`) and compared with each new training architecture by
:meth:`Kernel.components_prepared`, which costs one column, not a pass over every candidate in
Python. Kernels whose components depend only on the reduced graph share rows between
architectures that reduce alike (:func:`unique_reduced`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Sequence

import numpy as np

from nasviz.arch import Architecture
# Re-exported: the project's one PSD-repair policy lives in nasviz.linalg (psd_factor); the
# kernels that are not PD (OT, GW, OTMANN) import it from here as make_psd.
from nasviz.linalg import make_psd  # noqa: F401
from nasviz.spaces.base import LABELLED_DAG, OPERATION_TREE

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace

Components = dict[str, np.ndarray]


@dataclass(frozen=True, eq=False)
class PreparedRows:
    """Candidates prepared once for many :meth:`Kernel.components_prepared` calls.

    ``archs`` (m) are the candidates as given; ``index`` ``(m,)`` maps each to its row among the
    ``n_rows`` distinct rows the kernel computes (candidates that the kernel cannot tell apart,
    e.g. equal reduced graphs, share one); ``data`` is the kernel's own cached work.
    """

    archs: tuple[Architecture, ...]
    index: np.ndarray
    n_rows: int
    data: Any = None


@dataclass(frozen=True)
class Hyperparameter:
    """A kernel hyperparameter the GP may learn.

    ``log_scale`` says the optimiser should work with ``log(value)``; ``discrete`` lists the
    allowed values for a hyperparameter chosen by comparing marginal likelihoods (WL's depth);
    ``rate`` marks a log-scale rate on distances of order one (``exp(-rate x distance)``), which
    a hyperparameter prior treats as Optuna treats an inverse squared lengthscale
    (:mod:`nasviz.gp.prior`).
    """

    name: str
    default: float
    bounds: tuple[float, float]
    log_scale: bool = True
    discrete: tuple[float, ...] | None = None
    rate: bool = False


class Kernel(ABC):
    """Base class: subclasses implement :meth:`components`, :meth:`combine` and gradients."""

    #: Registry name (``"tw"``, ``"wl"``, ...).
    name: str = ""
    #: The representations of a space this kernel reads (:mod:`nasviz.spaces.base`); the registry
    #: offers the kernel only for spaces that provide all of them.
    reads: ClassVar[frozenset[str]] = frozenset({LABELLED_DAG})
    #: True if every :meth:`combine` result is positive semi-definite for valid ``theta``.
    positive_definite: bool = True

    @classmethod
    def options_from_space(cls, space: "SearchSpace") -> dict[str, Any]:
        """Constructor options this kernel takes from a space's representations (TW's operation
        tree, OTMANN's label tables); :func:`nasviz.kernels.make_kernel` fills them in unless
        the caller gave them. Default: a kernel that reads the operation tree gets the space's
        operation groups as its ``tree``; nothing otherwise."""
        return {"tree": dict(space.operation_groups())} if OPERATION_TREE in cls.reads else {}

    @property
    @abstractmethod
    def hyperparameters(self) -> list[Hyperparameter]:
        """Names, defaults and bounds of ``theta``, in the order :meth:`combine` expects."""

    def default_theta(self) -> np.ndarray:
        return np.array([h.default for h in self.hyperparameters], dtype=float)

    def theta_dict(self, theta: Sequence[float] | None) -> dict[str, float]:
        theta = self.default_theta() if theta is None else np.asarray(theta, dtype=float)
        return {h.name: float(t) for h, t in zip(self.hyperparameters, theta)}

    @abstractmethod
    def components(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        """Named matrices of shape ``(len(archs_a), len(archs_b))``."""

    def distances(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        """Distance components, shape ``(len(a), len(b))`` each (for views and embeddings).

        Distance kernels return their components; feature kernels override this to return
        the feature-space distance ``sqrt(k(a,a) + k(b,b) - 2 k(a,b))`` per component.
        """
        return self.components(archs_a, archs_b)

    @abstractmethod
    def combine(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> np.ndarray:
        """The kernel matrix from precomputed components."""

    def combine_with_gradients(
        self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """``K`` and ``dK/dtheta_i`` for each continuous hyperparameter (zeros for discrete ones).

        The default uses central finite differences; kernels override it with analytic forms.
        """
        theta = self.default_theta() if theta is None else np.asarray(theta, dtype=float)
        K = self.combine(components, theta)
        grads = []
        for i, h in enumerate(self.hyperparameters):
            if h.discrete is not None:
                grads.append(np.zeros_like(K))
                continue
            step = 1e-6 * max(1.0, abs(theta[i]))
            up, down = theta.copy(), theta.copy()
            up[i] += step
            down[i] -= step
            grads.append((self.combine(components, up) - self.combine(components, down)) / (2 * step))
        return K, grads

    def prepare_rows(self, archs: Sequence[Architecture]) -> PreparedRows:
        """Prepare ``archs`` (m) as the rows of repeated :meth:`components_prepared` calls.

        The default keeps every architecture as its own row and defers to :meth:`components`;
        kernels with per-architecture features override it to cache them as matrices.
        """
        archs = tuple(archs)
        return PreparedRows(archs, np.arange(len(archs)), len(archs), list(archs))

    def components_prepared(self, rows: PreparedRows, archs_b: Sequence[Architecture]) -> Components:
        """Components of the distinct prepared rows against ``archs_b``: ``(rows.n_rows, len(b))``
        each, equal to ``components(rows.archs, archs_b)`` on the rows ``rows.index`` selects."""
        return self.components(rows.data, archs_b)

    def matrix(
        self,
        archs_a: Sequence[Architecture],
        archs_b: Sequence[Architecture] | None = None,
        theta: Sequence[float] | None = None,
    ) -> np.ndarray:
        """The kernel matrix ``(len(a), len(b))``; ``theta=None`` uses the defaults."""
        archs_b = archs_a if archs_b is None else archs_b
        return self.combine(self.components(archs_a, archs_b), theta)


def feature_distances(gram_ab: np.ndarray, diag_a: np.ndarray, diag_b: np.ndarray) -> np.ndarray:
    """The distance a kernel induces between two sets: the project's one implementation.

    ``d(a, b) = sqrt(max(k(a,a) + k(b,b) - 2 k(a,b), 0))``, the distance between the feature
    maps ``||phi(a) - phi(b)||`` of a PD kernel. Negative squared distances (round-off, or a kernel
    that is not PD such as OT / GW / OTMANN) are clipped to 0.

    Parameters
    ----------
    gram_ab : ndarray (n_a, n_b)
        ``k(a_i, b_j)``.
    diag_a : ndarray (n_a,)
        ``k(a_i, a_i)``.
    diag_b : ndarray (n_b,)
        ``k(b_j, b_j)``.

    Returns
    -------
    ndarray (n_a, n_b)
    """
    sq = diag_a[:, None] + diag_b[None, :] - 2.0 * gram_ab
    return np.sqrt(np.maximum(sq, 0.0))


def induced_distance(K: np.ndarray) -> np.ndarray:
    """The distance a square Gram matrix ``K`` (n, n) induces between its own points, (n, n):
    :func:`feature_distances` with both diagonals taken from ``K``."""
    K = np.asarray(K, dtype=float)
    d = np.diag(K)
    return feature_distances(K, d, d)


def unique_reduced(archs: Sequence[Architecture]) -> tuple[list[Architecture], np.ndarray]:
    """The distinct reduced graphs of ``archs`` and, for each arch, its row among them.

    Kernels compare reduced graphs, and cells that reduce to the same graph (about 4 in 10 of
    1,000 random NB201 cells) share their per-architecture work and their matrix rows.
    Returns ``(graphs, index)`` with ``index`` of shape ``(len(archs),)``.
    """
    rows: dict[Architecture, int] = {}
    index = np.empty(len(archs), dtype=np.int64)
    for i, arch in enumerate(archs):
        if not isinstance(arch, Architecture):
            raise ValueError(f"architecture {i} is a {type(arch).__name__}, not an Architecture")
        index[i] = rows.setdefault(arch.reduced(), len(rows))
    return list(rows), index
