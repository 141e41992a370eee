"""Slot kernels: which choice each categorical parameter takes, one lengthscale per parameter.

A space with the ``categorical-parameters`` representation describes a cell as a fixed tuple of
categorical choices (its "slots"): NAS-Bench-201's six edge operations, or NAS-Bench-101's 21
upper-triangular edge bits and five interior operations (NAS-Bench-101 Sec. 5). The categorical
overlap kernel with automatic relevance determination compares two cells slot by slot::

    k_slots(x, x') = exp(-sum_s l_s [x_s != x'_s])

the exponentiated Hamming kernel of CoCaBO (Ru et al. 2020) and, on one-hot encodings, the form
of the kernel Optuna's GPSampler fits to categorical parameters. It is positive definite (a
product over slots of ``1 - (1 - e^{-l}) [x_s != x'_s]``, each the kernel of a complete graph's
indicator). Each mismatch indicator is a component, so the GP learns every ``l_s`` by ML-II and
``dk/dl_s = -[x_s != x'_s] k``.

With ``ard=False`` every parameter shares one lengthscale, ``k = exp(-l h(x, x'))`` with ``h`` the
share of parameters that differ (the normalised Hamming distance): one hyperparameter instead of
one per parameter. NAS-Bench-101's 26 parameters give a GP fitted to 100 observations 26
lengthscales to learn, which it overfits (docs/benchmarks.md).

It sees what the reduced-graph kernels do not: *where* an operation sits (a 1x1 convolution on
edge ``1->3`` is a different cell from one on ``0->1``, and from a 3x3 on ``1->3``), but not which
operations are alike or which cells compute the same function. :class:`TWSlotsKernel` multiplies
it with tree-Wasserstein (paper 000 Eq. (25)): ``k = exp(-(sum_i lambda_i W_i + sum_s l_s
[x_s != x'_s]))`` -- the product of two PD kernels, PD -- so ML-II weighs structure against slot
identity on each table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.kernels.base import Components, Hyperparameter, Kernel, PreparedRows
from nasviz.kernels.tw import COMPONENTS as TW_COMPONENTS
from nasviz.kernels.tw import TreeWassersteinKernel
from nasviz.spaces.base import LABELLED_DAG, OPERATION_TREE, PARAMETERS

if TYPE_CHECKING:
    from nasviz.spaces.base import SearchSpace


class SlotKernel(Kernel):
    """``exp(-sum_s l_s [x_s != x'_s])`` over a space's categorical parameters (module docstring).

    Parameters
    ----------
    space : SearchSpace
        A space with the ``categorical-parameters`` representation (``make_kernel`` passes it);
        every space with operation slots has it, one parameter per slot.
    ard : bool
        One lengthscale per parameter (default), or one shared by all (module docstring).
    """

    name = "slots"
    reads = frozenset({PARAMETERS})
    positive_definite = True

    def __init__(self, space: "SearchSpace", ard: bool = True) -> None:
        if not space.provides(PARAMETERS):
            raise ValueError(f"the {space.name!r} space has no categorical parameters")
        self.space = space
        self.ard = bool(ard)
        choices = space.parameter_choices()
        self.slot_names = tuple(choices)
        self._codes: dict[Architecture, np.ndarray] = {}
        # one {choice: index} per parameter: NB101's edge bits and operations have different choices
        self._index = [{value: i for i, value in enumerate(values)} for values in choices.values()]

    @property
    def component_names(self) -> list[str]:
        return [f"slot {s}" for s in self.slot_names] if self.ard else ["hamming"]

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        if not self.ard:  # h is a share in [0, 1]: l = 1 is one differing parameter in e
            return [Hyperparameter("l[hamming]", 1.0, (1e-3, 1e3), rate=True)]
        return [Hyperparameter(f"l[{s}]", 1.0, (1e-3, 1e2), rate=True) for s in self.slot_names]

    def codes(self, archs: Sequence[Architecture]) -> np.ndarray:
        """The choice index of each parameter, ``(len(archs), n_slots)`` (cached per architecture)."""
        out = np.empty((len(archs), len(self.slot_names)), dtype=np.int16)
        for i, arch in enumerate(archs):
            row = self._codes.get(arch)
            if row is None:
                row = self._codes[arch] = self.parameter_codes(self.space.to_parameters(arch))
            out[i] = row
        return out

    def parameter_codes(self, params: Mapping[str, str]) -> np.ndarray:
        """The choice index of each parameter of one assignment ``params``, ``(n_slots,)``.

        ``params`` need not describe a cell: an Optuna proposal may be an NB101 spec that
        NAS-Bench-101 rejects, and still has a Hamming distance to every row.
        """
        return np.array([index[params[name]] for name, index in zip(self.slot_names, self._index)],
                        dtype=np.int16)

    def components(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        """One mismatch indicator ``[x_s != x'_s]`` per slot, ``(len(a), len(b))`` each."""
        return self._mismatch(self.codes(archs_a), self.codes(archs_b))

    def _mismatch(self, A: np.ndarray, B: np.ndarray) -> Components:
        """Per parameter ``[x_s != x'_s]`` (ARD), or the share of parameters that differ."""
        if not self.ard:
            return {"hamming": (A[:, None, :] != B[None, :, :]).mean(axis=2)}
        return {name: (A[:, s, None] != B[None, :, s]).astype(float) for s, name in enumerate(self.component_names)}

    def prepare_rows(self, archs: Sequence[Architecture]) -> PreparedRows:
        archs = tuple(archs)
        return PreparedRows(archs, np.arange(len(archs)), len(archs), self.codes(archs))

    def components_prepared(self, rows: PreparedRows, archs_b: Sequence[Architecture]) -> Components:
        return self._mismatch(rows.data, self.codes(archs_b))

    def diagonal_components(self, archs: Sequence[Architecture]) -> dict[str, np.ndarray]:
        return {name: np.zeros(len(archs)) for name in self.component_names}

    def combine(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> np.ndarray:
        """``exp(-sum_s l_s D_s)``, the shape of the components."""
        lam = self.default_theta() if theta is None else np.asarray(theta, dtype=float)
        D = [np.asarray(components[name], dtype=float) for name in self.component_names]
        return np.exp(-sum(l * d for l, d in zip(lam, D)))

    def combine_with_gradients(self, components: Mapping[str, np.ndarray],
                               theta: Sequence[float] | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
        """``K`` and ``dK/dl_s = -D_s K``."""
        K = self.combine(components, theta)
        return K, [-np.asarray(components[name], dtype=float) * K for name in self.component_names]


class TWSlotsKernel(Kernel):
    """Tree-Wasserstein times the slot kernel: ``exp(-(sum_i lambda_i W_i + sum_s l_s D_s))``.

    Parameters
    ----------
    space : SearchSpace
        A space with categorical parameters, a labelled DAG and an operation tree (NB201, NB101).
    ngram, cumulative, tree, leaf_weight, anchored
        The tree-Wasserstein part (:class:`~nasviz.kernels.tw.TreeWassersteinKernel`).
    ard : bool
        The slot part's lengthscales: one per parameter, or one shared (:class:`SlotKernel`).
    """

    name = "tw-slots"
    reads = frozenset({LABELLED_DAG, OPERATION_TREE, PARAMETERS})
    positive_definite = True

    def __init__(self, space: "SearchSpace", ngram: int = 2, cumulative: bool = True, tree=None,
                 leaf_weight: float = 0.1, anchored: bool = True, ard: bool = True) -> None:
        self.tw = TreeWassersteinKernel(ngram=ngram, cumulative=cumulative, tree=tree, leaf_weight=leaf_weight,
                                        anchored=anchored)
        self.slots = SlotKernel(space, ard=ard)

    @property
    def ngram(self) -> int:
        """The tree-Wasserstein part's longest n-gram (the registry's ``tw2g-slots`` sets 2)."""
        return self.tw.ngram

    @property
    def ard(self) -> bool:
        """Whether the slot part has one lengthscale per parameter (the registry's ``tw2g-hamming`` sets False)."""
        return self.slots.ard

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        return self.tw.hyperparameters + self.slots.hyperparameters

    def _names(self) -> list[str]:
        return list(TW_COMPONENTS) + self.slots.component_names

    def components(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        return {**self.tw.components(archs_a, archs_b), **self.slots.components(archs_a, archs_b)}

    def prepare_rows(self, archs: Sequence[Architecture]) -> PreparedRows:
        # slots tell apart cells that reduce alike, so every architecture keeps its own row
        archs = tuple(archs)
        tw = self.tw.prepare_rows(archs)
        return PreparedRows(archs, np.arange(len(archs)), len(archs), (tw, self.slots.codes(archs)))

    def components_prepared(self, rows: PreparedRows, archs_b: Sequence[Architecture]) -> Components:
        tw_rows, codes = rows.data
        tw = self.tw.components_prepared(tw_rows, archs_b)
        return {**{k: v[tw_rows.index] for k, v in tw.items()}, **self.slots._mismatch(codes, self.slots.codes(archs_b))}

    def diagonal_components(self, archs: Sequence[Architecture]) -> dict[str, np.ndarray]:
        return {name: np.zeros(len(archs)) for name in self._names()}

    def combine(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> np.ndarray:
        lam = self.default_theta() if theta is None else np.asarray(theta, dtype=float)
        return np.exp(-sum(l * np.asarray(components[n], dtype=float) for l, n in zip(lam, self._names())))

    def combine_with_gradients(self, components: Mapping[str, np.ndarray],
                               theta: Sequence[float] | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
        K = self.combine(components, theta)
        return K, [-np.asarray(components[n], dtype=float) * K for n in self._names()]


__all__ = ["SlotKernel", "TWSlotsKernel"]
