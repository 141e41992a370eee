"""The search loop with the run store: persistence per step, stop, failure, and kill-and-resume."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from nasviz.cli import main
from nasviz.objectives import TableObjective, load_table
from nasviz.runner import ReplayMismatchWarning, build_search, resume_run, run_search, start_run
from nasviz.spaces import nb201
from nasviz.store import RunStore, StoredSnapshot
from nasviz.strategies.random_search import RandomSearch

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def small_table(tmp_path) -> Path:
    """200 real NB201 cells with synthetic values (mechanics only, not the benchmark)."""
    rng = np.random.default_rng(7)
    cells = list(itertools.islice(nb201.enumerate_all(), 200))
    path = tmp_path / "small.csv"
    lines = ["arch,acc"] + [f"{nb201.format(a)},{float(v)!r}" for a, v in zip(cells, rng.uniform(10, 95, len(cells)))]
    path.write_text("\n".join(lines) + "\n")
    return path


def config(table: Path, **over) -> dict:
    return {"table": str(table), "metric": "acc", "strategy": "random", "seed": 5, "budget": 30,
            "batch_size": 3, **over}


def pairs(evaluations) -> list[tuple[str, float | None]]:
    """What a run found, independent of measured costs: (arch, value) in evaluation order."""
    out = []
    for e in evaluations:  # a JSON document's dicts, the store's records or the runner's Evaluations
        if isinstance(e, dict):
            out.append((e["arch"], e["value"]))
        else:
            out.append((e.arch if isinstance(e.arch, str) else nb201.format(e.arch), e.value))
    return out


def reference(table: Path, **over):
    setup = build_search(config(table, **over))
    return run_search(setup.strategy, setup.objective, setup.config["budget"], format_arch=nb201.format,
                      batch_size=setup.config["batch_size"])


def test_run_search_without_a_store_is_unchanged(small_table):
    result = reference(small_table)
    assert len(result.evaluations) == 30 and len({nb201.format(e.arch) for e in result.evaluations}) == 30
    assert all(b >= a for a, b in zip(result.trajectory, result.trajectory[1:]))
    assert result.run_id is None and "run_id" not in result.to_dict(nb201.format)


def test_every_step_is_stored_with_its_snapshot(small_table, tmp_path):
    store = RunStore(tmp_path / "r.sqlite")
    seen = []
    result = start_run(store, config(small_table, budget=10), on_step=seen.append)
    run = store.get_run(result.run_id)
    assert run.status == "finished" and run.n_evaluations == 10
    assert run.config["metric"] == "acc" and run.config["strategy_options"] == {}
    assert pairs(store.evaluations(result.run_id)) == pairs(result.evaluations) == pairs(reference(small_table, budget=10).evaluations)
    assert [e.step for e in store.evaluations(result.run_id)] == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4]
    snaps = store.snapshots(result.run_id)
    assert [s.step for s in snaps] == [1, 2, 3, 4]
    assert snaps == [StoredSnapshot.from_stored(s.to_dict()) for s in seen]  # what the runner wrote, read back
    assert snaps[-1].best_value == run.best_value == result.best_value


class ExplodingStrategy(RandomSearch):
    """Fails while being told the results of step 3 (e.g. a GP fit that blows up)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.steps = 0

    def tell(self, evaluations):
        self.steps += 1
        if self.steps == 3:
            raise RuntimeError("surrogate exploded")
        super().tell(evaluations)


def test_evaluations_are_committed_before_the_strategy_hears_of_them(small_table, tmp_path):
    store = RunStore(tmp_path / "r.sqlite")
    table = load_table(small_table)
    objective = TableObjective(table, "acc")
    strategy = ExplodingStrategy(nb201.SPACE, seed=0, domain=objective.domain())
    with pytest.raises(RuntimeError, match="surrogate exploded"):
        run_search(strategy, objective, 20, format_arch=nb201.format, batch_size=2, store=store)
    run = store.list_runs()[0]
    assert run.status == "failed" and "surrogate exploded" in run.error
    assert run.n_evaluations == 6  # step 3's evaluations are kept although tell() failed
    assert store.snapshot_steps(run.id) == [1, 2]


def test_stop_requested_through_the_store_then_resume_gives_the_uninterrupted_result(small_table, tmp_path):
    store = RunStore(tmp_path / "r.sqlite")

    def stop_after_four(snap):
        if snap.step == 4:
            store.request_stop(snap_run_id[0])

    snap_run_id = []
    setup = build_search(config(small_table))
    snap_run_id.append(store.create_run(setup.config))
    first = run_search(setup.strategy, setup.objective, 30, format_arch=nb201.format, batch_size=3,
                       store=store, run_id=snap_run_id[0], on_step=stop_after_four)
    assert first.stopped and len(first.evaluations) == 12
    assert store.get_run(first.run_id).status == "stopped"
    resumed_steps = []
    second = resume_run(store, first.run_id, on_step=lambda s: resumed_steps.append(s.step))
    assert second.replayed == 12 and resumed_steps == list(range(5, 11))  # replayed steps stay silent
    assert pairs(second.evaluations) == pairs(reference(small_table).evaluations)
    assert pairs(store.evaluations(first.run_id)) == pairs(second.evaluations)
    assert store.get_run(first.run_id).status == "finished"
    assert store.snapshot_steps(first.run_id) == list(range(1, 11))
    assert second.trajectory == reference(small_table).trajectory


def test_a_run_killed_in_the_middle_of_a_step_finishes_that_step(small_table, tmp_path):
    """Simulate a death after part of a batch was stored: nothing is evaluated twice."""
    store = RunStore(tmp_path / "r.sqlite")
    ref = reference(small_table)
    run_id = store.create_run(build_search(config(small_table)).config)
    done = pairs(ref.evaluations)
    rows = [{"arch": a, "value": v} for a, v in done[:7]]  # steps 1, 2 and one third of step 3
    for step, chunk in ((1, rows[0:3]), (2, rows[3:6]), (3, rows[6:7])):
        store.add_evaluations(run_id, chunk, store.n_evaluations(run_id), step=step)
    store.set_status(run_id, "interrupted")
    result = resume_run(store, run_id)
    assert result.replayed == 7
    stored = store.evaluations(run_id)
    assert pairs(stored) == done and [e.index for e in stored] == list(range(30))
    assert [e.step for e in stored][6:9] == [3, 3, 3]
    assert store.snapshot_steps(run_id) == list(range(1, 11))  # the missing snapshots were written


def test_a_diverging_replay_warns_and_keeps_the_stored_results(small_table, tmp_path):
    store = RunStore(tmp_path / "r.sqlite")
    first = start_run(store, config(small_table, budget=6))
    stored = pairs(store.evaluations(first.run_id))
    other = build_search(config(small_table, budget=6, seed=99))  # not the seed that made the run
    with pytest.warns(ReplayMismatchWarning) as record:
        result = run_search(other.strategy, other.objective, 9, format_arch=nb201.format, batch_size=3,
                            store=store, run_id=first.run_id, resume=True)
    assert [str(w.message).split(":")[0] for w in record] == ["replaying step 1", "replaying step 2"]
    assert pairs(result.evaluations)[:6] == stored and len(result.evaluations) == 9
    assert len({a for a, _ in pairs(result.evaluations)}) == 9  # the strategy was told: no repeats


def test_resume_refuses_a_run_that_is_still_running(small_table, tmp_path):
    store = RunStore(tmp_path / "r.sqlite")
    run_id = store.create_run(build_search(config(small_table)).config)  # owned by this live process
    with pytest.raises(ValueError, match=f"run {run_id} is still running"):
        resume_run(store, run_id)


def test_bad_search_configs_are_refused_with_the_key_named(small_table):
    # build_search validates through SearchConfig (nasviz.config): each error names the setting
    with pytest.raises(ValueError, match="a table search needs 'table'"):
        build_search({"strategy": "random"})
    with pytest.raises(ValueError, match="seed must be an integer"):
        build_search(config(small_table, seed="zero"))
    with pytest.raises(ValueError, match="budget must be at least 1"):
        build_search(config(small_table, budget=0))
    with pytest.raises(ValueError, match="metric 'nope'"):
        build_search(config(small_table, metric="nope"))
    with pytest.raises(ValueError, match="objective must be 'table' or 'train', got 'oracle'"):
        build_search(config(small_table, objective="oracle"))
    with pytest.raises(ValueError, match="workers / dask apply to training objectives"):
        build_search(config(small_table, workers=2))
    with pytest.raises(ValueError, match="kernel 'otmann' cannot read|needs a batch size of at least 2"):
        build_search(config(small_table, strategy="bo", strategy_options={"batch": "kdpp"}, batch_size=1))


def test_build_search_takes_a_search_config_or_its_stored_dict(small_table):
    from nasviz.config import SearchConfig

    cfg = SearchConfig.create(table=str(small_table), strategy="bo-tw2g-kdpp5", budget=10, seed=2,
                              strategy_options={"n_init": 5})
    with build_search(cfg) as typed, build_search(cfg.to_dict()) as stored:
        assert typed.config == stored.config and typed.search_config == stored.search_config
        assert typed.config["metric"] == "acc" and typed.config["batch_size"] == 5  # the defaults, filled in
        assert typed.config["skipped_rows"] == {"count": 0, "first": []}
        assert SearchConfig.from_dict(typed.config) == typed.search_config


def test_a_training_config_rebuilds_the_trainer_with_its_settings():
    training = pytest.importorskip("nasviz.objectives.training", reason="the trainer is not in this checkout")
    with build_search({"objective": "train", "budget": 3, "seed": 4, "train_seed": 2,
                       "training": {"epochs": 1}}) as setup:
        assert isinstance(setup.objective, training.TrainingObjective) and setup.executor is None
        assert setup.objective.seed == 2 and setup.objective.training["epochs"] == 1
        assert setup.config["metric"] == "valid_accuracy" and setup.config["dataset"] == "digits"
        assert setup.objective.domain() is None and setup.table is None


# -- a real process, killed with SIGKILL mid-run, resumed from the command line --------------------


def nasviz(*args: str, **kwargs):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "nasviz", *args], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def wait_for_evaluations(path: Path, at_least: int, proc: subprocess.Popen, timeout: float = 120.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the search ended before it could be killed: {proc.communicate()}"
        if path.exists():
            runs = RunStore(path).list_runs()
            if runs and runs[0].n_evaluations >= at_least:
                return runs[0].n_evaluations
        time.sleep(0.05)
    raise AssertionError(f"no {at_least} evaluations stored within {timeout} s")


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_from_the_cli_loses_and_repeats_nothing(small_table, tmp_path, capsys):
    db = tmp_path / "runs.sqlite"
    budget, batch = 45, 2
    common = ["--table", str(small_table), "--metric", "acc", "--budget", str(budget), "--batch-size", str(batch),
              "--seed", "11"]
    proc = nasviz("run", *common, "--store", str(db), "--step-delay", "0.1", "--json")
    wait_for_evaluations(db, 8, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    store = RunStore(db)
    run = store.get_run(1)
    assert run.status == "interrupted"  # its pid is dead
    killed_at = run.n_evaluations
    assert 8 <= killed_at < budget

    # kill the resumed process too, then resume again: replay over a replay
    proc = nasviz("run", "--store", str(db), "--resume", "1", "--step-delay", "0.1", "--json")
    wait_for_evaluations(db, killed_at + 6, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    second_kill = store.get_run(1).n_evaluations
    assert second_kill < budget

    proc = nasviz("run", "--store", str(db), "--resume", "1", "--json")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    resumed = json.loads(out)
    assert resumed["run_id"] == 1 and resumed["replayed"] == second_kill

    capsys.readouterr()
    assert main(["run", *common, "--json"]) == 0  # the same search, never interrupted
    uninterrupted = json.loads(capsys.readouterr().out)

    assert pairs(resumed["evaluations"]) == pairs(uninterrupted["evaluations"])
    assert resumed["trajectory"] == uninterrupted["trajectory"] and resumed["best_value"] == uninterrupted["best_value"]
    stored = store.evaluations(1)
    assert pairs(stored) == pairs(uninterrupted["evaluations"])  # nothing lost, nothing duplicated
    assert [e.index for e in stored] == list(range(budget)) and len({e.arch for e in stored}) == budget
    assert store.get_run(1).status == "finished"
    assert store.snapshot_steps(1) == list(range(1, budget // batch + 2))


def test_cli_resume_errors_are_one_line(tmp_path, capsys):
    assert main(["run", "--resume", "1"]) == 2
    assert "--resume RUN_ID needs --store FILE" in capsys.readouterr().err
    RunStore(tmp_path / "r.sqlite")
    assert main(["run", "--store", str(tmp_path / "r.sqlite"), "--resume", "7"]) == 2
    assert "no run 7" in capsys.readouterr().err


@pytest.mark.parametrize("strategy, budget, batch, options", [
    ("evolution", 24, 1, {}),
    ("bo-tw2g-kdpp5", 15, 5, {"n_init": 5, "pool_size": 30}),
])
def test_stateful_strategies_resume_by_replay_to_the_uninterrupted_result(small_table, tmp_path, strategy, budget,
                                                                          batch, options):
    from nasviz.strategies.factory import strategy_names

    if strategy not in strategy_names():
        pytest.skip(f"strategy {strategy} is not in this checkout")
    cfg = config(small_table, strategy=strategy, budget=budget, batch_size=batch, strategy_options=options)
    with build_search(cfg) as setup:
        uninterrupted = run_search(setup.strategy, setup.objective, budget, format_arch=nb201.format, batch_size=batch)
    store = RunStore(tmp_path / "r.sqlite")
    steps = []
    first = start_run(store, cfg, should_stop=lambda: steps.append(1) or len(steps) > budget // batch // 2)
    assert 0 < len(first.evaluations) < budget
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReplayMismatchWarning)  # replay must match exactly
        resumed = resume_run(store, first.run_id)
    assert resumed.replayed == len(first.evaluations)
    assert pairs(resumed.evaluations) == pairs(uninterrupted.evaluations)


def test_runs_command_lists_exports_stops_and_deletes(small_table, tmp_path, capsys):
    db = tmp_path / "runs.sqlite"
    assert main(["run", "--table", str(small_table), "--budget", "6", "--store", str(db), "--json"]) == 0
    capsys.readouterr()
    assert main(["runs", "list", "--store", str(db), "--json"]) == 0
    (run,) = json.loads(capsys.readouterr().out)
    assert run["id"] == 1 and run["status"] == "finished" and run["n_evaluations"] == 6
    assert main(["runs", "list", "--store", str(db)]) == 0
    assert "finished" in capsys.readouterr().out
    assert main(["runs", "export", "--store", str(db), "1", "--csv", str(tmp_path / "r.csv"),
                 "--json-out", str(tmp_path / "r.json")]) == 0
    from nasviz.store import read_csv_export

    assert [e.arch for e in read_csv_export(tmp_path / "r.csv")] == [e.arch for e in RunStore(db).evaluations(1)]
    assert json.loads((tmp_path / "r.json").read_text())["run"]["id"] == 1
    assert main(["runs", "stop", "--store", str(db), "1"]) == 0 and RunStore(db).stop_requested(1)
    assert main(["runs", "delete", "--store", str(db), "1"]) == 0 and RunStore(db).list_runs() == []
    capsys.readouterr()
    assert main(["runs", "delete", "--store", str(db), "1"]) == 2
    assert "no run 1" in capsys.readouterr().err
    assert main(["runs", "list", "--store", str(tmp_path / "none.sqlite")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_run_with_evaluations_is_only_continued_with_resume(small_table, tmp_path):
    store = RunStore(tmp_path / "r.sqlite")
    first = start_run(store, config(small_table, budget=6))
    setup = build_search(config(small_table, budget=6))
    with pytest.raises(ValueError, match="already has 6 evaluations; pass resume=True"):
        run_search(setup.strategy, setup.objective, 6, format_arch=nb201.format, store=store, run_id=first.run_id)
    assert store.get_run(first.run_id).status == "finished"  # untouched
