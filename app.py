"""nasviz dashboard entry point: ``streamlit run app.py``.

Pages live in ``pages/``; this file sets up navigation and the sidebar every page shares: the data
source (embedded table, uploaded CSV, a CSV in the operator's data folder, live training) and the
run store. The chosen source is ``st.session_state["source"]`` (a :class:`nasviz.live.DataSource`)
or ``None`` with the reason in ``st.session_state["source_error"]``.

Nothing here unpickles: the official NAS-Bench-201 file is converted on the command line
(``python -m nasviz table import-nb201``). Server-side paths are offered only when the operator
named a data folder (``NASVIZ_DATA_DIR``), and only files inside it are read.
"""

from __future__ import annotations

import math
from pathlib import Path

import streamlit as st

from nasviz import live
from nasviz.errors import InputError
from nasviz.ui import serve_settings

st.set_page_config(page_title="nasviz", page_icon=":material/hub:", layout="wide")

EMBEDDED = "Embedded default table"
UPLOAD = "Upload a CSV"
SERVER_CSV = "CSV on the server"
TRAIN = "Live training"


def _use(source: live.DataSource | None, error: str | None = None) -> None:
    st.session_state["source"] = source
    st.session_state["source_error"] = error


def _uploaded_source(upload, settings) -> None:
    """The source of an uploaded file, saved and parsed once per file: a rerun (every click)
    reuses it as long as the stored copy exists."""
    kept = st.session_state.get("upload_source")
    if kept and kept[0] == upload.file_id and Path(kept[1].path).is_file():
        _use(kept[1])
        return
    try:
        path, table = live.save_upload(upload.getvalue(), upload.name, limits=settings.limits)
    except (InputError, OSError) as err:  # the visitor's own file: its text may be shown
        _use(None, str(err))
        return
    source = live.DataSource.from_table(path, table, upload.name)
    st.session_state["upload_source"] = (upload.file_id, source)
    _use(source)


def _server_source(text: str, settings) -> None:
    """A CSV in the operator's data folder; errors say where, never what the file contains."""
    try:
        path, table = live.server_table(text, settings=settings)
    except (InputError, OSError) as err:
        _use(None, str(err))
        return
    _use(live.DataSource.from_table(path, table, disclose=False))


def data_source_sidebar() -> None:
    settings = serve_settings()
    st.sidebar.header("Data")
    kinds = [EMBEDDED, UPLOAD] + ([SERVER_CSV] if settings.data_dir is not None else []) \
        + ([TRAIN] if live.trainer_available() else [])
    kind = st.sidebar.radio("Evaluate architectures with", kinds, key="source_kind")
    if kind == EMBEDDED:
        path = live.default_table_path()
        if path is None:
            _use(None, "No embedded table: data/nb201_digits.csv is missing and the shared NAS-Bench-201 table "
                       "was not found. Upload a CSV instead.")
        else:
            label = "NB201 on digits (embedded)" if path == live.EMBEDDED_TABLE else "NAS-Bench-201 (shared table)"
            try:
                _use(live.DataSource.from_table(path, live.table_from_path(path), label))
            except (InputError, OSError) as err:
                _use(None, str(err))
    elif kind == UPLOAD:
        upload = st.sidebar.file_uploader(
            "Benchmark table (CSV: arch + numeric metric columns)", type=["csv"], key="upload",
            max_upload_size=max(1, min(math.ceil(settings.limits.max_upload_mb), st.get_option("server.maxUploadSize"))),
            help=f"Up to {settings.limits.max_upload_mb:g} MB. Read as text; kept on the server under a random "
                 f"name and deleted when no running search needs it.")
        if upload is None:
            _use(None, "Upload a CSV table to start.")
        else:
            _uploaded_source(upload, settings)
    elif kind == SERVER_CSV:
        text = st.sidebar.text_input("Path of a CSV table in the data folder", key="server_csv",
                                     help="Relative to the folder the operator set (NASVIZ_DATA_DIR); "
                                          "files outside it are not read.")
        if not text.strip():
            _use(None, "Type the path of a CSV table in the server's data folder.")
        else:
            _server_source(text, settings)
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
