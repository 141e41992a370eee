"""Explorer requests are costed before they start and refused with what fits (issue 47, finding 1)."""

from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import AppTest

from nasviz.dashboard.explorer import budget
from nasviz.errors import LimitError
from nasviz.settings import Limits


def test_the_largest_n_that_fits_agrees_with_brute_force():
    costs = {"a": budget.KernelCost(0.01, 0.001), "b": budget.KernelCost(0.0, 0.003)}
    for seconds in (0.05, 1.0, 60.0, 3600.0):
        n = budget.largest_n(costs, seconds)
        assert budget.Estimate(costs, n).seconds <= seconds < budget.Estimate(costs, n + 1).seconds
    assert budget.largest_n(costs, 0.0) == 0 and budget.pairs(1000) == 500_500


def test_a_ten_cpu_hour_request_is_refused_naming_the_kernel_and_what_fits():
    costs = {"rw": budget.KernelCost(0.0, 0.07), "tw2g": budget.KernelCost(1e-4, 1e-6)}  # rw on DARTS, measured
    estimate = budget.Estimate(costs, 1000)
    assert estimate.seconds == pytest.approx(500_500 * 0.070001 + 0.1)
    text = budget.refusal(estimate, 60.0, "N = 1000 with rw, tw2g", budget.largest_n(costs, 60.0))
    assert text.startswith("N = 1000 with rw, tw2g would take about 9.7 h of CPU here (rw alone 9.7 h)")
    assert text.endswith("per request: N = 40 fits with these kernels, or leave out rw.")
    assert budget.refusal(budget.Estimate(costs, 40), 60.0, "x") is None


def test_a_kernel_with_per_architecture_work_is_measured_apart_from_its_pairs(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(budget.time, "perf_counter", lambda: clock[0])

    def fake(n):  # a kernel costing 3 ms per architecture and 0.5 ms per pair, on a fake clock
        clock[0] += 0.003 * n + 0.0005 * budget.pairs(n)

    cost = budget.measure(fake)
    assert cost.per_arch == pytest.approx(0.003) and cost.per_pair == pytest.approx(0.0005)


def test_a_searchs_total_pause_is_capped():
    limits = Limits(max_pause_seconds=1800.0)
    limits.check_pause(1.0, 1000)  # the page's default pause, the largest budget: 17 min
    with pytest.raises(LimitError, match="a budget of 30 fits"):
        limits.check_pause(60.0, 1000)  # 16 h of one search slot


@pytest.mark.slow
def test_the_kernels_page_refuses_an_over_budget_link_before_computing(store_path, synthetic_table, monkeypatch):
    monkeypatch.setenv("NASVIZ_MAX_EXPLORER_SECONDS", "0.001")
    at = AppTest.from_file(str(budget.__file__).replace("nasviz/dashboard/explorer/budget.py", "app.py"),
                           default_timeout=120)
    at.query_params.update({"n": "300", "kernels": "tw2g,wl"})
    at.switch_page("pages/kernels.py").run()
    assert not at.exception, [e.value for e in at.exception]
    texts = [e.value.replace("\\", "") for e in at.error]
    assert any("N = 100" in t or "N = 300" in t for t in texts) and any("this server allows" in t for t in texts), texts
    assert not [c for c in at.get("plotly_chart")], "nothing is computed for a refused request"


def test_a_kernels_cost_is_timed_once_per_space_for_every_later_request(monkeypatch):
    """Issue 47: timing a kernel costs the request's own thread; the second request (another
    session, another page, several at once) reuses the first timing of that kernel on that space."""
    import threading

    monkeypatch.setattr(budget, "_MEASURED", {})
    monkeypatch.setattr(budget, "_MEASURING", {})
    calls = []

    def compute(n):
        calls.append(n)
        time.sleep(0.05)  # long enough for the threads below to ask at once

    threads = [threading.Thread(target=budget.kept, args=("wl", "nb201", lambda: budget.measure(compute), 100)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == list(budget.CALIBRATION_SIZES)  # one timing for four simultaneous requests
    first = budget.kept("wl", "nb201", lambda: budget.measure(compute), 100)
    assert budget.kept("wl", "nb201", lambda: budget.measure(lambda n: pytest.fail("timed again")), 30) == first
    budget.kept("wl", "darts", lambda: budget.measure(compute), 100)  # another space is another cost
    assert len(calls) == 2 * len(budget.CALIBRATION_SIZES)
    budget.kept("tw2g", "nb201", lambda: budget.measure(compute), 5)  # fewer architectures than it times: not kept
    budget.kept("tw2g", "nb201", lambda: budget.measure(compute), 5)
    assert len(calls) == 4 * len(budget.CALIBRATION_SIZES) and ("tw2g", "nb201") not in budget._MEASURED


@pytest.mark.slow
def test_the_interpretability_page_reuses_the_kernels_pages_timing(store_path, synthetic_table, monkeypatch):
    import streamlit as st

    from tests_app_helpers import APP, errors, use_server_csv

    st.cache_data.clear()
    monkeypatch.setattr(budget, "_MEASURED", {}, raising=False)
    monkeypatch.setattr(budget, "_MEASURING", {}, raising=False)
    timings = []
    measure = budget.measure_in_child
    monkeypatch.setattr(budget, "measure_in_child", lambda *a: timings.append(1) or measure(*a))
    for page, params in (("pages/kernels.py", {"n": "20", "kernels": "wl,slots"}),
                         ("pages/kernels.py", {"n": "30", "kernels": "wl,slots"}),
                         ("pages/interpretability.py", {"n": "20"})):
        at = use_server_csv(AppTest.from_file(APP, default_timeout=120), synthetic_table)  # a new session
        at.query_params.update(params)
        at.switch_page(page).run()
        assert not errors(at), errors(at)
        assert len(timings) == 2, page  # wl and slots, timed by the first request only


def test_the_slot_importance_estimate_covers_the_kernel_work_it_does():
    """The Interpretability job's estimate counts the slot importance's predictions (one n x n
    cross-covariance per slot and shuffle), not only its GP fit: counted in kernel entries here."""
    import numpy as np

    from nasviz.dashboard.explorer import interpretation as ix
    from nasviz.dashboard.explorer.samples import Sample
    from nasviz.dashboard.kernels import KernelSet
    from nasviz.spaces import get_space

    sp, n = get_space("nb201"), 40
    archs = sp.sample(np.random.default_rng(0), n)
    values = np.array([sum(o.startswith("nor") for o in sp.slots(a)) + 0.1 * i for i, a in enumerate(archs)])
    kernels = KernelSet()
    kernel = kernels.get("slots", "nb201")
    entries = []
    components = type(kernel).components

    def counted(self, a, b, *args, **kwargs):
        entries.append(len(a) * len(b))
        return components(self, a, b, *args, **kwargs)

    type(kernel).components = counted
    try:
        ix.slot_importance(Sample(archs, [sp.format(a) for a in archs], values, "acc", "t", "nb201"), kernels=kernels)
    finally:
        type(kernel).components = components
    one_matrix = budget.KernelCost(0.0, n * n / budget.pairs(n))  # a matrix of n costs n^2 entries
    cost = budget.importance_cost(one_matrix, len(sp.slot_names()), ix.IMPORTANCE_REPEATS)
    estimate = budget.Estimate({"slots": cost}, n, budget.FIT_FACTOR).seconds
    assert sum(entries) <= estimate <= 3 * sum(entries)



@pytest.mark.slow  # a child Python process
def test_a_kernel_is_timed_in_a_child_process_not_the_servers(monkeypatch):
    """Issue 47: timing a slow kernel (and importing POT, which imports torch) held the web
    server's interpreter for seconds while every visitor waited. The timing runs in a child."""
    import numpy as np

    from nasviz.spaces import nb201

    # nothing is timed in this process (the child has its own, untouched module)
    monkeypatch.setattr(budget, "measure", lambda *a, **k: pytest.fail("timed in the server's process"))
    strings = [nb201.format(a) for a in nb201.sample(np.random.default_rng(0), 8)]
    cost = budget.measure_in_child("otmann", "nb201", strings)
    assert 0 < cost.seconds(100) < np.inf
    with pytest.raises(ValueError, match="invalid"):
        budget.measure_in_child("otmann", "nb201", ["not a cell"] * 8)


@pytest.mark.slow  # child Python processes
def test_a_childs_first_call_is_not_counted_as_the_kernels_cost():
    """The child warms the kernel up before timing it: otherwise POT's import (seconds) was read
    as OTMANN's cost per architecture, and an ordinary request was refused as over budget."""
    import numpy as np

    from nasviz.spaces import nb201

    strings = [nb201.format(a) for a in nb201.sample(np.random.default_rng(1), 8)]
    cost = budget.measure_in_child("otmann", "nb201", strings)
    assert cost.seconds(8) < 1.0, cost  # a few ms per pair of small cells, not the import
