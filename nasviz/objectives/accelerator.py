"""Where training runs: device choice, the once-per-worker set-up, and how many trainings share a device.

Three concerns of a process that trains many small networks, each kept out of the training loop:

* :func:`resolve_device`: ``None`` / ``"auto"`` is CUDA when present, else CPU; a name is taken
  as given (``"cuda"`` without a GPU is a clear error, not a silent CPU run).
* :func:`prepare_worker` / :func:`placed`: what a worker pays **once**, not once per network. On
  CUDA that is the context start-up (hundreds of milliseconds to seconds) and the
  copy of the dataset to the device; on CPU it is the thread count. :func:`placed` returns a
  dataset's splits on a device and keeps them for the process, so a worker that trains a hundred
  networks copies its data once. :func:`setup_counts` counts what each of these actually did in this
  process (tests and ``bench trainer`` read it: "CUDA start-up paid once per worker").
* :func:`plan_concurrency`: how many trainings share one device: processes and networks per
  process, from the free memory a :class:`MemoryProbe` reports (injectable, so the rule is tested
  without a GPU) and the CPU cores that feed the device, overridable by the caller.
"""

from __future__ import annotations

import os
import weakref
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import torch

if TYPE_CHECKING:
    from nasviz.objectives.datasets import Dataset

#: What this process has set up, by kind: ``"worker:<device>"`` (a worker's one-time set-up),
#: ``"data:<dataset>:<device>"`` (a dataset copied to a device).
_COUNTS: Counter[str] = Counter()
_PREPARED: set[str] = set()
#: device name -> {id(dataset): (weak reference to the dataset, its splits on that device)}
_PLACED: dict[str, dict[int, tuple[weakref.ref, "DeviceSplits"]]] = {}


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None`` or ``"auto"``: CUDA when available, else CPU. ``"cuda"`` without a usable GPU is a
    ``ValueError`` naming the device (a run asked for the accelerator must not fall back silently)."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {str(device)!r} was asked for but this machine has no usable CUDA device "
                         f"(torch {torch.__version__}, built with CUDA {torch.version.cuda})")
    return dev


def setup_counts() -> dict[str, int]:
    """How often each once-per-worker set-up ran in this process (module docstring)."""
    return dict(_COUNTS)


def prepare_worker(device: torch.device, threads: int | None = None) -> bool:
    """The set-up a worker pays once per device: ``torch`` threads (``threads``, when given), and
    on CUDA the context (a first allocation creates it; numerics settings such as TF32 are left at
    torch's defaults). Returns whether it ran now (``False``: already done in this process)."""
    if threads is not None and threads >= 1 and torch.get_num_threads() != threads:
        torch.set_num_threads(int(threads))
    key = f"worker:{device}"
    if key in _PREPARED:
        return False
    if device.type == "cuda":
        torch.cuda.init()
        torch.empty(1, device=device)  # creates the context now, not inside the first network's clock
    _PREPARED.add(key)
    _COUNTS[key] += 1
    return True


@dataclass(frozen=True)
class DeviceSplits:
    """A dataset's three splits on one device (tensors shaped as in :class:`~nasviz.objectives.datasets.Dataset`)."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_valid: torch.Tensor
    y_valid: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor


def placed(dataset: "Dataset", device: torch.device) -> DeviceSplits:
    """``dataset``'s splits on ``device``, copied the first time and kept for this process while
    the dataset object lives (keyed by identity: a dataset is immutable once loaded)."""
    cache = _PLACED.setdefault(str(device), {})
    hit = cache.get(id(dataset))
    if hit is not None and hit[0]() is dataset:
        return hit[1]
    prepare_worker(device)
    splits = DeviceSplits(*(t.to(device) for t in (dataset.x_train, dataset.y_train, dataset.x_valid,
                                                   dataset.y_valid, dataset.x_test, dataset.y_test)))
    cache[id(dataset)] = (weakref.ref(dataset), splits)
    _COUNTS[f"data:{dataset.name}:{device}"] += 1
    return splits


# --------------------------------------------------------------------------- how many share a device
@dataclass(frozen=True)
class MemoryState:
    """What a :class:`MemoryProbe` reports of one device, in bytes."""

    free: int
    total: int


#: ``probe(device) -> MemoryState``; :func:`cuda_memory` on a GPU, anything in tests.
MemoryProbe = Callable[[torch.device], MemoryState]


def cuda_memory(device: torch.device) -> MemoryState:
    """Free and total memory of a CUDA device (``torch.cuda.mem_get_info``)."""
    free, total = torch.cuda.mem_get_info(device)
    return MemoryState(int(free), int(total))


@dataclass(frozen=True)
class ConcurrencyPlan:
    """How many trainings share one device: ``processes`` workers, each training
    ``networks_per_process`` networks at once (interleaved, one CUDA stream each); ``reason`` says
    which limit decided."""

    processes: int
    networks_per_process: int
    reason: str

    @property
    def trainings(self) -> int:
        return self.processes * self.networks_per_process


#: Memory one CUDA worker process holds before it trains anything (its context, cuBLAS / cuDNN
#: workspaces): about 0.5 GiB on recent GPUs and drivers; a planning constant, overridable.
CUDA_PROCESS_BYTES = 640 * 2**20
#: Networks one CUDA process trains at once unless told otherwise. With captured CUDA graphs a step
#: costs the host a few launches, so one process can keep several small networks in flight; the
#: figure that pays is measured by ``bench trainer`` (its ``networks_per_process`` sweep).
DEFAULT_NETWORKS_PER_CUDA_PROCESS = 4


def plan_concurrency(
    device: torch.device,
    network_bytes: int,
    *,
    cpu_cores: int | None = None,
    processes: int | None = None,
    networks_per_process: int | None = None,
    probe: MemoryProbe | None = None,
    headroom: float = 0.8,
    process_bytes: int = CUDA_PROCESS_BYTES,
) -> ConcurrencyPlan:
    """Processes and networks per process for one device.

    * CPU: one single-threaded process per core (``cpu_cores``, default ``os.cpu_count()``), one
      network each: small networks gain nothing from a second thread, and one thread per process
      keeps results independent of the number of workers.
    * CUDA: ``networks_per_process`` (default :data:`DEFAULT_NETWORKS_PER_CUDA_PROCESS`) networks of
      ``network_bytes`` each (training memory: weights, gradients, optimiser state, activations)
      per process, each process costing ``process_bytes`` more; as many processes as ``headroom``
      of the free memory holds, at most one per two CPU cores (each process's host thread issues
      its kernels; the other core serves the search and data), at least one.

    ``processes`` / ``networks_per_process`` given by the caller override the rule (the memory
    bound still applies to the other one). ``probe`` reports free memory (default: CUDA's own).
    """
    cores = max(1, int(cpu_cores or os.cpu_count() or 1))
    for name, value in (("processes", processes), ("networks_per_process", networks_per_process)):
        if value is not None and int(value) < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    if network_bytes < 0:
        raise ValueError(f"network_bytes must be non-negative, got {network_bytes}")
    if device.type != "cuda":
        return ConcurrencyPlan(int(processes or cores), int(networks_per_process or 1),
                               "cpu: one single-threaded process per core" if processes is None else "cpu: as asked")
    state = (probe or cuda_memory)(device)
    budget = headroom * state.free
    per_process_networks = int(networks_per_process or DEFAULT_NETWORKS_PER_CUDA_PROCESS)
    per_process = process_bytes + per_process_networks * max(int(network_bytes), 1)
    by_memory = int(budget // per_process)
    if processes is not None:
        fit = int((budget / int(processes) - process_bytes) // max(int(network_bytes), 1))
        if networks_per_process is None:
            per_process_networks = max(1, min(per_process_networks, fit))
        return ConcurrencyPlan(int(processes), per_process_networks, "cuda: processes as asked")
    by_cores = max(1, cores // 2)
    n = max(1, min(by_memory, by_cores))
    reason = (f"cuda: {'free memory' if by_memory < by_cores else 'CPU cores'} "
              f"({state.free / 2**30:.1f} GiB free, {cores} cores)")
    return ConcurrencyPlan(n, per_process_networks, reason)
