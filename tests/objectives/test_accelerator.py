"""Device choice and how many trainings share a device, with an injected memory probe (no GPU needed)."""

from __future__ import annotations

import pytest
import torch

from nasviz.objectives.accelerator import (
    CUDA_PROCESS_BYTES, MemoryState, plan_concurrency, prepare_worker, resolve_device, setup_counts,
)

GIB = 2**30
CUDA = torch.device("cuda")


def probe(free_gib: float, total_gib: float = 80.0):
    def report(device: torch.device) -> MemoryState:
        assert device.type == "cuda"
        return MemoryState(int(free_gib * GIB), int(total_gib * GIB))

    return report


def test_cpu_plan_is_one_single_threaded_process_per_core():
    plan = plan_concurrency(torch.device("cpu"), 10**6, cpu_cores=16)
    assert (plan.processes, plan.networks_per_process, plan.trainings) == (16, 1, 16)
    assert plan_concurrency(torch.device("cpu"), 10**6, cpu_cores=16, processes=3).processes == 3


def test_cuda_plan_follows_free_memory_and_cores():
    small = 50 * 2**20  # a 50 MiB training footprint
    roomy = plan_concurrency(CUDA, small, cpu_cores=16, probe=probe(70))
    assert roomy.processes == 8 and roomy.networks_per_process == 4 and "CPU cores" in roomy.reason
    tight = plan_concurrency(CUDA, small, cpu_cores=16, probe=probe(2))
    per_process = CUDA_PROCESS_BYTES + 4 * small
    assert tight.processes == int(0.8 * 2 * GIB // per_process) == 1 and "free memory" in tight.reason
    huge = plan_concurrency(CUDA, 40 * GIB, cpu_cores=16, probe=probe(10))
    assert huge.processes == 1  # never zero: one process always trains (the memory guard handles the rest)


def test_cuda_plan_overrides():
    small = 50 * 2**20
    plan = plan_concurrency(CUDA, small, cpu_cores=16, networks_per_process=8, probe=probe(70))
    assert plan.networks_per_process == 8 and plan.processes == 8
    asked = plan_concurrency(CUDA, 2 * GIB, cpu_cores=16, processes=4, probe=probe(9))
    # 4 processes in 0.8 * 9 GiB leave (1.8 GiB - 0.625 GiB) per process: fewer networks than the default 4
    assert asked.processes == 4 and asked.networks_per_process == 1
    with pytest.raises(ValueError, match="processes"):
        plan_concurrency(CUDA, small, processes=0, probe=probe(70))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on a machine without CUDA")
def test_asking_for_cuda_without_a_gpu_is_a_clear_error():
    with pytest.raises(ValueError, match="no usable CUDA device"):
        resolve_device("cuda")
    assert resolve_device(None).type == "cpu" and resolve_device("auto").type == "cpu"


def test_worker_set_up_runs_once_per_process():
    prepare_worker(torch.device("cpu"))
    before = setup_counts()["worker:cpu"]
    assert prepare_worker(torch.device("cpu")) is False
    assert setup_counts()["worker:cpu"] == before == 1
