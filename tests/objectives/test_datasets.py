"""Bundled datasets: shapes, deterministic splits, train-only standardisation, clear errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nasviz.objectives.datasets import dataset_names, load_dataset


def test_digits_shapes_and_split_sizes():
    ds = load_dataset("digits", seed=0)
    assert ds.task == "classification" and ds.n_classes == 10 and ds.n_outputs == 10
    assert ds.input_shape == (1, 8, 8)
    sizes = ds.sizes()
    assert sum(sizes.values()) == 1797
    assert abs(sizes["train"] - 0.6 * 1797) < 12 and abs(sizes["valid"] - 0.2 * 1797) < 12
    assert ds.x_train.dtype == torch.float32 and ds.y_train.dtype == torch.int64
    # Stratified: every class appears in every split.
    for y in (ds.y_train, ds.y_valid, ds.y_test):
        assert set(y.tolist()) == set(range(10))


def test_splits_are_deterministic_and_disjoint():
    a, b, c = load_dataset("wine", seed=3), load_dataset("wine", seed=3), load_dataset("wine", seed=4)
    assert torch.equal(a.x_train, b.x_train) and torch.equal(a.y_test, b.y_test)
    assert not torch.equal(a.x_train, c.x_train)
    rows = [tuple(r) for x in (a.x_train, a.x_valid, a.x_test) for r in x.numpy().round(5)]
    assert len(rows) == len(set(rows)) == 178  # no row in two splits


def test_standardised_with_train_statistics_only():
    ds = load_dataset("breast_cancer", seed=1)
    mean, std = ds.x_train.mean(0), ds.x_train.std(0, unbiased=False)
    assert torch.allclose(mean, torch.zeros_like(mean), atol=1e-5)
    assert torch.allclose(std, torch.ones_like(std), atol=1e-4)
    # The validation split is not itself exactly standardised: its statistics were not used.
    assert ds.x_valid.mean(0).abs().max() > 1e-3


def test_regression_targets_standardised_and_invertible():
    ds = load_dataset("diabetes", seed=0)
    assert ds.task == "regression" and ds.n_outputs == 1 and ds.y_train.dtype == torch.float32
    assert abs(float(ds.y_train.mean())) < 1e-5
    from sklearn.datasets import load_diabetes

    raw = set(np.round(load_diabetes().target, 3))
    restored = np.round(ds.y_test.numpy().astype(np.float64) * ds.target_std + ds.target_mean, 3)
    assert all(v in raw for v in restored)


def test_friedman1_is_friedmans_function_plus_unit_noise():
    ds = load_dataset("friedman1", seed=0)
    assert ds.task == "regression" and ds.input_shape == (10,) and ds.sizes() == {"train": 1200, "valid": 400, "test": 400}
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(n_samples=2000, n_features=10, noise=1.0, random_state=0)
    f = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
    assert 0.8 < np.std(y - f) < 1.2  # the documented N(0, 1) noise on the documented function
    # the same 2,000 points every time; inputs standardised with the train split
    again = load_dataset("friedman1", seed=0)
    assert torch.equal(ds.x_valid, again.x_valid) and torch.equal(ds.y_test, again.y_test)
    assert torch.allclose(ds.x_train.mean(0), torch.zeros(10), atol=1e-5)


def test_bad_arguments_are_named():
    assert set(dataset_names()) >= {"digits", "wine", "breast_cancer", "diabetes", "friedman1"}
    with pytest.raises(ValueError, match="unknown dataset 'mnist2'"):
        load_dataset("mnist2")
    with pytest.raises(ValueError, match="dataset 'mnist' is read from a folder"):
        load_dataset("mnist")  # a folder dataset without its folder: named, never downloaded
    with pytest.raises(ValueError, match="fractions"):
        load_dataset("digits", fractions=(0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match="max_train"):
        load_dataset("digits", max_train=0)
    assert load_dataset("digits", max_train=50).sizes()["train"] == 50
