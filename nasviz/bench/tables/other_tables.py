"""Tables printed from the other benchmarks' reports: the CNN comparison (``bench cnn-search``) and
the trainer's speed on the CPU (``bench trainer``)."""

from __future__ import annotations

from functools import partial
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


def _pairs(methods: Sequence[str]) -> list[tuple[str, str, float]]:
    """The pairs of :data:`~nasviz.bench.cnn_search.EARLY_STOPPING_GOALS` whose early-stopping
    method is one of ``methods``, in that order."""
    from nasviz.bench.cnn_search import EARLY_STOPPING_GOALS

    return [pair for pair in EARLY_STOPPING_GOALS if pair[0] in methods]


def _run_of(runs: Sequence[dict], seed: int, method: str) -> dict | None:
    """The run of ``method`` on ``seed`` among ``runs`` (``bench cnn-search`` records), if any."""
    return next((r for r in runs if r["seed"] == seed and r["method"] == method), None)


def cnn_early_stopping_runs(results: Sequence[Any], methods: Sequence[str] = ("ak-es", "random-es")) -> str:
    """Issue 50's early-stopping runs of ``methods`` seed by seed, each beside the same seed's run
    without early stopping, from the runs of all the files: while the five seeds are not all in,
    runs side by side, not a mean whose standard error one seed cannot give."""
    from nasviz.bench.cnn_search import METHODS

    pairs = _pairs(methods)
    runs = [r for file in results for r in file]
    rows = []
    for seed in sorted({r["seed"] for r in runs if r["method"] in methods}):
        for stopped, plain, _factor in pairs:
            for method in (plain, stopped):
                run = _run_of(runs, seed, method)
                if run is not None:
                    rows.append([seed, METHODS[method][2], f"{run['best_test']:.2f}", f"{run['best_valid']:.2f}",
                                 run["n_trained"], run.get("n_stopped", "-") if method == stopped else "-",
                                 f"{run['seconds']:.0f}"])
    return md_table(["seed", "method", "test accuracy of the best network (%)", "its validation accuracy (%)",
                     "networks trained", "stopped early", "seconds"], rows)


def cnn_early_stopping_by_seed(results: Sequence[Any], methods: Sequence[str] = ("ak-es-finished",)) -> str:
    """Each seed's early-stopping run of ``methods`` against the same seed's run without: the
    ratio of networks trained, the difference in the best network's test accuracy (points), the
    epochs each trained a minute and the megabytes a kept network's weights took at the end
    (``network_store``: bytes over networks, a measure of the networks' size). Seeds without both
    runs are left out."""
    runs = [r for file in results for r in file]
    rows = []
    for seed in sorted({r["seed"] for r in runs if r["method"] in methods}):
        for stopped, plain, _factor in _pairs(methods):
            pair = [_run_of(runs, seed, m) for m in (plain, stopped)]
            if None in pair:
                continue
            without, with_stopping = pair
            rows.append([seed, f"`{stopped}` / `{plain}`", f"{with_stopping['n_trained'] / without['n_trained']:.2f}",
                         f"{with_stopping['best_test'] - without['best_test']:+.2f}",
                         *(f"{r['epochs_per_minute']:.1f}" for r in pair), *(_mb_per_network(r) for r in pair)])
    return md_table(["seed", "runs", "networks trained, ratio", "test accuracy difference (points)",
                     "epochs a minute, without", "epochs a minute, with", "MB a kept network, without",
                     "MB a kept network, with"], rows)


def _mb_per_network(run: dict) -> str:
    store = run.get("network_store") or {}
    return f"{store['bytes'] / store['networks'] / 1e6:.1f}" if store.get("networks") else "-"


def _mean_text(mean: float, se: float, digits: int, sign: str = "", *, runs: int) -> str:
    """``"98.48 ± 0.41"``; over one run there is no standard error, and the value is shown alone
    (not as ``"± 0.00"``)."""
    return f"{mean:{sign}.{digits}f}" + (f" ± {se:.{digits}f}" if runs > 1 else "")


def cnn_early_stopping_summary(results: Sequence[Any], methods: Sequence[str] = ("ak-es", "random-es")) -> str:
    """Issue 50's live goal for the early-stopping ``methods``, each judged on the seeds the files
    hold for both it and its method without early stopping: per method the mean ± s.e. over those
    seeds of the best network's test and validation accuracy and of the networks trained
    (:func:`~nasviz.bench.cnn_search.summarise`), then the goal per pair
    (:func:`~nasviz.bench.cnn_search.early_stopping_goals`: at least twice the networks, and the best
    network's mean test accuracy with early stopping at least its mean without). A pair without a
    seed in common yet is left out."""
    from nasviz.bench.cnn_search import early_stopping_goals, summarise
    from nasviz.rounding import counted

    every = [r for file in results for r in file]
    rows, verdicts = [], []
    for stopped, plain, factor in _pairs(methods):
        seeds = sorted({r["seed"] for r in every if r["method"] == stopped}
                       & {r["seed"] for r in every if r["method"] == plain})
        if not seeds:
            continue
        runs = [r for r in every if r["method"] in (plain, stopped) and r["seed"] in seeds]
        summary = summarise(runs, [plain, stopped])
        seeds_text = ", ".join(str(s) for s in seeds)
        pm = partial(_mean_text, runs=len(seeds))
        for method in (plain, stopped):
            s = summary[method]
            stops = [r.get("n_stopped", 0) for r in runs if r["method"] == method]
            rows.append([s["label"], seeds_text, pm(s["test"], s["test_se"], 2), pm(s["valid"], s["valid_se"], 2),
                         pm(s["trained"], s["trained_se"], 1),
                         f"{sum(stops) / len(stops):.1f}" if method == stopped else "-"])
        for g in early_stopping_goals(summary, [(stopped, plain, factor)]):
            noise = (", within one s.e." if g["within_one_se"] else "") if len(seeds) > 1 else ", one seed: no s.e."
            verdicts.append(
                f"- {summary[stopped]['label']} against {summary[plain]['label']}, "
                f"{counted(len(seeds), 'seed')}: {g['trained_ratio']:.2f}x the networks (goal: at least "
                f"{g['at_least']:g}x, {'met' if g['trained_met'] else 'not met'}); the best network's test accuracy "
                f"{pm(g['test_difference'], g['test_se'], 2, '+')} points (goal: no loss, "
                f"{'met' if g['no_loss'] else 'not met'}{noise}): "
                f"**{'met' if g['met'] else 'not met'}**")
    table = md_table(["method", "seeds", "test accuracy of the best network (%)", "its validation accuracy (%)",
                      "networks trained in 900 s", "stopped early"], rows)
    return table + "\n\n" + "\n".join(verdicts)


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
register(DocTable("cnn-mnist1d-es", (_source("cnn-mnist1d-es.jsonl"), _source("cnn-mnist1d.jsonl")),
                  cnn_early_stopping_summary,
                  "issue 50's live goal: early stopping against none, mean ± s.e. over the seeds both files hold"))
register(DocTable("cnn-mnist1d-es-finished-runs", (_source("cnn-mnist1d-es-finished.jsonl"),),
                  partial(cnn_early_stopping_runs, methods=("ak-es-finished",)),
                  "issue 50, second protocol: AK with early stopping and finished trainings modelled, beside AK, seeds 5-9"))
register(DocTable("cnn-mnist1d-es-finished", (_source("cnn-mnist1d-es-finished.jsonl"),),
                  partial(cnn_early_stopping_summary, methods=("ak-es-finished",)),
                  "issue 50's live goal, second protocol: ak-es-finished against ak over the seeds run so far"))
register(DocTable("cnn-mnist1d-es-finished-by-seed", (_source("cnn-mnist1d-es-finished.jsonl"),),
                  cnn_early_stopping_by_seed,
                  "issue 50, second protocol, seed by seed: networks, accuracy, training speed and network size"))

register(DocTable("trainer-speed", (_source("trainer-cpu.json"),), trainer_speed,
                  "issue 51: the trainer against a plain PyTorch loop, networks per minute, on this machine's CPU"))

__all__ = ["cnn_early_stopping_by_seed", "cnn_early_stopping_runs", "cnn_early_stopping_summary", "cnn_runs",
           "cnn_summary", "trainer_speed"]
