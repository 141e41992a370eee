"""Executors: local processes and a real Dask LocalCluster on loopback give the same results."""

from __future__ import annotations

import pytest

from nasviz.executors import DaskExecutor, ExecutorObjective, LocalExecutor, SerialExecutor, make_executor
from nasviz.objectives.training import TrainingObjective, TrainingSpec
from nasviz.spaces import get_space, nb201

#: Tiny, fast training so that the test measures plumbing, not learning.
SPEC = TrainingSpec(
    space="nb201", dataset="digits", seed=3,
    model_options=(("channels", 2), ("n_cells", 1)),
    training=(("batch_size", 256), ("epochs", 1), ("lr", 0.2), ("patience", 1)),
)
ARCHS = [
    nb201.parse("|nor_conv_3x3~0|+|avg_pool_3x3~0|skip_connect~1|+|nor_conv_1x1~0|none~1|nor_conv_3x3~2|"),
    nb201.parse("|avg_pool_3x3~0|+|none~0|nor_conv_1x1~1|+|skip_connect~0|none~1|nor_conv_3x3~2|"),
    nb201.parse("|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"),
]


def _values(evals):
    return [(e.status, e.value, e.info.get("test_score")) for e in evals]


@pytest.fixture(scope="module")
def local_results():
    with LocalExecutor(SPEC, n_workers=2) as ex:
        futures = [ex.submit(a) for a in ARCHS]
        first_done, pending = ex.wait_first(futures)
        assert first_done and len(first_done) + len(pending) == len(ARCHS)
        finished = list(ex.as_completed(futures))
        assert len(finished) == len(ARCHS)
        return [f.result() for f in futures]


@pytest.mark.slow
def test_local_executor_returns_evaluations_in_order(local_results):
    assert [e.arch for e in local_results] == ARCHS
    assert all(e.ok for e in local_results)
    assert local_results[2].value == pytest.approx(local_results[2].info["valid_score"])
    assert "valid_curve" in local_results[0].info and local_results[0].cost > 0


@pytest.mark.slow  # shares the slow module fixture (worker processes training networks)
def test_each_worker_sets_up_once_not_once_per_network(local_results):
    """Per-worker set-up (the device, and the dataset copied to it; on a GPU the CUDA start-up) is
    paid once per worker process: three networks on two workers, so one worker trained two."""
    workers = [e.info["worker"] for e in local_results]
    assert len({w["pid"] for w in workers}) < len(workers)
    for w in workers:
        assert w["setups"]["worker:cpu"] == 1 and w["setups"]["data:digits:cpu"] == 1


@pytest.mark.slow
def test_dask_local_cluster_matches_local_processes(local_results):
    with DaskExecutor(SPEC, "local:2") as ex:
        assert ex.n_workers == 2
        futures = [ex.submit(a) for a in ARCHS]
        done, pending = ex.wait_first(futures)
        assert done and len(done) + len(pending) == len(ARCHS)
        dask_results = [f.result() for f in futures]
    # Same seeds, one torch thread per worker: identical values.
    assert _values(dask_results) == _values(local_results)


def test_serial_executor_and_wrapper_objective():
    objective = SPEC.build()
    ex = make_executor(objective, workers=1)
    assert isinstance(ex, SerialExecutor)
    wrapped = ExecutorObjective(objective, ex)
    evs = wrapped.evaluate(ARCHS[2:])
    assert evs[0].ok and evs[0].arch == ARCHS[2]
    assert wrapped.name == objective.name and wrapped.optimum() is None and wrapped.domain() is None


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="n_workers"):
        LocalExecutor(SPEC, n_workers=0)
    with pytest.raises(ValueError, match="tcp://host:port or local:N"):
        DaskExecutor(SPEC, "scheduler:8786")
    with pytest.raises(ValueError, match="integer N"):
        DaskExecutor(SPEC, "local:two")
    custom = TrainingObjective(get_space("nb201"), "digits", builder=lambda a, d: None)
    with pytest.raises(ValueError, match="custom builder"):
        custom.spec()


@pytest.mark.slow
def test_a_step_is_sent_in_groups_trained_together_with_the_same_results(local_results):
    """networks_together = 2 on two workers: the three networks go out as groups (one worker trains
    two at once), and every value equals the one-network-at-a-time result."""
    from dataclasses import replace

    from nasviz.objectives.speed import SpeedOptions

    spec = replace(SPEC, speed=SpeedOptions(networks_together=2))
    objective = spec.build()
    with LocalExecutor(spec, n_workers=2) as ex:
        wrapped = ExecutorObjective(objective, ex)
        futures = wrapped.submit(ARCHS)
        grouped = [f.result() for f in futures]
    assert _values(grouped) == _values(local_results)
    pids = [e.info["worker"]["pid"] for e in grouped]
    assert pids[0] == pids[1]  # the first group of two went to one worker
    serial = ExecutorObjective(objective, SerialExecutor(objective))
    assert _values([f.result() for f in serial.submit(ARCHS)]) == _values(local_results)
