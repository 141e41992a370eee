"""A table's schema (header lines or a sidecar file), the guesses without one, and a minimised
metric handled end to end: regret, best so far, what the CLI, the benchmark and the page show
(issue 48, finding 6)."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from nasviz.errors import TableError
from nasviz.objectives import TableObjective, load_table

CELLS = ["|nor_conv_3x3~0|+|none~0|avg_pool_3x3~1|+|skip_connect~0|none~1|nor_conv_1x1~2|",
         "|avg_pool_3x3~0|+|none~0|avg_pool_3x3~1|+|skip_connect~0|none~1|nor_conv_1x1~2|",
         "|nor_conv_1x1~0|+|none~0|avg_pool_3x3~1|+|skip_connect~0|none~1|nor_conv_1x1~2|",
         "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|none~1|nor_conv_1x1~2|"]


def _rows(n: int = 4) -> list[str]:
    return [f"{i + 1},{CELLS[i]},{80 + 3 * i % 7},{2.0 + (5 * i) % 4},{0.5},0{i}" for i in range(n)]


def test_header_lines_declare_metrics_directions_cost_and_ignored_columns():
    text = textwrap.dedent('''\
        # nasviz: metrics = { latency = "minimise", acc = "max" }
        # nasviz: ignore = ["code"]
        id,arch,acc,latency,train_time,code
    ''') + "\n".join(_rows()) + "\n"
    table = load_table(text.encode(), name="t.csv")
    assert table.metrics == ["latency", "acc"] and table.directions == {"latency": "minimise", "acc": "maximise"}
    assert table.cost_column == "train_time" and table.schema_source == "t.csv (header)"
    roles = {r.column: r for r in table.roles}
    assert roles["code"].declared and roles["latency"].declared and not roles["train_time"].declared
    assert table.optimum("latency") == 2.0 and table.strings[table.best_index("latency")] == CELLS[0]
    bad = load_table((text + "5,not a cell,1,1,1,1\n").encode(), name="t.csv").bad_rows
    assert bad[0].line == 8  # the schema lines count: line numbers are the file's


def test_a_sidecar_schema_beside_the_table(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text("id,arch,acc,latency,train_time,code\n" + "\n".join(_rows()) + "\n")
    (tmp_path / "results.schema.json").write_text(json.dumps({"metrics": {"acc": "maximise"}, "cost": "latency"}))
    table = load_table(path)
    assert table.metrics == ["acc"] and table.cost_column == "latency" and table.schema_source.endswith("results.schema.json")
    assert "train_time" in table.descriptive  # numeric, not a declared metric: described, never an objective
    (tmp_path / "results.schema.toml").write_text('metrics = { nope = "max" }\n')
    with pytest.raises(TableError, match="names column 'nope', which the header lacks"):
        load_table(path)  # the TOML sidecar comes first


def test_a_schema_in_both_places_is_refused(tmp_path):
    path = tmp_path / "both.csv"
    path.write_text('# nasviz: metrics = ["acc"]\nid,arch,acc,latency,train_time,code\n' + "\n".join(_rows()) + "\n")
    (tmp_path / "both.schema.toml").write_text('metrics = ["acc"]\n')
    with pytest.raises(TableError, match="declares its schema twice"):
        load_table(path)


def test_without_a_schema_identifiers_codes_and_constants_are_never_the_first_metric():
    """Finding 6: an integer id column became the first metric, ``latency`` was maximised and a
    column of digit strings became a metric."""
    rng = np.random.default_rng(0)
    lines = ["row,arch,zip,const,latency,acc"]
    from nasviz.spaces import get_space

    cells = get_space("nb201").sample(rng, 12)
    for i, cell in enumerate(dict.fromkeys(cells)):
        lines.append(f"{i},{get_space('nb201').format(cell)},{i:05d},7,{rng.uniform(1, 3):.3f},{rng.uniform(80, 90):.2f}")
    table = load_table("\n".join(lines).encode())
    assert table.metrics[0] == "latency" and table.direction("latency") == "minimise"
    assert table.metrics == ["latency", "acc", "const"]  # the constant column last, never first
    roles = {r.column: r for r in table.roles}
    assert roles["row"].role == "ignored" and "identifier" in roles["row"].why
    assert roles["zip"].role == "ignored" and "codes" in roles["zip"].why
    assert not any(r.declared for r in table.roles)
    renamed = load_table("\n".join(lines).replace("row,", "model_id,", 1).replace(",const,", ",flops,", 1).encode())
    assert "model_id" in renamed.ignored_columns and "flops" in renamed.descriptive


def test_a_metric_guessed_to_be_row_numbers_is_named_with_the_guess_and_the_line_that_declares_it():
    """A score column holding the ranks 0..n-1 looks like row numbers: the errors say so and give
    the schema line, and that line, added above the header, makes it the metric."""
    from nasviz.spaces import get_space

    space = get_space("nb201")
    cells = list(dict.fromkeys(space.sample(np.random.default_rng(2), 14)))[:12]
    ranks = np.random.default_rng(3).permutation(len(cells))
    body = "\n".join(f"{space.format(c)},{r}" for c, r in zip(cells, ranks)) + "\n"
    with pytest.raises(TableError) as alone:
        load_table(("arch,score\n" + body).encode(), name="ranks.csv")
    text = str(alone.value)
    assert "1 numeric column was guessed not to be one" in text
    assert "score is ignored (an identifier: whole numbers that count the rows from 0 or 1)" in text
    assert '# nasviz: metrics = { score = "maximise" }' in text
    assert "score" not in alone.value.redacted()  # the column's name is the file's text: left out of a redacted view

    with_acc = load_table(("arch,score,acc\n" + body.replace("\n", ",80.5\n")).encode(), name="ranks.csv")
    with pytest.raises(TableError) as chosen:
        with_acc.check_metric("score")
    assert "it is read as ignored (guessed: an identifier" in str(chosen.value)
    assert '# nasviz: metrics = { score = "maximise", acc = "maximise" }' in str(chosen.value)
    with pytest.raises(TableError, match="metric 'loss' is not a column of ranks.csv; metrics: acc"):
        with_acc.check_metric("loss")

    declared = load_table(('# nasviz: metrics = { score = "maximise" }\narch,score\n' + body).encode(), name="ranks.csv")
    assert declared.metrics == ["score"] and declared.optimum("score") == len(cells) - 1


@pytest.mark.slow
def test_table_info_shows_the_guesses(capsys, tmp_path):
    from nasviz.cli import main

    path = tmp_path / "t.csv"
    path.write_text("id,arch,acc,latency,train_time,code\n" + "\n".join(_rows()) + "\n")
    assert main(["table", "info", "--table", str(path)]) == 0
    out = capsys.readouterr().out
    assert "column roles, guessed" in out and "latency: metric (minimise), guessed: numeric, and its name says lower is better" in out
    assert "metrics acc, latency (minimised)" in out


def _latency_table(tmp_path):
    """Every NB201 cell of three operations, with a made-up latency that is smallest for pooling."""
    from nasviz.spaces import nb201

    ops = ("avg_pool_3x3", "nor_conv_1x1", "nor_conv_3x3")
    rng = np.random.default_rng(1)
    lines = ["# nasviz: metrics = { latency = \"minimise\", acc = \"maximise\" }", "arch,latency,acc"]
    for combo in __import__("itertools").product(ops, repeat=6):
        cell = nb201.from_operations(list(combo))
        latency = sum({"avg_pool_3x3": 0.3, "nor_conv_1x1": 1.0, "nor_conv_3x3": 2.0}[o] for o in combo)
        lines.append(f"{nb201.SPACE.format(cell)},{latency + 0.01 * rng.normal():.4f},{80 + latency:.3f}")
    path = tmp_path / "latency.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_minimised_metric_is_a_score_to_the_search_and_its_own_value_to_the_user(tmp_path, capsys):
    from nasviz.cli import main

    path = _latency_table(tmp_path)
    table = load_table(path)
    objective = TableObjective(table, "latency")
    cell = table.archs[0]
    assert objective.evaluate([cell])[0].value == -table.lookup(cell, "latency")
    assert objective.optimum() == -table.optimum("latency") and objective.shown(objective.optimum()) == table.optimum("latency")
    assert main(["run", "--table", str(path), "--strategy", "random", "--budget", "30", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metric"] == "latency" and out["direction"] == "minimise"
    assert out["optimum"] == pytest.approx(table.optimum("latency"))
    assert out["best_value"] == pytest.approx(min(e["value"] for e in out["evaluations"]))
    assert out["regret"] == pytest.approx(out["best_value"] - out["optimum"]) and out["regret"] >= 0
    assert out["trajectory"] == sorted(out["trajectory"], reverse=True)  # the best so far only falls


@pytest.mark.slow
def test_the_page_shows_a_minimised_metric_in_its_own_units(tmp_path):
    from nasviz.components import VIEWS
    from nasviz.config import SearchConfig
    from nasviz.dashboard import launching
    from nasviz.dashboard.explorer.comparison import run_curves
    from nasviz.dashboard.watching import RunWatcher
    from nasviz.viz import plot_history
    from nasviz.viz._compare import _get_curves_info

    path = _latency_table(tmp_path)
    table = load_table(path)
    store = tmp_path / "runs.sqlite"
    run_id = launching.start_run(store, SearchConfig.create(table=str(path), strategy="random", budget=20, seed=2),
                                 background=False)
    w = RunWatcher(store, run_id).refresh()
    assert w.config["metric"] == "latency" and w.direction == "minimise"
    values = [w.shown(e["value"]) for e in w.evaluations]
    assert all(v > 0 for v in values)  # latencies, not their negatives
    figure = plot_history(w.evaluations, w.optimum(), metric="latency", minimise=True)
    best_line = next(t for t in figure.data if t.name == "best so far").y
    assert list(best_line) == sorted(best_line, reverse=True) and best_line[-1] == pytest.approx(min(values))
    assert figure.layout.yaxis.title.text == "latency (lower is better)"
    optimum = [float(a.text.split()[1]) for a in figure.layout.annotations if a.text.startswith("optimum ")]
    assert optimum == [pytest.approx(table.optimum("latency"))]  # the smallest latency, not minus it
    frame = VIEWS.create("evaluations").render(w, eval_show="all").tables[0].frame
    assert list(frame["latency (lower is better)"]) == pytest.approx(values)
    regret = _get_curves_info(run_curves(store, [run_id]), regret=True).mean[0]
    assert regret[-1] == pytest.approx(min(values) - table.optimum("latency")) and np.all(np.diff(regret) <= 0)


@pytest.mark.slow
def test_bench_search_reports_regret_and_best_rows_of_a_minimised_metric(tmp_path):
    import argparse

    from nasviz.bench import search

    path = _latency_table(tmp_path)
    parser = argparse.ArgumentParser()
    search.add_arguments(parser)
    out = search.run(parser.parse_args(["--table", str(path), "--strategies", "random,evolution", "--budget", "20",
                                        "--seeds", "2", "--workers", "1", "--checkpoints", "10", "--no-progress"]))
    assert out["metric"] == "latency" and out["direction"] == "minimise"
    for summary in out["strategies"].values():
        assert all(r >= 0 for r in summary["regret_by_evaluation"])
        for best in summary["best_per_run"]:
            assert best["value"] == best["row"]["latency"] > 0
