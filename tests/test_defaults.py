"""One default for the page, ``run`` and ``bench search`` (issue 46): the embedded NAS-Bench-201
CIFAR table, the tuned strategy, the budget and the seed; and the table is what the documented
command makes from the shared NAS-Bench-201 files."""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import pytest

from nasviz import defaults
from nasviz.cli import build_parser, main

REPO = Path(__file__).resolve().parents[1]


def _run_defaults() -> argparse.Namespace:
    return build_parser().parse_args(["run"])


def _bench_search_defaults() -> argparse.Namespace:
    from nasviz.bench import search

    parser = argparse.ArgumentParser()
    search.add_arguments(parser)
    return parser.parse_args([])


@pytest.mark.slow
def test_run_bench_search_and_the_page_share_one_default_table_and_strategy():
    from nasviz.bench.search import table_pairs
    from nasviz.components import DEFAULT_STRATEGY
    from nasviz.config import SearchConfig
    from nasviz.dashboard import forms, launching, sources

    from nasviz.cli import _run_config

    run = _run_defaults()
    assert _run_config(run).strategy.name == defaults.DEFAULT_STRATEGY == DEFAULT_STRATEGY == forms.PREFERRED[0]
    table = sources.default_table_path()
    source = sources.DataSource.from_table(table, sources.table_from_path(table))
    assert launching.search_config(source).strategy.name == defaults.DEFAULT_STRATEGY
    assert SearchConfig.create(table="t.csv").strategy.name == defaults.DEFAULT_STRATEGY
    assert run.budget == defaults.DEFAULT_BUDGET and run.seed == defaults.DEFAULT_SEED
    assert run.step_delay == defaults.CLI_STEP_DELAY == 0  # the command line is unpaced
    assert defaults.PAGE_STEP_DELAY > 0  # the page is paced
    bench = _bench_search_defaults()
    assert defaults.DEFAULT_STRATEGY in bench.strategies.split(",")
    (pair,) = table_pairs(bench)
    assert Path(pair.table) == defaults.DEFAULT_TABLE == sources.default_table_path()


def test_a_space_without_categorical_parameters_gets_the_first_preferred_strategy_that_fits():
    from nasviz.components import default_strategy, strategies_for
    from nasviz.config import SearchConfig

    assert default_strategy("nb201") == defaults.DEFAULT_STRATEGY
    for space in ("layers", "cnn", "wired"):
        assert defaults.DEFAULT_STRATEGY not in strategies_for(space)
        assert default_strategy(space) == "bo-tw2g-ucb"
        assert SearchConfig.create(objective="train", space=space).strategy.name == "bo-tw2g-ucb"


@pytest.mark.slow
def test_run_without_a_table_searches_the_default_table_with_the_default_strategy(capsys):
    assert main(["run", "--budget", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert Path(out["table"]).resolve() == defaults.DEFAULT_TABLE
    assert out["strategy"] == defaults.DEFAULT_STRATEGY and out["metric"] == "cifar10_test_200ep"


@pytest.mark.slow
def test_the_default_table_says_split_and_epochs_and_leads_with_cifar10_at_200_epochs():
    from nasviz.objectives import load_table

    table = load_table(defaults.DEFAULT_TABLE)
    assert table.metrics == ["cifar10_test_200ep", "cifar100_test_200ep", "cifar10_valid_12ep", "cifar10_test_12ep",
                             "cifar100_valid_12ep", "cifar100_test_12ep"]
    assert len(table) == 15_625 and not table.bad_rows
    assert table.optimum("cifar10_test_200ep") == pytest.approx(94.3733)
    licence = (REPO / "data" / "NB201-LICENSE.txt").read_text()
    assert "MIT License" in licence and "Xuanyi Dong" in licence and "NATS-Bench" in licence
    assert "python -m nasviz table make-default" in (REPO / "data" / "README.md").read_text()


@pytest.mark.slow
def test_the_committed_table_is_what_the_documented_command_makes(nb201_table_path, tmp_path, capsys):
    from nasviz.objectives.nb201_default import default_table_sources

    test_200, epoch_12 = default_table_sources()
    if test_200 is None or epoch_12 is None:
        pytest.skip("the shared nb201_test_accuracy.csv / nb201_12epoch.csv are absent")
    out = tmp_path / "made.csv"
    assert main(["table", "make-default", "--out", str(out)]) == 0
    assert out.read_bytes() == defaults.DEFAULT_TABLE.read_bytes()
    # values at the sources' resolution: the text of each cell, not a float written back
    with open(test_200, newline="") as handle:
        first = next(iter(csv.DictReader(handle)))
    with open(out, newline="") as handle:
        made = next(iter(csv.DictReader(handle)))
    assert made["arch"] == first["arch"] and made["cifar100_test_200ep"] == first["cifar100"]


def test_make_default_names_the_file_that_does_not_match(tmp_path, capsys):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("arch,cifar10,cifar100\n|none~0|+|none~0|none~1|+|none~0|none~1|none~2|,10,1\n")
    b.write_text("arch,cifar10_valid,cifar10_test\n|none~0|+|none~0|none~1|+|none~0|none~1|none~2|,10,10\n")
    assert main(["table", "make-default", "--test-200", str(a), "--epoch-12", str(b), "--out", str(tmp_path / "o.csv")]) == 2
    assert "b.csv" in capsys.readouterr().err


def test_no_signature_or_field_repeats_the_default_space_or_kernel_as_a_literal():
    """One source for every default (issue 49): a parameter or dataclass field that defaults to the
    space or kernel reads ``nasviz.defaults``, so changing the default changes it everywhere."""
    import ast
    from pathlib import Path

    from nasviz import defaults

    root = Path(defaults.__file__).resolve().parent
    literal_of = {"space": defaults.DEFAULT_SPACE, "space_name": defaults.DEFAULT_SPACE, "kernel": defaults.DEFAULT_KERNEL}
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            named = []  # (parameter or field name, its default)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                positional = [*node.args.posonlyargs, *node.args.args]
                named = list(zip([a.arg for a in positional[len(positional) - len(node.args.defaults):]],
                                 node.args.defaults))
                named += [(a.arg, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is not None]
            elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
                named = [(node.target.id, node.value)]
            found += [f"{path.relative_to(root)}:{v.lineno} {name}" for name, v in named
                      if isinstance(v, ast.Constant) and name in literal_of and v.value == literal_of[name]]
    assert not found, found


def test_no_reader_falls_back_to_a_literal_default_space_kernel_or_strategy():
    """One source for every default (issue 49): code that reads a setting from a mapping
    (``run.config.get("space", "nb201")``, ``cfg.get("space") or "nb201"``) instead of the run's
    typed config (``run.search.space``) repeats the default; nothing in ``nasviz/`` or ``pages/``
    does (a reader of its own input, such as a lesson file, names ``nasviz.defaults``)."""
    import ast

    literals = {defaults.DEFAULT_SPACE, defaults.DEFAULT_KERNEL, defaults.DEFAULT_STRATEGY}
    found = []
    for folder in ("nasviz", "pages"):
        for path in sorted((REPO / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if not any(repr(literal)[1:-1] in text for literal in literals):
                continue
            for node in ast.walk(ast.parse(text)):
                fallback = None
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                        and len(node.args) == 2):
                    fallback = node.args[1]  # mapping.get(key, "nb201")
                elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
                    fallback = node.values[-1]  # mapping.get(key) or "nb201"
                if isinstance(fallback, ast.Constant) and fallback.value in literals:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not found, found
