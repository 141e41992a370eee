"""Search page: configure a search, start it in the background, and watch it live.

The search runs in its own process (:mod:`nasviz.workers.search`); this page only reads the run
store. The run being watched is in the URL (``?run=ID``), so a reloaded tab finds it again. The
views are the registered ones (:data:`nasviz.components.VIEWS`), one tab each.
"""

from __future__ import annotations

import streamlit as st

from nasviz import viz
from nasviz.dashboard.engine import (
    counted, defaults, format_value, get_space, MAX_STEP_DELAY, model_never_fitted, parse_architecture, RUNNING,
    StoreError, TableError, UnknownRunError,
)
from nasviz.dashboard import forms, launching
from nasviz.dashboard.explain import explain_run_step
from nasviz.dashboard.sources import lookup_value
from nasviz.dashboard.ui import (adopt_from_url, current_space, literal, publish_to_url, resume_and_rerun, run_through_app,
                                 serve_settings, session_token, source, store_path, url_int, url_selectbox)
from nasviz.dashboard.views import views
from nasviz.dashboard.views.hyperparameters import bounds_message
from nasviz.dashboard.watching import RunWatcher
from nasviz.dashboard.text import chart, fill, plain

run_through_app()

#: Seconds between live refreshes.
REFRESH_SECONDS = 1.0

path = store_path()
src = source()
space = current_space()
limits = serve_settings().limits

st.title("Search")

# ------------------------------------------------------------------ which run this tab watches
if "run_id" not in st.session_state:
    try:  # a link's run id: ASCII digits within SQLite's range, else no run (never a traceback)
        st.session_state["run_id"] = url_int(st.query_params.get("run", ""))
    except ValueError:
        st.session_state["run_id"] = None
run_id: int | None = st.session_state["run_id"]


def attach(new_id: int | None) -> None:
    st.session_state["run_id"] = new_id
    if new_id is None:
        st.query_params.pop("run", None)
    else:
        st.query_params["run"] = str(new_id)


# ------------------------------------------------------------------ new search
def new_search_form() -> None:
    c1, c2, c3 = st.columns([1, 2, 1])
    metric = url_selectbox(c1, "Objective (metric to maximise)", src.metrics, key="metric", param="metric")
    strategy = forms.strategy_box(space, c2)
    batch_size = forms.batch_size_box(strategy, c3)
    options = forms.strategy_options(strategy, space, batch_size)
    c1, c2, c4, c3 = st.columns([1, 1, 1, 1])
    budget = c1.number_input("Budget (evaluations)", min_value=0, value=defaults.DEFAULT_BUDGET, step=10, key="budget",
                             help=f"At most {limits.max_budget:,} on this server.")
    seed = c2.number_input("Seed", min_value=0, value=defaults.DEFAULT_SEED, step=1, key="seed")
    # Teaching: a table search finishes in seconds; a pause after each step lets a class follow it.
    # On by default (the command line runs unpaced): a default search takes about two minutes.
    step_delay = c4.number_input("Pause after each step (s)", min_value=0.0, max_value=MAX_STEP_DELAY,
                                 value=defaults.PAGE_STEP_DELAY, step=0.5, key="step_delay",
                                 help="Slows the search down to a pace a class can follow; 0 runs it at full speed.")
    # The form's one check: the config Start launches, validated once (options parsed, combination checked).
    checked = launching.check_form(src, metric=metric, space=space, strategy=strategy, options=options, budget=budget,
                                   batch_size=batch_size, seed=seed, step_delay=float(step_delay))
    if checked.cannot_run:  # impossible combinations are named, never started
        st.error(fill("This combination cannot run: {}.", checked.cannot_run))
    never = model_never_fitted(strategy, options, int(budget))
    if never and not checked.cannot_run:  # it runs, but would show none of what the views are for
        st.warning(never, icon=":material/warning:")
    c3.write("")
    if c3.button("Start", type="primary", key="start", disabled=bool(checked.cannot_run)):
        try:
            if checked.config is None:
                raise checked.error or ValueError("the search's settings cannot be read")
            new_id = launching.start_run(path, checked.config, source=src, session=session_token(), limits=limits)
        except (ValueError, StoreError, TableError, OSError) as err:
            st.error(fill("Cannot start the search: {}", err))
        else:
            attach(new_id)
            launching.wait_for_first_evaluation(path, new_id)  # the redraw shows it (bounded: about 1 s)
            st.rerun()
    st.caption(limits.summary())


launching.prewarm(path)  # a worker ready before Start: the first evaluation comes seconds sooner
with st.expander("New search", expanded=run_id is None):
    if src is None:
        st.error(plain(st.session_state.get("source_error") or "Choose a data source in the sidebar."))
    else:
        new_search_form()

with st.expander("Inspect an architecture"):
    examples = get_space(space).examples
    text = st.text_input("Architecture string" + (f" (e.g. {literal(examples[0])})" if examples else ""), key="inspect")
    if text.strip():
        try:
            arch = parse_architecture(get_space(space), text, source="the architecture box")
        except ValueError as err:
            st.error(fill("Invalid architecture: {}", err))
        else:
            value = lookup_value(src, text, st.session_state.get("metric"))
            chart(st, viz.plot_architecture(arch, text if value is None else f"{text}  ->  {value:.4g}"),
                  key="chart_inspect")

# ------------------------------------------------------------------ the watched run
if run_id is None:
    st.info("Start a search above, or pick one on the Runs page.")
    st.stop()

watchers: dict[int, RunWatcher] = st.session_state.setdefault("watchers", {})
if run_id not in watchers:
    watchers[run_id] = RunWatcher(path, run_id)
watcher = watchers[run_id]
try:
    watcher.refresh()
except UnknownRunError:
    st.error(f"Run {run_id} is not in the store (deleted?).")
    attach(None)
    st.stop()

cfg = watcher.config
head, b1, b2, b3, b4 = st.columns([3, 1, 1, 1, 1.6])  # room for the toggle's label at 1280 px
head.subheader(fill("Run {}: {}", run_id, watcher.name or watcher.strategy))
if b1.button("Stop", key="stop", disabled=watcher.status != RUNNING):
    launching.request_stop(path, run_id)
    st.toast("Stop requested: the search stops after its current step.")
if b2.button("Resume", key="resume", disabled=watcher.status in (RUNNING, "finished")):
    resume_and_rerun(path, run_id)
if b3.button("Detach", key="detach"):
    attach(None)
    st.rerun()
paused = b4.toggle("Pause view", key="paused", help="Freeze the view; the search itself goes on.")
skipped = cfg.get("skipped_rows") or {}
if skipped.get("count"):
    with st.expander(f"{counted(skipped['count'], 'bad row')} of the table were skipped"):
        st.text("\n".join(skipped["first"]) + ("\n..." if skipped["count"] > len(skipped["first"]) else ""))
live_every = REFRESH_SECONDS if watcher.status == RUNNING else None


def render(w: RunWatcher) -> None:
    plan = w.search.run
    progress = viz.get_progress_info(w.status, w.steps, budget=plan.budget, pause=plan.step_delay,
                                     n_evaluations=len(w.evaluations), decimals=w.decimals, shown=w.shown)
    st.progress(progress.fraction)
    m1, m2, m3, m4, m5 = st.columns(5)
    m1.metric("Step", progress.step)
    m2.metric("Evaluations", f"{progress.n_evaluations} / {progress.budget}")
    m3.metric("Elapsed", viz.format_seconds(w.elapsed()))
    # wall clock per step, the pause included (it once read 6 ms during a 2 s pause)
    m4.metric("Time per step", viz.step_time_text(progress),
              help=viz.step_time_detail(progress) if progress.seconds_per_step is not None else None)
    m5.metric("Best", format_value(progress.best_value, w.decimals))
    st.caption(f"Status: {progress.status_line}" + (" · view paused (the search goes on)"
                                                     if st.session_state.get("paused") else ""))
    if w.error:
        st.error(fill("The search failed: {}", w.error))
    fit = w.last_fit()
    if fit is not None and fit.bounds_hit:
        st.warning(bounds_message(fit), icon=":material/warning:")
    shown = step_shown(w)
    replayed = shown.steps[-1].step if shown is not w and shown.steps else None
    chart(st, viz.plot_history(w.evaluations, w.optimum(), metric=w.search.objective.metric or "value",
                               minimise=w.direction == "minimise", marked_step=replayed, decimals=w.decimals),
          key="chart_history")
    explain(shown)
    registered = views()
    titles = [title for _, title, _ in registered]
    adopt_from_url("tab", "view_tab", allowed=titles)  # a shared link opens on its tab
    # Lazy tabs: only the open tab's view is computed on a refresh (the pool embedding and the
    # heatmaps need kernel distances; the others are cheap).
    tabs = st.tabs(titles, key="view_tab", on_change="rerun")
    publish_to_url("tab", st.session_state.get("view_tab") or titles[0])
    for tab, (_, _, view) in zip(tabs, registered):
        if tab.open:
            with tab:
                forms.show_view(view, shown)


def step_shown(w: RunWatcher) -> RunWatcher:
    """Teaching: the views show the newest step, or any past step chosen on the slider, as it was
    then (:meth:`RunWatcher.at_step`); the history marks it. While the search runs, "Follow the
    newest step" (off) brings the slider; once it has ended the slider is there at once."""
    steps = [s.step for s in w.steps]
    if len(steps) < 2:
        return w
    c1, c2 = st.columns([2, 3])
    if w.status == RUNNING:
        follow = c1.toggle("Follow the newest step", value=True, key="follow_latest",
                           help="Off: replay any past step of the run with the slider.")
        if follow:
            c2.caption(f"Showing step {steps[-1]} (the newest).")
            return w
    else:
        c1.caption("Replay any step of the run: move the slider (the history marks the step).")
    chosen = c2.select_slider("Step shown", options=steps, value=steps[-1], key="replay_step")
    return w if chosen == steps[-1] else w.at_step(int(chosen))


def explain(w: RunWatcher) -> None:
    """The "what happened in this step" panel (:func:`nasviz.dashboard.explain.explain_step`)."""
    if not w.steps:
        return
    with st.expander(f"What happened in step {w.steps[-1].step}", expanded=True):
        for line in explain_run_step(w):
            st.markdown(line)


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


live_view()
