"""Explorer requests are costed before they start and refused with what fits (issue 47, finding 1)."""

from __future__ import annotations

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
