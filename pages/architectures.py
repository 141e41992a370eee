"""Two architectures side by side: their graphs, every kernel's distance component by component,
OTMANN's transport plan (paper 001), TW's per-edge masses on the operation tree (paper 000), and
each one's neighbours with their table values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from nasviz import viz
from nasviz.dashboard.engine import get_space, kernels_for, parse_architecture, RunStore, StoreError, TableError
from nasviz.dashboard.explorer import pairs
from nasviz.dashboard.sources import current_table, lookup_value
from nasviz.dashboard.ui import (adopt_from_url, current_space, literal, publish_to_url, run_through_app,
                                 session_kernels, source, store_path, url_selectbox)
from nasviz.dashboard.text import chart, fill, shorten

run_through_app()

#: Neighbours listed per architecture (a layer network has hundreds; an NB201 cell 24).
MAX_NEIGHBOURS = 50
#: Pixels of the distance table (about ten rows; it scrolls).
DISTANCE_TABLE_HEIGHT = 320

st.title("Architectures")
src = source()
space = current_space()
SPACE = get_space(space)
try:
    table = current_table(src)
except (TableError, ValueError, OSError) as err:
    st.error(fill("Cannot read the table: {}", err))
    table = None
metric = None
if table is not None:
    metric = url_selectbox(st, "Metric", table.metrics, key="a_metric", param="metric")
    values = np.asarray(table.values[metric], dtype=float)
    ranked = np.argsort(np.where(np.isfinite(values), -values, np.inf), kind="stable")  # best first, missing last


def from_run(side: str) -> str | None:
    """An evaluated architecture of a run of this space, chosen in widgets (best first)."""
    runs = [r for r in RunStore(store_path()).list_runs() if r.search.space == space]
    if not runs:
        st.info(fill("No runs of the {} space in the store yet.", space))
        return None
    by_id = {r.id: r for r in runs}
    run_id = st.selectbox("Run", list(by_id), key=f"a_run_{side}", format_func=lambda i: f"{i}: {shorten(by_id[i].name, 120)}")
    evals = [e for e in RunStore(store_path()).evaluations(run_id) if e.status == "ok"]
    if not evals:
        st.info(f"Run {run_id} has no successful evaluation yet.")
        return None
    evals.sort(key=lambda e: -e.value)
    return st.selectbox("Evaluated architecture (best first)", [e.arch for e in evals], key=f"a_eval_{side}")


def choose(side: str, default_rank: int):
    """Widgets for one architecture; returns ``(arch, string)`` or ``(None, None)`` after an error.

    A link may name the architecture (``?a=<string>`` / ``?b=<string>``, e.g. from the Search
    page's evaluations table): it is shown as a typed string, and the URL keeps what is shown.
    """
    typed = f"typed {space} string"
    modes = (["rank in the table"] if table is not None else []) + [typed, "a run's evaluation"]
    param = side.lower()
    if st.query_params.get(param) and param not in st.session_state.get("_url_seen", {}):  # a link, first load
        st.session_state[f"a_mode_{side}"] = typed
    adopt_from_url(param, f"a_text_{side}")
    mode = st.radio(f"Architecture {side} from", modes, key=f"a_mode_{side}", horizontal=True)
    try:
        if mode == "rank in the table":
            rank = st.number_input(fill("Rank by {} (1 = best)", metric), min_value=1, max_value=len(table),
                                   value=min(default_rank, len(table)), key=f"a_rank_{side}")
            text = table.strings[int(ranked[int(rank) - 1])]
        elif mode == "a run's evaluation":
            text = from_run(side)
        else:
            example = f", e.g. {literal(SPACE.examples[0])}" if SPACE.examples else ""
            text = st.text_input(fill("{} string", space) + example, key=f"a_text_{side}").strip() or None
            if text is None:
                st.info(f"Type architecture {side}.")
        if text is None:
            return None, None
        publish_to_url(param, text if mode == typed else None)
        return parse_architecture(SPACE, text, source=f"architecture {side}"), text
    except (ValueError, StoreError) as err:
        st.error(fill("Architecture {} is invalid: {}", side, err))
        return None, None


col_a, col_b = st.columns(2)
with col_a:
    a, text_a = choose("A", 1)
with col_b:
    # the median cell: a contrast with the best (rank 100 can share the best's class, 400 cells on digits)
    b, text_b = choose("B", len(table) // 2 + 1 if table is not None else 1)
if a is None or b is None:
    st.stop()

for col, arch, text, side in ((col_a, a, text_a, "A"), (col_b, b, text_b, "B")):
    value = lookup_value(src, text, metric)
    title = f"{side}: {text}" + ("" if value is None else f"  →  {metric} {value:.4g}")
    chart(col, viz.plot_architecture(arch, title), key=f"chart_graph_{side}")

st.subheader("Distances between A and B, component by component")
kernels = kernels_for(space)
# A scrolling table, not a static one: ~70 rows (every kernel's components) would fill the page.
st.dataframe(pd.DataFrame(pairs.pair_distances(kernels, a, b, space, session_kernels())), hide_index=True,
             height=DISTANCE_TABLE_HEIGHT, width="stretch", key="a_distances",
             column_config={"distance": st.column_config.NumberColumn("distance", format="%.4f")})

if "otmann" in kernels:
    st.subheader("OTMANN: where each layer's mass goes")
    st.caption("Layers of the reduced graphs (none removed, skip_connect bypassed); a layer's mass is its share of "
               "the computation. Mass left in the 'unassigned' row/column pays the non-assignment penalty.")
    chart(st, viz.plot_transport_plan(pairs.otmann_plan(a, b, space, session_kernels())), key="chart_plan")

tw = next((k for k in ("tw2g", "tw1g", "tw3g") if k in kernels), None)
if tw:
    st.subheader(f"TW ({tw}): which subtrees of the operation tree carry the distance")
    chart(st, viz.plot_tree_masses(pairs.tw_edge_masses(a, b, tw, space, session_kernels())), key="chart_tree")

st.subheader("Neighbours (one step away)")
n_a, n_b = st.columns(2)
for col, arch, side in ((n_a, a, "A"), (n_b, b, "B")):
    rows = pairs.neighbour_values(arch, table, metric, space)
    shown = f"the best {MAX_NEIGHBOURS} of " if len(rows) > MAX_NEIGHBOURS else ""
    col.caption(f"{shown.capitalize() or 'The '}{len(rows)} neighbours of {side}" + (fill(", by {}", metric) if metric else ""))
    # A dataframe shows strings as text (a static table read NB201's '~' as strike-through) and keeps
    # the short columns first, so the long architecture string cannot push the value off the page.
    col.dataframe(pd.DataFrame(rows[:MAX_NEIGHBOURS], columns=["arch", "change", "value"])[["value", "change", "arch"]],
                  hide_index=True, width="stretch", key=f"a_neighbours_{side}",
                  column_config={"value": st.column_config.NumberColumn(metric or "value", format="%.2f"),
                                 "change": st.column_config.TextColumn("change", width="medium"),
                                 "arch": st.column_config.TextColumn("architecture", width="large")})
