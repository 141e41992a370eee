"""Search page: configure a search, start it in the background, and watch it live.

The search runs in its own process (``nasviz.live``); this page only reads the run store. The run
being watched is in the URL (``?run=ID``), so a reloaded tab finds it again.
"""

from __future__ import annotations

import streamlit as st

from nasviz import live, viz
from nasviz.candidates import POOL_METHODS
from nasviz.batch import BATCH_METHODS
from nasviz.objectives import TableError
from nasviz.spaces import get_space, space_names
from nasviz.store import RUNNING, StoreError, UnknownRunError
from nasviz.strategies.factory import strategy_names

from nasviz.ui import resume_and_rerun, run_through_app, serve_settings, session_token

run_through_app()

#: Seconds between live refreshes.
REFRESH_SECONDS = 1.0
#: The live views, one tab each.
VIEWS = ["Candidate pool", "Hyperparameters", "Distances", "WL features", "Selected architectures"]
#: Architecture graphs drawn for the latest selection.
MAX_GRAPHS = 5

store_path = live.default_store_path()
source: live.DataSource | None = st.session_state.get("source")
limits = serve_settings().limits

st.title("Search")

# ------------------------------------------------------------------ which run this tab watches
if "run_id" not in st.session_state:
    wanted = st.query_params.get("run")
    st.session_state["run_id"] = int(wanted) if wanted and str(wanted).isdigit() else None
run_id: int | None = st.session_state["run_id"]


def attach(new_id: int | None) -> None:
    st.session_state["run_id"] = new_id
    if new_id is None:
        st.query_params.pop("run", None)
    else:
        st.query_params["run"] = str(new_id)


# ------------------------------------------------------------------ new search
def default_index(options: list[str], preferred: list[str]) -> int:
    return next((options.index(p) for p in preferred if p in options), 0)


with st.expander("New search", expanded=run_id is None):
    if source is None:
        st.error(st.session_state.get("source_error") or "Choose a data source in the sidebar.")
    else:
        strategies = strategy_names()
        kernels = live.available_kernels()
        spaces = space_names()
        c1, c2, c3, c4 = st.columns(4)
        space = c1.selectbox("Search space", spaces, key="space", index=default_index(spaces, ["nb201"]))
        metric = c2.selectbox("Objective (metric to maximise)", source.metrics, key="metric")
        # Default: the best strategy in `nasviz bench search` on both the embedded table and the
        # shared NB201 table (mean regret after 100 evaluations; README, "Search strategies").
        strategy = c3.selectbox("Strategy", strategies, key="strategy",
                                index=default_index(strategies, ["bo-wl-ei", "bo-tw2g-ucb", "bo", "random"]))
        generic = strategy == "bo"
        kernel = c4.selectbox("Kernel", kernels or ["(none available)"], key="kernel", disabled=not generic,
                              help="Used by the generic 'bo' strategy; named strategies fix their own kernel.")
        c1, c2, c3, c4 = st.columns(4)
        acquisition = c1.selectbox("Acquisition", ["ucb", "ei"], key="acquisition", disabled=not generic)
        pool = c2.selectbox("Candidate pool", list(POOL_METHODS), key="pool", disabled=not generic,
                            index=default_index(list(POOL_METHODS), ["evolution"]))
        batch = c3.selectbox("Batch selector", list(BATCH_METHODS), key="batch", disabled=not generic,
                             index=default_index(list(BATCH_METHODS), ["kdpp-quality"]))
        batch_size = c4.number_input("Batch size", min_value=0, value=live.preset_batch_size(strategy), step=1,
                                     key=f"batch_size_{strategy}", help="Architectures proposed per step.")
        c1, c2, c3 = st.columns([1, 1, 2])
        budget = c1.number_input("Budget (evaluations)", min_value=0, value=100, step=10, key="budget",
                                 help=f"At most {limits.max_budget:,} on this server.")
        seed = c2.number_input("Seed", min_value=0, value=0, step=1, key="seed")
        c3.write("")
        if c3.button("Start", type="primary", key="start"):
            options = live.strategy_options(strategy, kernel=kernel, acquisition=acquisition, pool=pool, batch=batch,
                                            batch_size=batch_size)
            try:
                config = live.make_config(source, metric=metric, space=space, strategy=strategy, options=options,
                                          budget=budget, batch_size=batch_size, seed=seed)
                new_id = live.start_run(store_path, config, session=session_token(), limits=limits)
            except (ValueError, StoreError, TableError, OSError) as err:
                st.error(f"Cannot start the search: {err}")
            else:
                attach(new_id)
                st.rerun()
        st.caption(limits.summary())

with st.expander("Inspect an architecture"):
    text = st.text_input("Architecture string (e.g. |nor_conv_3x3~0|+|skip_connect~0|none~1|+|...|)", key="inspect")
    if text.strip():
        try:
            arch = get_space(st.session_state.get("space", "nb201")).parse(text)
        except ValueError as err:
            st.error(f"Invalid architecture: {err}")
        else:
            value = live.lookup_value(source, text, st.session_state.get("metric"))
            st.plotly_chart(viz.plot_architecture(arch, text if value is None else f"{text}  ->  {value:.4g}"),
                            key="chart_inspect")

# ------------------------------------------------------------------ the watched run
if run_id is None:
    st.info("Start a search above, or pick one on the Runs page.")
    st.stop()

watchers: dict[int, live.RunWatcher] = st.session_state.setdefault("watchers", {})
if run_id not in watchers:
    watchers[run_id] = live.RunWatcher(store_path, run_id)
watcher = watchers[run_id]
try:
    watcher.refresh()
except UnknownRunError:
    st.error(f"Run {run_id} is not in the store (deleted?).")
    attach(None)
    st.stop()

cfg = watcher.config
head, b1, b2, b3, b4 = st.columns([4, 1, 1, 1, 1.4])
head.subheader(f"Run {run_id}: {watcher.run.get('name') or cfg.get('strategy')}")
if b1.button("Stop", key="stop", disabled=watcher.status != RUNNING):
    live.request_stop(store_path, run_id)
    st.toast("Stop requested: the search stops after its current step.")
if b2.button("Resume", key="resume", disabled=watcher.status in (RUNNING, "finished")):
    resume_and_rerun(store_path, run_id)
if b3.button("Detach", key="detach"):
    attach(None)
    st.rerun()
paused = b4.toggle("Pause view", key="paused", help="Freeze the view; the search itself goes on.")
skipped = cfg.get("skipped_rows") or {}
if skipped.get("count"):
    with st.expander(f"{skipped['count']:,} bad row(s) of the table were skipped"):
        st.text("\n".join(skipped["first"]) + ("\n..." if skipped["count"] > len(skipped["first"]) else ""))
live_every = REFRESH_SECONDS if watcher.status == RUNNING else None


@st.fragment(run_every=live_every)
def live_view() -> None:
    # The timer keeps ticking while paused (a fragment's timer is set by the browser); a paused
    # view simply does not read the store, so it holds still.
    if not st.session_state.get("paused"):
        was_running = watcher.status == RUNNING
        watcher.refresh()
        if was_running and watcher.status != RUNNING:
            st.rerun()  # finished or stopped: redraw the page once, without the timer
    render(watcher)


def render(w: live.RunWatcher) -> None:
    progress = viz.get_progress_info(w.run, w.steps, n_evaluations=len(w.evaluations))
    st.progress(progress.fraction)
    m1, m2, m3, m4, m5 = st.columns(5)
    m1.metric("Step", progress.step)
    m2.metric("Evaluations", f"{progress.n_evaluations} / {progress.budget}")
    m3.metric("Elapsed", viz.format_seconds(progress.elapsed))
    m4.metric("Time per step", viz.format_seconds(progress.seconds_per_step))
    m5.metric("Best", "-" if progress.best_value is None else f"{progress.best_value:.4g}")
    st.caption(f"Status: {progress.status_line}" + (" · view paused (the search goes on)"
                                                     if st.session_state.get("paused") else ""))
    if w.run.get("error"):
        st.error(f"The search failed: {w.run['error']}")

    st.plotly_chart(viz.plot_history(w.evaluations, w.optimum(), metric=cfg.get("metric", "value")), key="chart_history")

    kernel = live.run_kernel(cfg) or st.session_state.get("view_kernel")
    # Lazy tabs: only the open tab's view is computed on a refresh (the pool embedding and the
    # heatmaps need kernel distances; the others are cheap).
    t_pool, t_hp, t_dist, t_wl, t_arch = st.tabs(VIEWS, key="view_tab", on_change="rerun")
    latest = w.latest or {}
    if t_pool.open:
        with t_pool:
            view = live.pool_view(latest.get("strategy") or {})
            if view is None or kernel is None:
                st.info("This step has no candidate pool (random search, or the initial random design of BO).")
            else:
                st.plotly_chart(live.pool_figure(w, view, kernel), key="chart_pool")
                if view["qualities"] is not None:
                    st.caption(f"Batch selector: {view['batch_method']}; hover a point for its k-DPP quality.")
    if t_hp.open:
        with t_hp:
            st.plotly_chart(viz.plot_hyperparameters(w.steps), key="chart_hyperparameters")
    if t_dist.open:
        with t_dist:
            kernels = live.available_kernels()
            if not kernels:
                st.info("No kernel is available in this installation.")
            else:
                c1, c2 = st.columns(2)
                dist_kernel = c1.selectbox("Kernel", kernels, key="view_kernel",
                                           index=kernels.index(kernel) if kernel in kernels else 0)
                order = c2.radio("Order", ["evaluation", "value"], horizontal=True, key="dist_order")
                st.plotly_chart(live.distance_figure(w, dist_kernel, order), key="chart_distances")
    if t_wl.open:
        with t_wl:
            if kernel != "wl":
                st.info("WL feature gradients are shown when the search uses the WL kernel.")
            else:
                fig = live.feature_gradient_figure(w)
                if fig is None:
                    st.info("No WL feature gradients yet (they need a fitted GP).")
                else:
                    st.plotly_chart(fig, key="chart_wl_gradients")
    if t_arch.open:
        with t_arch:
            proposals = latest.get("proposals") or []
            if not proposals:
                st.info("No selection yet.")
            else:
                st.caption(f"Step {latest.get('step')}: the {len(proposals)} architecture(s) chosen.")
                cols = st.columns(min(len(proposals), MAX_GRAPHS))
                for i, (col, fig) in enumerate(zip(cols, live.selection_figures(w, MAX_GRAPHS))):
                    col.plotly_chart(fig, key=f"chart_arch_{i}")


live_view()
