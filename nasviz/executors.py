"""Evaluate architectures in parallel: local worker processes or a Dask cluster.

API (every executor)
--------------------
``submit(arch) -> future``
    Start evaluating one architecture; returns at once. ``future.result()`` is an
    :class:`~nasviz.objectives.base.Evaluation` (never an exception for a bad architecture: a
    failed training is a failed Evaluation).
``submit_group(archs, plans) -> futures``
    Start evaluating several architectures in one worker with one ``evaluate`` call, one future
    each (a training objective with ``SpeedOptions(networks_together=k)`` trains them at once);
    :class:`ExecutorObjective` groups a step this way. Dask submits them one by one.
``wait_first(futures) -> (done, pending)``
    Block until at least one of ``futures`` has finished; two sets. This is the asynchronous
    mode of paper 001 §4.2 / paper 003 §4.3: when a worker frees up, the search proposes the
    next architecture while the others are still training (the search loop treats the pending
    ones as hallucinated observations; that belongs to the runner).
``as_completed(futures)``
    Iterate over futures in the order they finish.
``evaluate(archs) -> list[Evaluation]``
    Synchronous batch evaluation, results in input order.
``close()`` / context manager
    Shut the workers down.

Executors
---------
:class:`SerialExecutor` (in this process; futures are already done when returned),
:class:`LocalExecutor` (``n_workers`` processes started with ``spawn``; each rebuilds the
objective from a picklable spec once and trains with one torch thread, so results do not depend
on the number of workers), :class:`DaskExecutor` (``tcp://host:port`` connects to a running
scheduler; ``local:N`` starts a ``LocalCluster`` of N single-threaded worker processes on
loopback). :func:`make_executor` picks one from CLI-style options.

What is shipped to workers is a *spec*: an object with ``build() -> objective`` that pickles
(e.g. :class:`nasviz.objectives.training.TrainingSpec`, ``TrainingObjective.spec()``). Workers keep
the built objective keyed by the spec, so the dataset is loaded once per worker.

Example::

    spec = TrainingObjective(get_space("nb201"), "digits").spec()
    with LocalExecutor(spec, n_workers=2) as ex:
        pending = {ex.submit(a) for a in first_batch}
        while pending:
            done, pending = ex.wait_first(pending)
            for fut in done:
                strategy.tell([fut.result()])
                pending.add(ex.submit(strategy.ask(1)[0]))   # propose while others train
"""

from __future__ import annotations

import concurrent.futures as cf
from multiprocessing import get_context
from typing import Any, Iterable, Iterator, Protocol, Sequence

from nasviz.arch import Architecture
from nasviz.fidelity.ladder import arch_of
from nasviz.objectives.base import FAILED, Evaluation

_OBJECTIVES: dict[Any, Any] = {}
_THREADS_SET = False


class ObjectiveSpec(Protocol):
    """A picklable recipe for an objective, hashable so workers can cache what it builds."""

    def build(self) -> Any: ...


def _set_single_thread() -> None:
    global _THREADS_SET
    if not _THREADS_SET:
        import torch

        torch.set_num_threads(1)
        _THREADS_SET = True


def _worker_objective(spec: ObjectiveSpec) -> Any:
    """The objective of ``spec`` in this worker process, built once (one torch thread). A spawned
    process or a Dask worker starts without plugins: they are loaded first (once per process), so
    a plugin's space or dataset is found here as in the process that started the search."""
    from nasviz.components import load_plugins

    load_plugins()
    _set_single_thread()
    objective = _OBJECTIVES.get(spec)
    if objective is None:
        _OBJECTIVES.clear()  # one spec at a time per worker keeps memory bounded
        objective = _OBJECTIVES[spec] = spec.build()
    return objective


def evaluate_in_worker(spec: ObjectiveSpec, arch: Architecture, plan: Any = None) -> Evaluation:
    """Evaluate one architecture in a worker process (one torch thread; objective cached);
    ``plan`` is the strategy's :class:`~nasviz.objectives.network_store.NetworkPlan` (warm starts
    from, and trained networks kept in, a network store folder the processes share)."""
    objective = _worker_objective(spec)
    try:
        return objective.evaluate([arch], [plan])[0] if plan is not None else objective.evaluate([arch])[0]
    except Exception as err:  # noqa: BLE001 - objectives should not raise; if one does, record it
        return Evaluation(arch, None, 0.0, FAILED, f"{type(err).__name__}: {err}")


def evaluate_group_in_worker(spec: ObjectiveSpec, archs: Sequence[Architecture], plans: Sequence[Any]) -> list[Evaluation]:
    """Evaluate several architectures in one worker with one ``evaluate`` call (a training
    objective with ``networks_together > 1`` trains them at once, interleaved on the device)."""
    objective = _worker_objective(spec)
    try:
        return list(objective.evaluate(list(archs), list(plans)))
    except Exception as err:  # noqa: BLE001
        return [Evaluation(a, None, 0.0, FAILED, f"{type(err).__name__}: {err}") for a in archs]


def _split(group: cf.Future, n: int) -> list[cf.Future]:
    """One future per member of a group whose future returns a list of ``n`` results."""
    parts: list[cf.Future] = [cf.Future() for _ in range(n)]

    def resolve(done: cf.Future) -> None:
        err = done.exception()
        for i, part in enumerate(parts):
            if err is not None:
                part.set_exception(err)
            else:
                part.set_result(done.result()[i])

    group.add_done_callback(resolve)
    return parts


class _Base:
    n_workers: int = 1

    def submit(self, arch: Architecture, plan: Any = None):  # pragma: no cover - interface
        raise NotImplementedError

    def submit_group(self, archs: Sequence[Architecture], plans: Sequence[Any]) -> list:
        """Start evaluating ``archs`` together in one worker where the executor can (one future
        each); by default one by one."""
        return [self.submit(a, p) for a, p in zip(archs, plans)]

    def wait_first(self, futures: Iterable) -> tuple[set, set]:
        done, pending = cf.wait(set(futures), return_when=cf.FIRST_COMPLETED)
        return set(done), set(pending)

    def as_completed(self, futures: Iterable) -> Iterator:
        return cf.as_completed(list(futures))

    def evaluate(self, archs: Sequence[Architecture]) -> list[Evaluation]:
        futures = [self.submit(a) for a in archs]
        return [f.result() for f in futures]

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class SerialExecutor(_Base):
    """Evaluate in this process; ``submit`` trains before it returns (a finished future).

    Takes an objective (anything with ``evaluate``) or a spec with ``build``.
    """

    def __init__(self, objective_or_spec: Any) -> None:
        has_eval = hasattr(objective_or_spec, "evaluate")
        self.objective = objective_or_spec if has_eval else objective_or_spec.build()
        self.n_workers = 1

    def submit(self, arch: Architecture, plan: Any = None) -> cf.Future:
        fut: cf.Future = cf.Future()
        try:
            ev = self.objective.evaluate([arch], [plan])[0] if plan is not None else self.objective.evaluate([arch])[0]
            fut.set_result(ev)
        except Exception as err:  # noqa: BLE001
            fut.set_result(Evaluation(arch, None, 0.0, FAILED, f"{type(err).__name__}: {err}"))
        return fut

    def submit_group(self, archs: Sequence[Architecture], plans: Sequence[Any]) -> list[cf.Future]:
        try:
            evaluations = list(self.objective.evaluate(list(archs), list(plans)))
        except Exception as err:  # noqa: BLE001
            evaluations = [Evaluation(a, None, 0.0, FAILED, f"{type(err).__name__}: {err}") for a in archs]
        futures = [cf.Future() for _ in archs]
        for fut, ev in zip(futures, evaluations):
            fut.set_result(ev)
        return futures


class LocalExecutor(_Base):
    """``n_workers`` local processes (``spawn`` start method, one torch thread each)."""

    def __init__(self, spec: ObjectiveSpec, n_workers: int = 2) -> None:
        if int(n_workers) < 1:
            raise ValueError(f"n_workers must be at least 1, got {n_workers}")
        if not hasattr(spec, "build"):
            raise ValueError("LocalExecutor needs a picklable spec with build() (e.g. TrainingObjective.spec())")
        self.spec = spec
        self.n_workers = int(n_workers)
        self._pool = cf.ProcessPoolExecutor(max_workers=self.n_workers, mp_context=get_context("spawn"))

    def submit(self, arch: Architecture, plan: Any = None) -> cf.Future:
        return self._pool.submit(evaluate_in_worker, self.spec, arch, plan)

    def submit_group(self, archs: Sequence[Architecture], plans: Sequence[Any]) -> list[cf.Future]:
        if len(archs) == 1:
            return [self.submit(archs[0], plans[0])]
        return _split(self._pool.submit(evaluate_group_in_worker, self.spec, list(archs), list(plans)), len(archs))

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor(_Base):
    """Evaluate on a Dask cluster.

    ``address``: ``"tcp://host:port"`` of a running scheduler, or ``"local:N"`` to start a
    ``LocalCluster`` of N worker processes with one thread each, bound to 127.0.0.1 with no
    dashboard (nothing listens beyond loopback). The cluster this executor started is closed by
    :meth:`close`; a remote one is only disconnected from.
    """

    def __init__(self, spec: ObjectiveSpec, address: str, processes: bool = True) -> None:
        from distributed import Client, LocalCluster

        if not hasattr(spec, "build"):
            raise ValueError("DaskExecutor needs a picklable spec with build() (e.g. TrainingObjective.spec())")
        self.spec = spec
        self._cluster = None
        if address.startswith("local:"):
            try:
                n = int(address.split(":", 1)[1])
            except ValueError:
                raise ValueError(f"--dask local:N needs an integer N, got {address!r}") from None
            if n < 1:
                raise ValueError(f"--dask local:N needs N >= 1, got {n}")
            self._cluster = LocalCluster(
                n_workers=n, threads_per_worker=1, processes=processes, host="127.0.0.1",
                dashboard_address=None, silence_logs=40,
            )
            self.client = Client(self._cluster)
        elif address.startswith(("tcp://", "tls://", "inproc://")):
            self.client = Client(address)
        else:
            raise ValueError(f"Dask address must be tcp://host:port or local:N, got {address!r}")
        self.n_workers = max(1, len(self.client.scheduler_info().get("workers", {})))

    def submit(self, arch: Architecture, plan: Any = None):
        return self.client.submit(evaluate_in_worker, self.spec, arch, plan, pure=False)

    def wait_first(self, futures: Iterable) -> tuple[set, set]:
        from distributed import wait

        done, pending = wait(list(futures), return_when="FIRST_COMPLETED")
        return set(done), set(pending)

    def as_completed(self, futures: Iterable) -> Iterator:
        from distributed import as_completed

        return iter(as_completed(list(futures)))

    def close(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def make_executor(spec_or_objective: Any, workers: int = 1, dask: str | None = None) -> _Base:
    """``dask`` address -> :class:`DaskExecutor`; ``workers > 1`` -> :class:`LocalExecutor`;
    otherwise :class:`SerialExecutor`. ``spec_or_objective`` may be an objective with ``spec()``."""
    spec = spec_or_objective.spec() if hasattr(spec_or_objective, "spec") else spec_or_objective
    if dask:
        return DaskExecutor(spec, dask)
    if workers is not None and workers > 1:
        return LocalExecutor(spec, workers)
    return SerialExecutor(spec_or_objective)


class ExecutorObjective:
    """An objective whose ``evaluate`` runs on an executor (same name, metric, optimum, domain).

    ``planner`` (set by a warm-starting strategy's ``attach``, as on a
    :class:`~nasviz.objectives.training.TrainingObjective`) makes each architecture's
    :class:`~nasviz.objectives.network_store.NetworkPlan` here, in the searching process, and
    sends it to the worker with the architecture.
    """

    def __init__(self, objective: Any, executor: _Base) -> None:
        self.objective = objective
        self.executor = executor
        self.name = objective.name
        self.metric = objective.metric
        self.space = getattr(objective, "space", None)
        self.dataset = getattr(objective, "dataset", None)
        self.planner: Any = None

    def submit(self, archs: Sequence[Architecture]) -> list:
        """Start evaluating ``archs`` (with their plans); one future per architecture. An
        objective that trains ``networks_together = k > 1`` networks at once gets its
        architectures in groups of up to ``k``, spread over the workers (``ceil(len / workers)``
        each when fewer than ``k`` per worker are asked for)."""
        plans = [self.planner(arch_of(a)) if self.planner is not None else None for a in archs]
        wrap = getattr(self.objective, "fidelity_plan", None)  # budgets and early stopping travel in the plan
        if wrap is not None:
            plans = [wrap(a, p) for a, p in zip(archs, plans)]
        speed = getattr(self.objective, "speed", None)
        k = int(getattr(speed, "networks_together", 1) or 1)
        if k <= 1 or len(archs) <= 1 or any(type(p).__name__ == "FidelityPlan" for p in plans):
            return [self.executor.submit(a, p) for a, p in zip(archs, plans)]
        size = max(1, min(k, -(-len(archs) // max(1, self.executor.n_workers))))
        futures: list = []
        for i in range(0, len(archs), size):
            futures.extend(self.executor.submit_group(archs[i : i + size], plans[i : i + size]))
        return futures

    def evaluate(self, archs: Sequence[Architecture]) -> list[Evaluation]:
        return [f.result() for f in self.submit(archs)]

    def observe(self, evaluations: Sequence[Evaluation]) -> None:
        """The runner's results, for the objective's early-stopping records."""
        observe = getattr(self.objective, "observe", None)
        if observe is not None:
            observe(evaluations)

    @property
    def ladder(self):
        return getattr(self.objective, "ladder", None)

    @property
    def cost_model(self):
        return getattr(self.objective, "cost_model", None)

    def optimum(self):
        return self.objective.optimum()

    def domain(self):
        return self.objective.domain()
