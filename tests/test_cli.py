import json
import subprocess
import sys

import numpy as np
import pytest

from nasviz.cli import main


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nasviz", *args], capture_output=True, text=True, timeout=300)


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


def test_mean_random_regret_matches_the_reference(nb201_table_path, capsys):
    # Reference (shared data README): 0.533 after 100 queries, mean over 500 seeds.
    regrets = []
    for seed in range(50):
        assert main(["run", "--table", str(nb201_table_path), "--metric", "cifar10", "--budget", "100",
                     "--seed", str(seed), "--json"]) == 0
        regrets.append(json.loads(capsys.readouterr().out)["regret"])
    mean, se = float(np.mean(regrets)), float(np.std(regrets, ddof=1) / np.sqrt(len(regrets)))
    assert abs(mean - 0.533) < 3 * se + 0.02, (mean, se)


def test_table_info_json(nb201_table_path, capsys):
    assert main(["table", "info", "--table", str(nb201_table_path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["rows"] == 15625 and info["metrics"] == ["cifar10", "cifar100"]
    assert info["optimum"]["cifar100"] == pytest.approx(73.5133) and info["bad_rows"] == []


def test_bad_input_gives_one_line_errors_not_tracebacks(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("arch,acc\nnonsense,1\n")
    proc = run_cli("run", "--table", str(bad), "--budget", "5")
    assert proc.returncode == 2 and "no usable row" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("run", "--table", str(bad), "--budget", "0")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("command", [[], ["run"], ["table"], ["table", "info"]])
def test_every_command_has_help(command):
    proc = run_cli(*command, "--help")
    assert proc.returncode == 0 and "usage:" in proc.stdout
