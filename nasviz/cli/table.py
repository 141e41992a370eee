"""``python -m nasviz table``: inspect a benchmark table, import NAS-Bench-201 / -101 files, make the default table."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from nasviz.cli.shared import default_table_path, load_with_space_hint, print_json
from nasviz.cli_common import add_space_argument
from nasviz.errors import InputError
from nasviz.objectives import load_table
from nasviz.rounding import counted, format_value


def add_table_parser(sub: argparse._SubParsersAction) -> None:
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
        print_json(info)
    else:
        print(f"{info['source']}: {info['rows']} architectures, metrics "
              + ", ".join(m + (" (minimised)" if info["directions"][m] == "minimise" else "") for m in info["metrics"]))
        print(f"  column roles, as declared by {info['schema']}:" if info["schema"] else
              "  column roles, guessed (declare them in a schema: '# nasviz:' lines or a <table>.schema.toml file):")
        for role in table.roles:
            print(f"    {role}")
        dup = info["duplicates"]
        if dup["policy"] == "average" and dup["rows_merged"]:
            print(f"  {counted(dup['rows_merged'], 'row')} of {counted(dup['architectures_with_repeats'], 'architecture')} "
                  "seen before "
                  "were averaged into them")
        for m, v in info["optimum"].items():
            print(f"  optimum {m}: {format_value(v, info['decimals'].get(m))} ({info['best_arch'][m]})")
            d = info["distribution"][m]
            if d.get("rows"):
                print(f"    median {d['median']:.4g} (q25 {d['q25']:.4g}, q75 {d['q75']:.4g}); "
                      f"{counted(d['within_0.5_of_optimum'], 'row')} within 0.5 of the optimum")
        for b in info["bad_rows"]:
            print(f"  bad row: line {b['line']}, column {b['column']!r}: {b['problem']}")
        if info["bad_rows_count"] > len(info["bad_rows"]):
            print(f"  ... and {counted(info['bad_rows_count'] - len(info['bad_rows']), 'more bad row')}")
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
    root = Path(__file__).resolve().parents[2]  # nasviz/cli/table.py -> the checkout
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
        print_json({"out": str(result.out_path), "rows_read": result.rows_read, "rows_joined": result.rows_joined,
                     "unknown_hashes": len(result.unknown_hashes), "duplicate_hashes": len(result.duplicate_hashes),
                     "columns": list(result.columns)})
    else:
        print(result)
    return 0

