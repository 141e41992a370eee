"""``--fidelity auto`` finds a table's own fidelity columns, the embedded NAS-Bench-201 table's included."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nasviz.errors import ConfigError
from nasviz.objectives.fidelity_table import RESTART, FidelityRung, auto_rungs

REPO = Path(__file__).resolve().parents[2]
EMBEDDED = ["cifar10_test_200ep", "cifar100_test_200ep", "cifar10_valid_12ep", "cifar10_test_12ep",
            "cifar100_valid_12ep", "cifar100_test_12ep"]


def test_the_embedded_tables_epoch_suffixed_columns_are_rungs_of_one_metric():
    # separate 12-epoch runs with their own schedule below the 200-epoch ones: reached by a restart
    assert auto_rungs(EMBEDDED, "cifar10_test_200ep") == (
        (FidelityRung(12.0, "cifar10_test_12ep"), FidelityRung(200.0, "cifar10_test_200ep")), RESTART)
    assert auto_rungs(EMBEDDED, "cifar100_test_200ep")[0][0].column == "cifar100_test_12ep"
    # a validation column is another metric, not a rung of the test accuracy
    assert all(r.column != "cifar10_valid_12ep" for r in auto_rungs(EMBEDDED, "cifar10_test_200ep")[0])


def test_suffix_styles_do_not_mix_and_a_lone_column_has_no_rungs():
    with pytest.raises(ConfigError, match="no fidelity columns"):
        auto_rungs(["acc_12", "acc_200ep"], "acc_200ep")
    with pytest.raises(ConfigError, match="no fidelity columns"):
        auto_rungs(["cifar10_test_200ep"], "cifar10_test_200ep")


@pytest.mark.slow
def test_run_json_of_a_multi_fidelity_search_on_the_default_table_is_strict_json():
    """Before the first full evaluation a run's best-so-far is undefined: ``null``, not NaN (which
    made ``run --json`` raise)."""
    done = subprocess.run([sys.executable, "-m", "nasviz", "run", "--strategy", "hyperband", "--fidelity", "auto",
                           "--cost-budget", "5", "--seed", "0", "--json"], capture_output=True, text=True, cwd=REPO,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)  # the standard library's strict parse: no NaN
    assert out["trajectory"][0] is None and out["metric"] == "cifar10_test_200ep"
    assert {e["fidelity"]["fidelity"] for e in out["evaluations"]} >= {12.0, 200.0}
