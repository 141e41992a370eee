"""``python -m nasviz bench`` (benchmarks that print JSON with their provenance) and ``tabulate``
(train every cell of a space into a benchmark table)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from nasviz.cli.shared import print_json
from nasviz.cli_common import add_space_argument


def add_bench_parser(sub: argparse._SubParsersAction, load: bool) -> None:
    """The ``bench`` command. Benchmark modules import heavy packages (torch, scipy.stats), so
    they are loaded only when ``bench`` is the command being run (``load``), which keeps
    ``run``, ``table`` and the dashboard's background workers quick to start."""
    import importlib
    import importlib.util

    from nasviz.bench import BENCHMARKS

    p = sub.add_parser("bench", help="benchmarks that print JSON", description="Speed and quality benchmarks; each prints JSON.")
    bsub = p.add_subparsers(dest="bench_command", required=True)
    for name, module_name in BENCHMARKS.items():
        if not load:
            bsub.add_parser(name)
            continue
        if importlib.util.find_spec(module_name) is None:
            continue  # not built yet
        module = importlib.import_module(module_name)
        bp = bsub.add_parser(name, help=module.DESCRIPTION, description=module.DESCRIPTION)
        module.add_arguments(bp)
        if not any("--json" in action.option_strings for action in bp._actions):
            bp.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
        bp.set_defaults(func=lambda a, m=module: _run_benchmark(m, a))


def _run_benchmark(module, args: argparse.Namespace) -> int:
    """Run one benchmark and print its JSON with the provenance of the figures in it
    (:mod:`nasviz.bench.provenance`: commit, dirty tree, time, machine, library versions)."""
    from nasviz.bench.provenance import collect, stamp

    started = collect(getattr(args, "argv", None))
    print_json(_committable(stamp(module.run(args), started)))
    return 0


def _committable(obj):
    """``obj`` as a results file that may be committed: every NaN or infinity written as ``null``
    (JSON has neither; an undefined statistic, such as a correlation of constant values, must not
    lose a benchmark's other figures), and every path of this machine made relative to the
    checkout (:func:`nasviz.bench.provenance.portable`)."""
    from nasviz.bench.provenance import portable

    if isinstance(obj, dict):
        return {k: _committable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_committable(v) for v in obj]
    if isinstance(obj, (float, np.floating)) and not np.isfinite(obj):
        return None
    if isinstance(obj, str) and "/" in obj:
        return portable(obj)
    return obj


def add_tabulate_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tabulate",
        help="train every cell of a space and write a benchmark table",
        description=(
            "Train one representative of every class of equivalent cells, once per seed, and write the table for "
            "all cells. "
            "Progress is appended to OUT.partial.csv, so an interrupted run resumes where it stopped."
        ),
    )
    add_space_argument(p)
    p.add_argument("--dataset", default="digits", help="bundled dataset (default: digits)")
    p.add_argument("--out", type=Path, required=True, help="CSV to write, e.g. data/nb201_digits.csv")
    p.add_argument("--workers", type=int, default=2, help="worker processes, one torch thread each (default: 2)")
    p.add_argument("--seeds", type=int, help="training seeds per class (default: the embedded table's, 10)")
    p.add_argument("--epochs", type=int, help="training epochs (default: the embedded table's)")
    p.add_argument("--limit-cells", type=int, help="only the first N cells of the space (a small table)")
    p.add_argument("--stop-after", type=int, help="stop after N new trainings (resume later)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_tabulate)


def cmd_tabulate(args: argparse.Namespace) -> int:
    import copy

    from nasviz.tabulate import DEFAULT_SETTINGS, tabulate

    settings = copy.deepcopy(DEFAULT_SETTINGS)
    settings["dataset"] = args.dataset
    if args.seeds is not None:
        settings["seeds"] = args.seeds
    if args.epochs is not None:
        settings["training"]["epochs"] = settings["training"]["patience"] = args.epochs
    summary = tabulate(args.out, args.space, settings, workers=args.workers, limit_cells=args.limit_cells,
                       stop_after=args.stop_after, progress=not args.no_progress)
    print_json(summary)
    return 0

