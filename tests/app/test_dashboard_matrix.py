"""The dashboard matrix: every page and every Search view, for a run of every registered strategy
on every space it supports (:func:`nasviz.components.strategies_for`), a study still running, and
layer-space and CNN runs on Compare. No exception anywhere; each view shows data or one sentence saying
why it does not apply.

Runs are created once for the module, small: runs look values up in a synthetic table of their
space (NB201 cells, layer networks, CNNs, NB101 cells, randomly wired graphs), except those of
strategies made for unbounded spaces (NASBOT, Auto-Keras, BFS over morphisms search the space, not
a table's rows), which train tiny networks for real (MLPs on wine, CNNs on the 8x8 digits). The study runs in real worker processes with a pause after each step, so it is still
running while the pages are open.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from nasviz.components import SPACES, STRATEGIES, VIEWS, default_batch_size, strategies_for
from nasviz.config import SearchConfig
from nasviz.dashboard import launching
from nasviz.dashboard.sources import DataSource, table_from_path, trainer_available
from nasviz.dashboard.watching import RunWatcher
from nasviz.settings import unlimited
from nasviz.spaces import get_space
from nasviz.spaces.base import OPERATION_SLOTS
from nasviz.store import RUNNING, RunStore
from tests_app_helpers import APP, errors, write_synthetic_table

#: One module fixture runs a search of every (space, strategy) pair (about 40 s): the slow tier.
pytestmark = pytest.mark.slow

#: Every (space, strategy) pair the registries allow, in registry order.
PAIRS = [(space, strategy) for space in SPACES.names() for strategy in strategies_for(space)]
#: Small settings for every option a strategy's entry lists (the others keep their defaults).
SMALL = {"n_init": 3, "pool_size": 20, "n_restarts": 1, "top_parents": 3, "ea_base": 5, "ea_cap": 10, "n_children": 3,
         "population_size": 3, "sample_size": 2}
#: Tiny training of layer networks (seconds for a whole run).
TINY_TRAINING = {"epochs": 2, "patience": 1}
#: The tab titles of the registered views.
TABS = {entry.name: str(entry.capabilities["title"]) for entry in VIEWS}


def small_options(strategy: str) -> dict:
    listed = {o.name for o in STRATEGIES.get(strategy).options}
    return {k: v for k, v in SMALL.items() if k in listed}


def small_budget(strategy: str) -> int:
    """Initial design plus two model-based steps."""
    batch = default_batch_size(strategy)
    return 3 + 2 * batch if batch > 1 else 6


def trains(strategy: str) -> bool:
    """Strategies that bring their own space or acquisition optimiser (NASBOT's EA, Auto-Keras's
    tree search) or warm-start from trained networks (BFS over morphisms) search the unbounded
    space, not a table's rows: their runs train."""
    capabilities = STRATEGIES.get(strategy).capabilities
    return bool(capabilities.get("spaces") or capabilities.get("pool") or capabilities.get("warm_start"))


#: What training runs train on: tabular wine for layer networks, 8x8 digits for CNNs.
TRAIN_ON = {"layers": "wine", "cnn": "digits"}


def config_for(space: str, strategy: str, tables: dict[str, Path]) -> SearchConfig:
    where = ({"objective": "train", "dataset": TRAIN_ON[space], "training": TINY_TRAINING} if trains(strategy) else
             {"objective": "table", "table": str(tables[space])})
    return SearchConfig.create(**where, space=space, strategy=strategy, strategy_options=small_options(strategy),
                               budget=small_budget(strategy), seed=1)


def write_sampled_table(space_name: str, path: Path, n: int = 60) -> Path:
    """``n`` distinct architectures sampled from a space, with a synthetic value that grows with
    their size (layer networks and CNNs: nodes; cells and wired graphs: edges). The randomly wired space
    has no benchmark table: this one is a test fixture only."""
    space = get_space(space_name)
    rng = np.random.default_rng(5)
    rows: dict = {}
    while len(rows) < n:
        arch = space.sample(rng, 1)[0]
        size = arch.n_nodes if space_name in ("layers", "cnn") else 0.1 * len(arch.edges)
        rows.setdefault(arch, (space.format(arch), 0.5 + 0.01 * size + 0.05 * rng.uniform()))
    path.write_text("arch,score\n" + "".join(f'"{a}",{v:.4f}\n' for a, v in rows.values()))
    return path


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    """A store with one finished run per (space, strategy)."""
    if not trainer_available():
        pytest.skip("layer-space runs train networks: the trainer (torch) is not installed")
    import torch

    folder = tmp_path_factory.mktemp("matrix")
    store = folder / "runs" / "store.sqlite"
    nb201_table = write_synthetic_table(folder / "synthetic.csv")
    tables = {name: write_sampled_table(name, folder / f"{name}.csv") for name in SPACES.names() if name != "nb201"}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NASVIZ_STORE", str(store))
        mp.setenv("NASVIZ_DATA_DIR", str(folder))
        mp.delenv("NASVIZ_SYNC_RUNS", raising=False)
        tables["nb201"] = nb201_table
        runs = {}
        # One torch thread, as the executors' worker processes train: on a shared two-core machine
        # two intra-op threads made NASBOT's CNN trainings here take 140 s of this fixture's 200 (one run).
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            for space, strategy in PAIRS:
                runs[space, strategy] = launching.start_run(store, config_for(space, strategy, tables),
                                                            background=False, limits=unlimited())
        finally:
            torch.set_num_threads(threads)
        yield {"store": store, "runs": runs, "tables": tables, "nb201": nb201_table, "layers": tables["layers"]}


@pytest.fixture(scope="module")
def study(matrix):
    """A study of two runs in real worker processes, pausing half a second after each of its 60
    steps: still running while the tests that ask for it look at the pages."""
    store, table = matrix["store"], matrix["nb201"]
    source = DataSource.from_table(table, table_from_path(table))
    ids = launching.start_study(store, source, "acc", ["random", "evolution"], [0], 60, step_delay=0.5,
                                background=True, limits=unlimited())
    try:
        yield ids
    finally:
        for run_id in ids:
            launching.request_stop(store, run_id)
        deadline = time.time() + 60
        while any(RunStore(store).get_run(i).status == RUNNING for i in ids) and time.time() < deadline:
            time.sleep(0.2)


@pytest.fixture(scope="module")
def app(matrix):
    """One app session for the module (the store and data folder are the matrix's)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NASVIZ_STORE", str(matrix["store"]))
        mp.setenv("NASVIZ_DATA_DIR", str(matrix["store"].parents[1]))
        # Explorer jobs (kernel matrices) compute in this thread: AppTest does not run the page's
        # polling fragment; tests/test_explorer_jobs.py covers the worker processes.
        mp.setenv("NASVIZ_SYNC_RUNS", "1")
        # An explorer request's cost is measured on the machine (as tests/app/conftest.py says): with
        # the suite's three workers on two cores, the Interpretability page's N = 200 fit was refused
        # as over the default 60 s once. The refusal has its own tests.
        mp.setenv("NASVIZ_MAX_EXPLORER_SECONDS", "1e9")
        yield AppTest.from_file(APP, default_timeout=300)


def one_sentence(text: str) -> bool:
    """One sentence: ends with a full stop and has no other sentence end inside."""
    return text.endswith(".") and not re.search(r"[.!?]\s+[A-Z]", text[:-1])


def use_source(at: AppTest, space: str, table: Path) -> AppTest:
    at.run()
    at.sidebar.selectbox(key="space").set_value(space).run()
    at.sidebar.radio(key="source_kind").set_value("CSV on the server").run()
    at.sidebar.text_input(key="server_csv").input(str(table)).run()
    assert not errors(at), errors(at)
    return at


# ----------------------------------------------------------------------------- the Search page


@pytest.mark.parametrize("space, strategy", PAIRS)
def test_every_search_view_shows_data_or_says_why(app, matrix, space, strategy):
    run_id = matrix["runs"][space, strategy]
    run = RunStore(matrix["store"]).get_run(run_id)
    assert run.status == "finished", run.error
    app.switch_page("pages/search.py")
    app.session_state["run_id"] = run_id
    for name, title in TABS.items():
        app.session_state["view_tab"] = title
        app.run()
        assert not errors(app), (name, [e.value for e in errors(app)])
        tab = next(t for t in app.tabs if t.label == title)
        charts, infos = tab.get("plotly_chart") + tab.get("dataframe"), [i.value for i in tab.info]
        assert charts or (len(infos) == 1 and one_sentence(infos[0])), (name, infos)
        assert not (charts and infos), (name, infos)


#: The model-based strategies (NASBOT and Auto-Keras included: they are BO configurations).
MODEL_PAIRS = [(space, strategy) for space, strategy in PAIRS if STRATEGIES.get(strategy).capabilities.get("model")]


@pytest.mark.parametrize("space, strategy", MODEL_PAIRS)
def test_model_based_strategies_show_their_pool_and_gp_fit(matrix, space, strategy):
    """The views the issue found empty for NASBOT and Auto-Keras: after the initial design every
    model-based strategy reports a candidate pool and a GP fit in its typed step state."""
    w = RunWatcher(matrix["store"], matrix["runs"][space, strategy]).refresh()
    assert w.state.gp is not None and w.state.pool is not None and len(w.state.pool) > 0, w.state.phase
    for name in ("pool", "hyperparameters", "distances", "selection"):
        assert VIEWS.create(name).applies(w) is None, name


def test_sessions_never_share_a_kernel(app, matrix):
    run_id = matrix["runs"]["nb201", "bo-tw2g-ucb"]
    other = AppTest.from_file(APP, default_timeout=300)
    for at in (app, other):
        at.session_state["run_id"] = run_id
        at.session_state["view_tab"] = TABS["pool"]
        at.run()
        assert not errors(at)
    mine, theirs = (at.session_state["watchers"][run_id] for at in (app, other))
    assert mine is not theirs and len(mine.kernels) == len(theirs.kernels) == 1
    assert mine.kernels.get("tw2g") is not theirs.kernels.get("tw2g")


# ----------------------------------------------------------------------------- the other pages


def test_compare_with_layer_and_cnn_runs_and_a_running_study(app, matrix, study):
    store = RunStore(matrix["store"])
    assert any(store.get_run(i).status == RUNNING for i in study), "the study finished too early"
    app.session_state["c_study"] = list(study)
    app.switch_page("pages/compare.py").run()
    assert not errors(app), errors(app)
    assert any("still running" in (p.proto.text or "") for p in app.get("progress"))
    chosen = app.multiselect(key="c_selected").value  # by default the newest runs of the newest run's kind
    assert set(study) <= set(chosen) and len(chosen) == 12
    assert {(store.get_run(i).config["space"], store.get_run(i).metric) for i in chosen} == {("nb201", "acc")}
    assert "chart_parallel" in [c.key for c in app.get("plotly_chart")]  # NB201 cells: one axis per edge
    for name in ("layers", "cnn"):
        why_not = (f"Parallel coordinates draw one axis per operation slot, and architectures of the {name!r} space "
                   "have no fixed slots.")
        for trained in (False, True):  # networks from the table, and trained ones (NASBOT, Auto-Keras, BFS)
            runs = [i for (space, s), i in matrix["runs"].items() if space == name and trains(s) == trained]
            app.multiselect(key="c_selected").set_value(runs).run()
            assert not errors(app), (name, trained, errors(app))
            assert {"chart_curves", "chart_final_values"} <= {c.key for c in app.get("plotly_chart")}
            assert [i.value for i in app.info] == [why_not]
            assert len(app.dataframe[0].value) == len(runs)  # one strategy each
    layer_runs = [i for (space, s), i in matrix["runs"].items() if space == "layers"]
    app.multiselect(key="c_selected").set_value(list(study) + layer_runs[:1]).run()
    assert not app.exception and any("optimise different metrics" in e.value for e in app.error)


def test_runs_page_lists_every_run(app, matrix, study):
    app.switch_page("pages/runs.py").run()
    assert not errors(app), errors(app)
    assert len(app.dataframe[0].value) == len(matrix["runs"]) + len(study)


def _one_run_per_space(runs: dict) -> dict:
    """The first run of each space: what the Kernels page reads of a run (its architectures and
    values) differs by space, not by which strategy proposed them (the matrix's strategies are all
    single-fidelity: every evaluation is at the table's one fidelity)."""
    chosen: dict = {}
    for (space, strategy), run_id in runs.items():
        chosen.setdefault(space, ((space, strategy), run_id))
    return dict(chosen.values())


def test_kernels_page_reads_a_runs_evaluations_in_every_space(app, matrix):
    app.switch_page("pages/kernels.py").run()
    app.radio(key="k_origin").set_value("a run's evaluations").run()
    runs = _one_run_per_space(matrix["runs"])
    assert {space for space, _ in runs} == set(SPACES.names())
    for (space, strategy), run_id in runs.items():
        app.selectbox(key="k_run").set_value(run_id).run()
        assert not errors(app), (space, strategy, errors(app))
        assert app.get("plotly_chart"), (space, strategy)
    app.radio(key="k_origin").set_value("table sample").run()


@pytest.mark.parametrize("space", SPACES.names())
def test_explorer_pages_on_a_table_of_each_space(app, matrix, space):
    use_source(app, space, matrix["tables"][space])
    for page, least in (("kernels", 4), ("architectures", 3), ("interpretability", 3)):
        app.switch_page(f"pages/{page}.py").run()
        assert not errors(app), (page, [e.value for e in errors(app)])
        assert len(app.get("plotly_chart")) >= least, page
    if not get_space(space).provides(OPERATION_SLOTS):  # what does not apply is said, once
        assert any("have no fixed slots" in i.value for i in app.info)
    app.switch_page("pages/architectures.py").run()
    app.radio(key="a_mode_A").set_value("a run's evaluation").run()
    assert not errors(app), errors(app)
    assert app.selectbox(key="a_eval_A").value is not None
    app.switch_page("pages/search.py").run()
    assert space in app.selectbox(key="space").value
    assert set(app.selectbox(key="strategy").options) == set(strategies_for(space))
