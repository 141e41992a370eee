"""Command line: ``python -m nasviz COMMAND ...``; every command has ``--help``.

Plugins (:mod:`nasviz.plugins`) are loaded before the parser is built, so their spaces,
strategies, kernels, ... are choices like the built-in ones; ``--space`` also takes a space spec
file (``.toml`` / ``.json``) or a table whose columns declare a space (``.csv``).

Exit statuses (:mod:`nasviz.cli_common`): 0 done; 2 bad input (:class:`~nasviz.errors.NasvizError`: a file, a setting, a
request; the message says what and where) or a file the system refused (``OSError``); 3 an
internal error, a bug in nasviz or in a plugin, never reported as bad input: its message says so
and the traceback follows.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from nasviz import defaults
from nasviz.components import (ACQUISITIONS, BATCH_SELECTORS, DATASETS, KERNELS, POOLS, STRATEGIES,
                               model_never_fitted)
from nasviz.config import SearchConfig
from nasviz.cli_common import (BAD_INPUT, EXIT_BAD_INPUT, EXIT_INTERNAL_ERROR, add_space_argument, in_metric_units,
                               internal_error_message)
from nasviz.errors import InputError
from nasviz.objectives import Table, TableError, load_table
from nasviz.objectives import default_table_path as objectives_default_table
from nasviz.rounding import format_value, round_value, run_decimals
from nasviz.runner import run_search

def default_table_path() -> Path:
    """The table every command uses when none is given (:func:`nasviz.objectives.default_table_path`)."""
    path = objectives_default_table()
    if path is None:
        raise TableError(f"no table given and the embedded default {defaults.DEFAULT_TABLE} is missing")
    return path


def _print_json(obj) -> None:
    """``obj`` as one line of strict JSON: NaN and infinities (a multi-fidelity run's best-so-far
    before its first full evaluation, an undefined statistic) written as ``null``."""
    json.dump(_null_if_not_finite(obj), sys.stdout, allow_nan=False, default=float)
    sys.stdout.write("\n")


def _null_if_not_finite(obj):
    if isinstance(obj, dict):
        return {k: _null_if_not_finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_null_if_not_finite(v) for v in obj]
    if isinstance(obj, (float, np.floating)) and not np.isfinite(obj):
        return None
    return obj


def _non_negative_int(text: str) -> int:
    """argparse type of seeds: ``0, 1, 2, ...`` (numpy's generators take no negative seed)."""
    if not text.strip().isascii() or not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {text!r}")
    return int(text)


#: Bad rows of a table that ``run`` prints (all of them are counted and stored with the run).
SHOWN_BAD_ROWS = 5


def _add_run_parser(sub: argparse._SubParsersAction) -> None:
    from nasviz.strategies.factory import strategy_help

    p = sub.add_parser(
        "run",
        help="run one architecture search",
        description="Run an architecture search against a benchmark table and report the result.",
        epilog=strategy_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--table", type=Path, help="benchmark CSV (default: the embedded NAS-Bench-201 CIFAR table, "
                                              f"{defaults.DEFAULT_TABLE.name})")
    p.add_argument("--metric", help="metric column to maximise (default: the table's first metric)")
    add_space_argument(p, default=defaults.DEFAULT_SPACE)
    p.add_argument("--strategy", choices=STRATEGIES.names(), metavar="STRATEGY",
                   help=f"search strategy (see the list below; default, as on the page: {defaults.DEFAULT_STRATEGY}, "
                        "or on spaces without categorical parameters the first of "
                        f"{', '.join(defaults.STRATEGY_PREFERENCE[1:])} that fits)")
    p.add_argument("--budget", type=int, default=defaults.DEFAULT_BUDGET,
                   help=f"number of evaluations (default: {defaults.DEFAULT_BUDGET})")
    p.add_argument("--batch-size", type=int,
                   help="architectures proposed per step (default: the strategy's, e.g. 5 for bo-tw2g-kdpp5, else 1)")
    p.add_argument("--kernel", choices=KERNELS.names(), help="BO kernel (python -m nasviz components lists them)")
    p.add_argument("--acquisition", choices=ACQUISITIONS.names(), help="BO acquisition")
    p.add_argument("--pool", choices=POOLS.names(), help="BO candidate pool generator")
    p.add_argument("--batch", choices=BATCH_SELECTORS.names(), help="BO batch selector")
    p.add_argument("--pool-size", type=int, help="BO candidates per step (default: 100)")
    p.add_argument("--n-init", type=int, help="BO random initial points (default: 10)")
    p.add_argument("--seed", type=_non_negative_int, default=defaults.DEFAULT_SEED,
                   help=f"random seed, a whole number >= 0 (default: {defaults.DEFAULT_SEED})")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a summary")
    p.add_argument("--store", type=Path, metavar="FILE",
                   help="persist the run (config, every evaluation as it arrives, snapshots) in this SQLite run store")
    p.add_argument("--resume", type=int, metavar="RUN_ID",
                   help="continue run RUN_ID of --store from its last stored evaluation (its stored config is used; "
                        "search options given here are ignored)")
    p.add_argument("--step-delay", type=float, default=defaults.CLI_STEP_DELAY, metavar="SECONDS",
                   help="sleep this long after each step, to watch a fast table search live (default: "
                        f"{defaults.CLI_STEP_DELAY:g}; the page pauses {defaults.PAGE_STEP_DELAY:g} s)")
    _add_training_arguments(p)
    p.set_defaults(func=cmd_run)


def _add_training_arguments(p: argparse.ArgumentParser) -> None:
    """``run``'s arguments for live training, parallel evaluation and multi-fidelity budgets."""
    p.add_argument("--objective", choices=["table", "train"], default="table",
                   help="look results up in a table (default) or train each architecture for real")
    p.add_argument("--dataset", choices=DATASETS.names(), help="bundled dataset for --objective train (default: digits)")
    p.add_argument("--workers", type=int, help="--objective train: evaluate on N local worker processes (default: 1)")
    p.add_argument("--dask", metavar="ADDRESS",
                   help="--objective train: evaluate on a Dask cluster, tcp://host:port or local:N (N local workers)")
    p.add_argument("--train-seed", type=int, help="--objective train: base seed of initialisation and batch order (default: 0)")
    p.add_argument("--data-folder", type=Path, metavar="DIR",
                   help="--objective train: the folder of mnist / fashion_mnist / cifar10 in torchvision's layout")
    p.add_argument("--download", action="store_true",
                   help="--objective train: download --dataset into --data-folder first if it is not there "
                        "(the official archives, checked by MD5)")
    p.add_argument("--overlap", action="store_true",
                   help="propose the next step while the current one trains (Auto-Keras's CPU/GPU parallelism)")
    p.add_argument("--fidelity", metavar="LADDER",
                   help="look the table up at several budgets: auto (its <metric>_<E> or <metric>_epoch_<E> columns) "
                        "or BUDGET=COLUMN[@TABLE],... lowest first, the run's metric last; multi-fidelity strategies "
                        "(hyperband, bohb, mf-gp, ...) need it")
    p.add_argument("--early-stopping", metavar="RULE",
                   help="--objective train: stop trainings early, with any strategy: median (Golovin et al. 2017) "
                        "or asha (asynchronous successive halving), e.g. asha:eta=3:min_epochs=1")
    p.add_argument("--cost-budget", type=float, metavar="N",
                   help="with --fidelity: stop after N full evaluations' cost (or --budget evaluations, whichever "
                        "comes first)")


#: ``run`` arguments that are not options of the strategy; every other ``run`` argument that is
#: set (e.g. --kernel, --acquisition) is passed to ``make_strategy`` and stored with the run.
_RUN_ARGS = {"command", "func", "table", "metric", "space", "strategy", "budget", "batch_size", "seed", "json",
             "store", "resume", "step_delay", "objective", "dataset", "workers", "dask", "train_seed", "data_folder",
             "download", "overlap", "fidelity", "cost_budget", "early_stopping"}


def _run_config(args: argparse.Namespace) -> SearchConfig:
    """The validated :class:`~nasviz.config.SearchConfig` of a ``run`` (errors name the setting)."""
    objective = getattr(args, "objective", None) or "table"
    table = None
    if objective == "table":
        path = Path(args.table) if args.table else default_table_path()
        table = str(path.resolve()) if path.is_file() else str(path)
    return SearchConfig.create(
        objective=objective, table=table, space=args.space, metric=args.metric, strategy=args.strategy,
        strategy_options={k: (str(v) if isinstance(v, Path) else v) for k, v in sorted(vars(args).items())
                          if k not in _RUN_ARGS and v is not None},
        seed=args.seed, budget=args.budget, batch_size=args.batch_size,  # None: the strategy's own batch
        data_folder=str(Path(args.data_folder).expanduser().resolve()) if getattr(args, "data_folder", None) else None,
        overlap=bool(getattr(args, "overlap", False)),
        **{k: getattr(args, k) for k in ("dataset", "workers", "dask", "train_seed", "fidelity", "cost_budget",
                                         "early_stopping")
           if getattr(args, k, None) is not None},
    )


def cmd_run(args: argparse.Namespace) -> int:
    from nasviz.runner import build_search

    store = run_id = None
    if args.store is not None:
        from nasviz.store import RunStore

        store = RunStore(args.store)
    if args.resume is not None:
        if store is None:
            raise InputError("--resume RUN_ID needs --store FILE (the store that holds the run)")
        from nasviz.runner import resume_setup

        setup, run_id = resume_setup(store, args.resume), args.resume  # refused while another process runs it
    else:
        config = _run_config(args)
        if args.download:
            from nasviz.objectives.vision import download

            if not config.data_folder or not config.dataset:
                raise InputError("--download needs --dataset and --data-folder DIR")
            download(config.dataset, config.data_folder)
        try:
            setup = build_search(config)
        except TableError as err:
            if config.table and "no usable row" in str(err):
                load_with_space_hint(config.table, config.space)  # raises naming the --space to add
            raise
        if store is not None:
            run_id = store.create_run(setup.config)
    try:
        return _run_and_report(args, setup, store, run_id)
    finally:
        setup.close()  # an executor's workers, if any


def _run_and_report(args: argparse.Namespace, setup, store, run_id) -> int:
    cfg, space = setup.config, setup.space

    def progress(snap) -> None:
        if not args.json:
            print(f"\rstep {snap.step}: {snap.n_evaluations}/{snap.budget} evaluations, best "
                  f"{format_value(snap.best_value, run_decimals(cfg))}", end="", file=sys.stderr)
        if args.step_delay > 0:
            time.sleep(args.step_delay)

    if store is not None and not args.json:
        print(f"run {run_id} in {args.store}" + (" (resumed)" if args.resume is not None else ""), file=sys.stderr)
    never = model_never_fitted(cfg["strategy"], cfg.get("strategy_options") or {}, int(cfg["budget"]))
    if never:
        print(f"note: {never}", file=sys.stderr)
    skipped = cfg.get("skipped_rows") or {}
    if skipped.get("count"):
        print(f"skipped {skipped['count']} bad row(s) of {setup.table.source}"
              + (f"; the first {len(skipped['first'])}:" if skipped["count"] > len(skipped["first"]) else ":"),
              file=sys.stderr)
        for text in skipped["first"]:
            print(f"  {text}", file=sys.stderr)
    result = run_search(setup.strategy, setup.objective, cfg["budget"], format_arch=space.format,
                        parse_arch=space.parse, batch_size=cfg["batch_size"], on_step=progress,
                        store=store, run_id=run_id, resume=args.resume is not None, lease=setup.lease,
                        overlap=bool(cfg.get("overlap")), cost_budget=setup.cost_budget())
    out = in_metric_units(result.to_dict(space.format), cfg.get("direction"))
    decimals = run_decimals(cfg)
    for key in ("best_value", "optimum", "regret"):  # at the table's resolution (a regret of 0.0799999 is 0.08)
        out[key] = round_value(out.get(key), decimals)
    out.update({"table": setup.table.source if setup.table is not None else None, "metric": cfg["metric"],
                "direction": cfg.get("direction") or "maximise",
                "objective": cfg["objective"], "strategy": cfg["strategy"],
                "seed": cfg["seed"], "budget": cfg["budget"], "skipped_rows": skipped or None,
                "value_decimals": decimals})
    if args.json:
        _print_json(out)
    else:
        print(file=sys.stderr)
        print(f"best {format_value(out['best_value'], decimals)} ({out['best_arch']}), optimum "
              f"{format_value(out['optimum'], decimals)}, regret {format_value(out['regret'], decimals)}, "
              f"{out['seconds']:.2f} s")
    return 0


def _add_table_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("table", help="inspect benchmark tables", description="Inspect benchmark tables.")
    tsub = p.add_subparsers(dest="table_command", required=True)
    info = tsub.add_parser("info", help="rows, metrics, optimum per metric and bad rows", description="Summarise a benchmark table: rows, metrics, optimum per metric and the rows that were skipped.")
    info.add_argument("--table", type=Path, help="benchmark CSV (default: the embedded table)")
    add_space_argument(info)
    info.add_argument("--duplicates", choices=["refuse", "average"],
                      help="rows of one architecture: bad rows or averaged (default: the space's choice)")
    info.add_argument("--rank-against", metavar="CSV[:METRIC]",
                      help="Spearman rank correlation of each metric with METRIC (default: its first) of another "
                           "table of the same space, over the architectures both hold")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(func=cmd_table_info)
    imp = tsub.add_parser(
        "import-nb201",
        help="convert the official NAS-Bench-201 file into a CSV table",
        description=(
            "Convert the official NAS-Bench-201 benchmark file (a torch pickle) into a plain CSV table, which "
            "the dashboard and every other command read as text. The file is loaded with a restricted "
            "unpickler that admits only the numpy and container classes the official file holds; a file that "
            "names any other class is refused, naming it, and nothing from it runs."
        ),
    )
    imp.add_argument("path", type=Path, help="the official file, e.g. NAS-Bench-201-v1_1-096897.pth")
    imp.add_argument("--out", type=Path, required=True, help="CSV to write")
    imp.add_argument("--epochs", type=int, default=200, choices=[12, 200], help="which training length to read (default: 200)")
    imp.add_argument("--datasets", default="cifar10,cifar100,ImageNet16-120,cifar10-valid",
                     help="comma-separated datasets whose test/valid accuracies and training seconds become columns "
                          "(default: all four: cifar10,cifar100,ImageNet16-120,cifar10-valid)")
    imp.set_defaults(func=cmd_table_import)
    make = tsub.add_parser(
        "make-default",
        help="join NAS-Bench-201's 200-epoch and 12-epoch CSVs into the embedded default table",
        description=(
            "Join the 200-epoch test accuracies (arch,cifar10,cifar100) and the 12-epoch results "
            "(arch,cifar10_valid,cifar10_test,cifar100_valid,cifar100_test) of NAS-Bench-201 on the architecture "
            "string into one CSV whose columns say split and epochs (cifar10_test_200ep first), values copied "
            "as the sources write them. data/nb201_cifar.csv is made this way (data/README.md)."
        ),
    )
    make.add_argument("--test-200", type=Path, help="200-epoch CSV (default: the shared nb201_test_accuracy.csv)")
    make.add_argument("--epoch-12", type=Path, help="12-epoch CSV (default: the shared nb201_12epoch.csv)")
    make.add_argument("--out", type=Path, required=True, help="CSV to write, e.g. data/nb201_cifar.csv")
    make.set_defaults(func=cmd_table_make_default)
    nb101 = tsub.add_parser(
        "import-nb101",
        help="join a NAS-Bench-101 table known only by module hash with the enumeration",
        description=(
            "Join a CSV of NAS-Bench-101 cells known only by their module hash (e.g. nb101_hash_20k.csv: hash, "
            "valid_accuracy_4/12/36/108, train_seconds_108, params) with the enumeration of all 423,624 cells "
            "(built and cached on first use, ~25 s), and write a normal table: the cell as 'arch' "
            "('<matrix>;<ops>'), then valid_accuracy_108 and the other columns (train_seconds_108 becomes the "
            "cost column train_seconds). Rows whose hash names no cell are skipped and counted. The table is "
            "written to a path outside the repository (benchmark data stays out of it)."
        ),
    )
    nb101.add_argument("hash_csv", type=Path, help="CSV with a 'hash' column, e.g. nb101_hash_20k.csv")
    nb101.add_argument("--out", type=Path, required=True, help="CSV to write (outside the repository)")
    nb101.add_argument("--json", action="store_true", help="print what was done as JSON")
    nb101.set_defaults(func=cmd_table_import_nb101)


def rank_against(table, other, other_metric: str) -> dict[str, dict[str, float | int]]:
    """Per metric of ``table``: Spearman's rho with ``other_metric`` of ``other`` over the
    architectures both tables hold with a value, and how many those are."""
    from scipy.stats import spearmanr

    other_values = other.values[other_metric]
    pairs = [(i, other.index_of(a)) for i, a in enumerate(table.archs) if a in other]
    out = {}
    for metric in table.metrics:
        mine = np.array([table.values[metric][i] for i, _ in pairs], dtype=float)
        theirs = np.array([other_values[j] for _, j in pairs], dtype=float)
        ok = np.isfinite(mine) & np.isfinite(theirs)
        rho = float(spearmanr(mine[ok], theirs[ok])[0]) if ok.sum() > 2 else float("nan")
        out[metric] = {"spearman": rho, "architectures": int(ok.sum())}
    return out


def load_with_space_hint(path: Path | str, space: str, **options) -> "Table":
    """:func:`load_table`, but a table whose rows are architectures of another space is refused
    with one line that names the ``--space`` to add, not a list of rows the space cannot parse."""
    from nasviz.objectives.table import suggest_space

    try:
        return load_table(path, space=space, **options)
    except TableError as err:
        if "no usable row" not in str(err):
            raise
        hint = suggest_space(path, space)
        if hint is None:
            raise
        raise InputError(f"no row is an architecture of the {space} space, but the rows parse in the {hint} "
                         f"space: add --space {hint}", source=str(path)) from None


def cmd_table_info(args: argparse.Namespace) -> int:
    table = load_with_space_hint(args.table or default_table_path(), args.space, duplicates=args.duplicates)
    info = table.info()
    if args.rank_against:
        path, _, metric = str(args.rank_against).partition(":")
        other = load_table(path, space=args.space)
        metric = metric or other.metrics[0]
        if metric not in other.metrics:
            raise InputError(f"{path} has no metric {metric!r}; it has {', '.join(other.metrics)}")
        info["rank_against"] = {"table": path, "metric": metric, "by_metric": rank_against(table, other, metric)}
    if args.json:
        _print_json(info)
    else:
        print(f"{info['source']}: {info['rows']} architectures, metrics "
              + ", ".join(m + (" (minimised)" if info["directions"][m] == "minimise" else "") for m in info["metrics"]))
        print(f"  column roles, as declared by {info['schema']}:" if info["schema"] else
              "  column roles, guessed (declare them in a schema: '# nasviz:' lines or a <table>.schema.toml file):")
        for role in table.roles:
            print(f"    {role}")
        dup = info["duplicates"]
        if dup["policy"] == "average" and dup["rows_merged"]:
            print(f"  {dup['rows_merged']} row(s) of {dup['architectures_with_repeats']} architecture(s) seen before "
                  "were averaged into them")
        for m, v in info["optimum"].items():
            print(f"  optimum {m}: {format_value(v, info['decimals'].get(m))} ({info['best_arch'][m]})")
            d = info["distribution"][m]
            if d.get("rows"):
                print(f"    median {d['median']:.4g} (q25 {d['q25']:.4g}, q75 {d['q75']:.4g}); "
                      f"{d['within_0.5_of_optimum']} row(s) within 0.5 of the optimum")
        for b in info["bad_rows"]:
            print(f"  bad row: line {b['line']}, column {b['column']!r}: {b['problem']}")
        if info["bad_rows_count"] > len(info["bad_rows"]):
            print(f"  ... and {info['bad_rows_count'] - len(info['bad_rows']):,} more bad row(s)")
        if "rank_against" in info:
            r = info["rank_against"]
            for m, v in r["by_metric"].items():
                print(f"  Spearman of {m} with {r['metric']} of {r['table']}: {v['spearman']:.3f} "
                      f"({v['architectures']} architectures)")
    return 0


def cmd_table_import(args: argparse.Namespace) -> int:
    from nasviz.objectives.nb201_official import import_official

    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    n = import_official(args.path, args.out, epochs=args.epochs, datasets=datasets)
    print(f"wrote {n} rows to {args.out}")
    return 0


def cmd_table_make_default(args: argparse.Namespace) -> int:
    from nasviz.objectives.nb201_default import build_default_table, default_table_sources

    shared_200, shared_12 = default_table_sources()
    test_200, epoch_12 = args.test_200 or shared_200, args.epoch_12 or shared_12
    if test_200 is None or epoch_12 is None:
        raise ValueError("the shared NAS-Bench-201 tables were not found: give --test-200 and --epoch-12")
    n = build_default_table(test_200, epoch_12, args.out)
    print(f"wrote {n} rows to {args.out}")
    return 0


def _inside_repository(path: Path) -> bool:
    """Whether ``path`` lies in this checkout (a folder with ``pyproject.toml`` above the package)."""
    root = Path(__file__).resolve().parent.parent
    if not (root / "pyproject.toml").is_file():
        return False  # an installed package: there is no repository to keep clean
    try:
        path.resolve().relative_to(root)
    except ValueError:
        return False
    return True


def cmd_table_import_nb101(args: argparse.Namespace) -> int:
    from nasviz.spaces.nb101 import import_hash_table

    if _inside_repository(args.out):
        raise InputError(f"--out {args.out} is inside the repository; benchmark tables are data, not code: "
                         "write them elsewhere (e.g. beside the shared tables)")
    result = import_hash_table(args.hash_csv, args.out)
    if args.json:
        _print_json({"out": str(result.out_path), "rows_read": result.rows_read, "rows_joined": result.rows_joined,
                     "unknown_hashes": len(result.unknown_hashes), "duplicate_hashes": len(result.duplicate_hashes),
                     "columns": list(result.columns)})
    else:
        print(result)
    return 0


def _add_components_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("components", help="list the registered spaces, kernels, strategies, pools, ...",
                       description="Every registered component with its description; --markdown writes the README's table.")
    p.add_argument("--markdown", action="store_true", help="Markdown tables (the README's component section)")
    p.add_argument("--readme", metavar="FILE", help="rewrite the component section of this README in place")
    p.set_defaults(func=cmd_components)


def cmd_components(args: argparse.Namespace) -> int:
    from pathlib import Path

    from nasviz.components import catalogue_markdown, catalogue_text, readme_with_catalogue

    if args.readme:
        path = Path(args.readme)
        path.write_text(readme_with_catalogue(path.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"rewrote the component section of {path}")
        return 0
    print(catalogue_markdown() if args.markdown else catalogue_text())
    return 0


def _add_tables_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tables", help="print the docs' result tables from their raw results files; --check, --write",
                       description="The tables of measured figures in README.md and docs/*.md are printed from "
                                   "committed raw results files (docs/results/). NAME prints one; --check prints "
                                   "every table a document holds again and fails on a difference; --write rewrites "
                                   "them in place. Without arguments: the registered tables and their files.")
    p.add_argument("name", nargs="?", metavar="NAME", help="the table to print")
    action = p.add_mutually_exclusive_group()
    action.add_argument("--check", action="store_true", help="fail (exit 1) where a document's table differs")
    action.add_argument("--write", action="store_true", help="rewrite every document's tables in place")
    p.set_defaults(func=cmd_tables)


def cmd_tables(args: argparse.Namespace) -> int:
    from nasviz.bench.tables import tables
    from nasviz.bench.tables.markdown import check, write

    registry = tables()
    if args.check:
        problems = check()
        for p in problems:
            print(f"{p.document}, line {p.line}: table {p.name} {p.message}", file=sys.stderr)
        print(f"{len(problems)} table(s) differ from their raw files" if problems else "every table is current")
        return 1 if problems else 0
    if args.write:
        changed = write()
        print("rewrote " + (", ".join(str(p) for p in changed) if changed else "nothing: every table is current"))
        return 0
    if args.name:
        if args.name not in registry:
            raise InputError(f"no table {args.name!r}; known: {', '.join(sorted(registry))}")
        print(registry[args.name].print())
        return 0
    for name, table in sorted(registry.items()):
        print(f"{name:<20} {table.about}\n{'':<20} from {', '.join(table.sources)}")
    return 0


def _add_bench_parser(sub: argparse._SubParsersAction, load: bool) -> None:
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
    _print_json(_committable(stamp(module.run(args), started)))
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


def _add_tabulate_parser(sub: argparse._SubParsersAction) -> None:
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
    _print_json(summary)
    return 0


def _add_runs_parser(sub: argparse._SubParsersAction) -> None:
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
            _print_json([{**r.to_dict(), "best_value": best(r)} for r in runs])
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


def _add_export_parser(sub: argparse._SubParsersAction) -> None:
    from nasviz.export import FORMATS

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


def build_parser(load_benchmarks: bool = True) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m nasviz", description="nasviz: see neural architecture search work.")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_run_parser(sub)
    _add_table_parser(sub)
    _add_bench_parser(sub, load_benchmarks)
    _add_tabulate_parser(sub)
    _add_runs_parser(sub)
    _add_export_parser(sub)
    _add_components_parser(sub)
    _add_tables_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from nasviz.components import load_plugins

    argv = list(sys.argv[1:] if argv is None else argv)
    load_plugins()  # before the parser: plugins' components are choices too
    parser = build_parser(load_benchmarks=bool(argv) and argv[0] == "bench")
    args = parser.parse_args(argv)
    if args.command == "bench":
        args.argv = argv  # what was asked, recorded in the benchmark's provenance
    try:
        return args.func(args)
    except BAD_INPUT as err:
        # Bad input: a clear one-line message, no traceback.
        print(f"error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as err:  # noqa: BLE001 - anything else is a bug, and must not look like bad input
        print(internal_error_message(err), file=sys.stderr)
        return EXIT_INTERNAL_ERROR
