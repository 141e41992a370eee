"""``python -m nasviz runs`` (list, export, stop, delete stored runs) and ``export`` (a run's network as a file)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nasviz.cli.shared import print_json
from nasviz.errors import InputError
from nasviz.rounding import format_value, round_value, run_decimals


def add_runs_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="list, export, stop or delete stored runs",
                       description="Manage the runs of a run store (written by `run --store FILE`).")
    rsub = p.add_subparsers(dest="runs_command", required=True)
    ls = rsub.add_parser("list", help="runs with status, strategy, best value and progress",
                         description="List the runs of a store, newest first.")
    ls.add_argument("--json", action="store_true", help="print JSON")
    exp = rsub.add_parser("export", help="write a run's evaluations as CSV and/or the whole run as JSON",
                          description="Export a run: --csv writes its evaluations, --json-out the run with its "
                                      "config, evaluations and snapshots.")
    exp.add_argument("--csv", type=Path, help="CSV file to write")
    exp.add_argument("--json-out", type=Path, help="JSON file to write")
    stop = rsub.add_parser("stop", help="ask a running search to stop after its current step",
                           description="Ask a running search to stop after its current step (cooperative).")
    delete = rsub.add_parser("delete", help="delete a run that is not running",
                             description="Delete a run with its evaluations and snapshots (stop it first).")
    for q in (ls, exp, stop, delete):
        q.add_argument("--store", type=Path, required=True, metavar="FILE", help="the run store")
    for q in (exp, stop, delete):
        q.add_argument("run_id", type=int, metavar="RUN_ID")
    p.set_defaults(func=cmd_runs)


def cmd_runs(args: argparse.Namespace) -> int:
    from nasviz.store import RunStore, StoredRun

    if not args.store.is_file():
        raise InputError(f"run store {args.store} does not exist")
    store = RunStore(args.store)
    if args.runs_command == "list":
        runs = store.list_runs()
        from nasviz.table_schema import run_direction, shown_value

        def best(r: StoredRun) -> float | None:  # the metric's own value, at the run's resolution (as on the page)
            return round_value(shown_value(r.best_value, run_direction(r.config)), run_decimals(r.config))

        if args.json:
            print_json([{**r.to_dict(), "best_value": best(r)} for r in runs])
        for r in runs if not args.json else []:
            print(f"{r.id:>4}  {r.status:<11} {r.strategy or '-':<18} {r.n_evaluations:>5}/{r.budget or '?':<5} "
                  f"best {format_value(best(r), run_decimals(r.config))}  {r.name}")
    elif args.runs_command == "export":
        if args.csv is None and args.json_out is None:
            raise InputError("runs export needs --csv FILE and/or --json-out FILE")
        if args.csv is not None:
            print(f"wrote {store.export_csv(args.run_id, args.csv)} evaluations to {args.csv}")
        if args.json_out is not None:
            store.export_json(args.run_id, args.json_out)
            print(f"wrote run {args.run_id} to {args.json_out}")
    elif args.runs_command == "stop":
        store.request_stop(args.run_id)
        print(f"asked run {args.run_id} to stop after its current step")
    elif args.runs_command == "delete":
        store.delete_run(args.run_id)
        print(f"deleted run {args.run_id}")
    return 0


def add_export_parser(sub: argparse._SubParsersAction) -> None:
    from nasviz.export_formats import FORMATS  # not nasviz.export: it imports torch

    p = sub.add_parser("export", help="write a run's best (or chosen) network as TorchScript or torch.export",
                       description="Write a trained run's best network (or --arch) to DIR as TorchScript (network.pt) "
                                   "or torch.export (network.pt2), with network.json: its architecture, dataset, "
                                   "input shape, preprocessing and test score. Weights the run did not keep are "
                                   "retrained from its stored config (network.json says so).")
    p.add_argument("--store", type=Path, required=True, metavar="FILE", help="the run store")
    p.add_argument("run_id", type=int, metavar="RUN_ID")
    p.add_argument("--arch", help="the network to export (default: the run's best)")
    p.add_argument("--format", choices=list(FORMATS), default="torchscript", help="default: torchscript")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder to write into")
    p.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    from nasviz.export import export_network

    if not args.store.is_file():
        raise InputError(f"run store {args.store} does not exist")
    recipe = export_network(args.store, args.run_id, args.out, args.format, args.arch)
    print(f"wrote {args.out / recipe['file']} and network.json: {recipe['arch']} ({recipe['weights']}), "
          f"test {recipe['score_metric']} {recipe['test_score']:.4g}")
    for note in recipe["notes"]:
        print(f"note: {note}", file=sys.stderr)
    return 0

