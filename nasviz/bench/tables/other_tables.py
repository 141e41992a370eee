"""Tables printed from the other benchmarks' reports: the CNN comparison (``bench cnn-search``) and
the trainer's speed on the CPU (``bench trainer``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from nasviz.bench.tables import DocTable, register
from nasviz.bench.tables.markdown import md_table


# -------------------------------------------------------------- the CNN comparison

def cnn_summary(results: Sequence[Any], seconds: float = 900.0) -> str:
    """``bench cnn-search``'s own table and claims, from its JSON-lines file of runs."""
    from nasviz.bench.cnn_search import METHODS, claims, summarise, table

    (runs,) = results
    summary = summarise(runs, list(METHODS))
    return table(summary, claims(summary), seconds)


def cnn_runs(results: Sequence[Any]) -> str:
    """Every run of the CNN comparison, by seed, in the protocol's order of methods."""
    from nasviz.bench.cnn_search import METHODS

    (runs,) = results
    order = list(METHODS)
    rows = [[r["seed"], METHODS[r["method"]][2], f"{r['best_test']:.2f}", f"{r['best_valid']:.2f}", r["n_trained"],
             f"{r['seconds']:.0f}"] for r in sorted(runs, key=lambda r: (r["seed"], order.index(r["method"])))]
    return md_table(["seed", "method", "test accuracy of the best network (%)", "its validation accuracy (%)",
                     "networks trained", "seconds"], rows)


def cnn_early_stopping_runs(results: Sequence[Any]) -> str:
    """Issue 50's early-stopping runs (``ak-es``, ``random-es``) seed by seed, each beside the same
    seed's run without early stopping from the comparison's file: while the five seeds are not all in,
    runs side by side, not a mean whose standard error one seed cannot give."""
    from nasviz.bench.cnn_search import METHODS

    es_runs, base_runs = results
    pairs = (("ak", "ak-es"), ("random", "random-es"))
    rows = []
    for seed in sorted({r["seed"] for r in es_runs}):
        for plain, stopped in pairs:
            for method in (plain, stopped):
                run = next((r for r in (*base_runs, *es_runs) if r["seed"] == seed and r["method"] == method), None)
                if run is not None:
                    rows.append([seed, METHODS[method][2], f"{run['best_test']:.2f}", f"{run['best_valid']:.2f}",
                                 run["n_trained"], run.get("n_stopped", "-") if method == stopped else "-",
                                 f"{run['seconds']:.0f}"])
    return md_table(["seed", "method", "test accuracy of the best network (%)", "its validation accuracy (%)",
                     "networks trained", "stopped early", "seconds"], rows)


# -------------------------------------------------------------- the trainer's speed

def _rate(part: Any) -> str:
    return "–" if not isinstance(part, dict) or part.get("networks_per_minute") is None \
        else f"{part['networks_per_minute']:.1f}"


def trainer_speed(results: Sequence[Any]) -> str:
    """``bench trainer``'s figures for each device it ran on: the trainer against the plain loop,
    arithmetic against overhead, the whole machine, each measured variant and ``torch.compile``."""
    (report,) = results
    rows = []
    for device, c in report["cnn"].items():
        arithmetic = c.get("arithmetic") or {}
        rows += [
            [device, "networks per minute, the trainer (one process)", _rate(c.get("trainer"))],
            [device, "networks per minute, the plain PyTorch loop", _rate(c.get("plain"))],
            [device, "trainer time / plain loop time (goal on the CPU: at most 1.10)", f"{c['trainer_over_plain']:.3f}"],
            [device, "same validation curves as the plain loop", "yes" if c.get("same_valid_curves") else "no"],
            [device, "arithmetic fraction of wall time, trainer / plain loop",
             f"{arithmetic['trainer']['arithmetic_fraction']:.2f} / {arithmetic['plain']['arithmetic_fraction']:.2f}"
             if arithmetic.get("trainer") and arithmetic.get("plain") else "–"],
            [device, f"networks per minute, the whole machine ({(c.get('whole_machine') or {}).get('plan', '–')})",
             _rate(c.get("whole_machine"))],
        ]
        for name, variant in (c.get("variants") or {}).items():
            if isinstance(variant, dict) and "compile_seconds" in variant:
                rows.append([device, f"`torch.compile` ({variant.get('mode')}): compile seconds / gain per training",
                             f"{variant['compile_seconds']:.1f} / {variant['gain_per_training_seconds']:.3f}"
                             + (" (pays)" if variant.get("pays_for_a_new_architecture") else " (does not pay)")])
            elif isinstance(variant, dict):
                rows.append([device, f"networks per minute, variant `{name}`", _rate(variant)])
    for device, cells in (report.get("nb201") or {}).items():
        if isinstance(cells, dict) and cells.get("median_seconds_per_cell") is not None:
            rows.append([device, f"NB201 cell on digits, median seconds ({cells.get('cells')} cells)",
                         f"{cells['median_seconds_per_cell']:.3f}"])
    return md_table(["device", "figure", "value"], rows)


def _source(name: str) -> str:
    return str(Path("docs/results") / name)


register(DocTable("cnn-mnist1d", (_source("cnn-mnist1d.jsonl"),), cnn_summary,
                  "paper 003's claims on MNIST-1D: six methods, five seeds, 900 s a run"))
register(DocTable("cnn-mnist1d-runs", (_source("cnn-mnist1d.jsonl"),), cnn_runs, "every run of the CNN comparison"))
register(DocTable("cnn-mnist1d-es-runs", (_source("cnn-mnist1d-es.jsonl"), _source("cnn-mnist1d.jsonl")),
                  cnn_early_stopping_runs, "issue 50: the early-stopping runs on MNIST-1D, each beside its seed's run without"))

register(DocTable("trainer-speed", (_source("trainer-cpu.json"),), trainer_speed,
                  "issue 51: the trainer against a plain PyTorch loop, networks per minute, on this machine's CPU"))

__all__ = ["cnn_early_stopping_runs", "cnn_runs", "cnn_summary", "trainer_speed"]
