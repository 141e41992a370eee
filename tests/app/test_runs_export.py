"""The Runs page offers a trained run's best network for download (nasviz export); a network the
run did not keep is retrained in a worker process, never in the page's request (issue 47)."""

from __future__ import annotations

import io
import json
import time
import zipfile

import pytest
from streamlit.testing.v1 import AppTest

from nasviz.export import export_zip
from nasviz.jobs.manager import load_arrays
from vision_fixtures import write_mnist_folder
from nasviz.runner import start_run
from nasviz.store import RunStore
from tests_app_helpers import APP, errors, shown_text

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _trained_run(store_path, tmp_path):
    """A finished training run of the random strategy: it keeps no weights (nothing warm-starts)."""
    root = write_mnist_folder(tmp_path / "data", n_train=60, n_test=20, size=8)
    return start_run(RunStore(store_path), {
        "objective": "train", "space": "cnn", "dataset": "mnist", "data_folder": str(root), "strategy": "random",
        "budget": 1, "training": {"epochs": 1, "patience": 1, "batch_size": 32}})


def _runs_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/runs.py").run()
    return at


@pytest.mark.slow
def test_a_network_to_retrain_is_trained_in_a_worker_process_not_in_the_request(store_path, tmp_path, monkeypatch):
    from nasviz.objectives.training import TrainingObjective

    run = _trained_run(store_path, tmp_path)
    assert RunStore(store_path).has_network(run.run_id, run.best_arch) is False

    def no_training(*args, **kwargs):
        raise AssertionError("a network was trained in the request")

    monkeypatch.setattr(TrainingObjective, "train_network", no_training)
    monkeypatch.setenv("NASVIZ_SYNC_RUNS", "0")  # explorer jobs in worker processes, as served
    at = _runs_page()
    assert not errors(at), errors(at)
    assert len(at.get("download_button")) == 2  # CSV and JSON; the network only once it is trained
    at.button(key="export_retrain").click().run()
    end = time.monotonic() + 120
    while len(at.get("download_button")) < 3 and time.monotonic() < end:
        assert not errors(at), errors(at)
        time.sleep(1.0)
        at.run()
    assert not errors(at), errors(at)
    assert len(at.get("download_button")) == 3
    (result,) = (store_path.parent / "explorer-cache").glob("*.npz")
    with zipfile.ZipFile(io.BytesIO(load_arrays(result)["zip"].tobytes())) as archive:
        assert sorted(archive.namelist()) == ["network.json", "network.pt"]
        recipe = json.loads(archive.read("network.json"))
    assert recipe["arch"] == run.best_arch and recipe["weights"].startswith("retrained")
    # Another visitor finds it cached: the download at once, nothing to retrain.
    at = _runs_page()
    assert len(at.get("download_button")) == 3 and not [b for b in at.button if b.key == "export_retrain"]


@pytest.mark.slow
def test_a_retraining_over_the_budget_is_refused_with_the_command(store_path, tmp_path, monkeypatch):
    run = _trained_run(store_path, tmp_path)
    monkeypatch.setenv("NASVIZ_MAX_EXPLORER_SECONDS", "0.001")
    at = _runs_page()
    assert not errors(at)
    assert len(at.get("download_button")) == 2 and not [b for b in at.button if b.key == "export_retrain"]
    (info,) = [shown_text(i.value) for i in at.info if "nasviz export" in i.value]
    assert info.endswith(f'python -m nasviz export --store "$NASVIZ_STORE" {run.run_id} --out '
                         f"nasviz-run-{run.run_id}-network"), info
    assert str(store_path) not in info  # no server path shown


@pytest.mark.slow
def test_the_export_zip_from_the_command_line_retrains_and_the_page_never_does(store_path, tmp_path):
    from nasviz.dashboard.engine import export_zip as page_export
    from nasviz.errors import ConfigError

    run = _trained_run(store_path, tmp_path)
    with zipfile.ZipFile(io.BytesIO(export_zip(store_path, run.run_id))) as archive:
        assert sorted(archive.namelist()) == ["network.json", "network.pt"]
        recipe = json.loads(archive.read("network.json"))
    assert recipe["arch"] == run.best_arch and recipe["input_shape"] == [1, 8, 8]
    with pytest.raises(ConfigError, match="did not keep the trained weights"):
        page_export(store_path, run.run_id)
