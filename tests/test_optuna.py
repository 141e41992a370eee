"""nasviz as an Optuna sampler (real studies, in memory and in SQLite), Optuna's samplers as peer
strategies, and nasviz without Optuna installed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from nasviz.objectives import Evaluation
from nasviz.spaces import nb201

REPO = Path(__file__).resolve().parents[1]

#: A meta-path finder that makes ``import optuna`` fail, as on a machine without the extra.
_BLOCK_OPTUNA = textwrap.dedent("""
    import sys
    class _NoOptuna:
        def find_spec(self, name, path=None, target=None):
            if name == "optuna" or name.startswith("optuna."):
                raise ModuleNotFoundError("No module named 'optuna'")
            return None
    sys.meta_path.insert(0, _NoOptuna())
""")


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _BLOCK_OPTUNA + textwrap.dedent(code)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_nasviz_imports_and_says_how_to_get_the_peers_without_optuna(nb201_table_path):
    done = _python("""
        import nasviz, nasviz.components
        from nasviz.components import problems, strategies_for
        from nasviz.strategies.factory import make_strategy
        make_strategy("bo-tw2g-ucb", space="nb201")          # nasviz itself needs no Optuna
        assert "optuna-tpe" not in strategies_for("nb201")
        print(problems("nb201", "optuna-tpe")[0])
        try:
            import nasviz.optuna_sampler
        except ImportError as err:
            print("sampler:", err)
    """)
    assert done.returncode == 0, done.stderr
    assert 'needs the optional package optuna: pip install "nasviz[peers]"' in done.stdout
    assert 'sampler: nasviz.optuna_sampler needs Optuna: pip install "nasviz[peers]"' in done.stdout
    bench = _python(f"""
        from nasviz.cli import main
        raise SystemExit(main(["bench", "search", "--table", {str(nb201_table_path)!r}, "--metric", "cifar10",
                               "--strategies", "random,optuna-tpe", "--budget", "5", "--seeds", "1", "--workers", "1"]))
    """)
    assert bench.returncode == 2
    assert 'pip install "nasviz[peers]"' in bench.stderr and "Traceback" not in bench.stderr


optuna = pytest.importorskip("optuna")
import nasviz.optuna_sampler as nvo  # noqa: E402  (after the skip: this module needs Optuna)
from nasviz.strategies.optuna_peer import OptunaPeer  # noqa: E402


def _objective(table, metric="cifar10", sign=1.0):
    def objective(trial):
        ops = [trial.suggest_categorical(name, nvo.operations()) for name in nvo.slot_names()]
        return sign * table.lookup(nb201.SPACE.from_slots(ops), metric)

    return objective


@pytest.mark.slow
def test_sampler_finds_better_cells_than_random_search(nb201_table):
    ours, theirs = [], []
    for seed in range(3):
        study = optuna.create_study(direction="maximize", sampler=nvo.NASVizSampler(space="nb201", kernel="tw2g", seed=seed))
        study.optimize(_objective(nb201_table), n_trials=30)
        ours.append(study.best_value)
        rand = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(seed=seed))
        rand.optimize(_objective(nb201_table), n_trials=30)
        theirs.append(rand.best_value)
    assert np.mean(ours) > np.mean(theirs), (ours, theirs)


@pytest.mark.slow
def test_sqlite_study_records_every_trial_and_minimises(nb201_table, tmp_path):
    storage = f"sqlite:///{tmp_path / 'nas.db'}"
    sampler = nvo.NASVizSampler(space="nb201", kernel="wl", seed=0, n_init=5)

    def objective(trial):
        lr = trial.suggest_float("lr", 1e-3, 1e-1, log=True)  # not a slot: sampled independently
        ops = [trial.suggest_categorical(name, nvo.operations()) for name in nvo.slot_names()]
        assert 1e-3 <= lr <= 1e-1
        return 100.0 - nb201_table.lookup(nb201.SPACE.from_slots(ops), "cifar10")  # error: minimise

    study = optuna.create_study(study_name="cells", direction="minimize", storage=storage, sampler=sampler)
    study.optimize(objective, n_trials=14)
    loaded = optuna.load_study(study_name="cells", storage=storage)
    trials = loaded.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    assert len(trials) == 14
    cells = [tuple(t.params[n] for n in nvo.slot_names()) for t in trials]
    assert len(set(cells)) == 14  # nasviz never proposes a cell twice
    assert sampler.strategy.state().phase == "bo"  # the last trials came from the GP
    assert len(sampler.strategy.observed) == 13  # every finished trial but the last was told
    # told as maximisation of -error: the strategy's best is the study's best
    assert max(v for _, v in sampler.strategy.observed) == pytest.approx(-min(t.value for t in trials[:-1]))


def test_sampler_restricted_choices_and_bad_settings(nb201_table):
    ops = ("nor_conv_3x3", "skip_connect")  # 2^6 = 64 cells

    def objective(trial):
        chosen = [trial.suggest_categorical(name, ops) for name in nvo.slot_names()]
        return nb201_table.lookup(nb201.SPACE.from_slots(chosen), "cifar10")

    sampler = nvo.NASVizSampler(space="nb201", seed=1, n_init=4, pool="exhaustive")
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(objective, n_trials=10)
    assert all(set(t.params.values()) <= set(ops) for t in study.trials)
    assert len(sampler.strategy.domain) == 64
    with pytest.raises(ValueError, match="params must name"):
        nvo.NASVizSampler(space="nb201", params=["a", "b"])
    with pytest.raises(ValueError, match="model-based"):
        nvo.NASVizSampler(space="nb201", strategy="random")
    with pytest.raises(ValueError, match="no categorical parameters"):
        nvo.NASVizSampler(space="layers")


def _shared_table(filename: str, space: str):
    """A shared table loaded for ``space``; the test is skipped, saying why, when it is absent."""
    from nasviz.objectives import load_table
    from nasviz.objectives.table import shared_data_path

    path = shared_data_path(filename)
    if path is None:
        pytest.skip(f"the shared table {filename} is absent (../shared/data or $NASVIZ_SHARED_DATA)")
    return load_table(path, space=space)


def _row_objective(space: str, table, metric: str):
    """An Optuna objective that looks a trial's architecture up in ``table`` and prunes what it lacks."""
    params, rows = nvo.parameters(space), set(table.archs)

    def objective(trial):
        arch = nvo.architecture(space, {n: trial.suggest_categorical(n, c) for n, c in params.items()})
        if arch not in rows:  # None (no such architecture) or no row for it
            raise optuna.TrialPruned()
        return table.lookup(arch, metric)

    return objective


def _completed_rows(sampler, objective, n_trials: int, db: Path) -> list:
    """Run a real SQLite study and read its completed trials back from the file."""
    storage = f"sqlite:///{db}"
    study = optuna.create_study(direction="maximize", storage=storage, sampler=sampler)
    study.optimize(objective, n_trials=n_trials)
    return optuna.load_study(study_name=study.study_name, storage=storage).get_trials(
        states=(optuna.trial.TrialState.COMPLETE,))


@pytest.mark.slow
def test_sampler_searches_nas_bench_101_cells_through_their_categorical_parameters(tmp_path):
    """A real SQLite study over NB101's 26 parameters on the shared 292-cell table. Without a
    domain the sampler proposes valid cells, which the table rarely holds (the objective prunes
    them and the sampler is told so); with the table's rows as its domain every proposal is a
    row, and after ``n_init`` trials they come from the GP."""
    table = _shared_table("nb101_500.csv", "nb101")
    params = nvo.parameters("nb101")
    assert len(params) == 26 and params["edge 0->1"] == ("0", "1")
    objective = _row_objective("nb101", table, "valid_accuracy")

    free = nvo.NASVizSampler(space="nb101", seed=3, n_init=4)
    study = optuna.create_study(direction="maximize", storage=f"sqlite:///{tmp_path / 'free.db'}", sampler=free)
    study.optimize(objective, n_trials=6)
    # after the first (independent) trial, the sampler's proposals are valid cells
    assert all(nvo.architecture("nb101", t.params) is not None for t in study.trials[1:])
    assert len(free.strategy.observed) + len(free.strategy.failed) == 5  # every trial but the last told

    sampler = nvo.NASVizSampler(space="nb101", seed=3, n_init=4, domain=table.archs)
    complete = _completed_rows(sampler, objective, 12, tmp_path / "rows.db")
    # Optuna samples the first trial independently (no search space yet): it may miss the table;
    # every later trial is the sampler's, a row of the table, each a different one
    assert {t.number for t in complete} >= set(range(1, 12))
    assert len({str(t.params) for t in complete}) == len(complete)
    assert sampler.strategy.state().phase == "bo" and len(sampler.strategy.observed) == len(complete) - 1


def test_peer_is_deterministic_given_its_seed_and_learns_unasked_cells():
    def run(seed):
        peer = OptunaPeer(nb201.SPACE, seed=seed, sampler="tpe")
        out = []
        for _ in range(15):
            archs = peer.ask(1)
            peer.tell([Evaluation(a, float(len(a.reduced().edges)), 0.0) for a in archs])
            out += archs
        return out, peer

    first, peer = run(7)
    assert first == run(7)[0] and first != run(8)[0]
    extra = nb201.parse("|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|")
    peer.tell([Evaluation(extra, 99.0, 0.0)])  # not proposed by Optuna: becomes a finished trial
    assert peer.study.best_value == 99.0 and len(peer.study.trials) == 16


@pytest.mark.parametrize("sampler", ["tpe", "gp"])
def test_peer_on_a_table_that_lacks_cells_evaluates_only_its_rows(sampler):
    """A table of 12 rows: proposals outside it fail in Optuna and are projected onto the nearest
    row not yet proposed, so every evaluation has a value and the rows run out after 12."""
    rows = nb201.SPACE.sample(np.random.default_rng(3), 12)
    assert len(set(rows)) == 12
    peer = OptunaPeer(nb201.SPACE, seed=0, domain=rows, sampler=sampler)
    proposed = []
    for _ in range(12):
        archs = peer.ask(1)
        peer.tell([Evaluation(a, float(len(a.reduced().edges)), 0.0) for a in archs])
        proposed += archs
    assert set(proposed) == set(rows)  # each row once (Optuna itself hits none of 12 rows in 15,625 here)
    failed = [t for t in peer.study.trials if t.state == optuna.trial.TrialState.FAIL]
    assert peer.state().notes["projected"] == len(failed) > 0
    complete = peer.study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    assert {nb201.SPACE.from_slots([t.params[n] for n in peer.distributions]) for t in complete} == set(rows)
    assert peer.ask(1) == []  # every row has been proposed


def test_projection_is_onto_the_unproposed_row_nearest_in_hamming_distance():
    """A proposal outside the table goes to the row that differs from it in the fewest parameters,
    counted here by hand over the parameter dictionaries; a proposed row is not offered again."""
    space = nb201.SPACE
    rows = list(dict.fromkeys(space.sample(np.random.default_rng(5), 40)))
    peer = OptunaPeer(space, seed=0, domain=rows, sampler="random")
    params = dict(space.to_parameters(rows[7]))
    first = next(iter(params))
    params[first] = next(c for c in space.parameter_choices()[first] if c != params[first])

    def differ(arch):
        own = space.to_parameters(arch)
        return sum(own[name] != value for name, value in params.items())

    offered = set()
    for _ in range(3):
        free = [a for a in rows if a not in offered]
        best = min(map(differ, free))
        arch = peer._rows.nearest(params)
        assert arch in free and differ(arch) == best
        peer._rows.mark(arch)
        offered.add(arch)
    # rows[7] is one parameter away, so only rows at distance 0 or 1 can be offered before it
    assert rows[7] in offered


@pytest.mark.slow
def test_sampler_searches_darts_genotypes_on_the_shared_nb301_table(tmp_path):
    """A real SQLite study over the DARTS space's 32 parameters (each edge's operation and input) with
    the 725 rows of the shared table as the domain: after Optuna's independent first trial every
    proposal is a row, each a different one."""
    table = _shared_table("darts_725.csv", "darts")
    params = nvo.parameters("darts")
    assert len(params) == 32 and params["reduce node 5 edge 1 input"] == ("0", "1", "2", "3", "4")
    sampler = nvo.NASVizSampler(space="darts", seed=0, n_init=4, domain=table.archs)
    complete = _completed_rows(sampler, _row_objective("darts", table, "valid_accuracy"), 10, tmp_path / "darts.db")
    assert {t.number for t in complete} >= set(range(1, 10))
    assert len({str(t.params) for t in complete}) == len(complete)
    assert sampler.strategy.state().phase == "bo"


def test_peer_searches_nas_bench_101_as_its_own_baselines_encode_it():
    """NB101 through its categorical parameters (21 edge bits, 5 operations): on a 30-row table
    every evaluation is a row, and specs NAS-Bench-101 rejects fail in Optuna and are projected;
    without a table every proposal is a valid cell."""
    from nasviz.spaces import nb101

    space = nb101.NB101Space()
    rows = list(dict.fromkeys(space.sample(np.random.default_rng(4), 30)))
    peer = OptunaPeer(space, seed=1, domain=rows, sampler="tpe")
    proposed = []
    for _ in range(10):
        archs = peer.ask(2)
        peer.tell([Evaluation(a, float(len(a.labels)), 0.0) for a in archs])
        proposed += archs
    assert len(proposed) == 20 and set(proposed) <= set(rows)
    failed = [t for t in peer.study.trials if t.state == optuna.trial.TrialState.FAIL]
    assert peer.state().notes["projected"] == len(failed) > 0
    complete = peer.study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    told = sorted(space.format(space.from_parameters(t.params)) for t in complete)
    assert told == sorted(map(space.format, proposed))  # each row told once, with its own parameters

    free = OptunaPeer(space, seed=2, sampler="tpe")
    for _ in range(5):
        archs = free.ask(1)
        assert len(archs) == 1 and space.from_parameters(space.to_parameters(archs[0])) == archs[0]
        free.tell([Evaluation(a, 1.0, 0.0) for a in archs])
    invalid = [t for t in free.study.trials if t.state == optuna.trial.TrialState.FAIL]
    assert all(space.from_parameters(t.params) is None for t in invalid)
