"""Where training time goes: arithmetic against overhead, for ``bench trainer``.

Two measures, each stated with how it was taken:

* :func:`arithmetic_share` runs the work once under ``torch.profiler``. **Arithmetic** is the time
  the device spends computing: on CUDA the union of the kernel (and copy) intervals the profiler
  records on the GPU; on a CPU the self time (children left out) of the ATen operators that compute
  (convolutions, matrix products, normalisation, pooling, element-wise and reduction kernels),
  leaving out those that only allocate, view or reshape (:data:`BOOKKEEPING`) or only dispatch to
  others (:data:`WRAPPERS`). Everything else (Python, autograd's engine, the dispatcher, launches,
  host synchronisation, the loop) is **overhead**. On CUDA the fraction is taken against the same
  work's wall time *without* the profiler (the profiler does not slow the GPU's kernels). On a CPU
  it is taken within the profiled run, against that run's wall time (the profiler's operator times
  are wall times too, so time the process spends descheduled on a shared machine falls on both
  sides alike); the profiler adds a cost to every operator on the host, so the CPU's overhead share
  is overstated, more for small networks. The same work's unprofiled seconds are reported beside it.
* :func:`flop_utilisation` counts the work's floating-point operations
  (``torch.utils.flop_counter``: matrix products and convolutions, forward and backward) and
  divides by seconds and by the device's measured peak (a large matrix product timed here), which
  says how far tiny networks are from what the device can do.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import torch

#: ATen operators that allocate, view or reshape: no arithmetic (their time counts as overhead).
BOOKKEEPING = frozenset({
    "aten::empty", "aten::empty_strided", "aten::empty_like", "aten::as_strided", "aten::as_strided_", "aten::view",
    "aten::_unsafe_view", "aten::reshape", "aten::_reshape_alias", "aten::t", "aten::transpose", "aten::permute",
    "aten::expand", "aten::unsqueeze", "aten::squeeze", "aten::slice", "aten::select", "aten::detach", "aten::detach_",
    "aten::alias", "aten::resize_", "aten::set_", "aten::lift_fresh", "aten::result_type", "aten::is_nonzero",
    "aten::item", "aten::_local_scalar_dense", "aten::flatten", "aten::unflatten", "aten::contiguous",
    "aten::split", "aten::split_with_sizes", "aten::chunk", "aten::narrow", "aten::expand_as", "aten::view_as",
    "aten::to", "aten::_to_copy", "aten::numpy_T", "aten::record_stream", "aten::zeros", "aten::new_empty",
    "aten::new_empty_strided", "aten::ones_like", "aten::zeros_like", "aten::scalar_tensor",
})

#: Composite ATen operators whose own time is only dispatch to the operators they call.
WRAPPERS = frozenset({
    "aten::convolution", "aten::_convolution", "aten::conv1d", "aten::conv2d", "aten::linear", "aten::matmul",
    "aten::batch_norm", "aten::_batch_norm_impl_index", "aten::_batch_norm_with_update", "aten::cross_entropy_loss",
    "aten::nll_loss", "aten::nll_loss_nd", "aten::log_softmax", "aten::max_pool1d", "aten::max_pool2d",
    "aten::avg_pool1d", "aten::relu", "aten::dropout", "aten::mse_loss", "aten::cudnn_convolution",
})


def _union_seconds(intervals: list[tuple[float, float]]) -> float:
    """Total length (seconds) of the union of ``(start, end)`` intervals given in microseconds."""
    total, end = 0.0, -float("inf")
    for a, b in sorted(intervals):
        if a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total / 1e6


def _device_intervals(prof: Any) -> list[tuple[float, float]]:
    from torch.autograd import DeviceType

    out = []
    for event in prof.events():
        if getattr(event, "device_type", None) == DeviceType.CUDA:
            out.append((float(event.time_range.start), float(event.time_range.end)))
    return out


def _cpu_arithmetic_seconds(prof: Any) -> float:
    total = 0.0
    for event in prof.events():
        if event.name.startswith("aten::") and event.name not in BOOKKEEPING and event.name not in WRAPPERS:
            total += float(event.self_cpu_time_total)
    return total / 1e6


def arithmetic_share(work: Callable[[], None], device: torch.device, unprofiled_seconds: float) -> dict[str, Any]:
    """Run ``work`` once under the profiler and split its time (module docstring);
    ``unprofiled_seconds`` is the same work's wall time without the profiler."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=activities) as prof:
        start, cpu_start = time.perf_counter(), time.process_time()
        work()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        profiled, profiled_cpu = time.perf_counter() - start, time.process_time() - cpu_start
    if device.type == "cuda":
        arithmetic, reference = _union_seconds(_device_intervals(prof)), unprofiled_seconds
        method = "union of the GPU's kernel and copy intervals, against the unprofiled wall time"
    else:
        arithmetic, reference = _cpu_arithmetic_seconds(prof), profiled
        method = ("self time of the ATen operators that compute (allocation, views and dispatch-only operators "
                  "left out), against the profiled run's wall time")
    fraction = min(1.0, arithmetic / reference) if reference > 0 else None
    return {"arithmetic_seconds": arithmetic, "reference_seconds": reference, "wall_seconds_unprofiled": unprofiled_seconds,
            "wall_seconds_profiled": profiled, "cpu_seconds_profiled": profiled_cpu, "arithmetic_fraction": fraction,
            "overhead_fraction": None if fraction is None else 1.0 - fraction, "method": method}


def training_flops(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int, eval_samples: int) -> int:
    """Floating-point operations of ``steps`` training steps on batches like ``x`` (forward and
    backward, counted on one step) plus forward passes over ``eval_samples`` samples."""
    from torch.utils.flop_counter import FlopCounterMode

    model.train()
    counter = FlopCounterMode(display=False)
    with counter:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
    per_step = counter.get_total_flops()
    model.zero_grad(set_to_none=True)
    model.eval()
    forward = FlopCounterMode(display=False)
    with forward, torch.no_grad():
        model(x[:1])
    model.train()
    return int(per_step * steps + forward.get_total_flops() * eval_samples)


def peak_flops(device: torch.device, dtype: torch.dtype = torch.float32, n: int = 2048, repeats: int = 5) -> float:
    """Measured FLOP/s of an ``n`` x ``n`` matrix product on ``device`` (the best of ``repeats``)."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    best = float("inf")
    for _ in range(repeats + 1):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        a @ b
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        best = min(best, time.perf_counter() - start)
    return 2.0 * n**3 / best


def flop_utilisation(flops: int, seconds: float, peak: float) -> dict[str, Any]:
    """``flops`` done in ``seconds`` as a fraction of ``peak`` FLOP/s."""
    achieved = flops / seconds if seconds > 0 else 0.0
    return {"flops": flops, "achieved_flops_per_second": achieved, "peak_flops_per_second": peak,
            "utilisation": achieved / peak if peak > 0 else None,
            "method": "FLOPs counted by torch.utils.flop_counter; peak: a large float32 matrix product timed here"}
