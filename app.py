"""nasviz dashboard entry point: ``streamlit run app.py``.

Pages live in ``pages/``; this file sets up navigation and the sidebar every page shares: the data
source (embedded table, uploaded CSV, CSV or official NB201 file on the server, live training)
and the run store. The chosen source is ``st.session_state["source"]`` (a
:class:`nasviz.live.DataSource`) or ``None`` with the reason in ``st.session_state["source_error"]``.
"""

from __future__ import annotations

import streamlit as st

from nasviz import live
from nasviz.objectives import TableError

st.set_page_config(page_title="nasviz", page_icon=":material/hub:", layout="wide")

EMBEDDED = "Embedded default table"
UPLOAD = "Upload a CSV"
SERVER_CSV = "CSV on the server"
OFFICIAL = "Official NB201 file on the server"
TRAIN = "Live training"


def _use(source: live.DataSource | None, error: str | None = None) -> None:
    st.session_state["source"] = source
    st.session_state["source_error"] = error


def _table_source(load, label: str | None = None) -> None:
    """Load a table with ``load() -> (path, Table)``; report problems instead of raising."""
    try:
        path, table = load()
    except (TableError, ValueError, OSError) as err:
        _use(None, str(err))
        return
    _use(live.DataSource.from_table(path, table, label))


def data_source_sidebar() -> None:
    st.sidebar.header("Data")
    kinds = [EMBEDDED, UPLOAD, SERVER_CSV, OFFICIAL] + ([TRAIN] if live.trainer_available() else [])
    kind = st.sidebar.radio("Evaluate architectures with", kinds, key="source_kind")
    if kind == EMBEDDED:
        path = live.default_table_path()
        if path is None:
            _use(None, "No embedded table: data/nb201_digits.csv is missing and the shared NAS-Bench-201 table "
                       "was not found. Upload a CSV or give a path instead.")
        else:
            label = "NB201 on digits (embedded)" if path == live.EMBEDDED_TABLE else "NAS-Bench-201 (shared table)"
            _table_source(lambda: (path, live.table_from_path(path)), label)
    elif kind == UPLOAD:
        upload = st.sidebar.file_uploader("Benchmark table (CSV: arch + numeric metric columns)", type=["csv"],
                                          key="upload")
        if upload is None:
            _use(None, "Upload a CSV table to start.")
        else:
            _table_source(lambda: live.save_upload(upload.getvalue(), upload.name), upload.name)
    elif kind == SERVER_CSV:
        text = st.sidebar.text_input("Path of a CSV table on the server", key="server_csv")
        if not text.strip():
            _use(None, "Type the path of a CSV table on the server.")
        else:
            _table_source(lambda: (text.strip(), live.table_from_path(text.strip())))
    elif kind == OFFICIAL:
        text = st.sidebar.text_input("Path of NAS-Bench-201-v1_*.pth on the server", key="official_path")
        st.sidebar.caption("The official file is a pickle: it is read only from a path typed here, never "
                           "from an upload, and converted once into a CSV table.")
        converted = st.session_state.get("official_csv", {}).get(text.strip())
        if converted:
            _table_source(lambda: (converted, live.table_from_path(converted)), "NAS-Bench-201 (official file)")
        elif st.sidebar.button("Convert", key="convert_official", disabled=not text.strip()):
            try:
                with st.sidebar.status("Converting the official file (takes minutes)..."):
                    out = live.import_official_table(text.strip())
            except (TableError, ValueError, OSError) as err:
                _use(None, str(err))
            else:
                st.session_state.setdefault("official_csv", {})[text.strip()] = str(out)
                _table_source(lambda: (out, live.table_from_path(out)), "NAS-Bench-201 (official file)")
        else:
            _use(None, "Type the official file's path and press Convert.")
    else:
        datasets = live.training_datasets()
        dataset = st.sidebar.selectbox("Bundled dataset", datasets, key="train_dataset")
        st.sidebar.caption("Every architecture is trained for real: expect seconds per evaluation.")
        _use(live.DataSource("train", f"live training on {dataset}", dataset=dataset, metrics=["valid_accuracy", "test_accuracy"]))

    source, error = st.session_state.get("source"), st.session_state.get("source_error")
    if source is not None:
        st.sidebar.success(f"{source.label}" + (f": {source.rows:,} architectures" if source.rows else ""))
        if source.bad_rows:
            with st.sidebar.expander(f"{len(source.bad_rows)} bad row(s) skipped"):
                st.text("\n".join(source.bad_rows[:200]))
    elif error:
        st.sidebar.error(error)
    st.sidebar.caption(f"Runs are kept in {live.default_store_path().name}.")


pages = [
    st.Page("pages/search.py", title="Search", icon=":material/travel_explore:", default=True),
    st.Page("pages/runs.py", title="Runs", icon=":material/list:"),
    st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
    st.Page("pages/kernels.py", title="Kernels", icon=":material/grid_on:"),
    st.Page("pages/architectures.py", title="Architectures", icon=":material/account_tree:"),
    st.Page("pages/interpretability.py", title="Interpretability", icon=":material/insights:"),
]
nav = st.navigation(pages)
data_source_sidebar()
nav.run()
