"""Learn: a short course in lessons (``nasviz/learn/lessons/*.toml``). Each is one screen of text,
one button that starts its searches (real worker processes, within the server's limits) or finds
the ones it started before, the one view to look at, and a takeaway whose numbers and figure are
computed from the runs just made (:mod:`nasviz.learn`)."""

from __future__ import annotations

import streamlit as st

from nasviz.dashboard.ui import (adopt_from_url, literal, publish_to_url, run_through_app, serve_settings,
                                 session_token, store_path)
from nasviz.dashboard.engine import (
    compute_takeaway, counted, find_lesson_runs, InputError, launch_lesson, load_lessons, RUNNING, RunStore, StoreError,
    view_target,
)
from nasviz.dashboard.text import chart, fill

run_through_app()

path = store_path()
st.title("Learn")
st.caption("Short lessons on what architecture search does and why. Each runs its own small searches "
           "(seconds to a minute), points at the one view that shows the idea, and proves its point with the "
           "numbers of the runs it just made.")

try:
    lessons = load_lessons()
except InputError as err:
    st.error(fill("A lesson file cannot be read: {}", err))
    st.stop()
by_id = {lesson.id: lesson for lesson in lessons}
adopt_from_url("lesson", "learn_lesson", allowed=list(by_id))  # a link opens its lesson
chosen = st.selectbox("Lesson", list(by_id), key="learn_lesson",
                      format_func=lambda i: f"{by_id[i].order}. {by_id[i].title}")
publish_to_url("lesson", chosen)
lesson = by_id[chosen]

st.subheader(f"{lesson.order}. {lesson.title}")
for paragraph in lesson.paragraphs:
    st.markdown(literal(paragraph))

# ------------------------------------------------------------------ the lesson's searches
made: dict = st.session_state.setdefault("learn_runs", {})
runs = made.get(lesson.id) or find_lesson_runs(lesson, path)
c1, c2 = st.columns([1, 2])
label = "Run this lesson" if runs is None else "Run it again"
if c1.button(label, key="learn_launch", type="primary" if runs is None else "secondary",
             help=f"Starts {counted(lesson.n_runs, 'search', 'searches')} in the background: "
                  + "; ".join(f"{r.label}, {r.budget} evaluations, {'seed' if len(r.seeds) == 1 else 'seeds'} {', '.join(map(str, r.seeds))}"
                              for r in lesson.runs)):
    try:
        made[lesson.id] = launch_lesson(lesson, path, session=session_token(), limits=serve_settings().limits)
    except (ValueError, StoreError, OSError) as err:
        st.error(fill("Cannot start the lesson's searches: {}", err))
    else:
        st.rerun()  # drawn again with its runs: the progress, then the takeaway
if runs is None:
    c2.caption(f"{counted(lesson.n_runs, 'search', 'searches')} on the embedded NAS-Bench-201 table"
               if all(r.source == "embedded" for r in lesson.runs) else f"{counted(lesson.n_runs, 'search', 'searches')}, trained live")
    st.stop()
c2.caption("Runs " + ", ".join(str(r.run_id) for r in runs) + " (on the Runs page as 'lesson "
           + lesson.id + " · ...').")


@st.fragment(run_every=1.0 if any(RunStore(path).get_run(r.run_id).status == RUNNING for r in runs) else None)
def takeaway_panel() -> None:
    """The takeaway once the runs have ended (kept for this session), their progress until then."""
    key = (lesson.id, tuple(r.run_id for r in runs))
    kept: dict = st.session_state.setdefault("learn_takeaways", {})
    takeaway = kept.get(key)
    if takeaway is None:
        with st.spinner("Reading the runs..."):
            takeaway = compute_takeaway(lesson, runs, path)
        if takeaway.ready:
            kept[key] = takeaway
    if not takeaway.ready:
        st.session_state["learn_was_running"] = True
        st.info(fill("Searching: {}", takeaway.waiting))
        return
    st.markdown("**Takeaway.** " + literal(takeaway.sentence(lesson.takeaway_text)))
    if takeaway.figure is not None:
        chart(st, takeaway.figure, key="learn_chart")
    if st.session_state.get("learn_was_running"):
        st.session_state["learn_was_running"] = False
        st.rerun()  # the view button below becomes useful: redraw once without the timer


takeaway_panel()

st.markdown("**Where to look.** " + literal(lesson.look))
if st.button("Open the view", key="learn_open"):
    target = view_target(lesson, runs)
    seen = st.session_state.setdefault("_url_seen", {})
    for param, value in target.query.items():  # the page takes the values below, not a stale link's
        seen[param] = value
    st.session_state.update(target.state)
    st.switch_page(target.page, query_params=target.query)
