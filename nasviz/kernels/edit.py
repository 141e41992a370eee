"""Auto-Keras edit-distance kernel with a Bourgain embedding (paper 003, Sec. 3.1, App. E, F).

The distance ``d`` between two networks is Auto-Keras's edit distance, Eq. (4)
(:mod:`nasviz.kernels.edit_distance`: layer sequences, ``D_l``, ``D_s``).

**Bourgain embedding** (App. F): the kernel is ``k = exp(-beta * rho^2)`` (Eq. (3), paper
``beta = 1``) where ``rho`` is the Euclidean distance after a Bourgain embedding of the finite
metric space: for ``i = 0 .. ceil(log2(n) - 1)`` and ``t = 1 .. ceil(ln n)`` a random anchor set
``S_it`` of ``min(2^i, n)`` reference architectures, coordinate ``phi_it(x) = min_{s in S_it}
d(x, s)``; ``(ceil(log2 n - 1) + 1) * ceil(ln n)`` dimensions, O(log^2 n) (the reference loop
shadows its bound ``t`` and produced 15/21/28 dimensions at n = 100/200/500 instead of
35/48/63). ``rho(x, y) = ||phi(x) - phi(y)||_2 / sqrt(D)``: each coordinate is 1-Lipschitz in
``d``, so ``rho <= d`` and ``rho`` stays on the scale of ``d``. The kernel is a Gaussian on
explicit Euclidean features, hence positive semi-definite on any set.

One kernel for training and prediction: the anchors are drawn from a *reference set*
(the training architectures). ``phi`` is defined for every architecture through its distances
to the anchors, so a candidate's embedding uses the same map as the training set's. The
reference is set by :meth:`EditDistanceKernel.set_reference`, or automatically by a square
call ``components(X, X)`` whose set contains the current reference (a training set that grew:
App. F re-embeds the expanded matrix). Other calls (``components(C, X)``, ``components(C, C)``
for candidates) reuse the current anchors; with no reference yet, the union of the two
arguments is embedded (the paper's finite-set embedding). The anchors index the reference set in
the order of its canonical keys, so the embedding of a reference set does not depend on what the
kernel met before. Raw edit distances are cached per pair of canonical keys, so a growing
training set never recomputes old pairs.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
from scipy.spatial.distance import cdist

from nasviz.arch import Architecture
from nasviz.kernels.base import Components, Hyperparameter, Kernel
# edit_distance is re-exported: the kernel benchmark imports the one-pair distance from here
from nasviz.kernels.edit_distance import (DEFAULT_LAMBDA, LayerSequence, edit_distance, layer_distance_batch,
                                          layer_sequence, skip_distance)

#: The paper's beta of Eq. (3): the default of the kernel's only hyperparameter.
DEFAULT_BETA = 1.0


# ---------------------------------------------------------------------------- Bourgain
def bourgain_dimensions(n: int) -> int:
    """``(ceil(log2(n) - 1) + 1) * ceil(ln n)`` coordinates (at least 1): 35 / 48 / 63 at n = 100 / 200 / 500."""
    if n <= 2:
        return 1
    levels = math.ceil(math.log2(n) - 1) + 1
    return levels * math.ceil(math.log(n))


def bourgain_anchor_sets(n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Random anchor index sets for a reference set of ``n`` points: level ``i`` has
    ``min(2^i, n)`` points (drawn without replacement), ``ceil(ln n)`` sets per level."""
    if n <= 2:
        return [np.arange(n)[:1]] if n else []
    levels = math.ceil(math.log2(n) - 1) + 1
    reps = math.ceil(math.log(n))
    return [rng.choice(n, size=min(2**i, n), replace=False) for i in range(levels) for _ in range(reps)]


def bourgain_embedding(dist_to_ref: np.ndarray, anchor_sets: Sequence[np.ndarray]) -> np.ndarray:
    """``phi(x)_j = min_{s in S_j} d(x, s)`` for rows of ``dist_to_ref`` ``(m, n_ref)``; returns ``(m, D)``."""
    if not anchor_sets:
        return np.zeros((len(dist_to_ref), 1))
    return np.stack([dist_to_ref[:, s].min(axis=1) for s in anchor_sets], axis=1)


# ---------------------------------------------------------------------------- the kernel
class EditDistanceKernel(Kernel):
    """Auto-Keras kernel ``exp(-beta * rho^2)`` on Bourgain-embedded edit distances (paper 003 Eq. (3)).

    Parameters
    ----------
    lam : float
        Weight of the skip-connection distance in Eq. (4) (paper: 1).
    cell_width : int
        Width given to layers without one (NB201 cells).
    seed : int
        Seed of the Bourgain anchor sets (the embedding is deterministic given the reference).
    auto_reference : bool
        Re-draw the anchors on a square call ``components(X, X)`` whose set contains the
        current reference (module docstring). A square call over training + candidates looks
        the same as a grown training set; callers that predict on such supersets should pass
        ``False`` and call :meth:`set_reference` with the training set themselves.

    Components, each ``(len(a), len(b))``: ``"edit"`` the raw distance ``d`` of Eq. (4) and
    ``"bourgain"`` the embedded distance ``rho``. Hyperparameter: ``beta`` (default 1).
    """

    name = "edit"
    positive_definite = True
    #: The embedding depends on the reference set: a GP must not assemble Gram matrices from
    #: blocks computed at different times (see ``nasviz.gp.ComponentsCache``).
    pairwise_components = False

    def __init__(
        self,
        lam: float = DEFAULT_LAMBDA,
        cell_width: int = 16,
        seed: int = 0,
        auto_reference: bool = True,
        chunk_pairs: int = 50_000,
    ) -> None:
        if not lam >= 0:
            raise ValueError(f"lam (lambda of Eq. (4)) must be >= 0, got {lam!r}")
        if cell_width <= 0:
            raise ValueError(f"cell_width must be positive, got {cell_width!r}")
        self.lam = float(lam)
        self.cell_width = int(cell_width)
        self.seed = int(seed)
        self.auto_reference = bool(auto_reference)
        self.chunk_pairs = int(chunk_pairs)
        self._keys: list[str] = []
        self._kidx: dict[str, int] = {}
        self._seqs: list[LayerSequence] = []
        self._vocab: dict[str, int] = {}
        self._D = np.full((0, 0), np.nan)  # raw d between cached keys; NaN = not computed yet
        self._skip_cache: dict[tuple[bytes, bytes], float] = {}
        self._reference: list[int] = []  # key indices of the reference set
        self._anchors: list[np.ndarray] = []  # indices into self._reference

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        """``beta``: the paper's 1 (Eq. (3)) by default, bounds 1e-3..1e3. Configuration only,
        the same whatever the kernel embedded before."""
        return [Hyperparameter("beta", DEFAULT_BETA, (DEFAULT_BETA * 1e-3, DEFAULT_BETA * 1e3))]

    # ------------------------------------------------------------------ raw distances
    def _index(self, arch: Architecture) -> int:
        key = arch.canonical_key()
        i = self._kidx.get(key)
        if i is None:
            i = self._kidx[key] = len(self._keys)
            self._keys.append(key)
            seq = layer_sequence(arch, self.cell_width)
            self._seqs.append(seq)
            for label in seq.labels:
                self._vocab.setdefault(label, len(self._vocab))
        return i

    def _grow(self) -> None:
        n = len(self._keys)
        if self._D.shape[0] < n:
            cap = max(n, 2 * self._D.shape[0], 16)
            grown = np.full((cap, cap), np.nan)
            old = self._D.shape[0]
            grown[:old, :old] = self._D
            np.fill_diagonal(grown, 0.0)
            self._D = grown

    def _fill(self, rows: np.ndarray, cols: np.ndarray) -> None:
        """Compute the missing raw distances between key indices ``rows`` x ``cols``."""
        self._grow()
        sub = self._D[np.ix_(rows, cols)]
        ii, jj = np.nonzero(np.isnan(sub))
        if len(ii) == 0:
            return
        pa, pb = rows[ii], cols[jj]
        swap = pa > pb  # symmetric: solve each unordered pair once
        pa, pb = np.where(swap, pb, pa), np.where(swap, pa, pb)
        n = self._D.shape[0]
        flat = np.unique(pa * n + pb)
        pairs = np.stack([flat // n, flat % n], axis=1)
        for lo in range(0, len(pairs), self.chunk_pairs):
            chunk = pairs[lo : lo + self.chunk_pairs]
            values = self._solve(chunk[:, 0], chunk[:, 1])
            self._D[chunk[:, 0], chunk[:, 1]] = values
            self._D[chunk[:, 1], chunk[:, 0]] = values

    def _solve(self, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        """Eq. (4) for key-index pairs, shape ``(P,)``: D_l vectorised, D_s per distinct skip-set pair."""
        seqs = self._seqs
        lens = np.array([len(s.labels) for s in seqs])
        L = max(1, int(lens.max()))
        # padded per-key arrays (labels -1, widths 1 beyond the true length; never read)
        lab = np.full((len(seqs), L), -1, dtype=np.intp)
        wid = np.ones((len(seqs), L))
        for k, s in enumerate(seqs):
            lab[k, : len(s.labels)] = [self._vocab[x] for x in s.labels]
            wid[k, : len(s.labels)] = s.widths
        La, Lb = max(1, int(lens[ia].max())), max(1, int(lens[ib].max()))
        d_l = layer_distance_batch(lab[ia, :La], wid[ia, :La], lens[ia], lab[ib, :Lb], wid[ib, :Lb], lens[ib])
        if self.lam == 0:
            return d_l
        sig = [seqs[k].skips.tobytes() for k in range(len(seqs))]
        d_s = np.empty(len(ia))
        cache = self._skip_cache
        for p, (a, b) in enumerate(zip(ia, ib)):
            key = (sig[a], sig[b]) if sig[a] <= sig[b] else (sig[b], sig[a])
            v = cache.get(key)
            if v is None:
                v = cache[key] = skip_distance(seqs[a].skips, seqs[b].skips)
            d_s[p] = v
        return d_l + self.lam * d_s

    def edit_distances(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> np.ndarray:
        """Raw ``d`` of Eq. (4), shape ``(len(a), len(b))`` (cached per pair of canonical keys)."""
        ia = np.array([self._index(a) for a in archs_a], dtype=np.intp)
        ib = np.array([self._index(b) for b in archs_b], dtype=np.intp)
        self._fill(np.unique(ia), np.unique(ib))
        return self._D[np.ix_(ia, ib)].copy()

    # ------------------------------------------------------------------ embedding
    def set_reference(self, archs: Sequence[Architecture]) -> None:
        """Draw the Bourgain anchor sets from ``archs`` (usually the training set)."""
        idx = self._ordered({self._index(a) for a in archs})
        if not idx:
            raise ValueError("set_reference needs at least one architecture")
        self._reference = idx
        self._anchors = bourgain_anchor_sets(len(idx), np.random.default_rng(self.seed))

    def _ordered(self, key_indices: set[int]) -> list[int]:
        """Key indices in the order of their canonical keys. The anchors index the reference in
        this order, so the embedding is a function of the reference *set* alone, not of the
        order in which this kernel first met its members."""
        return sorted(key_indices, key=self._keys.__getitem__)

    @property
    def n_dimensions(self) -> int:
        """Dimensions of the current embedding (0 if no reference is set)."""
        return len(self._anchors)

    def _embed_idx(self, idx: np.ndarray) -> np.ndarray:
        ref = np.array(self._reference, dtype=np.intp)
        self._fill(np.unique(idx), ref)
        return bourgain_embedding(self._D[np.ix_(idx, ref)], self._anchors)

    def embed(self, archs: Sequence[Architecture]) -> np.ndarray:
        """Bourgain coordinates ``phi`` of ``archs`` w.r.t. the current reference, ``(len(archs), D)``."""
        if not self._reference:
            raise ValueError("no reference set: call set_reference(archs) or components(X, X) first")
        return self._embed_idx(np.array([self._index(a) for a in archs], dtype=np.intp))

    def components(self, archs_a: Sequence[Architecture], archs_b: Sequence[Architecture]) -> Components:
        """``"edit"`` (raw d) and ``"bourgain"`` (rho), each ``(len(a), len(b))``."""
        d = self.edit_distances(archs_a, archs_b)
        if len(archs_a) == 0 or len(archs_b) == 0:
            return {"edit": d, "bourgain": np.zeros(d.shape)}
        ia = np.array([self._kidx[a.canonical_key()] for a in archs_a], dtype=np.intp)
        ib = np.array([self._kidx[b.canonical_key()] for b in archs_b], dtype=np.intp)
        sa, sb = set(ia.tolist()), set(ib.tolist())
        saved = None
        if self.auto_reference and sa == sb and sa and sa.issuperset(self._reference):
            if self._ordered(sa) != self._reference:
                self.set_reference(archs_a)  # a (grown) training set: re-embed (App. F)
        elif not self._reference:
            saved = (self._reference, self._anchors)  # finite-set embedding of the union, not kept
            self.set_reference(list(archs_a) + list(archs_b))
        try:
            phi_a, phi_b = self._embed_idx(ia), self._embed_idx(ib)
        finally:
            if saved is not None:
                self._reference, self._anchors = saved
        # cdist rather than the |a|^2 + |b|^2 - 2ab expansion: exact zeros for equal points
        rho = cdist(phi_a, phi_b) / math.sqrt(phi_a.shape[1])
        return {"edit": d, "bourgain": rho}

    # ------------------------------------------------------------------ kernel
    def _beta(self, theta: Sequence[float] | None) -> float:
        theta = self.default_theta() if theta is None else np.asarray(theta, dtype=float)
        if theta.shape != (1,):
            raise ValueError(f"theta must have 1 entry (beta), got shape {theta.shape}")
        return float(theta[0])

    def combine(self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None) -> np.ndarray:
        """Eq. (3): ``exp(-beta * rho^2)``."""
        if "bourgain" not in components:
            raise ValueError("components lack 'bourgain'; compute them with EditDistanceKernel.components")
        rho = np.asarray(components["bourgain"])
        return np.exp(-self._beta(theta) * rho**2)

    def combine_with_gradients(
        self, components: Mapping[str, np.ndarray], theta: Sequence[float] | None = None
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """``K`` and ``dK/dbeta = -rho^2 K``."""
        K = self.combine(components, theta)
        return K, [-np.asarray(components["bourgain"]) ** 2 * K]


__all__ = [
    "DEFAULT_BETA", "DEFAULT_LAMBDA", "EditDistanceKernel", "LayerSequence", "bourgain_anchor_sets", "bourgain_dimensions",
    "bourgain_embedding", "edit_distance", "layer_distance_batch", "layer_sequence", "skip_distance",
]
