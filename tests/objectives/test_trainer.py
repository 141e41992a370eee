"""The trainer: learning beats chance, early stopping, NaN -> failed, OOM adaptation, objective."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from nasviz.objectives.datasets import load_dataset
from nasviz.objectives.network_store import NetworkPlan, open_store
from nasviz.objectives.trainer import MemoryGuard, estimate_size, is_out_of_memory, train_model
from nasviz.objectives.training import TrainingObjective, arch_seed
from nasviz.spaces.nb201.network import build_nb201_network
from nasviz.spaces import get_space, nb201

MIXED = "|nor_conv_3x3~0|+|avg_pool_3x3~0|skip_connect~1|+|nor_conv_1x1~0|none~1|nor_conv_3x3~2|"


@pytest.fixture(scope="module")
def tiny_digits():
    return load_dataset("digits", seed=0, max_train=300)


def _net(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return build_nb201_network(nb201.parse(MIXED), channels=4)


@pytest.mark.slow
def test_training_on_a_tiny_split_beats_chance(tiny_digits):
    res = train_model(_net(), tiny_digits, epochs=4, patience=2, lr=0.2, batch_size=64, seed=0, device="cpu")
    assert res.ok, res.error
    assert res.valid_score > 40.0 and res.test_score > 40.0  # chance is 10 %
    assert len(res.valid_curve) == len(res.valid_loss_curve) == len(res.train_loss_curve) == res.epochs_run
    assert res.valid_curve[-1] > res.valid_curve[0] or res.valid_curve[0] > 40.0
    assert res.valid_score == pytest.approx(sum(res.valid_curve[-2:]) / 2)  # mean of the last tau scores
    assert res.n_parameters == sum(p.numel() for p in _net().parameters())
    assert res.device == "cpu" and res.seconds > 0 and res.metric == "accuracy"


@pytest.mark.slow
def test_same_seed_same_result(tiny_digits):
    a = train_model(_net(1), tiny_digits, epochs=2, patience=1, lr=0.1, batch_size=128, seed=5, device="cpu")
    b = train_model(_net(1), tiny_digits, epochs=2, patience=1, lr=0.1, batch_size=128, seed=5, device="cpu")
    assert a.valid_curve == b.valid_curve and a.test_score == b.test_score


class _Constant(nn.Module):
    """Ignores its input: the validation loss never improves after the first epoch."""

    def __init__(self, n_out: int) -> None:
        super().__init__()
        self.unused = nn.Parameter(torch.zeros(1))
        self.register_buffer("logits", torch.linspace(0, 1, n_out))

    def forward(self, x):
        return self.logits.expand(len(x), -1) + 0.0 * self.unused


def test_early_stopping_after_patience_epochs_without_improvement(tiny_digits):
    res = train_model(_Constant(10), tiny_digits, epochs=50, patience=3, lr=0.1, batch_size=128, device="cpu")
    assert res.ok
    assert res.epochs_run == 4  # the first epoch sets the best loss, then 3 without a decrease
    assert res.valid_score == pytest.approx(sum(res.valid_curve[-3:]) / 3)


class _NaNNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(64, 10)

    def forward(self, x):
        return self.lin(x.flatten(1)) * float("nan")


def test_nan_model_is_a_failed_result_with_reason(tiny_digits):
    res = train_model(_NaNNet(), tiny_digits, epochs=3, patience=1, lr=0.1, batch_size=128, device="cpu")
    assert res.status == "failed" and res.valid_score is None
    assert "diverged" in res.error and "epoch 1" in res.error


def test_huge_learning_rate_diverges_and_is_reported():
    data = load_dataset("diabetes", seed=0)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1))
    res = train_model(model, data, epochs=20, patience=20, lr=1e30, batch_size=32, device="cpu")
    assert res.status == "failed" and "diverged" in res.error


def test_objective_reports_failed_evaluation_and_search_can_continue(tiny_digits):
    obj = TrainingObjective(get_space("nb201"), tiny_digits, builder=lambda arch, data: _NaNNet(),
                            training={"epochs": 1, "patience": 1})
    good = TrainingObjective(get_space("nb201"), tiny_digits, training={"epochs": 1, "patience": 1, "batch_size": 128})
    ev = obj.evaluate([nb201.parse(MIXED)])[0]
    assert not ev.ok and ev.value is None and "diverged" in ev.error
    ev2 = good.evaluate([nb201.parse(MIXED)])[0]
    assert ev2.ok and ev2.value is not None


def test_a_diverged_warm_start_is_retrained_from_scratch(tiny_digits, tmp_path):
    """A warm start (a plan naming a stored ancestor) that diverges is trained again from fresh
    weights and the notes say so; the same failure without a warm start stays a failed evaluation."""
    space = get_space("layers")
    parent = space.initial_pool()[0]
    child = space.sample_morphs(parent, np.random.default_rng(0), 1)[0]
    obj = TrainingObjective(space, tiny_digits, training={"epochs": 1, "patience": 1, "batch_size": 128}, device="cpu")
    net = obj.builder(parent, tiny_digits, **obj.model_options)
    # an ancestor whose inherited weights are so large that the child's first loss is not finite
    open_store(str(tmp_path)).save(space.format(parent), {k: v * 1e30 if v.is_floating_point() else v
                                                          for k, v in net.state_dict().items()})
    plan = NetworkPlan(folder=str(tmp_path), ancestor=space.format(parent),
                       morphs=(child.morph.to_dict(),), seed=1)
    ev = obj.evaluate([child.child], [plan])[0]
    assert ev.ok and ev.value is not None and "warm_start" not in ev.info
    assert "diverged" in ev.info["notes"][0] and "trained from scratch" in ev.info["notes"][0]
    plain = TrainingObjective(get_space("nb201"), tiny_digits, builder=lambda arch, data: _NaNNet(),
                              training={"epochs": 1, "patience": 1})
    ev = plain.evaluate([nb201.parse(MIXED)])[0]
    assert not ev.ok and "notes" not in ev.info


def test_oom_lowers_the_cap_and_retries_with_a_smaller_batch(tiny_digits):
    calls = []

    def inject(epoch, step):
        calls.append((epoch, step))
        if len(calls) == 1:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    guard = MemoryGuard()
    size_128 = estimate_size(_net(), tiny_digits.input_shape, 128)
    res = train_model(_net(), tiny_digits, epochs=1, patience=1, lr=0.1, batch_size=128, device="cpu",
                      memory_guard=guard, on_batch=inject)
    assert res.ok and res.retries == 1 and res.batch_size == 64
    assert guard.cap == pytest.approx(0.8 * size_128) and len(guard.events) == 1
    # The lowered cap now refuses the size that crashed ...
    assert not guard.allows(size_128)
    # ... and a network estimated above the cap is discarded without training (paper 003 §4.4).
    small = MemoryGuard(cap=10)
    res2 = train_model(_net(), tiny_digits, epochs=1, lr=0.1, device="cpu", memory_guard=small)
    assert res2.status == "failed" and "exceeds the memory cap" in res2.error and res2.epochs_run == 0


def test_runtime_error_saying_out_of_memory_counts_and_persistent_oom_fails(tiny_digits):
    assert is_out_of_memory(RuntimeError("CUDA error: out of memory"))
    assert not is_out_of_memory(RuntimeError("shape mismatch"))

    def always(epoch, step):
        raise RuntimeError("CUDA error: out of memory")

    guard = MemoryGuard(max_retries=2)
    res = train_model(_net(), tiny_digits, epochs=1, lr=0.1, batch_size=128, device="cpu", memory_guard=guard, on_batch=always)
    assert res.status == "failed" and "out of memory" in res.error and res.retries >= 1

    def other(epoch, step):
        raise RuntimeError("shape mismatch")

    with pytest.raises(RuntimeError, match="shape mismatch"):  # other errors are not swallowed by train_model
        train_model(_net(), tiny_digits, epochs=1, lr=0.1, device="cpu", on_batch=other)


def test_objective_info_and_seed_by_class(tiny_digits):
    obj = TrainingObjective(get_space("nb201"), tiny_digits, training={"epochs": 2, "patience": 1, "batch_size": 128})
    arch = nb201.parse(MIXED)
    ev = obj.evaluate([arch])[0]
    assert ev.ok and math.isfinite(ev.value) and ev.cost > 0
    for key in ("valid_curve", "train_loss_curve", "n_parameters", "train_seconds", "test_score", "epochs_run"):
        assert key in ev.info
    assert ev.info["n_parameters"] == sum(p.numel() for p in build_nb201_network(arch, channels=4).parameters())
    again = obj.evaluate([arch])[0]
    assert again.value == ev.value  # seeded by the class key: reproducible
    assert arch_seed(arch.canonical_key()) == arch_seed(nb201.parse(MIXED).canonical_key())
    test_obj = TrainingObjective(get_space("nb201"), tiny_digits, "test_accuracy", training={"epochs": 2, "patience": 1, "batch_size": 128})
    assert test_obj.evaluate([arch])[0].value == ev.info["test_score"]
    assert obj.optimum() is None and obj.domain() is None


def test_bad_arguments_are_named(tiny_digits):
    with pytest.raises(ValueError, match="patience"):
        train_model(_net(), tiny_digits, patience=0)
    with pytest.raises(ValueError, match="lr"):
        train_model(_net(), tiny_digits, lr=float("nan"))
    with pytest.raises(ValueError, match="metric"):
        TrainingObjective(get_space("nb201"), tiny_digits, "accuracy")
    with pytest.raises(ValueError, match="unknown training option"):
        TrainingObjective(get_space("nb201"), tiny_digits, training={"epoch": 3})
    ev = TrainingObjective(get_space("nb201"), "wine").evaluate_one(nb201.parse(MIXED))
    assert not ev.ok and "image inputs" in ev.error  # a cell space on tabular data: a clear failure


class _GreedyNet(nn.Module):
    """A network that runs out of (accelerator) memory on training batches above 16 samples."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training and x.shape[0] > 16:
            raise RuntimeError("CUDA error: out of memory")
        return self.linear(x.reshape(x.shape[0], -1))


def test_an_evaluation_records_the_halved_batch_after_out_of_memory(tiny_digits):
    objective = TrainingObjective(get_space("layers"), tiny_digits, builder=lambda arch, data, **o: _GreedyNet(),
                                  training={"epochs": 1, "patience": 1, "batch_size": 64}, device="cpu")
    ev = objective.evaluate([get_space("layers").initial_pool()[0]])[0]
    # 64 runs out of memory and sets the cap; 32 is over the cap's estimate and skipped; 16 trains
    assert ev.ok and ev.info["batch_size"] == 16 and ev.info["oom_retries"] == 1
    assert objective.memory_guard.cap is not None and len(objective.memory_guard.events) == 1
