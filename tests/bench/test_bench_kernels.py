"""The kernel benchmark runs end to end from the CLI and reports what it promises (tiny sizes:
this checks the output, not the speed)."""

from __future__ import annotations

import json

from nasviz.cli import main


def test_bench_kernels_prints_timings_and_the_plain_baseline(capsys):
    code = main(["bench", "kernels", "--n", "12", "--slow-n", "6", "--plain-n", "6", "--plain-pairs", "0",
                 "--repeats", "1", "--kernels", "tw,path,ot", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    kernels = out["kernels"]
    assert set(kernels) == {"tw", "path", "ot"}
    assert kernels["tw"]["n"] == 12 and kernels["ot"]["n"] == 6
    for info in kernels.values():
        assert info["seconds"] > 0
        plain = info["plain"]
        assert plain["n"] == 6 and plain["pairs"] == 15 and plain["seconds"] > 0
        assert "extrapolated" not in plain
        # rounded figures: the ratio of the printed seconds matches the printed speed-up roughly
        assert abs(plain["speedup"] - plain["seconds"] / plain["vectorised_seconds"]) <= 0.1 * plain["speedup"] + 0.1
    assert "jitter" in kernels["ot"] and "jitter" not in kernels["tw"]


def test_bench_kernels_rejects_unknown_entries(capsys):
    assert main(["bench", "kernels", "--kernels", "tw,nope", "--n", "4"]) != 0
    assert "unknown kernel entries nope" in capsys.readouterr().err
