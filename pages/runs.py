"""Runs page: every search in the run store; watch, stop, resume, delete, export, keep notes."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import streamlit as st

from nasviz.dashboard import launching
from nasviz.dashboard.computing import computed, is_cached
from nasviz.dashboard.exporting import plan_export
from nasviz.dashboard.ui import resume_and_rerun, run_through_app, runs_or_stop, serve_settings, url_int, url_selectbox
from nasviz.dashboard.ui import store_path as default_store
from nasviz.dashboard.watching import export_bytes
from nasviz.dashboard.engine import export_zip, MAX_NOTES_CHARS, run_direction, RUNNING, shown_value, StoreError
from nasviz.dashboard.text import fill, plain, public_config, shorten

run_through_app()

store_path = default_store()
st.title("Runs")

store, runs = runs_or_stop(store_path, "No runs yet: start one on the Search page.")


def _when(t: float | None) -> str:
    return dt.datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S") if t else ""


table = pd.DataFrame([{
    "id": r.id, "name": r.name, "status": r.status, "strategy": r.strategy, "metric": r.metric,
    "best value": shown_value(r.best_value, run_direction(r.config)),
    "evaluations": f"{r.n_evaluations} / {r.budget}",
    "created": _when(r.created), "updated": _when(r.updated),
    "notes": (r.notes[:60] + "…") if len(r.notes) > 60 else r.notes,
} for r in runs])
st.dataframe(table, hide_index=True, width="stretch", key="runs_table")
if st.button("Refresh", key="refresh"):
    st.rerun()

by_id = {r.id: r for r in runs}
# The picker names a run by what never changes: the browser keeps a select box's text until its
# choice changes, so a status in it still said "(stopped)" after Resume. The status is below.
run_id = url_selectbox(st, "Run", list(by_id), key="selected_run", param="run", convert=url_int,
                      format_func=lambda i: f"{i}: {shorten(by_id[i].name, 120)}")
run = by_id[run_id]
st.subheader(fill("Run {}: {}", run_id, run.name))
best_value = shown_value(run.best_value, run_direction(run.config))
best = "-" if best_value is None else f"{best_value:.4g}"
st.caption(fill("Status: {} · {}/{} evaluations · best {}", run.status, run.n_evaluations, run.budget, best)
           + (fill(" ({})", run.best_arch) if run.best_arch else ""))
if run.error:
    st.error(fill("Run {} failed: {}", run_id, run.error))

with st.form(key=f"notes_form_{run_id}", border=False):
    notes = st.text_area("Notes (kept with the run, shown in the table above)", value=run.notes,
                         max_chars=MAX_NOTES_CHARS, key=f"notes_{run_id}", height=90,
                         placeholder="What this run tried, what it showed, what to do next ...")
    if st.form_submit_button("Save notes"):
        try:
            store.set_notes(run_id, notes)
        except StoreError as err:
            st.error(plain(err))
        else:
            st.rerun()

c1, c2, c3, c4, c5, c6 = st.columns(6)
if c1.button("Watch", key="watch", type="primary"):
    st.session_state["run_id"] = run_id
    st.query_params["run"] = str(run_id)
    st.switch_page("pages/search.py", query_params={"run": str(run_id)})
if c2.button("Stop", key="stop_run", disabled=run.status != RUNNING):
    launching.request_stop(store_path, run_id)
    st.toast(f"Stop requested for run {run_id}.")
if c3.button("Resume", key="resume_run", disabled=run.status in (RUNNING, "finished")):
    resume_and_rerun(store_path, run_id)
confirm = c4.checkbox("Confirm delete", key="confirm_delete")
if c4.button("Delete", key="delete_run", disabled=not confirm):
    try:
        store.delete_run(run_id)
    except StoreError as err:
        st.error(plain(err))
    else:
        if st.session_state.get("run_id") == run_id:
            st.session_state["run_id"] = None
        st.session_state.pop("confirm_delete", None)
        st.rerun()


@st.cache_data(show_spinner=False, max_entries=16)
def _exported(path: str, run: int, fmt: str, updated: float | None) -> bytes:
    """A run's export, made once per version of the run (``updated``; tens of ms for a 100-step run)."""
    return export_bytes(path, run, fmt)


# The bytes are made when the page is drawn, not by a deferred callable: Streamlit drops a
# deferred download's id whenever the page reruns, and a click that still held the old id hung
# ("Deferred file ... not found"). Made here, the file's id is its content's hash, stable across reruns.
c5.download_button("Export CSV", data=_exported(str(store_path), run_id, "csv", run.updated),
                   file_name=f"nasviz-run-{run_id}.csv", mime="text/csv", key="export_csv")
c6.download_button("Export JSON", data=_exported(str(store_path), run_id, "json", run.updated),
                   file_name=f"nasviz-run-{run_id}.json", mime="application/json", key="export_json")

if run.search.objective.kind == "train":  # a trained run's best network (nasviz export)
    # Kept weights are exported at once; a retraining runs as a bounded worker job, never in this
    # request (nasviz/dashboard/exporting.py says why), or is refused with the command that does it.
    plan = plan_export(store_path, run_id, serve_settings().limits.max_explorer_seconds)
    if plan.refusal:
        st.info(plain(plan.refusal))
    elif plan.kept:
        st.download_button("Export best network (TorchScript + JSON)", data=lambda: export_zip(store_path, run_id),
                           file_name=f"nasviz-run-{run_id}-network.zip", mime="application/zip",
                           key="export_network", help="The trained weights the run kept, traced and scored")
    else:
        asked = plan.request if is_cached(plan.request) else st.session_state.get("r_export_asked")
        if not (asked and asked.key == plan.request.key) and st.button(
                f"Retrain the best network for download (about {plan.request.cost_s:.0f} s)", key="export_retrain",
                help="The run kept no weights: the network is trained again from the run's config in a worker "
                     "process (network.json says so)"):
            st.session_state["r_export_asked"] = asked = plan.request
        if asked and asked.key == plan.request.key:
            done = computed([asked], "r_export", "networks")
            if done is not None:
                st.download_button("Export best network (TorchScript + JSON)", data=done[asked.key],
                                   file_name=f"nasviz-run-{run_id}-network.zip", mime="application/zip",
                                   key="export_network")

with st.expander("Configuration"):
    st.json(public_config(run.config))
