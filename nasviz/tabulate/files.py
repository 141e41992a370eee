"""A tabulation's files: the progress file (``<out>.partial.csv``, one line per finished training)
and its settings (``<out>.partial.json``), and the final table, each class's seeds aggregated."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from nasviz.errors import InputError
from nasviz.spaces import get_space
from nasviz.tabulate.tasks import Plan

#: Columns of the final table before the per-epoch ones.
COLUMNS = (
    "arch", "valid_accuracy", "test_accuracy", "valid_accuracy_std", "test_accuracy_std",
    "valid_accuracy_seeds", "test_accuracy_seeds", "params", "flops", "train_seconds",
)
PARTIAL_COLUMNS = (
    "arch", "seed", "status", "valid_accuracy", "test_accuracy", "train_seconds", "epochs_run", "valid_curve", "error",
)


def partial_paths(out: Path) -> tuple[Path, Path]:
    """``<out>.partial.csv`` (finished trainings) and ``<out>.partial.json`` (their settings)."""
    return out.with_name(out.name + ".partial.csv"), out.with_name(out.name + ".partial.json")


def read_partial(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """Finished tasks of a partial file, by ``(representative string, seed index)``.

    A line cut short by an interruption (too few fields, or an unreadable seed) is ignored.
    """
    done: dict[tuple[str, int], dict[str, Any]] = {}
    if not path.is_file():
        return done
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames is None or tuple(reader.fieldnames) != PARTIAL_COLUMNS:
            raise InputError(f"{path} is not a tabulation progress file (columns {reader.fieldnames})")
        for row in reader:
            if row.get("error") is None or row.get("status") not in ("ok", "failed") or not str(row["seed"]).isdigit():
                continue
            done[(row["arch"], int(row["seed"]))] = row
    return done


def format_cell(value: Any) -> str:
    """A value as the progress file and the table write it: floats to 4 decimals, lists ``;``-joined."""
    if value is None or value == "":
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, (list, tuple)):
        return ";".join(format_cell(float(v)) for v in value)
    return str(value)


def _fmt_seed_values(values: Sequence[float]) -> str:
    """Per-seed accuracies, ``;``-separated, to 0.01 points: the means and spreads are computed
    before rounding, and on splits of fewer than 5,000 examples (digits: 359 / 360) every
    possible value stays distinct, so the list loses nothing while the table stays under 5 MB."""
    return ";".join(f"{float(v):.2f}" for v in values)


def _more_seeds_only(previous: dict[str, Any], meta: dict[str, Any]) -> bool:
    """Whether ``meta`` asks only for more seeds than ``previous``: seed ``k`` of a class depends on
    the class key and ``k`` alone, so the trainings already done are the first seeds of the larger
    tabulation and it can extend them."""
    def without_seeds(m: dict[str, Any]) -> dict[str, Any]:
        return {**m, "settings": {k: v for k, v in m.get("settings", {}).items() if k != "seeds"}}

    return (without_seeds(previous) == without_seeds(meta)
            and int(meta["settings"].get("seeds", 1)) > int(previous.get("settings", {}).get("seeds", 1)))


def check_settings(partial_json: Path, meta: dict[str, Any]) -> None:
    """Keep ``meta`` beside the progress file; refuse settings other than those already there
    (except more seeds, which extend the tabulation)."""
    if partial_json.is_file():
        previous = json.loads(partial_json.read_text())
        if previous != meta and _more_seeds_only(previous, meta):
            partial_json.write_text(json.dumps(meta, indent=1, sort_keys=True))
        elif previous != meta:
            raise InputError(
                f"{partial_json} was written with other settings ({previous}); remove the .partial files "
                "to start again, or rerun with the same settings to resume"
            )
    else:
        partial_json.write_text(json.dumps(meta, indent=1, sort_keys=True))


# ------------------------------------------------------------------------ aggregation
@dataclass(frozen=True)
class ClassResult:
    """One class's results over its seeds (failed seeds left out of the means).

    ``valid`` / ``test``: per-seed accuracies of the successful seeds, in seed order, shape
    ``(n_ok,)``; ``curves``: validation accuracy per epoch, shape ``(n_ok, epochs)`` (shorter
    curves of early-stopped seeds are padded with their last value); ``seconds``: mean training
    seconds per seed.
    """

    valid: np.ndarray
    test: np.ndarray
    curves: np.ndarray
    seconds: float


def class_results(rows: Sequence[dict[str, Any]], epochs: int) -> ClassResult:
    """Aggregate the partial-file rows of one class (any order; sorted by seed here)."""
    ok = sorted((r for r in rows if r["status"] == "ok" and r["valid_accuracy"] != ""), key=lambda r: int(r["seed"]))
    curves = []
    for r in ok:
        curve = [float(v) for v in str(r["valid_curve"]).split(";") if v != ""]
        curves.append((curve + curve[-1:] * epochs)[:epochs] if curve else [math.nan] * epochs)
    return ClassResult(
        valid=np.array([float(r["valid_accuracy"]) for r in ok]),
        test=np.array([float(r["test_accuracy"]) for r in ok]),
        curves=np.array(curves, dtype=float).reshape(len(ok), epochs),
        seconds=float(np.mean([float(r["train_seconds"]) for r in rows])) if rows else math.nan,
    )


def write_table(out: Path, p: Plan, settings: dict[str, Any], done: dict[tuple[str, int], dict[str, Any]]) -> None:
    """Write every cell (enumeration order) with its class's results, parameter count and FLOPs.

    ``params`` counts every edge's module, as NAS-Bench-201 does (also edges that cannot reach the
    output); ``flops`` is what one forward pass of one image computes (``torch.utils.flop_counter``:
    convolutions and the linear layer), so it is per cell, not per class.
    """
    from nasviz.objectives.network_cost import network_cost

    space = get_space(p.space_name)
    epochs = int(settings["training"]["epochs"])
    n_seeds = int(settings.get("seeds", 1))
    results = []
    for members in p.members:
        rep = space.format(p.cells[members[0]])
        results.append(class_results([done[(rep, k)] for k in range(n_seeds)], epochs))
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow([*COLUMNS, *(f"valid_accuracy_epoch_{e}" for e in range(1, epochs + 1))])
        cls_of = [0] * len(p.cells)
        for cls, members in enumerate(p.members):
            for i in members:
                cls_of[i] = cls
        flops_cache: dict[str, int] = {}
        for i, cell in enumerate(p.cells):
            r = results[cls_of[i]]
            params, flops = network_cost(p.space_name, cell, settings, flops_cache)
            has = len(r.valid) > 0
            writer.writerow([
                space.format(cell),
                format_cell(float(r.valid.mean())) if has else "", format_cell(float(r.test.mean())) if has else "",
                format_cell(float(r.valid.std(ddof=1))) if len(r.valid) > 1 else "",
                format_cell(float(r.test.std(ddof=1))) if len(r.test) > 1 else "",
                _fmt_seed_values(r.valid), _fmt_seed_values(r.test), params, flops, format_cell(r.seconds),
                *(format_cell(float(v)) if has else "" for v in r.curves.mean(axis=0)),
            ])
    tmp.replace(out)
