"""Export a run's best (or a chosen) network as TorchScript or ``torch.export``, with its recipe.

``python -m nasviz export --store FILE RUN_ID [--arch STRING] --format torchscript|export --out DIR``
writes into ``DIR``:

* ``network.pt`` (TorchScript, ``torch.jit.load``) or ``network.pt2`` (``torch.export.load(...)
  .module()``): the trained network in eval mode, inputs ``(N, *input_shape)`` float32 (any ``N``),
  outputs ``(N, classes)`` logits (or ``(N, 1)`` for regression);
* ``network.json``: the architecture (the space's string), the dataset, the input shape, the
  preprocessing (``x = (raw / scale - mean[c]) / std[c]`` per channel, or per feature for tabular
  data, with the training split's statistics), the test score the exported network reaches on the
  dataset's test split, where its weights came from, and the run's stored config.

Weights: a run keeps trained weights in its store only when its strategy needs them again
(Auto-Keras and BFS warm-start from them); when a run finishes the runner drops them all but its
best network's. Otherwise the network is **retrained** here from the run's stored config (same
dataset split, training settings and seed, so a network the search trained from scratch is
trained again identically on the CPU); ``weights`` in the JSON says which, and a note says when the
search had warm-started it (then the retrained network is not the one the search scored).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import torch

from nasviz.config import TRAIN, SearchConfig
from nasviz.errors import ConfigError
from nasviz.export_formats import FORMATS
from nasviz.objectives.training import TrainingSpec
from nasviz.spaces import get_space
from nasviz.store import RunStore


def _objective(search: SearchConfig):
    """The run's training objective rebuilt from its stored config (as :func:`nasviz.runner.build_search`)."""
    settings = search.objective
    if settings.kind != TRAIN:
        raise ConfigError("the run looked its values up in a table: it trained no network to export")
    spec = TrainingSpec(space=search.space, dataset=settings.dataset, dataset_seed=settings.dataset_seed,
                        metric=settings.metric, seed=settings.train_seed, device="cpu",
                        model_options=tuple(sorted(dict(settings.model_options).items())),
                        training=tuple(sorted(dict(settings.training).items())), data_folder=settings.data_folder)
    return spec.build()


def trained_network(store: RunStore, run_id: int, arch: str | None = None,
                    retrain: bool = True) -> tuple[torch.nn.Module, dict[str, Any]]:
    """The trained network of ``arch`` (default: the run's best) and what the JSON says about it
    (``run``: the :class:`~nasviz.store.StoredRun`; ``objective``, ``arch``, ``weights``, ``notes``);
    ``retrain=False`` raises :class:`ConfigError` instead of training a network whose weights the
    run did not keep (the dashboard never trains inside a request)."""
    run = store.get_run(run_id)
    objective = _objective(run.search)
    space = get_space(run.search.space)
    text = arch or run.best_arch
    if not text:
        raise ConfigError(f"run {run_id} has no successful evaluation to export")
    network = space.parse(text)
    key = space.format(network)
    arrays = store.network(run_id, key)
    notes: list[str] = []
    if arrays is not None:
        model = objective.builder(network, objective.dataset, **objective.model_options)
        model.load_state_dict({k: torch.as_tensor(v) for k, v in arrays.items()})
        weights = "kept by the run"
    elif not retrain:
        raise ConfigError(f"run {run_id} did not keep the trained weights of {key}: exporting it means training it "
                          f"again (python -m nasviz export)")
    else:
        model, result = objective.train_network(network)
        if not result.ok:
            raise ConfigError(f"retraining {key} failed: {result.error}")
        weights = "retrained from the run's stored config (its weights were not kept)"
        stored = [ev for ev in store.evaluations(run_id) if ev.arch == key]
        if stored and (stored[-1].info or {}).get("warm_start"):
            notes.append("the search warm-started this network from a trained ancestor; the export was trained "
                         "from scratch, so its scores differ from the search's")
    return model.cpu().eval(), {"run": run, "objective": objective, "arch": key, "weights": weights, "notes": notes}


def _save(model: torch.nn.Module, example: torch.Tensor, fmt: str, path: Path) -> None:
    if fmt == "torchscript":
        with torch.no_grad():
            torch.jit.trace(model, example).save(str(path))
    else:
        batch = torch.export.Dim("batch", min=2)
        program = torch.export.export(model, (example,), dynamic_shapes=({0: batch},))
        torch.export.save(program, str(path))


def score(model: Any, x: torch.Tensor, y: torch.Tensor, task: str, chunk: int = 1024) -> float:
    """Accuracy in percent (classification) or R^2 of a loaded network on a split; the network is
    called as is (an exported one is in eval mode and has no ``train()``)."""
    with torch.no_grad():
        out = torch.cat([model(x[i : i + chunk]) for i in range(0, len(x), chunk)])
    if task == "classification":
        return float((out.argmax(1) == y).float().mean().item() * 100.0)
    pred = out.reshape(-1)
    return 1.0 - float(((pred - y) ** 2).sum()) / (float(((y - y.mean()) ** 2).sum()) or 1.0)


def load_exported(path: str | os.PathLike) -> torch.nn.Module:
    """A network :func:`export_network` wrote, ready to call (TorchScript or ``torch.export``)."""
    path = Path(path)
    if path.suffix == ".pt2":
        return torch.export.load(str(path)).module()
    return torch.jit.load(str(path))


def export_network(store_path: str | os.PathLike, run_id: int, out: str | os.PathLike, fmt: str = "torchscript",
                   arch: str | None = None, retrain: bool = True) -> dict[str, Any]:
    """Write ``out/network.pt`` (or ``.pt2``) and ``out/network.json`` (module docstring); returns the JSON.
    ``retrain=False``: :class:`ConfigError` rather than retraining (:func:`trained_network`)."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
    store = RunStore(store_path)
    model, about = trained_network(store, int(run_id), arch, retrain)
    data = about["objective"].dataset
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _save(model, data.x_test[:2].float(), fmt, out / FORMATS[fmt])
    reloaded = load_exported(out / FORMATS[fmt])
    test_score = score(reloaded, data.x_test, data.y_test, data.task)
    recipe = {
        "run_id": int(run_id), "space": about["run"].search.space, "arch": about["arch"], "format": fmt,
        "file": FORMATS[fmt], "dataset": data.name, "task": data.task, "input_shape": list(data.input_shape),
        "n_outputs": data.n_outputs, "classes": data.n_classes,
        "preprocessing": {"formula": "x = (raw / scale - mean[c]) / std[c]", "scale": data.input_scale,
                          "mean": list(data.input_mean), "std": list(data.input_std),
                          "per": "channel" if len(data.input_shape) > 1 else "feature",
                          "target_mean": data.target_mean, "target_std": data.target_std},
        "test_score": test_score, "score_metric": "accuracy" if data.task == "classification" else "r2",
        "weights": about["weights"], "notes": about["notes"], "config": about["run"].config,
    }
    (out / "network.json").write_text(json.dumps(recipe, indent=2, allow_nan=False))
    return recipe


def export_zip(store_path: str | os.PathLike, run_id: int, fmt: str = "torchscript", arch: str | None = None,
               retrain: bool = True) -> bytes:
    """:func:`export_network` into a temporary folder, returned as the bytes of a ``.zip`` of its
    two files (what the Runs page offers for download, with ``retrain=False``)."""
    import io
    import tempfile
    import zipfile

    with tempfile.TemporaryDirectory(prefix="nasviz-export-") as folder:
        recipe = export_network(store_path, run_id, folder, fmt, arch, retrain)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name in (recipe["file"], "network.json"):
                archive.write(Path(folder) / name, arcname=name)
    return buffer.getvalue()
