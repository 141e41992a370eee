"""Kernel explorer: each kernel's distance components on a sample, distance vs performance,
Auto-Keras kernel quality (paper 003 §5.4) and surrogate quality (paper 002 §5.1, Fig. 8)."""

from __future__ import annotations

import streamlit as st

from nasviz import viz
from nasviz.dashboard.engine import kernels_for, RunStore, StoreError, TableError
from nasviz.dashboard.explorer import kernels as kx
from nasviz.dashboard.explorer.samples import sample_run, sample_table
from nasviz.dashboard.forms import chart_grid
from nasviz.dashboard.ui import (adopt_from_url, current_table_or_stop, publish_to_url, run_through_app,
                                 serve_settings, source, stop_with, store_path,
                                 url_multiselect, url_number, url_int, url_selectbox)
from nasviz.dashboard.text import chart, fill, plain, shorten
from nasviz.dashboard.explorer import budget
from nasviz.dashboard.computing import computed
from nasviz.dashboard.engine import KernelRequest, KernelResult, SurrogateRequest

run_through_app()


def _kernel_cost(spec: str, space: str, strings: tuple[str, ...]) -> budget.KernelCost:
    """A kernel's measured cost on this space (on the request's first few architectures; once per
    kernel and space for the server's life, :func:`~nasviz.dashboard.explorer.budget.measured_in_child`)."""
    return budget.measured_in_child(spec, space, strings)  # in a child process: not the server's time


def _matrices(requests: list[KernelRequest]) -> dict[str, KernelResult]:
    """Each kernel's matrices (:func:`nasviz.dashboard.computing.computed`); stops the page until
    they are all there."""
    results = computed(requests, "k_matrices", "kernels")
    if results is None:
        st.stop()
    return {r.kernel: results[r.key] for r in requests}


st.title("Kernels")
src = source()
table = current_table_or_stop(src)

c1, c2, c3, c4 = st.columns([1.2, 1, 1, 1])
ORIGINS = {"table": "table sample", "run": "a run's evaluations"}  # URL value -> radio label
adopt_from_url("from", "k_origin", allowed=list(ORIGINS), convert=ORIGINS.__getitem__)
origin = c1.radio("Architectures from", list(ORIGINS.values()), horizontal=True, key="k_origin")
publish_to_url("from", next(k for k, v in ORIGINS.items() if v == origin))
n = url_number(c2, "Number of architectures N", min_value=2, max_value=1000, value=100, step=10, key="k_n", param="n")
seed = url_number(c3, "Seed", min_value=0, value=0, step=1, key="k_seed", param="seed")

try:
    if origin == "table sample":
        if table is None:
            stop_with(st.session_state.get("source_error") or "Choose a benchmark table in the sidebar "
                      "(live training has no table to sample).")
        metric = url_selectbox(c4, "Metric", table.metrics, key="k_metric", param="metric")
        sample = sample_table(table, metric, int(n), int(seed))
    else:
        runs = RunStore(store_path()).list_runs()
        if not runs:
            stop_with("No runs in the store yet: start one on the Search page, or sample the table.", "info")
        by_id = {r.id: r for r in runs}
        run_id = url_selectbox(c4, "Run", list(by_id), key="k_run", param="run", convert=url_int,
                              format_func=lambda i: f"{i}: {shorten(by_id[i].name, 120)} ({by_id[i].n_evaluations} evals)")
        metric = by_id[run_id].metric or "value"
        evals = RunStore(store_path()).evaluations(run_id)
        sample = sample_run(evals, metric, int(n), by_id[run_id].search.space, f"run {run_id}")
except (ValueError, StoreError, TableError) as err:
    stop_with(str(err))

space = sample.space
offered = kernels_for(space)
if "k_kernels" in st.session_state:  # a sample of another space: keep the kernels that can read this one
    st.session_state["k_kernels"] = [k for k in st.session_state["k_kernels"] if k in offered]
chosen = url_multiselect(st, "Kernels", offered, key="k_kernels", param="kernels",
                         help=f"The kernels that can read the {space} space.",
                         **({} if "k_kernels" in st.session_state else
                            {"default": [k for k in ("tw2g", "wl") if k in offered]}))
st.caption(fill("{} architectures from the {}, ordered by {} (best first; best {}, worst {}).", len(sample.archs),
                sample.source, metric, f"{sample.values[0]:.4g}", f"{sample.values[-1]:.4g}"))
if not chosen:
    stop_with("Choose at least one kernel.", "info")

strings = tuple(sample.strings)
# Bounded before it starts: the request's cost from each kernel's measured cost per pair on this space.
limits = serve_settings().limits
with st.spinner("Timing the kernels on a few architectures..."):
    costs = {spec: _kernel_cost(spec, space, strings) for spec in chosen}
refused = budget.refusal(budget.Estimate(costs, len(strings)), limits.max_explorer_seconds,
                         f"N = {len(strings)} with {', '.join(chosen)}",
                         budget.largest_n(costs, limits.max_explorer_seconds))
if refused:
    stop_with(refused)
results = _matrices([KernelRequest(spec, space, strings, cost_s=costs[spec].seconds(len(strings))) for spec in chosen])
distances = {spec: results[spec].distances for spec in chosen}
matrices = {spec: results[spec].gram for spec in chosen}

st.subheader("Distance matrices, per component")
st.caption("Rows and columns are the architectures ordered by performance, best first: a kernel that tracks "
           "performance shows dark (small-distance) blocks along the diagonal (cf. paper 000 Fig. 10).")
for spec in chosen:
    st.markdown(fill("**{}**: distance components, ordered by {} (best first)", spec, metric))
    chart_grid([(f"chart_dist_{spec}_{name}", fig) for name, fig in
                viz.plot_distance_panels(distances[spec], sample.strings, sample.values, order="value")])

st.subheader("Distance vs performance difference")
induced = {spec: kx.induced_distance(matrices[spec]) for spec in chosen}
st.caption("Each point is a pair of architectures: the distance the kernel induces with its default "
           "hyperparameters, sqrt(k(a,a) + k(b,b) − 2k(a,b)), against their difference in value.")
chart(st, viz.plot_distance_performance(induced, sample.values, metric), key="chart_dist_perf")

st.subheader("Kernel quality (Auto-Keras)")
chart(st, viz.plot_kernel_quality(matrices, sample.values), key="chart_quality")
st.caption("K with the kernel's default hyperparameters; P_ij = −|y_i − y_j|. Both are min-max scaled to [−1, 1] as in "
           "the paper, so a few outliers (e.g. diverged trainings) push most of P towards 1.")

st.subheader("Surrogate quality (NAS-BOWL §5.1)")
if table is None or table.space.name != space:
    stop_with("The surrogate protocol samples train and test sets from a table of this space: choose one in the "
              "sidebar.", "info")
s1, s2, s3, s4 = st.columns(4)
# Bounded like the other explorer inputs; the GPs are fitted in worker processes.
n_train = s1.number_input("Training architectures", min_value=1, max_value=500, value=50, step=10, key="k_train")
n_test = s2.number_input("Test architectures", min_value=1, max_value=1000, value=100, step=50, key="k_test")
trials = s3.number_input("Trials", min_value=1, max_value=50, value=5, key="k_trials")
s4.write("")
# per trial and kernel: a GP on the training architectures, fitted by ML-II, asked about the test ones
protocol = budget.Estimate(costs, int(n_train) + int(n_test), int(trials) * budget.FIT_FACTOR)
protocol_refused = budget.refusal(protocol, limits.max_explorer_seconds,
                                  f"{int(trials)} trials of {int(n_train)} + {int(n_test)} architectures with "
                                  f"{', '.join(chosen)}",
                                  budget.largest_n(costs, limits.max_explorer_seconds, protocol.repeats, int(n_test)),
                                  noun="training architectures")
if protocol_refused:
    s4.caption("Over this server's limit")
    st.info(plain(protocol_refused))
elif s4.button("Run the protocol", key="k_run_surrogate", type="primary"):
    st.session_state["k_surrogate_asked"] = [
        SurrogateRequest(str(src.path), space, metric, spec, int(n_train), int(n_test), int(trials), int(seed),
                         cost_s=protocol.seconds / len(chosen)) for spec in chosen]
asked = st.session_state.get("k_surrogate_asked")
if asked and src is not None and asked[0].table == str(src.path) and asked[0].metric == metric:
    # In worker processes like the matrices: a progress bar, Cancel, the result cached for everyone.
    results = computed(asked, "k_surrogate", "kernels")
    if results is not None:
        st.session_state["k_surrogate"] = {"key": (src.path, metric), "results": [results[r.key] for r in asked]}
        st.session_state.pop("k_surrogate_asked")
stored = st.session_state.get("k_surrogate")
if stored and stored["key"] == (src.path, metric):
    res = stored["results"]
    chart(st, viz.plot_surrogate_quality(res, metric), key="chart_surrogate")
    st.dataframe([{"kernel": r.kernel, "Spearman ρ (mean)": round(r.spearman_mean, 4),
                   "s.e.": round(r.spearman_se, 4), "95% interval coverage": round(r.coverage_95, 3),
                   "transform": r.transform} for r in res], hide_index=True, key="k_surrogate_table")
else:
    st.caption("Per trial: a GP (ML-II) is fitted on random training architectures and scored by Spearman's rank "
               "correlation of its posterior mean with the true values of random test architectures.")
