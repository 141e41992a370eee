"""MNIST / Fashion-MNIST / CIFAR-10 from a folder in torchvision's layout, and MNIST-1D."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from nasviz.errors import InputError, UnsafeFileError
from nasviz.objectives import mnist1d
from nasviz.objectives.datasets import load_dataset
from nasviz.objectives.vision import read_folder, read_idx
from vision_fixtures import write_cifar_folder, write_mnist_folder


@pytest.mark.parametrize("compress", [True, False])
def test_mnist_idx_files_are_read_gzipped_or_not(tmp_path, compress):
    root = write_mnist_folder(tmp_path, n_train=50, n_test=20, size=10, compress=compress)
    data = read_folder("mnist", root)
    assert data["x"].shape == (50, 1, 10, 10) and data["x"].dtype == np.uint8
    assert data["y"].shape == (50,) and data["x_test"].shape == (20, 1, 10, 10)
    assert set(np.unique(data["y"])) == set(range(10))


def test_a_folder_dataset_is_split_and_standardised_per_channel(tmp_path):
    root = write_mnist_folder(tmp_path, name="fashion_mnist", n_train=200, n_test=40)
    d = load_dataset("fashion_mnist", seed=3, folder=str(root))
    assert d.sizes() == {"train": 160, "valid": 40, "test": 40} and d.input_shape == (1, 12, 12)
    assert abs(float(d.x_train.mean())) < 1e-5 and abs(float(d.x_train.std()) - 1) < 1e-2
    assert d.input_scale == 255.0 and len(d.input_mean) == len(d.input_std) == 1
    again = load_dataset("fashion_mnist", seed=3, folder=str(root))
    assert np.array_equal(d.y_valid.numpy(), again.y_valid.numpy())  # deterministic given the seed
    with pytest.raises(ValueError, match="give its folder"):
        load_dataset("mnist")


def test_cifar_batches_are_read_with_the_allow_list(tmp_path):
    root = write_cifar_folder(tmp_path, per_batch=12)
    d = load_dataset("cifar10", folder=str(root))
    assert d.input_shape == (3, 32, 32) and len(d.input_mean) == 3 and d.sizes()["test"] == 12


class _Boom:
    def __reduce__(self):
        import os

        return (os.system, ("echo pwned",))


def test_a_crafted_cifar_batch_is_refused_before_anything_runs(tmp_path):
    root = write_cifar_folder(tmp_path, per_batch=4)
    (root / "cifar-10-batches-py" / "data_batch_2").write_bytes(pickle.dumps({"data": _Boom(), "labels": []}))
    with pytest.raises(UnsafeFileError, match="system"):
        read_folder("cifar10", root)


def test_bad_idx_files_are_named(tmp_path):
    bad = tmp_path / "train-images-idx3-ubyte"
    bad.write_bytes(b"\x00\x00\x08\x03" + (2).to_bytes(4, "big") * 3 + b"\x01")  # 2x2x2 promised, 1 byte given
    with pytest.raises(InputError, match="header"):
        read_idx(bad)
    bad.write_bytes(b"PK\x03\x04")
    with pytest.raises(InputError, match="magic"):
        read_idx(bad)
    with pytest.raises(InputError, match="not a folder"):
        read_folder("mnist", tmp_path / "nowhere")
    (tmp_path / "MNIST" / "raw").mkdir(parents=True)
    with pytest.raises(InputError, match="train-images-idx3-ubyte .*is missing"):
        read_folder("mnist", tmp_path)


@pytest.mark.slow
def test_mnist1d_is_generated_once_cached_as_npz_and_deterministic(tmp_path, monkeypatch):
    monkeypatch.setenv(mnist1d.CACHE_ENV, str(tmp_path))
    state = np.random.get_state()[1].copy()
    first = mnist1d.generate()
    assert np.array_equal(np.random.get_state()[1], state)  # the global RNG is left as it was
    cached = tmp_path / "mnist1d-n5000-len40-seed42.npz"
    assert cached.is_file() and np.load(cached, allow_pickle=False)["x"].shape == (4000, 40)
    again = mnist1d.generate()  # read back from the cache
    assert all(np.array_equal(first[k], again[k]) for k in first)
    assert first["x_test"].shape == (1000, 40) and set(np.unique(first["y"])) == set(range(10))


@pytest.mark.slow
def test_mnist1d_is_the_papers_hard_dataset(tmp_path, monkeypatch):
    """The generated signals are as hard as the MNIST-1D paper's: logistic regression reaches
    about 32 % test accuracy there (and 94 % on MNIST), so high accuracies of searched CNNs come
    from the networks, not from an easier dataset."""
    from sklearn.linear_model import LogisticRegression

    monkeypatch.setenv(mnist1d.CACHE_ENV, str(tmp_path))
    data = mnist1d.generate()
    model = LogisticRegression(max_iter=2000).fit(data["x"], data["y"])
    accuracy = float(model.score(data["x_test"], data["y_test"]))
    assert 0.25 < accuracy < 0.40, accuracy
