"""The Runs page offers a trained run's best network for download (nasviz export)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from streamlit.testing.v1 import AppTest

from nasviz.export import export_zip
from vision_fixtures import write_mnist_folder
from nasviz.runner import start_run
from nasviz.store import RunStore
from tests_app_helpers import APP, errors

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.mark.slow
def test_a_trained_run_offers_its_network(store_path, tmp_path):
    root = write_mnist_folder(tmp_path / "data", n_train=60, n_test=20, size=8)
    run = start_run(RunStore(store_path), {
        "objective": "train", "space": "cnn", "dataset": "mnist", "data_folder": str(root), "strategy": "random",
        "budget": 1, "training": {"epochs": 1, "patience": 1, "batch_size": 32}})
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/runs.py").run()
    assert not errors(at)
    assert len(at.get("download_button")) == 3  # CSV, JSON and the network
    with zipfile.ZipFile(io.BytesIO(export_zip(store_path, run.run_id))) as archive:
        assert sorted(archive.namelist()) == ["network.json", "network.pt"]
        recipe = json.loads(archive.read("network.json"))
    assert recipe["arch"] == run.best_arch and recipe["input_shape"] == [1, 8, 8]
