"""A search space added from outside the package, through the public registry only.

Chains of four operations (``input -> a -> c -> b -> a -> output``, 81 of them) are registered
here, and nothing else in nasviz is told about them: the registry must offer exactly the kernels
that can read the space, each of those must compute a valid kernel matrix on it, and a complete
search (table objective, GP-BO and random search) must run on it from a stored config.
"""

from __future__ import annotations

import csv
import itertools
from collections.abc import Iterator

import numpy as np
import pytest

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.components import KERNELS, SPACES, kernels_for, problems, strategies_for
from nasviz.errors import ConfigError
from nasviz.kernels import make_kernel
from nasviz.registry import Entry
from nasviz.spaces import get_space
from nasviz.spaces.base import LABELLED_DAG, OPERATION_SLOTS, OPERATION_TREE, PATHS, SearchSpace

OPS = ("a", "b", "c")
LENGTH = 4


class ChainSpace(SearchSpace):
    """Chains of LENGTH operations, written ``a-c-b-a``."""

    name = "toy-chain"
    description = "chains of four operations a / b / c (81 architectures)"
    representations = frozenset({LABELLED_DAG, OPERATION_TREE, PATHS, OPERATION_SLOTS})

    def from_slots(self, ops) -> Architecture:
        ops = tuple(ops)
        if len(ops) != LENGTH or any(op not in OPS for op in ops):
            raise ValueError(f"a chain is {LENGTH} operations from {OPS}, got {ops!r}")
        labels = (INPUT, *ops, OUTPUT)
        return Architecture(labels, tuple((i, i + 1) for i in range(len(labels) - 1)))

    def slots(self, arch: Architecture) -> tuple[str, ...]:
        return arch.labels[1:-1]

    def slot_names(self) -> tuple[str, ...]:
        return tuple(f"op{i}" for i in range(LENGTH))

    def slot_choices(self) -> tuple[str, ...]:
        return OPS

    def parse(self, text: str) -> Architecture:
        return self.from_slots(str(text).strip().split("-"))

    def format(self, arch: Architecture) -> str:
        return "-".join(self.slots(arch))

    def sample(self, rng: np.random.Generator, n: int = 1) -> list[Architecture]:
        return [self.from_slots(rng.choice(OPS, LENGTH)) for _ in range(n)]

    def neighbours(self, arch: Architecture) -> list[Architecture]:
        ops = list(self.slots(arch))
        return [self.from_slots(ops[:k] + [o] + ops[k + 1:]) for k in range(LENGTH) for o in OPS if o != ops[k]]

    def mutate(self, arch: Architecture, rng: np.random.Generator) -> Architecture:
        options = self.neighbours(arch)
        return options[int(rng.integers(len(options)))]

    @property
    def size(self) -> int:
        return len(OPS) ** LENGTH

    def enumerate(self) -> Iterator[Architecture]:
        return (self.from_slots(ops) for ops in itertools.product(OPS, repeat=LENGTH))

    def operation_groups(self) -> dict[str, tuple[str, ...]]:
        return {"ab": ("a", "b"), "c": ("c",), "input": (INPUT,), "output": (OUTPUT,)}


@pytest.fixture()
def chain():
    SPACES.register(Entry(ChainSpace.name, ChainSpace.description, ChainSpace))
    try:
        yield get_space(ChainSpace.name)
    finally:
        SPACES.unregister(ChainSpace.name)


@pytest.fixture()
def chain_table(tmp_path, chain):
    """Every chain with a value: 'a' late in the chain is good, 'c' is bad (plus fixed noise)."""
    rng = np.random.default_rng(0)
    path = tmp_path / "chains.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["arch", "score"])
        for arch in chain.enumerate():
            ops = chain.slots(arch)
            value = sum((k + 1) * (op == "a") - (op == "c") for k, op in enumerate(ops)) + 0.1 * rng.normal()
            writer.writerow([chain.format(arch), f"{value:.4f}"])
    return path


def test_the_registry_offers_exactly_the_kernels_that_can_read_it(chain):
    offered = kernels_for(chain.name)
    assert "otmann" not in offered  # OTMANN needs the layers representation
    assert {"tw", "tw2g", "wl", "path", "edit", "ot", "gw"} <= set(offered)
    with pytest.raises(ConfigError, match="cannot read the 'toy-chain' space: it needs layers"):
        make_kernel("otmann", space=chain)
    assert problems(chain.name, "nasbot")  # NASBOT searches only the layer space
    assert "bo-wl-ei" in strategies_for(chain.name)  # gradient-guided mutation reads the operation slots


def test_every_kernel_that_declares_it_can_read_the_space_computes_a_valid_matrix(chain):
    archs = list(chain.enumerate())[::4]
    for name in kernels_for(chain.name):
        kernel = make_kernel(name, space=chain)
        K = kernel.matrix(archs)
        assert K.shape == (len(archs), len(archs)), name
        assert np.all(np.isfinite(K)) and np.allclose(K, K.T, atol=1e-8), name
        D = next(iter(kernel.distances(archs[:5], archs[:5]).values()))
        assert np.allclose(np.diag(D), 0.0, atol=1e-6), name


def test_tw_reads_the_spaces_operation_groups(chain):
    # a and b share a group, c does not: a chain differing by a -> b is closer than by a -> c.
    tw = make_kernel("tw1g", space=chain)
    base, ab, ac = (chain.parse(s) for s in ("a-a-a-a", "b-a-a-a", "c-a-a-a"))
    d = tw.distances([base], [ab, ac])["operations"][0]
    assert d[0] < d[1]


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["random", "evolution", "bo-tw2g-ucb", "bo-wl-ei", "bo-tw2g-kdpp5"])
def test_a_search_runs_on_the_space_from_a_stored_config(chain_table, strategy):
    from nasviz.config import SearchConfig
    from nasviz.runner import build_search, run_search

    config = SearchConfig.create(table=str(chain_table), space="toy-chain", strategy=strategy, budget=25, seed=1,
                                 strategy_options={"n_init": 8} if strategy.startswith("bo") else {})
    with build_search(config.to_dict()) as setup:
        result = run_search(setup.strategy, setup.objective, 25, format_arch=setup.space.format,
                            batch_size=config.run.batch_size)
    assert len(result.evaluations) == 25 and len({ev.arch for ev in result.evaluations}) == 25
    assert result.best_value is not None and result.regret is not None


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["random", "bo-wl-ei", "bo-tw2g-kdpp5"])
def test_every_dashboard_view_reads_a_run_on_the_space(chain_table, tmp_path, strategy):
    """The Search page's registered views and the Compare page's parallel coordinates, on a run of
    the toy space: each draws or says in one sentence why not, without knowing the space."""
    from nasviz.components import VIEWS
    from nasviz.config import SearchConfig
    from nasviz.dashboard import launching
    from nasviz.dashboard.explorer.comparison import parallel_space, run_curves, slot_axes
    from nasviz.dashboard.watching import RunWatcher
    from nasviz.viz import plot_parallel

    store = tmp_path / "runs.sqlite"
    config = SearchConfig.create(table=str(chain_table), space="toy-chain", strategy=strategy, budget=20, seed=1,
                                 strategy_options={"n_init": 8} if strategy.startswith("bo") else {})
    run_id = launching.start_run(store, config, background=False)
    watcher = RunWatcher(store, run_id).refresh()
    drawn = set()
    for entry in VIEWS:
        view = VIEWS.create(entry.name)
        reason = view.applies(watcher)
        if reason is None:
            output = view.render(watcher, **{c.key: c.default for c in view.controls(watcher)})
            assert output.charts or output.tables, entry.name  # a figure, or a table (Evaluations)
            drawn.add(entry.name)
        else:
            assert reason.endswith(".") and "toy-chain" not in reason, (entry.name, reason)
    model = strategy != "random"
    assert drawn >= {"distances", "selection"} | ({"pool", "hyperparameters"} if model else set())
    assert ("features" in drawn) == (strategy == "bo-wl-ei")
    curves = run_curves(store, [run_id])
    space, why_not = parallel_space(curves)
    assert space == "toy-chain" and why_not is None  # the toy space declares operation slots
    # the axes are the space's slot names (the title says they are edges: issue 46 shortened the labels)
    assert [d.label for d in plot_parallel(curves, slot_axes(curves, space)).data[0].dimensions][:4] == ["op0", "op1", "op2", "op3"]


@pytest.mark.slow
def test_optuna_studies_on_the_space_nasviz_sampler_and_peers(chain, chain_table):
    """nasviz.optuna_sampler and the Optuna peers know the space only through its operation slots."""
    optuna = pytest.importorskip("optuna")
    import nasviz.optuna_sampler as nvo
    from nasviz.objectives.base import Evaluation
    from nasviz.objectives.table import load_table
    from nasviz.strategies.factory import make_strategy

    table = load_table(str(chain_table), space=chain.name)
    names = nvo.slot_names(chain)
    assert names == ("op0", "op1", "op2", "op3") and nvo.operations(chain) == OPS

    def objective(trial):
        return table.lookup(chain.from_slots([trial.suggest_categorical(n, OPS) for n in names]), "score")

    study = optuna.create_study(direction="maximize", sampler=nvo.NASVizSampler(space=chain, seed=0, n_init=5))
    study.optimize(objective, n_trials=15)
    cells = {tuple(t.params[n] for n in names) for t in study.trials}
    assert len(cells) == 15  # the BO strategy never proposes a cell twice
    assert study.best_value == table.optimum("score")  # random search: 15 of 81 cells hit it 19% of the time
    peer = make_strategy("optuna-tpe", space=chain, seed=0)
    for _ in range(5):
        peer.tell([Evaluation(a, table.lookup(a, "score"), 0.0) for a in peer.ask(1)])
    assert len(peer.study.trials) == 5
