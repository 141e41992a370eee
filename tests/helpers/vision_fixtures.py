"""Tiny folders in torchvision's on-disk layout, written from scratch (tests only; no network).

:func:`write_mnist_folder` writes the four IDX files of MNIST (or Fashion-MNIST) and
:func:`write_cifar_folder` the six CIFAR-10 batches, with images whose class is learnable (a bright
square at a class-dependent place on a noisy background), so a small CNN reaches a clear accuracy
in a few epochs.
"""

from __future__ import annotations

import gzip
import pickle
import struct
from pathlib import Path

import numpy as np

from nasviz.objectives.vision import CIFAR_TEST, CIFAR_TRAIN, FOLDERS, IDX_FILES


def _images(rng: np.random.Generator, n: int, channels: int, size: int, classes: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """``(n, channels, size, size)`` uint8 images and ``(n,)`` labels."""
    y = np.arange(n) % classes
    x = rng.integers(0, 60, size=(n, channels, size, size)).astype(np.uint8)
    cell = max(1, size // 4)
    for i, label in enumerate(y):
        r, c = divmod(int(label), 4)
        x[i, :, r * cell : (r + 1) * cell, c * cell : (c + 1) * cell] = 230
    order = rng.permutation(n)
    return x[order], y[order].astype(np.int64)


def _write_idx(path: Path, array: np.ndarray, compress: bool) -> None:
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    data = header + array.astype(np.uint8).tobytes()
    if compress:
        path = path.with_name(path.name + ".gz")
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)


def write_mnist_folder(root: str | Path, name: str = "mnist", n_train: int = 200, n_test: int = 60,
                       size: int = 12, seed: int = 0, compress: bool = True) -> Path:
    """``root/MNIST/raw`` (or ``FashionMNIST``) with the four IDX files; returns ``root``."""
    rng = np.random.default_rng(seed)
    folder = Path(root) / FOLDERS[name] / "raw"
    folder.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", n_train), ("test", n_test)):
        x, y = _images(rng, n, 1, size)
        images, labels = IDX_FILES[split]
        _write_idx(folder / images, x[:, 0], compress)
        _write_idx(folder / labels, y, compress)
    return Path(root)


def write_cifar_folder(root: str | Path, per_batch: int = 30, seed: int = 0) -> Path:
    """``root/cifar-10-batches-py`` with five training batches and a test batch of 32 x 32 colour
    images, pickled as the originals are (a dict of ``data`` and ``labels``); returns ``root``."""
    rng = np.random.default_rng(seed)
    folder = Path(root) / FOLDERS["cifar10"]
    folder.mkdir(parents=True, exist_ok=True)
    for name in CIFAR_TRAIN + CIFAR_TEST:
        x, y = _images(rng, per_batch, 3, 32)
        batch = {"batch_label": name, "data": x.reshape(per_batch, -1), "labels": [int(v) for v in y],
                 "filenames": [f"{name}_{i}.png" for i in range(per_batch)]}
        (folder / name).write_bytes(pickle.dumps(batch, protocol=2))
    return Path(root)
