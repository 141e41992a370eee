import json
import subprocess
import sys

import numpy as np
import pytest

from nasviz.cli import main


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nasviz", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_random_search_json_from_a_real_subprocess(nb201_table_path):
    proc = run_cli("run", "--table", str(nb201_table_path), "--metric", "cifar10", "--strategy", "random",
                   "--budget", "100", "--seed", "0", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["regret"] == pytest.approx(out["optimum"] - out["best_value"])
    traj = out["trajectory"]
    assert len(traj) == 100 and all(b >= a for a, b in zip(traj, traj[1:]))
    assert len(out["evaluations"]) == 100
    assert len({e["arch"] for e in out["evaluations"]}) == 100  # without replacement
    assert max(e["value"] for e in out["evaluations"]) == out["best_value"]
    assert out["seconds"] > 0


@pytest.mark.slow
def test_mean_random_regret_matches_the_reference(nb201_table_path, capsys):
    """Reference (shared data README): 0.533 after 100 queries, mean over 500 seeds. Fifty seeds
    through ``bench search`` (the table parsed once, not fifty times), and ``run`` on the command
    line finds the same regret as the benchmark seed for seed."""
    import argparse

    from nasviz.bench import search

    parser = argparse.ArgumentParser()
    search.add_arguments(parser)
    out = search.run(parser.parse_args(["--table", str(nb201_table_path), "--metric", "cifar10", "--strategies",
                                        "random", "--budget", "100", "--seeds", "50", "--workers", "1"]))
    bench_regret = {run["seed"]: out["optimum"] - run["value"] for run in out["strategies"]["random"]["best_per_run"]}
    regrets = [bench_regret[seed] for seed in range(50)]
    mean, se = float(np.mean(regrets)), float(np.std(regrets, ddof=1) / np.sqrt(len(regrets)))
    assert abs(mean - 0.533) < 3 * se + 0.02, (mean, se)
    capsys.readouterr()
    for seed in (0, 1):
        assert main(["run", "--table", str(nb201_table_path), "--metric", "cifar10", "--strategy", "random",
                     "--budget", "100", "--seed", str(seed), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["regret"] == pytest.approx(bench_regret[seed], abs=1e-9)


@pytest.mark.slow
def test_table_info_json(nb201_table_path, capsys):
    assert main(["table", "info", "--table", str(nb201_table_path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["rows"] == 15625 and info["metrics"] == ["cifar10", "cifar100"]
    assert info["optimum"]["cifar100"] == pytest.approx(73.5133) and info["bad_rows"] == []


def test_table_info_ranks_a_table_against_another_over_their_common_cells(tmp_path, capsys):
    from nasviz.spaces import nb201

    cells = [nb201.format(a) for a in nb201.sample(np.random.default_rng(2), 6)]
    mine, other = tmp_path / "mine.csv", tmp_path / "other.csv"
    mine.write_text("arch,acc,bad\n" + "".join(f"{c},{k},{5 - k}\n" for k, c in enumerate(cells[:5])))
    other.write_text("arch,x,y\n" + "".join(f"{c},{k * k},1\n" for k, c in enumerate(cells[1:], start=1)))
    assert main(["table", "info", "--table", str(mine), "--rank-against", f"{other}:x", "--json"]) == 0
    ranked = json.loads(capsys.readouterr().out)["rank_against"]
    assert ranked["metric"] == "x"
    assert ranked["by_metric"]["acc"] == {"spearman": pytest.approx(1.0), "architectures": 4}
    assert ranked["by_metric"]["bad"]["spearman"] == pytest.approx(-1.0)


@pytest.mark.slow
def test_bad_input_gives_one_line_errors_not_tracebacks(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("arch,acc\nnonsense,1\n")
    proc = run_cli("run", "--table", str(bad), "--budget", "5")
    assert proc.returncode == 2 and "no usable row" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("run", "--table", str(bad), "--budget", "0")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("command", [[], ["run"], ["table"], ["table", "info"]])
def test_every_command_has_help(command):
    proc = run_cli(*command, "--help")
    assert proc.returncode == 0 and "usage:" in proc.stdout


@pytest.mark.slow
def test_a_negative_seed_is_refused_by_name():
    proc = run_cli("run", "--seed", "-1", "--budget", "3")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "argument --seed: must be a whole number >= 0, got '-1'" in proc.stderr


@pytest.mark.slow
def test_run_reports_the_rows_it_skipped_and_stores_them(tmp_path):
    from nasviz.spaces import nb201
    from nasviz.store import RunStore

    good = [nb201.format(a) for a in nb201.sample(np.random.default_rng(0), 12)]
    good = list(dict.fromkeys(good))
    rows = [f"{s},{i}" for i, s in enumerate(good)] + [f"not-a-cell-{i},1" for i in range(7)] + [f"{good[0]},abc"]
    table = tmp_path / "t.csv"
    table.write_text("arch,acc\n" + "\n".join(rows) + "\n")
    store = tmp_path / "s.sqlite"
    proc = run_cli("run", "--table", str(table), "--budget", "3", "--store", str(store))
    assert proc.returncode == 0, proc.stderr
    first_bad = len(good) + 2
    assert f"skipped 8 bad rows of {table}; the first 5:" in proc.stderr
    assert f"  line {first_bad}, column 'arch': cannot parse architecture" in proc.stderr
    assert f"line {first_bad + 5}" not in proc.stderr  # only the first five are printed
    config = RunStore(store).get_run(1).config
    assert config["skipped_rows"]["count"] == 8 and len(config["skipped_rows"]["first"]) == 5
    proc = run_cli("run", "--table", str(table), "--budget", "3", "--json")
    assert json.loads(proc.stdout)["skipped_rows"]["count"] == 8


def test_run_config_keeps_the_data_folder_resolved_and_the_overlap(tmp_path, monkeypatch):
    """``run --objective train --data-folder DIR --overlap``: the validated config stores the
    resolved folder and the overlap; a table search refuses a data folder, by name."""
    from nasviz.cli import _run_config, build_parser
    from nasviz.config import SearchConfig
    from nasviz.errors import ConfigError

    (tmp_path / "MNIST").mkdir()
    monkeypatch.chdir(tmp_path)
    args = build_parser(load_benchmarks=False).parse_args(
        ["run", "--objective", "train", "--space", "cnn", "--dataset", "mnist", "--data-folder", "MNIST", "--overlap",
         "--budget", "2"])
    config = _run_config(args)
    assert config.objective.data_folder == str((tmp_path / "MNIST").resolve()) and config.run.overlap is True
    assert SearchConfig.from_dict(config.to_dict()) == config  # what the store keeps rebuilds it
    with pytest.raises(ConfigError, match="data_folder applies to training objectives"):
        SearchConfig.create(objective="table", table="t.csv", data_folder=str(tmp_path))
    with pytest.raises(ConfigError, match="overlap must be true or false"):
        SearchConfig.create(objective="train", overlap="yes")
