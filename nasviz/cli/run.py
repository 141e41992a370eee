"""``python -m nasviz run``: its arguments, the validated config they make, the search and its report."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from nasviz import defaults
from nasviz.cli.shared import default_table_path, load_with_space_hint, non_negative_int, print_json
from nasviz.cli_common import add_space_argument, in_metric_units
from nasviz.components import (ACQUISITIONS, BATCH_SELECTORS, DATASETS, KERNELS, POOLS, STRATEGIES,
                               model_never_fitted)
from nasviz.config import SearchConfig
from nasviz.errors import InputError
from nasviz.objectives import TableError
from nasviz.rounding import counted, format_value, round_value, run_decimals
from nasviz.runner import run_search


def add_run_parser(sub: argparse._SubParsersAction) -> None:
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
    p.add_argument("--seed", type=non_negative_int, default=defaults.DEFAULT_SEED,
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

            if not config.objective.data_folder or not config.objective.dataset:
                raise InputError("--download needs --dataset and --data-folder DIR")
            download(config.objective.dataset, config.objective.data_folder)
        try:
            setup = build_search(config)
        except TableError as err:
            if config.objective.table and "no usable row" in str(err):
                load_with_space_hint(config.objective.table, config.space)  # raises naming the --space to add
            raise
        if store is not None:
            run_id = store.create_run(setup.config)
    try:
        return _run_and_report(args, setup, store, run_id)
    finally:
        setup.close()  # an executor's workers, if any


def _run_and_report(args: argparse.Namespace, setup, store, run_id) -> int:
    cfg, search, space = setup.config, setup.search_config, setup.space  # cfg: the stored form, with the table's extras

    def progress(snap) -> None:
        if not args.json:
            print(f"\rstep {snap.step}: {snap.n_evaluations}/{snap.budget} evaluations, best "
                  f"{format_value(snap.best_value, run_decimals(cfg))}", end="", file=sys.stderr)
        if args.step_delay > 0:
            time.sleep(args.step_delay)

    if store is not None and not args.json:
        print(f"run {run_id} in {args.store}" + (" (resumed)" if args.resume is not None else ""), file=sys.stderr)
    never = model_never_fitted(search.strategy.name, search.strategy.options, search.run.budget)
    if never:
        print(f"note: {never}", file=sys.stderr)
    skipped = cfg.get("skipped_rows") or {}
    if skipped.get("count"):
        print(f"skipped {counted(skipped['count'], 'bad row')} of {setup.table.source}"
              + (f"; the first {len(skipped['first'])}:" if skipped["count"] > len(skipped["first"]) else ":"),
              file=sys.stderr)
        for text in skipped["first"]:
            print(f"  {text}", file=sys.stderr)
    result = run_search(setup.strategy, setup.objective, search.run.budget, format_arch=space.format,
                        parse_arch=space.parse, batch_size=search.run.batch_size, on_step=progress,
                        store=store, run_id=run_id, resume=args.resume is not None, lease=setup.lease,
                        overlap=search.run.overlap, cost_budget=setup.cost_budget())
    out = in_metric_units(result.to_dict(space.format), cfg.get("direction"))
    decimals = run_decimals(cfg)
    for key in ("best_value", "optimum", "regret"):  # at the table's resolution (a regret of 0.0799999 is 0.08)
        out[key] = round_value(out.get(key), decimals)
    out.update({"table": setup.table.source if setup.table is not None else None, "metric": search.objective.metric,
                "direction": cfg.get("direction") or "maximise",
                "objective": search.objective.kind, "strategy": search.strategy.name,
                "seed": search.run.seed, "budget": search.run.budget, "skipped_rows": skipped or None,
                "value_decimals": decimals})
    if args.json:
        print_json(out)
    else:
        print(file=sys.stderr)
        print(f"best {format_value(out['best_value'], decimals)} ({out['best_arch']}), optimum "
              f"{format_value(out['optimum'], decimals)}, regret {format_value(out['regret'], decimals)}, "
              f"{out['seconds']:.2f} s")
    return 0

