"""Explorer computations leave the request (issue 47, finding 1): kernel matrices run in worker
processes, held to a per-visitor and a server-wide budget of running work, killed on Cancel or when
the visitor stops polling (a closed tab), and cached for the next visitor. Real worker processes.
(The request's own cost, measured before it starts, is tests/dashboard/test_explorer_budget.py.)"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from nasviz.errors import LimitError
from nasviz.jobs.kernels import KernelRequest, SurrogateRequest
from nasviz.jobs.manager import JobManager
from nasviz.settings import Limits
from nasviz.spaces import get_space

pytestmark = pytest.mark.slow


def _strings(n: int, seed: int = 0) -> tuple[str, ...]:
    sp = get_space("nb201")
    return tuple(sp.format(a) for a in sp.sample(np.random.default_rng(seed), n))


def _wait(manager: JobManager, requests, owner: str, timeout: float = 60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        progress = manager.poll(requests, owner)
        if progress.finished:
            return progress
        time.sleep(0.2)
    raise AssertionError("job did not finish")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _gone(pid: int, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


def test_kernel_matrix_is_computed_in_another_process_and_cached_for_a_second_visitor(tmp_path):
    jobs = JobManager(tmp_path)
    req = KernelRequest("wl", "nb201", _strings(8))
    jobs.submit([req], "visitor-a", Limits())
    job = jobs.running()[req.key]
    assert job.pid is not None and job.pid != os.getpid()
    assert _wait(jobs, [req], "visitor-a").errors == []
    got = jobs.cached(req)
    expected = KernelRequest.result(req.compute())
    np.testing.assert_allclose(got.gram, expected.gram)
    assert set(got.distances) == set(expected.distances)
    # A second visitor asking for the same matrix: no new process, the result at once.
    jobs.submit([req], "visitor-b", Limits())
    assert jobs.running() == {}
    assert jobs.poll([req], "visitor-b").finished


def test_one_visitors_running_jobs_and_all_visitors_jobs_are_budgeted(tmp_path):
    jobs = JobManager(tmp_path)
    limits = Limits(max_explorer_seconds=60.0, max_explorer_seconds_total=100.0)
    first = KernelRequest("otmann", "nb201", _strings(70), cost_s=50.0)
    jobs.submit([first], "a", limits)
    try:
        with pytest.raises(LimitError, match="your computations still running"):
            jobs.submit([KernelRequest("otmann", "nb201", _strings(70, seed=1), cost_s=20.0)], "a", limits)
        jobs.submit([KernelRequest("wl", "nb201", _strings(5), cost_s=5.0)], "a", limits)  # fits beside it
        with pytest.raises(LimitError, match="busy with other visitors"):
            jobs.submit([KernelRequest("otmann", "nb201", _strings(70, seed=2), cost_s=50.0)], "b", limits)
        # Joining a job already running for another visitor costs nothing more.
        jobs.submit([first], "b", limits)
        assert set(jobs.running()[first.key].owners) == {"a", "b"}
    finally:
        jobs.cancel([first], "a")
        jobs.cancel([first], "b")


def test_cancel_kills_the_worker_process(tmp_path):
    jobs = JobManager(tmp_path)
    req = KernelRequest("otmann", "nb201", _strings(70))
    jobs.submit([req], "visitor", Limits())
    pid = jobs.running()[req.key].pid
    assert _alive(pid)
    jobs.cancel([req], "visitor")
    assert _gone(pid)
    assert jobs.running() == {} and jobs.cached(req) is None


def test_a_job_whose_visitor_stopped_polling_is_killed(tmp_path):
    jobs = JobManager(tmp_path, heartbeat_s=1.0)
    req = KernelRequest("otmann", "nb201", _strings(70))
    jobs.submit([req], "closed-tab", Limits())
    pid = jobs.running()[req.key].pid
    # Nobody polls: the reaper thread kills it once the heartbeat is older than heartbeat_s.
    assert _gone(pid, timeout=15.0)
    assert jobs.cached(req) is None


def test_the_surrogate_protocol_runs_in_a_worker_and_matches_the_in_process_one(tmp_path):
    from nasviz.dashboard.explorer.kernels import surrogate_quality
    from nasviz.dashboard.sources import table_from_path
    rng = np.random.default_rng(0)
    strings = sorted(set(_strings(120)))
    path = tmp_path / "table.csv"
    path.write_text("arch,acc\n" + "".join(f"{a},{50 + rng.normal():.3f}\n" for a in strings))
    jobs = JobManager(tmp_path / "cache")
    req = SurrogateRequest(str(path), "nb201", "acc", "tw2g", n_train=15, n_test=20, trials=2, seed=0)
    jobs.submit([req], "visitor", Limits())
    assert jobs.running()[req.key].pid != os.getpid()
    assert _wait(jobs, [req], "visitor").errors == []
    got = jobs.cached(req)
    expected = surrogate_quality(table_from_path(path), "acc", "tw2g", n_train=15, n_test=20, trials=2, seed=0)
    np.testing.assert_allclose(got.spearman, expected.spearman)
    assert got.kernel == "tw2g" and got.transform == expected.transform


def test_the_interpretability_fits_run_in_a_worker_as_plain_arrays_and_match_the_in_process_ones(tmp_path):
    """Issue 47: the Interpretability page's WL GP, its feature gradients and the slot importances
    leave the request like the Kernels page's work: a worker process, a ``.npz`` of plain arrays
    (read without unpickling), cached for the next visitor whatever the page's "Top features"."""
    from nasviz.dashboard.explorer.interpretation import interpret_sample, slot_importance
    from nasviz.dashboard.explorer.samples import sample_table
    from nasviz.dashboard.sources import table_from_path
    from nasviz.jobs.interpret import InterpretRequest

    rng = np.random.default_rng(0)
    path = tmp_path / "table.csv"
    path.write_text("arch,acc\n" + "".join(f"{a},{50 + rng.normal():.3f}\n" for a in sorted(set(_strings(120)))))
    jobs = JobManager(tmp_path / "cache")
    req = InterpretRequest(str(path), "nb201", "acc", 30, 1, cost_s=5.0)
    jobs.submit([req], "visitor", Limits())
    assert jobs.running()[req.key].pid != os.getpid()
    assert _wait(jobs, [req], "visitor", timeout=120).errors == []
    with np.load(jobs.result_path(req.key), allow_pickle=False) as data:
        assert all(data[k].dtype != object for k in data.files)
    got = jobs.cached(req)
    sample = sample_table(table_from_path(path), "acc", 30, 1)
    expected = interpret_sample(sample, top=3, seed=1)
    assert got.fit.sample.strings == sample.strings
    np.testing.assert_allclose(got.fit.gradients.mean_gradient, expected.gradients.mean_gradient, rtol=1e-6, atol=1e-9)
    assert got.fit.gradients.names == expected.gradients.names and got.fit.transform == expected.transform
    np.testing.assert_allclose(got.importance.drop, slot_importance(sample, seed=1).drop, rtol=1e-6, atol=1e-9)
    # What the page shows of it (top features) is not an input: the same job serves every choice.
    from nasviz.dashboard.explorer.interpretation import interpret_fit
    assert interpret_fit(got.fit, top=3).top_positive == expected.top_positive
    jobs.submit([InterpretRequest(str(path), "nb201", "acc", 30, 1, cost_s=5.0)], "another", Limits())
    assert jobs.running() == {}


def test_the_result_cache_is_held_to_its_size_cap_dropping_the_least_recently_used(tmp_path):
    """Issue 47: ``explorer-cache/`` does not grow for the server's life. Results are real files in
    a real cache folder; reading one marks it used; past ``max_explorer_cache_mb`` the least
    recently used go first, the one just computed stays."""
    cache = tmp_path / "explorer-cache"
    jobs = JobManager(cache)
    requests = [KernelRequest("tw2g", "nb201", _strings(12, seed=s)) for s in range(4)]
    for r in requests:
        jobs.submit([r], "visitor", Limits(), background=False)
    sizes = {r.key: jobs.result_path(r.key).stat().st_size for r in requests}
    # Their last use: first the oldest, ... (file times as a day of visitors would leave them)
    for age, r in zip((400, 300, 200, 100), requests):
        t = time.time() - age
        os.utime(jobs.result_path(r.key), (t, t))
    assert jobs.cached(requests[0]) is not None  # the oldest is read again: now the most recent
    newest = KernelRequest("tw2g", "nb201", _strings(12, seed=9))
    cap_mb = (sizes[requests[0].key] + sizes[requests[3].key] + max(sizes.values()) + 10) / 1e6
    jobs.submit([newest], "visitor", Limits(max_explorer_cache_mb=cap_mb), background=False)
    kept = {p.name.split(".")[0] for p in cache.glob("*.npz")}
    assert kept == {requests[0].key, requests[3].key, newest.key}
    assert sum(p.stat().st_size for p in cache.glob("*.npz")) <= cap_mb * 1e6
    assert jobs.cached(requests[1]) is None and jobs.cached(newest) is not None


def test_a_workers_result_that_takes_the_cache_over_its_cap_prunes_the_older_ones(tmp_path):
    cache = tmp_path / "explorer-cache"
    jobs = JobManager(cache)
    old = KernelRequest("tw2g", "nb201", _strings(12, seed=1))
    jobs.submit([old], "visitor", Limits(), background=False)
    t = time.time() - 60
    os.utime(jobs.result_path(old.key), (t, t))
    req = KernelRequest("wl", "nb201", _strings(12, seed=2))
    jobs.submit([req], "visitor", Limits(max_explorer_cache_mb=jobs.result_path(old.key).stat().st_size / 1e6))
    _wait(jobs, [req], "visitor")
    jobs.reap()
    assert [p.name for p in cache.glob("*.npz")] == [f"{req.key}.npz"]


def test_every_kind_of_request_shares_one_shape_and_its_job_file_gives_it_back(tmp_path):
    """Issue 49: the four requests are one base's kinds: the job file a worker reads rebuilds the
    same request, the estimate is neither in the file nor in the identity, and a table's file
    identity is part of the identity of the requests that read it."""
    from nasviz.jobs.export import ExportRequest
    from nasviz.jobs.interpret import InterpretRequest
    from nasviz.jobs.manager import KINDS, request_from_json
    from nasviz.jobs.request import JobRequest

    path = tmp_path / "table.csv"
    path.write_text("arch,acc\n")
    requests = [KernelRequest("wl", "nb201", _strings(3), cost_s=2.0),
                SurrogateRequest(str(path), "nb201", "acc", "tw2g", 15, 20, 2, 0, cost_s=3.0),
                InterpretRequest(str(path), "nb201", "acc", 30, 1, cost_s=4.0),
                ExportRequest("store.db", 3, "a-cell", 12.5, cost_s=5.0)]
    assert {type(r) for r in requests} == set(KINDS.values())
    for r in requests:
        assert isinstance(r, JobRequest) and r.label.startswith("the ")
        back = request_from_json(r.to_json())
        assert back == r and back.key == r.key and back.cost_s == 0.0 and "cost_s" not in r.to_json()
    before = [r.key for r in requests]
    os.utime(path, ns=(1, 1))  # the table changed: another input for the requests that read it
    assert [r.key == k for r, k in zip(requests, before)] == [True, False, False, True]
    with pytest.raises(TypeError):
        KernelRequest("wl", "nb201", _strings(3), 2.0)  # the estimate is named, never positional
