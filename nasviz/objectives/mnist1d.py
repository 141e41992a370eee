"""MNIST-1D generated locally from the ``mnist1d`` package's templates (Greydanus 2020).

Ten 12-point templates of the digits are padded, sheared, scaled, translated and given correlated
and independent noise, then resampled to signals of length 40 (:func:`mnist1d.data.make_dataset`
with the package's default arguments): 5,000 signals, the first 4,000 for training and the last
1,000 for testing. That is the published dataset (its generation seed is 42), on which the
architecture matters: its paper reports about 32 % test accuracy for logistic regression, 68 %
for an MLP and 94 % for a small CNN. Nothing is downloaded (the package's ``get_dataset`` would
fetch a pickle; we never do).

:func:`generate` caches the arrays as ``mnist1d-n5000-len40-seed42.npz`` (no pickle; read back with
``allow_pickle=False``) under :func:`cache_dir`, written atomically, so every later load (and every
worker process) reads the same bytes. The package's generator seeds numpy's *global* random
state; the state before the call is restored afterwards.
"""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path

import numpy as np

#: Where generated datasets are cached: ``$NASVIZ_CACHE_DIR``, else ``$XDG_CACHE_HOME/nasviz``,
#: else ``~/.cache/nasviz``.
CACHE_ENV = "NASVIZ_CACHE_DIR"
#: The published dataset's generation seed and sizes (``mnist1d.data.get_dataset_args``).
SEED, N_SAMPLES, LENGTH = 42, 5000, 40


def cache_dir() -> Path:
    """The folder generated datasets are cached in (created on first use)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "nasviz"


def _make(seed: int) -> dict[str, np.ndarray]:
    from mnist1d.data import get_dataset_args, make_dataset

    args = get_dataset_args()
    args.seed = int(seed)
    np_state, py_state = np.random.get_state(), random.getstate()
    try:
        data = make_dataset(args)
    finally:
        np.random.set_state(np_state)
        random.setstate(py_state)
    return {"x": np.asarray(data["x"], dtype=np.float32), "y": np.asarray(data["y"], dtype=np.int64),
            "x_test": np.asarray(data["x_test"], dtype=np.float32), "y_test": np.asarray(data["y_test"], dtype=np.int64)}


def _valid(arrays: dict[str, np.ndarray]) -> bool:
    n_train = int(N_SAMPLES * 0.8)
    return (set(arrays) == {"x", "y", "x_test", "y_test"} and arrays["x"].shape == (n_train, LENGTH)
            and arrays["x_test"].shape == (N_SAMPLES - n_train, LENGTH) and arrays["y"].shape == (n_train,)
            and arrays["y_test"].shape == (N_SAMPLES - n_train,) and bool(np.isfinite(arrays["x"]).all()))


def generate(seed: int = SEED, folder: str | os.PathLike | None = None) -> dict[str, np.ndarray]:
    """``{"x": (4000, 40) float32, "y": (4000,) int64, "x_test": (1000, 40), "y_test": (1000,)}``,
    generated once per ``seed`` and cached (module docstring). A cache file that cannot be read
    or has the wrong shapes is generated again."""
    folder = Path(folder) if folder is not None else cache_dir()
    path = folder / f"mnist1d-n{N_SAMPLES}-len{LENGTH}-seed{int(seed)}.npz"
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
        if _valid(arrays):
            return arrays
    except (OSError, ValueError):
        pass
    arrays = _make(seed)
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, **arrays)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return arrays
