"""The CNN comparison's summary, claims and resumable results (the runs themselves are long)."""

from __future__ import annotations

import argparse
import json

import pytest

from nasviz.bench import cnn_search as B


def _run(method, seed, test, trained=10):
    return {"method": method, "seed": seed, "best_test": test, "best_valid": test - 1, "n_trained": trained}


def test_summary_is_mean_and_standard_error_over_seeds_and_claims_read_the_means():
    runs = [_run("ak", 0, 95.0), _run("ak", 1, 97.0), _run("bo", 0, 94.0, 6), _run("bo", 1, 94.0, 8),
            _run("random", 0, 95.5), _run("random", 1, 95.5), _run("nasbot", 0, 95.0), _run("nasbot", 1, 95.0)]
    summary = B.summarise(runs, ["ak", "bo", "random", "nasbot"])
    assert summary["ak"]["test"] == 96.0 and summary["ak"]["test_se"] == pytest.approx(1.0)  # std 1.414 / sqrt 2
    assert summary["bo"]["trained"] == 7.0 and summary["bo"]["runs"] == 2
    rows = {c["claim"]: c for c in B.claims(summary)}
    assert rows["ak >= bo"]["holds"] and rows["ak >= bo"]["difference"] == pytest.approx(2.0)
    assert rows["ak > random"]["holds"] and not rows["ak > random"]["beyond_one_se"]
    assert not rows["nasbot > random"]["holds"] and "ak >= bfs" not in rows  # bfs not run
    text = B.table(summary, list(rows.values()), 900)
    assert "| AK (BO + morphism) | 96.00 ± 1.00 |" in text and "nasbot > random: does not hold" in text


def test_finished_runs_are_skipped_when_the_comparison_resumes(tmp_path, monkeypatch):
    results = tmp_path / "runs.jsonl"
    results.write_text(json.dumps({**_run("random", 0, 90.0), "seconds": 1.0}) + "\n")
    ran = []
    monkeypatch.setattr(B, "_one", lambda method, seed, args: ran.append((method, seed)) or _run(method, seed, 91.0))
    args = argparse.Namespace(seeds="0,1", methods="random", results=results, seconds=60.0, dataset="mnist1d",
                              workers=2, device="cpu")
    out = B.run(args)
    assert ran == [("random", 1)] and out["summary"]["random"]["runs"] == 2
    assert len(results.read_text().splitlines()) == 2
    with pytest.raises(ValueError, match="unknown methods"):
        B.run(argparse.Namespace(**{**vars(args), "methods": "ak,magic"}))


def test_early_stopping_rows_and_their_goal():
    """Issue 50's rows: AK and random search with ASHA, and the goal (twice the networks, no loss)."""
    from nasviz.bench.cnn_search import EARLY_STOPPING, METHODS, early_stopping_goals
    from nasviz.fidelity.stopping import parse_rule

    assert {"ak-es", "random-es"} <= set(METHODS) and METHODS["ak-es"][0] == "autokeras"
    assert parse_rule(EARLY_STOPPING["ak-es"]).rungs(12) == (1, 3, 9)
    row = lambda test, trained: {"test": test, "test_se": 0.1, "trained": trained}
    (goal,) = early_stopping_goals({"ak": row(98.0, 50), "ak-es": row(98.1, 120)})
    assert goal["trained_ratio"] == pytest.approx(2.4) and goal["no_loss"] and goal["met"]
    (goal,) = early_stopping_goals({"ak": row(98.0, 50), "ak-es": row(97.95, 120)})
    assert not goal["met"] and goal["within_one_se"]


def test_the_early_stopping_summary_pairs_seeds_and_judges_the_goal_on_them():
    """The doc table of issue 50's live goal: means over the seeds both files hold for a pair (AK's
    seed 2 has no early-stopping run and is left out), figures computed by hand."""
    from nasviz.bench.tables.other_tables import cnn_early_stopping_summary

    def run(method, seed, test, trained, stopped=None):
        record = {"method": method, "seed": seed, "best_test": test, "best_valid": test + 0.5, "n_trained": trained}
        return record if stopped is None else {**record, "n_stopped": stopped}

    base = [run("ak", 0, 98.0, 50), run("ak", 1, 98.4, 60), run("ak", 2, 90.0, 70),
            run("random", 0, 98.5, 300), run("random", 1, 97.0, 100)]
    es = [run("ak-es", 0, 98.4, 120, 80), run("ak-es", 1, 98.2, 110, 70), run("random-es", 0, 98.5, 500, 450)]
    text = cnn_early_stopping_summary((es, base))
    # AK over seeds 0 and 1: 98.2 ± 0.2 (s.e. of 98.0, 98.4), 55 networks; with early stopping 98.3 ± 0.1, 115.
    assert "| AK (BO + morphism) | 0, 1 | 98.20 ± 0.20 | 98.70 ± 0.20 | 55.0 ± 5.0 | - |" in text
    assert "| AK + early stopping (ASHA) | 0, 1 | 98.30 ± 0.10 | 98.80 ± 0.10 | 115.0 ± 5.0 | 75.0 |" in text
    assert ("2 seeds: 2.09x the networks (goal: at least 2x, met); the best network's test accuracy "
            "+0.10 ± 0.22 points (goal: no loss, met, within one s.e.): **met**") in text
    # Random search has seed 0 only: 500 networks against 300 is short of twice.
    # and one seed has no standard error to show.
    assert "| random | 0 | 98.50 | 99.00 | 300.0 | - |" in text
    assert ("1 seed: 1.67x the networks (goal: at least 2x, not met); the best network's test accuracy +0.00 points "
            "(goal: no loss, met, one seed: no s.e.): **not met**") in text


def test_the_finished_trainings_variant_is_judged_on_its_own_file_and_seeds():
    """``ak-es-finished`` (added after seeds 0-4 were seen) is judged against the ``ak`` runs of its
    own file (seeds 5-9), not against the earlier file's; a seed without both is left out."""
    from nasviz.bench.cnn_search import EARLY_STOPPING, METHODS
    from nasviz.bench.tables.other_tables import cnn_early_stopping_runs, cnn_early_stopping_summary

    assert METHODS["ak-es-finished"][:2] == ("autokeras", {"stopped": "skip"})
    assert EARLY_STOPPING["ak-es-finished"] == EARLY_STOPPING["ak-es"]

    def run(method, seed, test, trained, stopped=None):
        record = {"method": method, "seed": seed, "best_test": test, "best_valid": test + 0.5, "n_trained": trained,
                  "seconds": 900.0}
        return record if stopped is None else {**record, "n_stopped": stopped}

    own = [run("ak", 5, 98.0, 60), run("ak-es-finished", 5, 98.6, 150, 90), run("ak", 6, 97.0, 40)]
    text = cnn_early_stopping_summary((own,), methods=("ak-es-finished",))
    assert "| AK (BO + morphism) | 5 | 98.00 | 98.50 | 60.0 | - |" in text and "ak-es |" not in text
    assert ("1 seed: 2.50x the networks (goal: at least 2x, met); the best network's test accuracy +0.60 points "
            "(goal: no loss, met, one seed: no s.e.): **met**") in text
    runs = cnn_early_stopping_runs((own,), methods=("ak-es-finished",))
    assert runs.count("| 5 |") == 2 and "| 6 |" not in runs  # seed 6 has no run with early stopping yet
    assert cnn_early_stopping_summary(([run("ak", 5, 98.0, 60)],), methods=("ak-es-finished",)).startswith("|")


def test_the_seed_by_seed_table_divides_and_subtracts_each_seeds_pair():
    """Figures by hand: seed 5 trained 150 networks against 60 (2.50x) and tested 0.6 points higher;
    its kept networks took 30 MB for 10 (3.0 MB) against 12 MB for 24 (0.5 MB). Seed 6 has no run
    with early stopping and is left out."""
    from nasviz.bench.tables.other_tables import cnn_early_stopping_by_seed

    def run(method, seed, test, trained, epochs_a_minute, megabytes, kept):
        return {"method": method, "seed": seed, "best_test": test, "n_trained": trained,
                "epochs_per_minute": epochs_a_minute, "network_store": {"bytes": megabytes * 1e6, "networks": kept}}

    own = [run("ak", 5, 98.0, 60, 50.0, 12, 24), run("ak-es-finished", 5, 98.6, 150, 40.0, 30, 10),
           run("ak", 6, 97.0, 40, 30.0, 5, 40)]
    text = cnn_early_stopping_by_seed((own,))
    assert "| 5 | `ak-es-finished` / `ak` | 2.50 | +0.60 | 50.0 | 40.0 | 0.5 | 3.0 |" in text
    assert "| 6 |" not in text
