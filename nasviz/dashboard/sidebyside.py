"""Two runs side by side, step by step (teaching): the same step of each, with what happened in
it and any Search-page view, e.g. two kernels or two batch selectors started on the same seed.

Draws with Streamlit (like :mod:`nasviz.dashboard.forms`); the Compare page calls
:func:`two_runs`.
"""

from __future__ import annotations

import os
from typing import Mapping

import streamlit as st

from nasviz.dashboard import forms
from nasviz.dashboard.explain import explain_run_step
from nasviz.dashboard.views import views
from nasviz.dashboard.watching import RunWatcher
from nasviz.dashboard.text import fill
from nasviz.store import StoredRun


def _label(run: StoredRun) -> str:
    return f"{run.id}: {run.strategy} seed {run.seed} ({run.status})"


def two_runs(store_path: str | os.PathLike, runs_by_id: Mapping[int, StoredRun]) -> None:
    """Pick two runs and a step; draw that step of each side by side with the chosen view."""
    ids = list(runs_by_id)
    if len(ids) < 2:
        st.info("Side by side needs two runs in the store.")
        return
    c1, c2 = st.columns(2)
    left = c1.selectbox("Left run", ids, index=1, key="sbs_left", format_func=lambda i: _label(runs_by_id[i]))
    right = c2.selectbox("Right run", ids, index=0, key="sbs_right", format_func=lambda i: _label(runs_by_id[i]))
    pair = [RunWatcher(store_path, left).refresh(), RunWatcher(store_path, right).refresh()]
    if pair[0].space_name != pair[1].space_name:
        st.info(fill("The two runs search different spaces ({}, {}); their views are still drawn, but their "
                     "architectures cannot be compared directly.", pair[0].space_name, pair[1].space_name))
    common = sorted({s.step for s in pair[0].steps} & {s.step for s in pair[1].steps})
    if not common:
        st.info("The two runs have no step in common yet.")
        return
    step = st.select_slider("Step", options=common, value=common[-1], key="sbs_step") if len(common) > 1 else common[0]
    registered = views()
    title = st.radio("View", [t for _, t, _ in registered], horizontal=True, key="sbs_view")
    view = next(v for _, t, v in registered if t == title)
    for column, w, side in zip(st.columns(2), pair, ("l_", "r_")):
        shown = w if w.steps[-1].step == step else w.at_step(step)
        with column:
            st.markdown(fill("**Run {}: {}** (seed {})", w.run_id, w.strategy, w.search.run.seed))
            for line in explain_run_step(shown):
                st.markdown(line)
            forms.show_view(view, shown, key_prefix=f"sbs_{side}")
