"""Linear algebra for the GP: the project's one PSD-repair policy, fast solves, BLAS threads.

PSD-repair policy
-----------------
Every symmetric matrix the project factorises -- a GP covariance ``C = a K + s I``, the Gram
matrix of a kernel that is not positive definite (plain OT, GW, OTMANN), a posterior covariance
that Thompson sampling draws from -- goes through this module, and nothing else in the package
adds jitter or clips eigenvalues to make a matrix usable. With ``scale`` the mean diagonal
(1 if that is not positive) and ``floor = PSD_REL_FLOOR * scale``:

1. The matrix is symmetrised, ``K <- (K + K^T) / 2`` (bit for bit a no-op on a symmetric one).
2. Eigenvalues in ``[-floor, 0)`` are round-off around zero, not negative curvature.
3. The repair is the least diagonal shift that gives the operation what it needs:

   * a Cholesky factor, to solve with (:func:`psd_factor`), needs ``K`` positive *definite*:
     ``K`` as it is if Cholesky succeeds, else ``K + j I`` with
     ``j = max(-lambda_min, 0) + floor``, doubled until Cholesky succeeds;
   * a square root, to sample with (:func:`psd_sqrt`), needs ``K`` positive *semi*-definite:
     ``U sqrt(max(Lambda, 0))`` from ``K = U Lambda U^T`` when ``lambda_min >= -floor``, else the
     root of ``K + j I`` with ``j = -lambda_min + floor``.

4. Refused (``numpy.linalg.LinAlgError``): non-finite entries, or a spectrum more negative than
   positive (``-lambda_min > max(lambda_max, floor)``): not a covariance a small shift repairs.

The jitter ``j`` is always returned, so callers report it (``FitResult.jitter``,
``kernel.last_jitter``, ``BatchSelection.info["jitter"]``).

Why a diagonal shift: ``C + j I`` is the covariance of the same GP with noise ``s + j``, and the
shifted Gram of a kernel keeps its off-diagonal entries (``exp(-lambda D)`` stays that). Why from
``lambda_min`` rather than powers of ten: those can overshoot the needed shift by almost 10x and
drown a strongly indefinite kernel such as GW in noise. Why no shift for a singular PSD matrix
that is only sampled from: posterior covariances over a pool are routinely singular, because pool
members the kernel cannot tell apart have identical rows. The exact root gives them draws equal
up to round-off, as the GP says they are (the round-off usually vanishes against the mean, so a
Thompson argmax keeps taking the first of them); a jitter adds independent noise of order
``sqrt(j)`` that separates them at random, so a Thompson batch would take a random member of such
a class, and possibly several.

References: Rasmussen & Williams (2006), *Gaussian Processes for Machine Learning*, Algorithm 2.1
(Cholesky solves) and App. A.2 (sampling with a matrix square root); paper 000 (Nguyen et al.,
2021) Sec. 4.1 / Table 2 (OT and GW Gram matrices are not PSD and are jittered).
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import scipy.linalg as sla
from threadpoolctl import ThreadpoolController

#: Relative floor of the PSD-repair jitter (times the mean diagonal). ``lambda_min`` from
#: ``eigvalsh`` carries an error of order ``n eps ||K||``, about 1e-11 of the scale for the
#: n ~ 1000 matrices here; 1e-8 clears it, so the first shifted Cholesky nearly always succeeds,
#: and stays far below any noise variance the GP learns (>= 1e-6).
PSD_REL_FLOOR = 1e-8
#: Doublings of the jitter before :func:`psd_factor` gives up (2^60 ~ 1e18: unreachable for a
#: finite matrix, where ``-lambda_min + floor`` already suffices up to round-off).
MAX_DOUBLINGS = 60
#: Below this many observations BLAS runs single-threaded inside fit/predict: the matrices are
#: small, and multi-threaded OpenBLAS on a busy machine spends more time synchronising threads
#: than computing (measured: a 200-observation fit took 1.6 s with threads, 0.1 s without).
SINGLE_THREAD_BELOW = 1500
_THREADPOOLS: ThreadpoolController | None = None


def _symmetrised(K: np.ndarray) -> np.ndarray:
    """``(K + K^T) / 2`` after checking ``K`` is a finite square matrix (rules 1 and 4)."""
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"expected a square matrix, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        # Checked first: numpy's Cholesky returns NaNs for a NaN input instead of failing.
        raise np.linalg.LinAlgError("the matrix has non-finite entries: no jitter makes it positive definite")
    return 0.5 * (K + K.T)


def _floor(K: np.ndarray, rel_floor: float) -> float:
    scale = float(np.mean(np.diag(K))) if len(K) else 1.0
    return rel_floor * (scale if scale > 0 else 1.0)


def _shift(lam_min: float, lam_max: float, floor: float, definite: bool) -> float:
    """The policy's diagonal shift for a spectrum in ``[lam_min, lam_max]`` (rules 2-4):
    what makes the matrix positive definite (``definite``) or semi-definite."""
    if -lam_min > max(lam_max, floor):
        raise np.linalg.LinAlgError(
            f"the matrix is not a covariance a diagonal shift can repair: its most negative eigenvalue "
            f"{lam_min:.3g} outweighs its largest {lam_max:.3g}"
        )
    if definite:
        return max(-lam_min, 0.0) + floor
    return 0.0 if lam_min >= -floor else -lam_min + floor


def psd_factor(K: np.ndarray, rel_floor: float = PSD_REL_FLOOR) -> tuple[np.ndarray, np.ndarray, float]:
    """A Cholesky factor under the PSD-repair policy (module docstring), for solves.

    Parameters
    ----------
    K : ndarray (n, n)
        A matrix meant to be symmetric positive (semi-)definite.
    rel_floor : float
        Floor of the jitter relative to the mean diagonal.

    Returns
    -------
    K_pd : ndarray (n, n)
        ``(K + K^T)/2 + jitter I``, positive definite.
    L : ndarray (n, n)
        Its lower Cholesky factor, ``L L^T = K_pd``.
    jitter : float
        The diagonal shift added (0.0 when ``K`` factorised as it was).

    Raises
    ------
    ValueError
        If ``K`` is not a square matrix.
    numpy.linalg.LinAlgError
        If the policy refuses ``K`` (rule 4).
    """
    K = _symmetrised(K)
    try:
        return K, np.linalg.cholesky(K), 0.0
    except np.linalg.LinAlgError:
        pass
    lam = np.linalg.eigvalsh(K)
    jitter = _shift(float(lam[0]), float(lam[-1]), _floor(K, rel_floor), definite=True)
    eye = np.eye(len(K))
    for _ in range(MAX_DOUBLINGS):
        shifted = K + jitter * eye
        try:
            return shifted, np.linalg.cholesky(shifted), jitter
        except np.linalg.LinAlgError:
            jitter *= 2.0
    raise np.linalg.LinAlgError(f"the matrix is not positive definite even with jitter {jitter:.3g}")


def psd_sqrt(K: np.ndarray, rel_floor: float = PSD_REL_FLOOR) -> tuple[np.ndarray, float]:
    """A square root under the PSD-repair policy (module docstring), for sampling.

    Returns ``(R (n, n), jitter)`` with ``R R^T = (K + K^T)/2 + jitter I`` up to the round-off
    eigenvalues in ``[-floor, 0)``, which are taken as 0. ``R = U sqrt(Lambda)`` from the
    eigendecomposition, so rows of ``K`` that are equal give rows of ``R`` equal up to round-off.
    ``jitter`` is 0 unless ``K`` is genuinely indefinite. Raises as :func:`psd_factor`.
    """
    K = _symmetrised(K)
    if not len(K):
        return np.zeros((0, 0)), 0.0
    lam, U = np.linalg.eigh(K)
    jitter = _shift(float(lam[0]), float(lam[-1]), _floor(K, rel_floor), definite=False)
    if jitter:
        lam = lam + jitter  # the spectrum of K + jitter I (same eigenvectors)
    return U * np.sqrt(np.maximum(lam, 0.0)), jitter


def make_psd(K: np.ndarray, rel_floor: float = PSD_REL_FLOOR) -> tuple[np.ndarray, float]:
    """``K`` made Cholesky-factorable by :func:`psd_factor`: ``(K_pd (n, n), jitter)``.

    For Gram matrices of kernels that are not positive definite (plain OT, GW, OTMANN; paper 000
    Table 2), which need jitter on every call, so no warning is issued; the caller stores the
    jitter (``kernel.last_jitter``).
    """
    K_pd, _, jitter = psd_factor(K, rel_floor)
    return K_pd, jitter


def cholesky_with_jitter(C: np.ndarray, context: str = "") -> tuple[np.ndarray, float]:
    """Lower Cholesky factor of a GP covariance ``C`` (n, n) under the PSD-repair policy.

    Returns ``(L (n, n), jitter)`` with ``L L^T = C + jitter I`` (``C`` symmetrised). A GP
    covariance ``a K + s I`` should factorise as it is, so a jitter is unexpected here (duplicate
    architectures with no observation noise) and is reported with a ``RuntimeWarning``;
    ``context`` is added to the message. Raises ``numpy.linalg.LinAlgError`` when the policy
    refuses ``C`` (see :func:`psd_factor`).
    """
    try:
        _, L, jitter = psd_factor(C)
    except np.linalg.LinAlgError as err:
        raise np.linalg.LinAlgError(f"GP covariance matrix{_context(context)}: {err}") from None
    if jitter > 0:
        warnings.warn(
            f"GP covariance matrix{_context(context)} is not positive definite "
            f"(duplicate or near-identical architectures?); added jitter {jitter:.3g} to the diagonal",
            RuntimeWarning,
            stacklevel=3,
        )
    return L, jitter


def _context(context: str) -> str:
    return f" ({context})" if context else ""


def factor_solve_inverse(C: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Cholesky of ``C`` (n, n), ``alpha = C^{-1} z`` (n,) and ``C^{-1}`` (n, n), or ``None``.

    LAPACK ``potrf``/``potrs``/``potri`` called directly: about 4x faster than the checked
    wrappers for the n ~ 200 matrices of a likelihood step. ``None`` when ``C`` is not positive
    definite: inside the likelihood optimiser such a point is rejected, not repaired (the
    optimiser must not be rewarded for a covariance that only exists after jitter).
    """
    c, info = sla.lapack.dpotrf(C, lower=1, clean=1)
    if info != 0:
        return None
    alpha, info = sla.lapack.dpotrs(c, z, lower=1)
    inv, info2 = sla.lapack.dpotri(c, lower=1)
    if info != 0 or info2 != 0:
        return None
    # potri fills the lower triangle only (the upper one is zero after clean=1).
    inv = inv + inv.T
    inv[np.diag_indices_from(inv)] *= 0.5
    return c, alpha, inv


def factor_solve(C: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Cholesky factor of ``C`` (n, n) and ``alpha = C^{-1} z`` (n,) by ``potrf``/``potrs``;
    ``None`` when ``C`` is not positive definite (a rejected point, as in
    :func:`factor_solve_inverse`)."""
    c, info = sla.lapack.dpotrf(C, lower=1, clean=1)
    if info != 0:
        return None
    alpha, info = sla.lapack.dpotrs(c, z, lower=1)
    return (c, alpha) if info == 0 else None


def blas_limit(n: int) -> contextlib.AbstractContextManager:
    """Context manager: single-threaded BLAS for problems of fewer than
    :data:`SINGLE_THREAD_BELOW` observations, a no-op otherwise."""
    global _THREADPOOLS
    if n >= SINGLE_THREAD_BELOW:
        return contextlib.nullcontext()
    if _THREADPOOLS is None:
        _THREADPOOLS = ThreadpoolController()
    return _THREADPOOLS.limit(limits=1, user_api="blas")


__all__ = [
    "MAX_DOUBLINGS", "PSD_REL_FLOOR", "SINGLE_THREAD_BELOW", "blas_limit", "cholesky_with_jitter",
    "factor_solve", "factor_solve_inverse", "make_psd", "psd_factor", "psd_sqrt",
]
