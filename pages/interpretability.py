"""Interpretability (paper 002, NAS-BOWL): WL feature gradients of a GP fitted on a table sample,
mean gradient per operation vs its count next to the true values (Fig. 2), the most positive and
negative WL features drawn as small graphs, and how gradient-guided mutation would change an
architecture (spaces with operation slots)."""

from __future__ import annotations

import streamlit as st

from nasviz import viz
from nasviz.dashboard.explorer import interpretation as ix
from nasviz.dashboard.explorer.samples import sample_table
from nasviz.dashboard.ui import (current_table_or_stop, run_through_app, serve_settings, source,
                                 stop_with, url_number, url_selectbox)
from nasviz.dashboard.engine import get_space, OPERATION_SLOTS, parse_architecture
from nasviz.dashboard.text import chart, fill
from nasviz.dashboard.explorer import budget
from nasviz.dashboard.computing import computed
from nasviz.dashboard.engine import InterpretRequest, InterpretResult

run_through_app()


def _kernel_cost(spec: str, space: str, strings: tuple[str, ...]) -> budget.KernelCost:
    """A kernel's measured cost on this space (once per kernel and space for the server's life, shared
    with the Kernels page: :func:`~nasviz.dashboard.explorer.budget.measured_in_child`)."""
    return budget.measured_in_child(spec, space, strings)  # in a child process: not the server's time


st.title("Interpretability")
src = source()
table = current_table_or_stop(src)
if table is None:
    stop_with(st.session_state.get("source_error") or "Choose a benchmark table in the sidebar (the GP is fitted "
              "on a sample of it).")
space = table.space.name
has_slots = get_space(space).provides(OPERATION_SLOTS)

c1, c2, c3, c4 = st.columns(4)
metric = url_selectbox(c1, "Metric", table.metrics, key="i_metric", param="metric")
n = url_number(c2, "Architectures in the sample N", min_value=3, max_value=2000, value=200, step=50, key="i_n", param="n")
seed = url_number(c3, "Seed", min_value=0, value=0, step=1, key="i_seed", param="seed")
top = url_number(c4, "Top features", min_value=1, max_value=10, value=4, key="i_top", param="top")

key = (str(src.path), space, metric, int(n), int(seed))
if st.session_state.get("i_request", (None,))[0] != key:
    try:
        sample = sample_table(table, metric, int(n), int(seed))
        # Bounded before it starts: a WL GP fitted by ML-II on N (and, with operation slots, a slot-kernel GP
        # for the importances), from each kernel's measured cost per pair.
        limits = serve_settings().limits
        with st.spinner("Timing the kernels on a few architectures..."):
            costs = {"wl": _kernel_cost("wl", space, tuple(sample.strings))}
            if has_slots:  # the importances: a slot-kernel GP, then a prediction per slot and shuffle
                costs["slots"] = budget.importance_cost(_kernel_cost("slots", space, tuple(sample.strings)),
                                                        len(get_space(space).slot_names()), ix.IMPORTANCE_REPEATS)
        estimate = budget.Estimate(costs, len(sample.strings), budget.FIT_FACTOR)
        refused = budget.refusal(estimate, limits.max_explorer_seconds, f"A WL GP on N = {len(sample.strings)}",
                                 budget.largest_n(costs, limits.max_explorer_seconds, budget.FIT_FACTOR))
    except ValueError as err:
        stop_with(f"Cannot interpret this sample: {err}")
    if refused:
        stop_with(refused)
    # The fits run in a worker process (a progress bar, Cancel, the result cached for every visitor).
    st.session_state["i_request"] = (key, InterpretRequest(str(src.path), space, metric, int(n), int(seed),
                                                           cost_s=estimate.seconds))
request: InterpretRequest = st.session_state["i_request"][1]
if st.session_state.get("i_result", (None,))[0] != key:
    results = computed([request], "i_fit", "fits")
    if results is None:
        st.stop()
    st.session_state["i_result"] = (key, results[request.key])
result: InterpretResult = st.session_state["i_result"][1]
it = ix.interpret_fit(result.fit, top=int(top))
st.caption(f"GP with the WL kernel fitted by ML-II on {len(it.sample.archs)} architectures (depth h = {it.h}, "
           f"target transform {it.transform}, fit {it.fit_seconds:.2f} s); gradients d(mean)/d(feature count), "
           f"paper 002 Eq. 3.2, averaged over the same architectures.")

chart(st, viz.plot_operation_profile(it.profiles, metric), key="chart_profile")
st.caption("Architectures are reduced before the WL kernel reads them: zero operations ('none') are removed and "
           "identities ('skip_connect') bypassed, so only the other operations have node features.")

st.subheader("Most positive and most negative WL features")
fg = it.gradients
chart(st, viz.plot_feature_gradients(fg.names, fg.mean_gradient, int(top), depths=list(fg.depths)),
      key="chart_features")
for label, feats in (("Raise the prediction", it.top_positive), ("Lower the prediction", it.top_negative)):
    if not feats:
        continue
    st.markdown(f"**{label}**")
    cols = st.columns(len(feats))
    for j, (col, (name, g, depth)) in enumerate(zip(cols, feats)):
        chart(col, viz.plot_feature_graph(ix.parse_wl_feature(name), g), key=f"chart_feature_{label[:5]}_{j}")
        col.caption(fill("{} (WL iteration h = {})", name, depth))

st.subheader("Which operation slots matter")
if has_slots and result.importance is None:
    st.info("Slot importance shuffles the slots of at least 5 architectures: choose a larger N.")
elif has_slots:
    imp: ix.SlotImportance = result.importance
    chart(st, viz.plot_slot_importance(imp.slots, imp.drop, imp.se, imp.baseline), key="chart_importance")
    st.caption(f"Permutation importance on a surrogate: a GP with the slot kernel (one lengthscale per slot, "
               f"fitted by ML-II to the same sample) predicts the sample, and its predictions are ranked against "
               f"the true values (Spearman's rho {imp.baseline:.3f}); shuffling one slot's operations across the "
               f"sample and predicting again lowers that correlation by the bar's height (mean ± s.e. of "
               f"{imp.repeats} shuffles). A slot the GP ignores costs nothing. Like Optuna's parameter importances, "
               f"it describes the fitted model, not causes.")
else:
    st.info(fill("Slot importance shuffles one operation slot at a time, and architectures of the {} space have no "
                 "fixed slots; the WL feature gradients above say which operations matter.", space))

st.subheader("Gradient-guided mutation")
if not has_slots:
    stop_with(f"Gradient-guided mutation changes one operation slot at a time, and architectures of the {space} "
              f"space have no fixed slots.", "info")
default = it.sample.strings[len(it.sample.strings) // 2]
text = st.text_input(fill("Architecture ({} string); default: the sample's median architecture", space), value=default,
                     key="i_cell").strip()
try:
    cell = parse_architecture(get_space(space), text, source="the architecture box")
except ValueError as err:
    stop_with(f"Invalid architecture: {err}")
left, right = st.columns([1, 2])
chart(left, viz.plot_architecture(cell, text), key="chart_cell")
chart(right, viz.plot_mutation(ix.mutation_probabilities(cell, it.op_gradients, space)), key="chart_mutation")
st.caption("Slots holding operations with a negative mean gradient are the likeliest to be mutated, and they most "
           "likely become operations with a positive one (gradients standardised, then a sigmoid).")
