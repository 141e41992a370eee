"""The training loop's speed paths on a CPU: the same networks as the classic loop, callbacks, joint training."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from nasviz.objectives import accelerator
from nasviz.objectives.datasets import load_dataset
from nasviz.objectives.speed import LearningRate, SpeedOptions
from nasviz.objectives.train_steps import make_optimizer, set_learning_rate
from nasviz.objectives.trainer import train_model, train_models
from nasviz.objectives.training import TrainingObjective
from nasviz.spaces import get_space, nb201
from nasviz.spaces.nb201.network import build_nb201_network

MIXED = "|nor_conv_3x3~0|+|avg_pool_3x3~0|skip_connect~1|+|nor_conv_1x1~0|none~1|nor_conv_3x3~2|"
QUICK = dict(epochs=3, patience=3, lr=0.2, batch_size=64, device="cpu")


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One torch thread, as in every worker (a second thread only adds contention for networks this small)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def tiny_digits():
    return load_dataset("digits", seed=0, max_train=300)


def _net(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return build_nb201_network(nb201.parse(MIXED), channels=2)


def _same(a, b) -> None:
    assert (a.status, a.error, a.valid_curve, a.valid_loss_curve, a.train_loss_curve, a.test_score) == \
           (b.status, b.error, b.valid_curve, b.valid_loss_curve, b.train_loss_curve, b.test_score)


class _Diverging(nn.Module):
    """Finite for ``good_steps`` training steps, then NaN: divergence in the middle of an epoch."""

    def __init__(self, good_steps: int) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.lin, self.good, self.calls = nn.Linear(64, 10), good_steps, 0

    def forward(self, x):
        if self.training:
            self.calls += 1
        out = self.lin(x.flatten(1))
        return out * float("nan") if self.training and self.calls > self.good else out


@pytest.mark.slow
def test_device_metrics_read_once_per_epoch_train_the_same_network(tiny_digits):
    """Losses accumulated on the device and read once per epoch give the curves the host-read loop
    gives, bit for bit, and name the same step when a network diverges mid-epoch."""
    host = train_model(_net(), tiny_digits, seed=4, speed=SpeedOptions(metrics="step"), **QUICK)
    device = train_model(_net(), tiny_digits, seed=4, speed=SpeedOptions(metrics="epoch"), **QUICK)
    assert host.ok and len(host.valid_curve) == 3
    _same(host, device)
    bad_host = train_model(_Diverging(6), tiny_digits, speed=SpeedOptions(metrics="step"), **QUICK)
    bad_device = train_model(_Diverging(6), tiny_digits, speed=SpeedOptions(metrics="epoch"), **QUICK)
    assert bad_host.status == "failed" and "at epoch 2, step 2" in bad_host.error  # 5 steps an epoch
    _same(bad_host, bad_device)


@pytest.mark.slow
def test_the_epoch_callback_sees_every_epoch_and_can_stop_training(tiny_digits):
    reports = []
    res = train_model(_net(), tiny_digits, seed=1, on_epoch=reports.append, **QUICK)
    assert [r.epoch for r in reports] == [1, 2, 3] and res.stopped_by is None
    assert [r.valid_score for r in reports] == res.valid_curve
    assert [r.train_loss for r in reports] == res.train_loss_curve
    assert all(b.seconds > a.seconds for a, b in zip(reports, reports[1:]))
    stopped = train_model(_net(), tiny_digits, seed=1, on_epoch=lambda r: r.epoch == 2, **QUICK)
    assert stopped.ok and stopped.epochs_run == 2 and stopped.stopped_by == "callback"
    assert stopped.valid_curve == res.valid_curve[:2]


@pytest.mark.slow
def test_networks_trained_together_equal_networks_trained_alone(tiny_digits):
    """Several networks interleaved in one process: each gets exactly its solo result; a network
    that raises gets its exception back while the others finish."""

    class Broken(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(64, 10)

        def forward(self, x):
            if self.training:
                raise ValueError("broken on purpose")
            return self.lin(x.flatten(1))

    seeds = [3, 4, 5]
    alone = [train_model(_net(s), tiny_digits, seed=s, **QUICK) for s in seeds]
    models = [_net(3), Broken(), _net(4), _net(5)]
    together = train_models(models, tiny_digits, [3, 0, 4, 5], **{k: v for k, v in QUICK.items()},
                            speed=SpeedOptions(metrics="epoch"))
    assert isinstance(together[1], ValueError)
    for a, b in zip(alone, [together[0], together[2], together[3]]):
        _same(a, b)


def test_an_out_of_memory_network_in_a_group_is_retried_alone_with_a_smaller_batch(tiny_digits):
    class OOMOnce(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin, self.raised = nn.Linear(64, 10), False

        def forward(self, x):
            if self.training and not self.raised:
                self.raised = True
                raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
            return self.lin(x.flatten(1))

    torch.manual_seed(0)
    alone = train_model(OOMOnce(), tiny_digits, seed=0, **QUICK)
    torch.manual_seed(0)
    results = train_models([OOMOnce(), _net(1)], tiny_digits, [0, 1], **QUICK)
    assert results[0].ok and results[0].retries == 1 and results[0].batch_size < 64
    _same(results[0], alone)
    assert (results[0].batch_size, results[0].retries) == (alone.batch_size, alone.retries)
    assert results[1].ok and results[1].retries == 0 and results[1].batch_size == 64


def test_the_dataset_is_copied_to_the_device_once_per_process(tiny_digits):
    """Per-worker set-up paid once: training three networks places the dataset once."""
    key = f"data:{tiny_digits.name}:cpu"
    before = accelerator.setup_counts().get(key, 0)
    for s in range(3):
        train_model(_net(s), tiny_digits, seed=s, **{**QUICK, "epochs": 1})
    assert accelerator.setup_counts()[key] == (before or 1)
    assert accelerator.setup_counts()["worker:cpu"] == 1


@pytest.mark.slow
def test_objective_trains_k_networks_together_with_the_results_of_one_at_a_time(tiny_digits):
    space = get_space("nb201")
    archs = nb201.sample(np.random.default_rng(2), 3)
    opts = dict(model_options={"channels": 2, "n_cells": 1}, training={"epochs": 2, "patience": 2, "batch_size": 128},
                device="cpu")
    one = TrainingObjective(space, tiny_digits, **opts).evaluate(archs)
    three = TrainingObjective(space, tiny_digits, speed=SpeedOptions(networks_together=3), **opts).evaluate(archs)
    assert [(e.value, e.info["valid_curve"]) for e in one] == [(e.value, e.info["valid_curve"]) for e in three]
    assert TrainingObjective(space, tiny_digits, speed=SpeedOptions(bf16=True), **opts).settings()["speed"]["bf16"]


def test_learning_rate_rule_scaling_and_warm_up():
    total = 100
    plain = LearningRate(0.05, total)
    assert all(plain(t) == 0.5 * 0.05 * (1.0 + math.cos(math.pi * t / total)) for t in range(total))
    scaled = LearningRate(0.05, total, "sgd", scale=4, warmup_steps=10)
    assert scaled.peak(0) == pytest.approx(0.05) and scaled.peak(5) == pytest.approx(0.05 + 0.15 * 0.5)
    assert scaled.peak(10) == pytest.approx(0.2) and scaled.peak(90) == pytest.approx(0.2)  # linear rule
    assert LearningRate(0.001, total, "adam", scale=4).peak(50) == pytest.approx(0.002)  # square-root rule
    assert LearningRate(0.001, total, "adam")(40) == 0.001  # Adam: constant


def test_batch_scale_trains_a_larger_batch(tiny_digits):
    res = train_model(_net(), tiny_digits, seed=0, speed=SpeedOptions(batch_scale=2), **QUICK)
    assert res.ok and res.batch_size == 128
    assert SpeedOptions(batch_scale=2).changes_results() and SpeedOptions(bf16=True).changes_results()
    assert not SpeedOptions(networks_together=4, metrics="epoch", channels_last=True).changes_results()


@pytest.mark.slow
def test_bf16_and_channels_last_train_on_a_cpu(tiny_digits):
    plain = train_model(_net(), tiny_digits, seed=0, **QUICK)
    nhwc = train_model(_net(), tiny_digits, seed=0, speed=SpeedOptions(channels_last=True), **QUICK)
    half = train_model(_net(), tiny_digits, seed=0, speed=SpeedOptions(bf16=True), **QUICK)
    assert nhwc.ok and half.ok
    assert np.allclose(nhwc.valid_loss_curve, plain.valid_loss_curve, rtol=1e-3)
    assert abs(half.valid_score - plain.valid_score) < 15.0  # lower precision, the same network learning


def test_the_graph_optimiser_matches_the_default_one():
    """The optimiser a captured CUDA graph uses (fused, learning rate in a tensor) takes the steps
    torch's default SGD takes (checked here on the CPU, where fused SGD also runs)."""
    torch.manual_seed(0)
    a = [nn.Parameter(torch.randn(6, 3)) for _ in range(3)]
    b = [nn.Parameter(p.detach().clone()) for p in a]
    graphed, plain = make_optimizer(a, "sgd", 0.1, 5e-4, graphed=True), make_optimizer(b, "sgd", 0.1, 5e-4, graphed=False)
    assert isinstance(graphed.param_groups[0]["lr"], torch.Tensor)
    for step in range(6):
        for p, q in zip(a, b):
            g = torch.randn_like(p)
            p.grad, q.grad = g.clone(), g.clone()
        for opt in (graphed, plain):
            set_learning_rate(opt, 0.1 / (step + 1))
            opt.step()
    assert all(torch.allclose(p, q, atol=1e-6) for p, q in zip(a, b))


def test_speed_options_are_checked():
    for bad in ({"metrics": "sometimes"}, {"compile": "fastest"}, {"networks_together": 0}, {"batch_scale": 0},
                {"warmup_epochs": -1.0}):
        with pytest.raises(ValueError):
            SpeedOptions.from_dict(bad)
    with pytest.raises(ValueError, match="unknown speed option"):
        SpeedOptions.from_dict({"turbo": True})
    assert SpeedOptions.from_dict(SpeedOptions(bf16=True).to_dict()) == SpeedOptions(bf16=True)
