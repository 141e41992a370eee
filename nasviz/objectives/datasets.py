"""Bundled datasets that need no download: the small sets scikit-learn ships.

* ``digits``: 1,797 handwritten digits, 8x8 grey images, 10 classes. Inputs have shape
  ``(N, 1, 8, 8)`` for cell networks (NAS-Bench-201 cells run on images).
* ``wine``: 178 wines, 13 features, 3 classes (tabular classification, layer networks).
* ``breast_cancer``: 569 tumours, 30 features, 2 classes (tabular classification).
* ``diabetes``: 442 patients, 10 features, a continuous target (tabular regression).

Every split is deterministic given the seed: the rows are permuted by
``numpy.random.default_rng(seed)`` and cut into train / validation / test fractions
(stratified by class for classification so that every split sees every class). Inputs are
standardised with the mean and standard deviation of the *train* split only (features with zero
variance in train are left centred, not divided by zero), so no information leaks from the
validation and test splits. Regression targets are standardised the same way (train statistics)
so that one learning rate suits every set; ``target_mean`` / ``target_std`` undo it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

#: name -> (task, input kind) of every bundled dataset.
DATASETS: dict[str, tuple[str, str]] = {
    "digits": ("classification", "image"),
    "wine": ("classification", "tabular"),
    "breast_cancer": ("classification", "tabular"),
    "diabetes": ("regression", "tabular"),
}

CLASSIFICATION = "classification"
REGRESSION = "regression"


def dataset_names() -> list[str]:
    """The names :func:`load_dataset` accepts."""
    return list(DATASETS)


@dataclass(frozen=True)
class Dataset:
    """A dataset split three ways, as float32 / int64 tensors on the CPU.

    Attributes
    ----------
    x_train, x_valid, x_test : Tensor (n_split, *input_shape) float32
        Standardised inputs (``input_shape`` is ``(1, 8, 8)`` for digits, ``(d,)`` for tabular).
    y_train, y_valid, y_test : Tensor (n_split,)
        Class indices (int64) for classification; standardised targets (float32) for regression.
    task : "classification" or "regression"
    n_classes : int
        Number of classes; 1 for regression (one output unit).
    """

    name: str
    task: str
    seed: int
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_valid: torch.Tensor
    y_valid: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    n_classes: int
    target_mean: float = 0.0
    target_std: float = 1.0

    @property
    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.x_train.shape[1:])

    @property
    def n_outputs(self) -> int:
        """Units of the output layer: classes, or 1 for regression."""
        return self.n_classes if self.task == CLASSIFICATION else 1

    def sizes(self) -> dict[str, int]:
        return {"train": len(self.y_train), "valid": len(self.y_valid), "test": len(self.y_test)}


@lru_cache(maxsize=None)
def _raw(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(X (n, d) float64, y (n,)) of a scikit-learn bundled set (read from the installed package)."""
    from sklearn import datasets as skd

    loader = {
        "digits": skd.load_digits,
        "wine": skd.load_wine,
        "breast_cancer": skd.load_breast_cancer,
        "diabetes": skd.load_diabetes,
    }[name]
    bunch = loader()
    return np.asarray(bunch.data, dtype=np.float64), np.asarray(bunch.target)


def _split_indices(y: np.ndarray, stratify: bool, fractions: tuple[float, float, float], seed: int):
    """Index arrays (train, valid, test); stratified per class when ``stratify``."""
    rng = np.random.default_rng(seed)
    groups = [np.flatnonzero(y == c) for c in np.unique(y)] if stratify else [np.arange(len(y))]
    parts: list[list[np.ndarray]] = [[], [], []]
    for idx in groups:
        idx = rng.permutation(idx)
        n_train = int(round(fractions[0] * len(idx)))
        n_valid = int(round(fractions[1] * len(idx)))
        parts[0].append(idx[:n_train])
        parts[1].append(idx[n_train : n_train + n_valid])
        parts[2].append(idx[n_train + n_valid :])
    # Shuffle once more so classes are interleaved (the trainer reshuffles anyway).
    return tuple(rng.permutation(np.concatenate(p)) for p in parts)


def load_dataset(
    name: str,
    seed: int = 0,
    fractions: tuple[float, float, float] = (0.6, 0.2, 0.2),
    max_train: int | None = None,
) -> Dataset:
    """Load a bundled dataset, split it deterministically and standardise it.

    Parameters
    ----------
    name : one of :func:`dataset_names`
    seed : int
        Seeds the split; the same seed always gives the same rows in each split.
    fractions : (train, valid, test)
        Positive fractions summing to 1.
    max_train : int, optional
        Keep only the first ``max_train`` training rows (tiny splits for tests); statistics are
        taken from the rows kept.
    """
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; expected one of {', '.join(DATASETS)}")
    if len(fractions) != 3 or any(f <= 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-9:
        raise ValueError(f"fractions must be three positive numbers summing to 1, got {fractions}")
    if max_train is not None and max_train < 1:
        raise ValueError(f"max_train must be at least 1, got {max_train}")
    task, kind = DATASETS[name]
    X, y = _raw(name)
    train, valid, test = _split_indices(y, task == CLASSIFICATION, fractions, seed)
    if max_train is not None:
        train = train[:max_train]

    if kind == "image":
        # One statistic for all pixels: per-pixel scaling would blow up the always-blank border
        # pixels of the digits and destroy the spatial structure convolutions rely on.
        mean = X[train].mean()
        std = X[train].std() or 1.0
    else:
        mean = X[train].mean(axis=0)
        std = X[train].std(axis=0)
        std = np.where(std > 0, std, 1.0)
    Xs = ((X - mean) / std).astype(np.float32)
    if kind == "image":
        Xs = Xs.reshape(-1, 1, 8, 8)

    target_mean, target_std = 0.0, 1.0
    if task == CLASSIFICATION:
        yt = torch.as_tensor(y.astype(np.int64))
        n_classes = int(y.max()) + 1
    else:
        target_mean = float(y[train].mean())
        target_std = float(y[train].std()) or 1.0
        yt = torch.as_tensor(((y - target_mean) / target_std).astype(np.float32))
        n_classes = 1
    xt = torch.as_tensor(Xs)
    return Dataset(
        name=name,
        task=task,
        seed=seed,
        x_train=xt[train].contiguous(),
        y_train=yt[train].contiguous(),
        x_valid=xt[valid].contiguous(),
        y_valid=yt[valid].contiguous(),
        x_test=xt[test].contiguous(),
        y_test=yt[test].contiguous(),
        n_classes=n_classes,
        target_mean=target_mean,
        target_std=target_std,
    )
