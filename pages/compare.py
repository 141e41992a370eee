"""Compare runs: best-so-far / regret vs evaluations, cumulative cost or wall clock (mean ± standard
error across seeds), final
regret table, distribution of final values, parallel coordinates of the evaluated architectures
(spaces with operation slots); launch a study (strategies × seeds) in the background; export
every figure's data as CSV; two runs side by side, step by step."""

from __future__ import annotations

import streamlit as st

from nasviz import viz
from nasviz.dashboard.engine import RUNNING, RunStore, StoreError, counted, strategies_for, TableError
from nasviz.dashboard import launching
from nasviz.dashboard.explorer import comparison
from nasviz.dashboard.sidebyside import two_runs
from nasviz.dashboard.ui import (run_through_app, runs_or_stop, serve_settings, session_token, source, store_path,
                                 url_int, url_multiselect)
from nasviz.dashboard.text import chart, fill, plain

run_through_app()

path = store_path()
limits = serve_settings().limits
st.title("Compare runs")
src = source()


def study_form() -> None:
    c1, c2, c3, c4 = st.columns([2, 1, 1, 1])
    names = strategies_for(src.space)
    strategies = c1.multiselect("Strategies", names, default=[s for s in ("random", "evolution") if s in names],
                                key="c_strategies", help=f"The strategies that can search the {src.space} space.")
    metric = c2.selectbox("Metric", src.metrics, key="c_metric")
    n_seeds = c3.number_input("Seeds", min_value=0, max_value=20, value=3, key="c_seeds")
    budget = c4.number_input("Budget", min_value=0, value=50, step=10, key="c_budget",
                             help=f"At most {limits.max_budget:,} per run on this server.")
    st.caption(f"A study starts one search per strategy and seed, all at once: at most {limits.max_study_runs} "
               f"runs, and they count towards the {limits.max_running_per_session} searches a browser session "
               f"may run at once ({limits.max_running_total} on the whole server).")
    if st.button("Launch", type="primary", key="c_launch"):
        try:
            if int(n_seeds) < 1:
                raise ValueError("the number of seeds must be at least 1")
            ids = launching.start_study(path, src, metric, strategies, list(range(int(n_seeds))), int(budget),
                                        session=session_token(), limits=limits)
        except (ValueError, StoreError, TableError, OSError) as err:
            st.error(fill("Cannot launch the study: {}", err))
        else:
            st.session_state["c_study"] = ids
            st.session_state["c_selected"] = ids  # compare the study's runs (the widget is drawn below)
            st.toast(f"Started {len(ids)} runs.")


with st.expander("Launch a study (strategies × seeds)", expanded=False):
    if src is None:
        st.error(plain(st.session_state.get("source_error") or "Choose a data source in the sidebar."))
    else:
        study_form()

store, runs = runs_or_stop(path, "No runs yet: launch a study above or start searches on the Search page.")
by_id = {r.id: r for r in runs}

study = [i for i in st.session_state.get("c_study", []) if i in by_id]
if study:
    @st.fragment(run_every=1.0 if any(by_id[i].status == RUNNING for i in study) else None)
    def study_progress() -> None:
        current = {r.id: r for r in RunStore(path).list_runs()}
        done = sum(current[i].n_evaluations for i in study if i in current)
        total = sum(current[i].budget or 0 for i in study if i in current)
        running = sum(current[i].status == RUNNING for i in study if i in current)
        st.progress(min(done / max(total, 1), 1.0),
                    text=f"Study: {done} / {total} evaluations, {counted(running, 'run')} still running")
        if running == 0 and any(by_id[i].status == RUNNING for i in study):
            st.rerun()  # finished: redraw the comparison once

    study_progress()

if "c_selected" in st.session_state:  # drop runs deleted since
    st.session_state["c_selected"] = [i for i in st.session_state["c_selected"] if i in by_id]
else:
    st.session_state["c_selected"] = comparison.default_selection(runs)
# A run's label names what does not change: its status and evaluation count would go stale in the
# picker's chips (the browser keeps a chip's text while its choice stays), so they are said below.
chosen = url_multiselect(st, "Runs", list(by_id), key="c_selected", param="runs", convert=url_int,
                        format_func=lambda i: f"{i}: {by_id[i].strategy} seed {by_id[i].seed}")
if not chosen:
    st.info("Pick runs to compare.")
    st.stop()
still = [i for i in chosen if by_id[i].status == RUNNING]
if still:
    st.caption(f"Still running: {', '.join(f'run {i} ({by_id[i].n_evaluations}/{by_id[i].budget})' for i in still)}; "
               "the curves are as of this page's last refresh.")
metrics = {by_id[i].metric for i in chosen}
if len(metrics) > 1:
    st.error(fill("The chosen runs optimise different metrics ({}): pick runs of one.", ", ".join(sorted(map(str, metrics)))))
    st.stop()
try:
    curves = comparison.run_curves(path, chosen)
except ValueError as err:
    st.error(plain(err))
    st.stop()
has_optimum = all(c.optimum is not None for c in curves)
regret = st.toggle("Regret (optimum − best so far)", value=has_optimum, disabled=not has_optimum, key="c_regret",
                   help=None if has_optimum else "Live-training runs have no known optimum.")
regret = bool(regret and has_optimum)
axis = st.radio("x axis", list(viz.X_AXES), format_func=viz.X_AXES.get, horizontal=True, key="c_axis",
                help="Evaluations count every evaluation at any budget; cumulative cost adds what they cost (on a "
                     "table in full evaluations: a lookup at the full budget is one, NAS-Bench-201's 12-epoch lookup "
                     "12/200; in live training the seconds trained), so a multi-fidelity search's cheap evaluations "
                     "count for little; wall clock is the time since each run started.")
chart(st, viz.plot_curves(curves, regret, axis), key="chart_curves")
finals = viz.final_table(curves)
st.dataframe(finals, hide_index=True, key="c_final_table")
# One above the other: the parallel coordinates need the page's width (one axis per slot).
left = right = st.container()
chart(left, viz.plot_final_values(curves), key="chart_final_values")
space, why_not = comparison.parallel_space(curves)
slots = comparison.slot_axes(curves, space)  # None when why_not says why
n_evaluations = sum(len(c.values) for c in curves)
if why_not:
    right.info(why_not)
elif not comparison.parallel_on_request(n_evaluations) or right.toggle(
        f"Parallel coordinates ({n_evaluations:,} evaluations)", key="c_parallel_on",
        help="One line per evaluated architecture, one axis per operation slot. Drawn on request for large "
             "comparisons: a thousand lines take the browser seconds to draw."):
    chart(right, viz.plot_parallel(curves, slots), key="chart_parallel")

d1, d2, d3 = st.columns(3)
d1.download_button("Curves (CSV)", data=viz.curves_table(curves, regret, axis).to_csv(index=False), file_name="nasviz-curves.csv",
                   mime="text/csv", key="c_dl_curves")
d2.download_button("Final values (CSV)", data=finals.to_csv(index=False), file_name="nasviz-final.csv",
                   mime="text/csv", key="c_dl_final")
d3.download_button("Evaluations (CSV)", data=viz.evaluations_table(curves, slots).to_csv(index=False),
                   file_name="nasviz-evaluations.csv", mime="text/csv", key="c_dl_evals")

st.subheader("Two runs side by side, step by step")
st.caption("For teaching: start two searches on the same seed that differ in one choice (two kernels, two batch "
           "selectors), then step through them together.")
if st.toggle("Show two runs side by side", key="sbs_on"):  # off by default: it reads two whole runs
    two_runs(path, by_id)
