"""A space declared by a spec file only, searched by every strategy that fits it, shown by every
dashboard view, and benchmarked from the command line (issue 48, "Done when": the default
strategy, ``bo-wl-ei`` and Optuna's TPE in ``bench search`` on a declared space).

The spec is registered the way a user registers it (``NASVIZ_PLUGINS`` items and ``--space FILE``
share :func:`nasviz.plugins.load_item`); nothing here is Python about the space.
"""

from __future__ import annotations

import csv
import itertools
import json
import textwrap

import numpy as np
import pytest

from nasviz import plugins
from nasviz.components import PLUGIN_GROUPS, SPACES, strategies_for

CHAIN = textwrap.dedent('''\
    name = "test-chain4"
    description = "chains of four layers, three operations each (a test space)"
    operations = ["conv3", "conv5", "pool"]
    positions = 4
    graph = "chain"

    [groups]
    conv = ["conv3", "conv5"]
    pool = ["pool"]
''')
#: Three layers that choose their input: a graph space with position-dependent labels.
WIRED = textwrap.dedent('''\
    name = "test-wired3"
    description = "three layers reading an earlier one (a test space)"
    operations = ["conv3", "conv5", "pool"]
    positions = 3
    graph = "chain"
    labels = "position"

    [inputs]
    layer_2 = ["input", "layer_1"]
    layer_3 = ["input", "layer_1", "layer_2"]

    [groups]
    conv = ["conv3", "conv5"]
    pool = ["pool"]
''')


def _value(params: dict[str, str], rng) -> float:
    ops = [v for k, v in params.items() if not k.endswith("_input")]
    return sum((i + 1) * (op == "conv3") - (op == "pool") for i, op in enumerate(ops)) + 0.1 * rng.normal()


def _declare(tmp_path, text: str, stem: str):
    """Write the spec, register it as NASVIZ_PLUGINS would, and write a table with one column per
    parameter holding every architecture of the space."""
    spec = tmp_path / f"{stem}.toml"
    spec.write_text(text)
    names, problem = plugins.load_item(str(spec), PLUGIN_GROUPS)
    assert problem is None and len(names) == 1
    space = SPACES.create(names[0])
    choices = space.parameter_choices()
    rng = np.random.default_rng(0)
    table = tmp_path / f"{stem}.csv"
    with table.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*choices, "score", "test_score"])
        for combo in itertools.product(*choices.values()):
            value = _value(dict(zip(choices, combo)), rng)
            writer.writerow([*combo, f"{value:.4f}", f"{value + 0.2 * rng.normal():.4f}"])
    return names[0], spec, table


@pytest.fixture()
def chain(tmp_path):
    name, spec, table = _declare(tmp_path, CHAIN, "chain4")
    try:
        yield name, spec, table
    finally:
        SPACES.unregister(name)


@pytest.fixture()
def wired(tmp_path):
    name, spec, table = _declare(tmp_path, WIRED, "wired3")
    try:
        yield name, spec, table
    finally:
        SPACES.unregister(name)


def _search(space: str, table, strategy: str, budget: int = 12, seed: int = 1):
    from nasviz.config import SearchConfig
    from nasviz.runner import build_search, run_search

    options = {"n_init": 5} if SPACES and strategy.startswith("bo") else {}
    config = SearchConfig.create(table=str(table), space=space, strategy=strategy, budget=budget, seed=seed,
                                 strategy_options=options)
    with build_search(config.to_dict()) as setup:
        return run_search(setup.strategy, setup.objective, budget, format_arch=setup.space.format,
                          batch_size=config.run.batch_size)


@pytest.mark.slow
def test_every_compatible_strategy_searches_the_declared_space(chain):
    pytest.importorskip("optuna")
    name, _, table = chain
    found = strategies_for(name)
    assert {"random", "evolution", "bo-tw2g-hamming-ei", "bo-wl-ei", "bo-tw2g-kdpp5", "optuna-tpe"} <= set(found)
    assert not {"nasbot", "autokeras", "bfs-morph"} & set(found)  # they need layers / morphisms
    for strategy in found:
        result = _search(name, table, strategy)
        assert len(result.evaluations) == 12, strategy
        if not strategy.startswith("optuna"):  # Optuna's samplers may repeat a cell (it counts as a trial)
            assert len({ev.arch for ev in result.evaluations}) == 12, strategy
        assert result.best_value is not None and result.regret >= 0, strategy


@pytest.mark.slow
def test_a_graph_space_with_input_choices_and_position_labels_is_searched(wired):
    name, _, table = wired
    for strategy in ("bo-tw2g-hamming-ei", "bo-wl-ei", "evolution"):
        result = _search(name, table, strategy, budget=15)
        assert len({ev.arch for ev in result.evaluations}) == 15 and result.regret >= 0


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["random", "bo-wl-ei", "bo-tw2g-hamming-ei"])
def test_every_dashboard_view_reads_a_run_on_the_declared_space(chain, tmp_path, strategy):
    from nasviz.components import VIEWS
    from nasviz.config import SearchConfig
    from nasviz.dashboard import launching
    from nasviz.dashboard.explorer.comparison import parallel_space, run_curves
    from nasviz.dashboard.watching import RunWatcher

    name, _, table = chain
    store = tmp_path / "runs.sqlite"
    config = SearchConfig.create(table=str(table), space=name, strategy=strategy, budget=16, seed=1,
                                 strategy_options={"n_init": 6} if strategy.startswith("bo") else {})
    run_id = launching.start_run(store, config, background=False)
    watcher = RunWatcher(store, run_id).refresh()
    assert watcher.status == "finished" and len(watcher.evaluations) == 16
    drawn = set()
    for entry in VIEWS:
        view = VIEWS.create(entry.name)
        reason = view.applies(watcher)
        if reason is None:
            output = view.render(watcher, **{c.key: c.default for c in view.controls(watcher)})
            assert output.charts or output.tables, entry.name
            drawn.add(entry.name)
        else:
            assert reason.endswith("."), (entry.name, reason)
    model = strategy != "random"
    assert drawn >= {"distances", "selection", "evaluations"} | ({"pool", "hyperparameters"} if model else set())
    assert ("features" in drawn) == (strategy == "bo-wl-ei")
    space, why_not = parallel_space(run_curves(store, [run_id]))
    assert space == name and why_not is None  # shared choices, no inputs: operation slots


@pytest.mark.slow
def test_bench_search_runs_the_default_bo_wl_ei_and_tpe_on_a_spec_file(chain, monkeypatch, capsys):
    pytest.importorskip("optuna")
    from nasviz.cli import main
    from nasviz.components import DEFAULT_STRATEGY

    _, spec, table = chain
    monkeypatch.setenv(plugins.PLUGINS_ENV, "")  # restored after the test: --space FILE exports itself
    code = main(["bench", "search", "--table", str(table), "--space", str(spec), "--strategies",
                 f"{DEFAULT_STRATEGY},bo-wl-ei,optuna-tpe", "--budget", "12", "--seeds", "2", "--workers", "1",
                 "--n-init", "5", "--checkpoints", "6", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    report = json.loads(out)
    assert report["space"] == "test-chain4" and report["crashed_runs"] == 0
    for strategy in (DEFAULT_STRATEGY, "bo-wl-ei", "optuna-tpe"):
        summary = report["strategies"][strategy]
        assert summary["runs"] == 2 and summary["final"]["runs"] == 2
        assert all(set(b["row"]) == {"score", "test_score"} for b in summary["best_per_run"])


@pytest.mark.slow
def test_a_table_spread_over_position_columns_is_its_own_space_on_the_command_line(tmp_path, monkeypatch, capsys):
    """``--space results.csv``: the table's columns ``layer_1`` .. ``layer_4`` declare the space,
    registered for this command (and exported to the processes it starts)."""
    from nasviz.cli import main

    rng = np.random.default_rng(3)
    path = tmp_path / "results.csv"
    lines = ["model_id,layer_1,layer_2,layer_3,layer_4,acc,latency"]
    for k, ops in enumerate(itertools.product(["conv", "pool", "skip"], repeat=4)):
        lines.append(f"{k},{','.join(ops)},{sum(o == 'conv' for o in ops) + rng.normal(0, .1):.3f},"
                     f"{sum(o != 'skip' for o in ops) + rng.normal(0, .1):.3f}")
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setenv(plugins.PLUGINS_ENV, "")
    try:
        assert main(["run", "--table", str(path), "--space", str(path), "--strategy", "bo", "--kernel", "slots", "--budget", "10",
                     "--n-init", "4", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["metric"] == "acc" and len(out["evaluations"]) == 10  # model_id is an identifier
        assert SPACES.get("results").origin == f"table columns {path}"
        assert plugins.PLUGINS_ENV in __import__("os").environ and str(path) in __import__("os").environ[plugins.PLUGINS_ENV]
    finally:
        SPACES.unregister("results")
