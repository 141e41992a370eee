"""Two architectures side by side: their graphs, every kernel's distance component by component,
OTMANN's transport plan (paper 001), TW's per-edge masses on the operation tree (paper 000), and
each one's neighbours with their table values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from nasviz import explore, live, viz
from nasviz.objectives import TableError
from nasviz.spaces import get_space
from nasviz.store import RunStore, StoreError

from nasviz.ui import run_through_app

run_through_app()

SPACE = get_space("nb201")
st.title("Architectures")
source = st.session_state.get("source")
try:
    table = explore.current_table(source)
except (TableError, ValueError, OSError) as err:
    st.error(f"Cannot read the table: {err}")
    table = None
metric = None
if table is not None:
    metric = st.selectbox("Metric", table.metrics, key="a_metric")
    values = np.asarray(table.values[metric], dtype=float)
    ranked = np.argsort(np.where(np.isfinite(values), -values, np.inf), kind="stable")  # best first, missing last


def choose(side: str, default_rank: int):
    """Widgets for one architecture; returns ``(arch, string)`` or ``(None, None)`` after an error."""
    modes = (["rank in the table"] if table is not None else []) + ["typed NB201 string", "a run's evaluation"]
    mode = st.radio(f"Architecture {side} from", modes, key=f"a_mode_{side}", horizontal=True)
    try:
        if mode == "rank in the table":
            rank = st.number_input(f"Rank by {metric} (1 = best)", min_value=1, max_value=len(table),
                                   value=min(default_rank, len(table)), key=f"a_rank_{side}")
            text = table.strings[int(ranked[int(rank) - 1])]
        elif mode == "typed NB201 string":
            text = st.text_input("NB201 string, e.g. |nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|"
                                 "skip_connect~0|nor_conv_3x3~1|skip_connect~2|", key=f"a_text_{side}").strip()
            if not text:
                st.info(f"Type architecture {side}.")
                return None, None
        else:
            runs = RunStore(live.default_store_path()).list_runs()
            if not runs:
                st.info("No runs in the store yet.")
                return None, None
            by_id = {r["id"]: r for r in runs}
            run_id = st.selectbox("Run", list(by_id), key=f"a_run_{side}",
                                  format_func=lambda i: f"{i}: {by_id[i]['name']}")
            evals = [e for e in RunStore(live.default_store_path()).evaluations(run_id) if e["status"] == "ok"]
            if not evals:
                st.info(f"Run {run_id} has no successful evaluation yet.")
                return None, None
            evals.sort(key=lambda e: -e["value"])
            text = st.selectbox("Evaluated architecture (best first)", [e["arch"] for e in evals], key=f"a_eval_{side}",
                                format_func=lambda s: f"{s}")
        arch = SPACE.parse(text)
    except (ValueError, StoreError) as err:
        st.error(f"Architecture {side} is invalid: {err}")
        return None, None
    return arch, text


col_a, col_b = st.columns(2)
with col_a:
    a, text_a = choose("A", 1)
with col_b:
    b, text_b = choose("B", 100)
if a is None or b is None:
    st.stop()

for col, arch, text, side in ((col_a, a, text_a, "A"), (col_b, b, text_b, "B")):
    value = live.lookup_value(source, text, metric)
    title = f"{side}: {text}" + ("" if value is None else f"  →  {metric} {value:.4g}")
    col.plotly_chart(viz.plot_architecture(arch, title), key=f"chart_graph_{side}")

st.subheader("Distances between A and B, component by component")
kernels = live.available_kernels()
rows = explore.pair_distances(kernels, a, b)
frame = pd.DataFrame(rows)
st.table(frame.set_index(["kernel", "component"]))

if "otmann" in kernels:
    st.subheader("OTMANN: where each layer's mass goes")
    plan = explore.otmann_plan(a, b)
    st.caption("Layers of the reduced graphs (none removed, skip_connect bypassed); a layer's mass is its share of "
               "the computation. Mass left in the 'unassigned' row/column pays the non-assignment penalty.")
    st.plotly_chart(viz.plot_transport_plan(plan), key="chart_plan")

tw = next((k for k in ("tw2g", "tw1g", "tw3g") if k in kernels), None)
if tw:
    st.subheader(f"TW ({tw}): which subtrees of the operation tree carry the distance")
    st.plotly_chart(viz.plot_tree_masses(explore.tw_edge_masses(a, b, tw)), key="chart_tree")

st.subheader("Neighbours (one edge changed)")
n_a, n_b = st.columns(2)
for col, arch, side in ((n_a, a, "A"), (n_b, b, "B")):
    nb = pd.DataFrame(explore.neighbour_values(arch, table, metric))
    col.caption(f"The {len(nb)} neighbours of {side}" + (f", by {metric}" if metric else ""))
    col.table(nb.set_index("arch"))
