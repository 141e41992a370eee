"""MNIST, Fashion-MNIST and CIFAR-10 read from a folder in torchvision's on-disk layout.

torchvision cannot be installed beside this torch build, so its formats are read here directly:

* MNIST / Fashion-MNIST: ``ROOT/MNIST/raw`` and ``ROOT/FashionMNIST/raw`` hold the four IDX
  files ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte`` and
  ``t10k-labels-idx1-ubyte``, each either as is or gzipped (``.gz``), as the original sites
  publish them. An IDX file is a big-endian header (two zero bytes, a type byte, the number of
  dimensions, one 32-bit size per dimension) followed by the values (:func:`read_idx`).
* CIFAR-10: ``ROOT/cifar-10-batches-py/data_batch_1`` .. ``data_batch_5`` and ``test_batch``,
  each a (Python 2) pickle of ``{"data": uint8 (10000, 3072), "labels": [int], ...}``. They are
  read with :func:`~nasviz.objectives.restricted_load.restricted_pickle_load`, which admits only
  numpy's array-reconstruction classes (:data:`CIFAR_ALLOWED`): a crafted batch that names
  anything else is refused before anything from it runs. Plain ``pickle`` is never used.

Images come back as ``uint8`` arrays ``(N, C, H, W)`` and labels as ``int64`` ``(N,)``, train and
test separately (:func:`read_folder`). Nothing is downloaded unless :func:`download` is called (the
CLI's ``--download``): it fetches the official archives with ``urllib`` and checks their MD5
sums (torchvision's). The tests never use the network; they write a tiny folder in these formats.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import struct
import tarfile
import tempfile
import urllib.request
from pathlib import Path

import numpy as np

from nasviz.errors import InputError
from nasviz.objectives.restricted_load import restricted_pickle_load

#: dataset name -> the folder torchvision keeps it in under the root.
FOLDERS: dict[str, str] = {"mnist": "MNIST", "fashion_mnist": "FashionMNIST", "cifar10": "cifar-10-batches-py"}
IDX_FILES: dict[str, tuple[str, str]] = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
CIFAR_TRAIN = tuple(f"data_batch_{i}" for i in range(1, 6))
CIFAR_TEST = ("test_batch",)

#: Official archives and their MD5 sums (torchvision's resources).
DOWNLOADS: dict[str, tuple[tuple[str, ...], tuple[tuple[str, str], ...]]] = {
    "mnist": (("https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"), (
        ("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
        ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
        ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
        ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c"))),
    "fashion_mnist": (("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",), (
        ("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
        ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
        ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
        ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310"))),
    "cifar10": (("https://www.cs.toronto.edu/~kriz/",), (("cifar-10-python.tar.gz", "c58f30108f718f92721af3b95e74349a"),)),
}

_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
#: The largest IDX file read (MNIST's train images are 47 MB).
MAX_IDX_BYTES = 200 * 2 ** 20


def _cifar_allowed() -> dict[str, object]:
    """numpy's array reconstruction under the names numpy 1 and numpy 2 pickle it as, and
    ``_codecs.encode``."""
    try:
        from numpy._core.multiarray import _reconstruct, scalar
    except ImportError:  # numpy 1
        from numpy.core.multiarray import _reconstruct, scalar
    import _codecs

    # _codecs.encode(text, "latin1") is how protocol-2 pickles written by Python 3 carry bytes (a
    # pure function; torch's restricted unpickler admits it for the same reason)
    out: dict[str, object] = {"numpy.ndarray": np.ndarray, "numpy.dtype": np.dtype, "_codecs.encode": _codecs.encode}
    for module in ("numpy.core.multiarray", "numpy._core.multiarray"):
        out[f"{module}._reconstruct"] = _reconstruct
        out[f"{module}.scalar"] = scalar
    return out


#: What a CIFAR-10 batch may name (everything else is refused).
CIFAR_ALLOWED: dict[str, object] = _cifar_allowed()


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """The array in an IDX file (gzipped when the name ends in ``.gz``); ``InputError`` naming
    the file and what is wrong with its header or length."""
    label = str(path)
    opener = gzip.open if label.endswith(".gz") else open
    try:
        with opener(path, "rb") as handle:
            data = handle.read(MAX_IDX_BYTES + 1)
    except (OSError, EOFError) as err:
        raise InputError(f"could not be read: {err}", source=label) from None
    if len(data) > MAX_IDX_BYTES:
        raise InputError(f"holds more than {MAX_IDX_BYTES} bytes: not an MNIST-sized IDX file", source=label)
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _IDX_TYPES:
        raise InputError("is not an IDX file (bad magic number)", source=label, field="magic")
    ndim = data[3]
    header = 4 + 4 * ndim
    if ndim == 0 or len(data) < header:
        raise InputError(f"has a truncated header ({ndim} dimensions)", source=label, field="dimensions")
    shape = struct.unpack(f">{ndim}I", data[4:header])
    dtype = np.dtype(_IDX_TYPES[data[2]])
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(data) - header != expected:
        raise InputError(f"holds {len(data) - header} bytes of values, but its header {shape} says {expected}",
                         source=label, field="data")
    return np.frombuffer(data, dtype=dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def _idx_path(folder: Path, name: str) -> Path:
    for candidate in (folder / name, folder / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    raise InputError(f"{name} (or {name}.gz) is missing: expected torchvision's layout", source=str(folder))


def _mnist_split(folder: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    images_name, labels_name = IDX_FILES[split]
    images, labels = read_idx(_idx_path(folder, images_name)), read_idx(_idx_path(folder, labels_name))
    if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
        raise InputError(f"images {images.shape} and labels {labels.shape} do not match (N x H x W and N)",
                         source=str(folder), field=split)
    return images[:, None, :, :].astype(np.uint8), labels.astype(np.int64)


def _cifar_split(folder: Path, names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    for name in names:
        path = folder / name
        batch = restricted_pickle_load(path, CIFAR_ALLOWED, what="a CIFAR-10 batch", encoding="latin1")
        if not isinstance(batch, dict) or "data" not in batch or "labels" not in batch:
            raise InputError("is not a CIFAR-10 batch (a dict with 'data' and 'labels')", source=str(path))
        data, labels = np.asarray(batch["data"]), np.asarray(batch["labels"], dtype=np.int64)
        if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3072 or len(data) != len(labels):
            raise InputError(f"holds data {data.shape} {data.dtype} and {len(labels)} labels; expected uint8 "
                             "(N, 3072) and N labels", source=str(path), field="data")
        xs.append(data.reshape(-1, 3, 32, 32))
        ys.append(labels)
    return np.concatenate(xs), np.concatenate(ys)


def dataset_folder(name: str, root: str | os.PathLike) -> Path:
    """Where ``name``'s files are under ``root``: torchvision's folder (``root/MNIST/raw``,
    ``root/cifar-10-batches-py``), or ``root`` itself if the files are there."""
    if name not in FOLDERS:
        raise InputError(f"unknown folder dataset {name!r}; expected one of {', '.join(FOLDERS)}")
    root = Path(root)
    nested = root / FOLDERS[name] / ("raw" if name != "cifar10" else "")
    return nested if nested.is_dir() else root


def read_folder(name: str, root: str | os.PathLike) -> dict[str, np.ndarray]:
    """``{"x": (N, C, H, W) uint8, "y": (N,) int64, "x_test", "y_test"}`` of a folder dataset."""
    folder = dataset_folder(name, root)
    if not folder.is_dir():
        raise InputError("is not a folder", source=str(folder))
    if name == "cifar10":
        (x, y), (xt, yt) = _cifar_split(folder, CIFAR_TRAIN), _cifar_split(folder, CIFAR_TEST)
    else:
        (x, y), (xt, yt) = _mnist_split(folder, "train"), _mnist_split(folder, "test")
    for split, labels in (("train", y), ("test", yt)):
        if len(labels) == 0 or labels.min() < 0 or labels.max() > 9:
            raise InputError("labels must be the classes 0..9", source=str(folder), field=split)
    return {"x": x, "y": y, "x_test": xt, "y_test": yt}


def _md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(2 ** 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fetch(urls: tuple[str, ...], filename: str, md5: str, target: Path) -> None:
    """Download ``filename`` from the first of ``urls`` that serves it with the right MD5."""
    errors = []
    for base in urls:
        tmp = Path(tempfile.mkstemp(dir=target.parent, suffix=".part")[1])
        try:
            with urllib.request.urlopen(base + filename, timeout=60) as response, open(tmp, "wb") as out:
                shutil.copyfileobj(response, out)
            if _md5(tmp) != md5:
                raise OSError(f"MD5 {_md5(tmp)} is not the published {md5}")
            os.replace(tmp, target)
            return
        except OSError as err:
            errors.append(f"{base}{filename}: {err}")
        finally:
            tmp.unlink(missing_ok=True)
    raise InputError("could not be downloaded: " + "; ".join(errors), source=filename)


def download(name: str, root: str | os.PathLike) -> Path:
    """Fetch ``name`` into ``root`` in torchvision's layout (only when the user asks: the CLI's
    ``--download``); files already there are kept. Returns the dataset's folder."""
    if name not in DOWNLOADS:
        raise InputError(f"unknown folder dataset {name!r}; expected one of {', '.join(DOWNLOADS)}")
    urls, files = DOWNLOADS[name]
    root = Path(root)
    if name == "cifar10":
        folder = root / FOLDERS[name]
        if not all((folder / f).is_file() for f in CIFAR_TRAIN + CIFAR_TEST):
            root.mkdir(parents=True, exist_ok=True)
            archive = root / files[0][0]
            if not archive.is_file() or _md5(archive) != files[0][1]:
                _fetch(urls, files[0][0], files[0][1], archive)
            with tarfile.open(archive, "r:gz") as tar:
                tar.extractall(root, filter="data")  # no absolute paths, links out or devices
        return folder
    folder = root / FOLDERS[name] / "raw"
    folder.mkdir(parents=True, exist_ok=True)
    for filename, md5 in files:
        if not (folder / filename).is_file():
            _fetch(urls, filename, md5, folder / filename)
    return folder
