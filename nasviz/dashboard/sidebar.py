"""The sidebar every page shares: the search space and where evaluations come from.

The chosen space is ``st.session_state["space"]``; the data source is
``st.session_state["source"]`` (a :class:`~nasviz.dashboard.sources.DataSource`), or ``None`` with
the reason in ``st.session_state["source_error"]``. Sources: an embedded NB201 table (NAS-Bench-201 CIFAR first), an
uploaded CSV, a CSV in the operator's data folder (only when ``NASVIZ_DATA_DIR`` names one), and
live training on every bundled dataset the space's networks accept. Nothing here unpickles.
"""

from __future__ import annotations

import math
from pathlib import Path

import streamlit as st

from nasviz import defaults
from nasviz.dashboard import sources
from nasviz.dashboard.locations import default_store_path
from nasviz.dashboard.ui import adopt_from_url, publish_to_url, serve_settings, session_token
from nasviz.errors import InputError
from nasviz.settings import ServeSettings
from nasviz.dashboard.text import plain
from nasviz.rounding import counted

EMBEDDED = "Embedded table"
UPLOAD = "Upload a CSV"
SERVER_CSV = "CSV on the server"
TRAIN = "Live training"
#: The space the embedded table's architectures belong to.
EMBEDDED_SPACE = "nb201"


def _use(source: sources.DataSource | None, error: str | None = None) -> None:
    st.session_state["source"] = source
    st.session_state["source_error"] = error


def _embedded_source(space: str) -> None:
    """One of the tables shipped in ``data/`` (:data:`nasviz.defaults.EMBEDDED_TABLES`), the
    NAS-Bench-201 CIFAR table first; the shared NAS-Bench-201 table when ``data/`` is missing."""
    if space != EMBEDDED_SPACE:
        _use(None, f"The embedded tables hold {EMBEDDED_SPACE} cells: for the {space} space upload a table or use "
                   f"live training.")
        return
    present = [t for t in defaults.EMBEDDED_TABLES if t.path.is_file()]
    if not present:
        path = sources.default_table_path()
        if path is None:
            _use(None, f"No embedded table: {defaults.DEFAULT_TABLE.name} is missing from data/ and the shared "
                       "NAS-Bench-201 table was not found. Upload a CSV instead.")
            return
        chosen = defaults.EmbeddedTable("NAS-Bench-201 (shared table)", path, "")
    else:
        labels = [t.label for t in present]
        label = st.sidebar.selectbox("Embedded table", labels, key="embedded_table",
                                     help="\n".join(f"- {t.label}: {t.about}" for t in present))
        chosen = present[labels.index(label)]
    try:
        _use(sources.DataSource.from_table(chosen.path, sources.table_from_path(chosen.path, space), chosen.label))
    except (InputError, OSError) as err:
        _use(None, str(err))


def _uploaded_source(upload, settings: ServeSettings, space: str) -> None:
    """The source of an uploaded file, saved and parsed once per file and space: a rerun (every
    click) reuses it as long as the stored copy exists."""
    kept = st.session_state.get("upload_source")
    if kept and kept[0] == (upload.file_id, space) and Path(kept[1].path).is_file():
        _use(kept[1])
        return
    try:
        path, table = sources.save_upload(upload.getvalue(), upload.name, space, limits=settings.limits,
                                          owner=session_token())
    except (InputError, OSError) as err:  # the visitor's own file: its text may be shown
        _use(None, str(err))
        return
    source = sources.DataSource.from_table(path, table, upload.name)
    st.session_state["upload_source"] = ((upload.file_id, space), source)
    _use(source)


def _server_source(text: str, settings: ServeSettings, space: str) -> None:
    """A CSV in the operator's data folder; errors say where, never what the file contains."""
    try:
        path, table = sources.server_table(text, space, settings=settings)
    except (InputError, OSError) as err:
        _use(None, str(err))
        return
    _use(sources.DataSource.from_table(path, table, disclose=False))


def _training_source(space: str) -> None:
    datasets = sources.training_datasets(space)
    if not datasets:
        _use(None, f"No bundled dataset fits the networks of the {space} space.")
        return
    dataset = st.sidebar.selectbox("Dataset", datasets, key="train_dataset",
                                   help="The datasets whose inputs this space's networks accept.")
    st.sidebar.caption("Every architecture is trained for real: expect seconds per evaluation.")
    folder = None
    if sources.is_folder_dataset(dataset):
        settings = serve_settings()
        if settings.data_dir is None:
            _use(None, f"The {dataset} dataset is read from a folder, and this server has no data folder (NASVIZ_DATA_DIR).")
            return
        text = st.sidebar.text_input(f"Folder of {dataset} in the data folder (torchvision's layout)",
                                     key="train_data_folder",
                                     help="Relative to the folder the operator set (NASVIZ_DATA_DIR); nothing is "
                                          "downloaded and folders outside it are not read.")
        if not text.strip():
            _use(None, f"Type the folder of {dataset} in the server's data folder.")
            return
        try:
            folder = sources.dataset_folder(text, settings)
        except (InputError, OSError) as err:
            _use(None, str(err))
            return
    _use(sources.DataSource.training(dataset, space, folder))


def _space_box() -> str:
    from nasviz.components import SPACES

    names = SPACES.names()
    adopt_from_url("space", "space", allowed=names)  # a shared link names its space
    space = st.sidebar.selectbox("Search space", names, key="space", index=names.index("nb201") if "nb201" in names else 0,
                                 help="\n".join(f"- **{n}**: {SPACES.get(n).description}" for n in names))
    publish_to_url("space", space)
    st.sidebar.caption(SPACES.get(space).description)
    return space


def _skipped_plugins() -> None:
    """Load plugins in this (the server's) process, once; those that could not be loaded are
    listed in one place, one line each, as plain text (never a traceback: the server's log has
    the same lines)."""
    from nasviz.components import load_plugins

    skipped = load_plugins()
    if skipped:
        with st.sidebar.expander(f"{len(skipped)} plugin(s) could not be loaded and are skipped"):
            st.text("\n".join(str(p) for p in skipped))


def data_source_sidebar() -> None:
    """Draw the sidebar and set ``space``, ``source`` and ``source_error`` in the session state."""
    settings = serve_settings()
    _skipped_plugins()
    st.sidebar.header("Data")
    space = _space_box()
    kinds = [EMBEDDED, UPLOAD] + ([SERVER_CSV] if settings.data_dir is not None else []) \
        + ([TRAIN] if sources.trainer_available() else [])
    kind = st.sidebar.radio("Evaluate architectures with", kinds, key="source_kind")
    if kind == EMBEDDED:
        _embedded_source(space)
    elif kind == UPLOAD:
        upload = st.sidebar.file_uploader(
            "Benchmark table (CSV: arch + numeric metric columns)", type=["csv"], key="upload",
            max_upload_size=max(1, min(math.ceil(settings.limits.max_upload_mb), st.get_option("server.maxUploadSize"))),
            help=f"Up to {settings.limits.max_upload_mb:g} MB. Read as text; kept on the server under a random "
                 f"name and deleted when no running search needs it.")
        if upload is None:
            _use(None, "Upload a CSV table to start.")
        else:
            _uploaded_source(upload, settings, space)
    elif kind == SERVER_CSV:
        text = st.sidebar.text_input("Path of a CSV table in the data folder", key="server_csv",
                                     help="Relative to the folder the operator set (NASVIZ_DATA_DIR); "
                                          "files outside it are not read.")
        if not text.strip():
            _use(None, "Type the path of a CSV table in the server's data folder.")
        else:
            _server_source(text, settings, space)
    else:
        _training_source(space)
    _show_source()


def _show_source() -> None:
    source, error = st.session_state.get("source"), st.session_state.get("source_error")
    if source is not None:
        st.sidebar.success(plain(source.summary()))
        if source.bad_rows:
            count = source.bad_row_count
            with st.sidebar.expander(f"{counted(count, 'bad row')} skipped"):
                more = count - len(source.bad_rows)
                st.text("\n".join(source.bad_rows) + (f"\n... and {more:,} more" if more > 0 else ""))
    elif error:
        st.sidebar.error(plain(error))
    st.sidebar.caption(f"Runs are kept in {default_store_path().name}.")
