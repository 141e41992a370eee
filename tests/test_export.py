"""``nasviz export``: a run's best CNN as TorchScript / torch.export with its recipe, reloaded."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytestmark = pytest.mark.usefixtures("one_torch_thread")
import torch

from nasviz.cli import main
from nasviz.export import load_exported, score
from nasviz.objectives.vision import read_folder
from vision_fixtures import write_mnist_folder
from nasviz.runner import start_run
from nasviz.store import RunStore


def _run(tmp_path, strategy: str, budget: int, **options):
    root = write_mnist_folder(tmp_path / "data", n_train=150, n_test=50)
    store = RunStore(tmp_path / "runs.sqlite")
    config = {"objective": "train", "space": "cnn", "dataset": "mnist", "data_folder": str(root), "strategy": strategy,
              "strategy_options": options, "budget": budget, "seed": 0,
              "training": {"epochs": 2, "patience": 2, "batch_size": 32}}
    result = start_run(store, config)
    return store, result, root


def _reproduce(out, root):
    """Accuracy of the reloaded network on the raw test images, preprocessed as the JSON says."""
    recipe = json.loads((out / "network.json").read_text())
    raw = read_folder(recipe["dataset"], root)
    pre = recipe["preprocessing"]
    mean, std = np.array(pre["mean"])[None, :, None, None], np.array(pre["std"])[None, :, None, None]
    x = torch.as_tensor(((raw["x_test"] / pre["scale"] - mean) / std).astype(np.float32))
    assert list(x.shape[1:]) == recipe["input_shape"]
    return recipe, score(load_exported(out / recipe["file"]), x, torch.as_tensor(raw["y_test"]), recipe["task"])


@pytest.mark.slow
def test_a_kept_network_exports_in_both_formats_and_reproduces_its_test_accuracy(tmp_path, capsys):
    store, result, root = _run(tmp_path, "autokeras", 1, n_init=1)
    assert store.network_bytes(result.run_id) > 0  # the best network's weights outlive the run
    evaluations = store.evaluations(result.run_id)
    best = max((e for e in evaluations if e.value is not None), key=lambda e: e.value)
    for fmt in ("torchscript", "export"):
        out = tmp_path / fmt
        assert main(["export", "--store", str(tmp_path / "runs.sqlite"), str(result.run_id), "--format", fmt,
                     "--out", str(out)]) == 0
        recipe, accuracy = _reproduce(out, root)
        assert recipe["arch"] == result.best_arch and recipe["weights"] == "kept by the run"
        assert accuracy == pytest.approx(recipe["test_score"], abs=1e-9)
        # the kept weights are the search's: the same test accuracy the search measured
        assert recipe["test_score"] == pytest.approx(best.info["test_score"], abs=1e-6)
    assert "wrote" in capsys.readouterr().out


@pytest.mark.slow
def test_a_network_whose_weights_were_not_kept_is_retrained_and_says_so(tmp_path):
    store, result, root = _run(tmp_path, "random", 1)
    assert store.network_bytes(result.run_id) == 0
    from nasviz.export import export_network

    recipe = export_network(tmp_path / "runs.sqlite", result.run_id, tmp_path / "out", "torchscript")
    assert recipe["weights"].startswith("retrained")
    _, accuracy = _reproduce(tmp_path / "out", root)
    assert accuracy == pytest.approx(recipe["test_score"], abs=1e-9)
    # retrained from the stored config with the same seed: the search's network, trained again
    assert recipe["test_score"] == pytest.approx(store.evaluations(result.run_id)[0].info["test_score"], abs=1e-6)


def test_a_table_run_has_nothing_to_export(tmp_path, capsys):
    import itertools

    from nasviz.spaces import nb201

    table = tmp_path / "t.csv"
    cells = list(itertools.islice(nb201.enumerate_all(), 5))
    table.write_text("arch,acc\n" + "".join(f"{nb201.format(a)},{i}\n" for i, a in enumerate(cells)))
    store = RunStore(tmp_path / "runs.sqlite")
    run = start_run(store, {"table": str(table), "metric": "acc", "strategy": "random", "budget": 2})
    assert main(["export", "--store", str(tmp_path / "runs.sqlite"), str(run.run_id), "--out", str(tmp_path / "o")]) == 2
    assert "table" in capsys.readouterr().err
