"""Overlapping the search with training (paper 003 Sec. 4.3): deterministic, and what it changes."""

from __future__ import annotations

import threading

import pytest

pytestmark = pytest.mark.usefixtures("one_torch_thread")

from nasviz.objectives.datasets import load_dataset
from nasviz.objectives.training import TrainingObjective
from nasviz.runner import run_search
from nasviz.spaces import mlp as L
from nasviz.strategies.factory import make_strategy


def _search(overlap: bool, concurrent: bool = True, budget: int = 6):
    data = load_dataset("wine", seed=0, max_train=60)
    objective = TrainingObjective(L.SPACE, data, training={"epochs": 2, "patience": 1}, device="cpu")
    # acq_fraction "none": the tree search's default cap follows measured seconds
    strategy = make_strategy("autokeras", space=L.SPACE, seed=0, n_init=3, t_low=0.2, acq_fraction="none")
    strategy.attach(objective)
    asks, threads = [], set()
    ask = strategy.ask

    def spy(n):  # what the strategy knew when it proposed: how many results it had been told
        asks.append(len(strategy.observed) + len(strategy.failed))
        return ask(n)

    strategy.ask = spy
    train = objective.train

    def where(arch, plan=None):
        threads.add(threading.current_thread().name)
        return train(arch, plan)

    objective.train = where
    result = run_search(strategy, objective, budget, format_arch=L.format, overlap=overlap, concurrent=concurrent)
    return result, asks, threads, strategy


@pytest.mark.slow
def test_overlap_gives_the_same_run_concurrently_or_not_and_differs_from_no_overlap():
    overlapped, asks, threads, strategy = _search(overlap=True)
    serial, serial_asks, serial_threads, _ = _search(overlap=True, concurrent=False)
    found = [(L.format(e.arch), e.value) for e in overlapped.evaluations]
    assert found == [(L.format(e.arch), e.value) for e in serial.evaluations] and len(found) == 6
    assert asks == serial_asks == [0, 0, 1, 2, 3, 4]  # step t+1 is asked knowing steps 1..t-1
    assert threads == {t for t in threads if t.startswith("nasviz-train")} and serial_threads == {"MainThread"}
    assert strategy.warm_started  # warm starts planned in the main thread, trained in the other
    plain, plain_asks, _, _ = _search(overlap=False)
    assert plain_asks == [0, 1, 2, 3, 4, 5]  # without overlap a step knows every earlier one
    assert [L.format(e.arch) for e in plain.evaluations][:3] == [a for a, _ in found][:3]  # the initial networks
