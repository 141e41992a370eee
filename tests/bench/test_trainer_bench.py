"""bench trainer's parts: the plain loop computes what the trainer computes, the goal reading, the budget."""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
import pytest
import torch

from nasviz.bench import accelerator_check as C
from nasviz.bench import cnn_search
from nasviz.bench import trainer as T
from nasviz.bench.trainer_loops import Workload, time_plain, time_trainer
from nasviz.bench.trainer_profile import _union_seconds, arithmetic_share
from nasviz.objectives.datasets import load_dataset
from nasviz.spaces import get_space


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.slow
def test_the_plain_loop_and_the_trainer_train_the_same_networks():
    """The baseline does the same work as the trainer: with the same seeds, the same curves."""
    space = get_space("cnn")
    data = load_dataset("mnist1d", seed=0, max_train=256)
    work = Workload(space, tuple(space.sample(np.random.default_rng(3), 2)), data, epochs=2, lr=0.05, batch_size=64)
    for i in range(2):
        _, plain = time_plain(work, i, torch.device("cpu"))
        _, ours = time_trainer(work, i, torch.device("cpu"))
        assert plain["valid_curve"] == ours["valid_curve"] and plain["test"] == ours["test"]
        assert plain["valid_loss_curve"] == ours["valid_loss_curve"]


@pytest.mark.slow
def test_arithmetic_share_splits_a_cpu_run():
    x = torch.randn(256, 256)
    views = torch.randn(64, 64)
    share = arithmetic_share(lambda: [(x @ x, views.view(-1).reshape(64, 64).t()) for _ in range(20)],
                             torch.device("cpu"), unprofiled_seconds=1.0)
    assert 0 < share["arithmetic_seconds"] <= share["wall_seconds_profiled"] + 1e-9
    assert share["arithmetic_fraction"] == pytest.approx(share["arithmetic_seconds"] / share["wall_seconds_profiled"])
    assert 0.5 < share["arithmetic_fraction"] <= 1.0  # matrix products dominate; views are not arithmetic
    assert _union_seconds([(0, 2e6), (1e6, 3e6), (5e6, 6e6)]) == pytest.approx(4.0)  # overlaps counted once


def test_budget_skips_late_parts_and_records_failures():
    budget = T.Budget(0.0)
    assert not budget.allow("late") and budget.skipped == ["late"]
    assert T.Budget(None).allow("any", needs=1e9)
    assert T.Budget.guard(lambda: 1 / 0) == {"error": "ZeroDivisionError: division by zero"}


def test_goals_are_read_off_the_figures():
    out = {"cnn": {"cpu": {"trainer_over_plain": 1.04, "whole_machine": {"networks_per_minute": 100.0}},
                   "cuda": {"whole_machine": {"networks_per_minute": 1200.0}}},
           "nb201": {"cpu": {"median_seconds_per_cell": 0.4},
                     "cuda": {"median_seconds_per_cell": 0.2, "worker": {"worker_setups": {"worker:cuda": 1},
                                                                          "setup_paid_once": True}}}}
    goals = T._goals(out)
    assert goals["cpu_trainer_within_10_percent_of_plain_loop"]["met"] is True
    assert goals["cuda_random_cnns_10x_all_cpu_cores"]["ratio"] == pytest.approx(12.0)
    assert goals["nb201_cuda_start_up_once_per_worker"]["met"] and goals["nb201_cuda_cell_faster_than_cpu"]["met"]
    assert T._goals({})["cpu_trainer_within_10_percent_of_plain_loop"]["met"] is None


def test_the_check_puts_search_figures_side_by_side():
    def search(rate, epochs):
        return {"json": {"runs": [{"n_trained": 10, "networks_per_minute": rate, "epochs_per_minute": epochs}]}}

    steps = {"search_random_cpu": search(20.0, 200.0), "search_random_cuda": search(250.0, 2400.0),
             "search_ak_cpu": search(10.0, 100.0), "search_ak_cuda": {"error": "skipped"}, "trainer": {}}
    figures = C._figures(steps)
    assert figures["cnn_search"]["random"]["cuda_over_cpu_networks"] == pytest.approx(12.5)
    assert figures["cnn_search"]["ak"]["cuda"] is None
    goals = C._goals(figures, {})
    assert goals["cnn_search_random_cuda_10x_cpu"]["met"] and goals["cnn_search_ak_cuda_10x_cpu"]["met"] is None


def test_search_plan_on_a_cpu():
    args = argparse.Namespace(device="cpu", workers="auto", networks_per_worker="2", speed=["metrics=epoch"],
                              dataset="mnist1d", data_folder=None)
    plan = cnn_search.plan(args)
    assert plan["workers"] == (os.cpu_count() or 1) and plan["networks_per_worker"] == 2
    assert plan["batch_size"] == 2 * plan["workers"]
    assert plan["speed"].metrics == "epoch" and plan["speed"].networks_together == 2
    with pytest.raises(ValueError, match="name=value"):
        cnn_search.plan(argparse.Namespace(**{**vars(args), "speed": ["bf16"]}))


@pytest.mark.slow
def test_a_tiny_run_reports_every_part(tmp_path):
    parser = argparse.ArgumentParser()
    T.add_arguments(parser)
    out_file = tmp_path / "trainer.json"
    args = parser.parse_args(["--devices", "cpu", "--networks", "1", "--epochs", "1", "--repeats", "1",
                              "--profile-networks", "0", "--compile-networks", "0", "--scale-networks", "0",
                              "--cells", "1", "--skip-parallel", "--variants", "bf16", "--out", str(out_file)])
    out = T.run(args)
    cpu = out["cnn"]["cpu"]
    assert cpu["same_valid_curves"] is True and cpu["trainer"]["networks_per_minute"] > 0
    assert set(cpu["variants"]) == {"bf16"} and cpu["variants"]["bf16"]["networks_per_minute"] > 0
    assert out["nb201"]["cpu"]["worker"]["setup_paid_once"] is True
    assert json.loads(out_file.read_text())["complete"] is True
