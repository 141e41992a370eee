"""Streamlit helpers shared by the pages in ``pages/`` (the only nasviz module that imports Streamlit
besides the pages themselves; the engine and :mod:`nasviz.viz` never do)."""

from __future__ import annotations


def run_through_app() -> None:
    """Make sure a page runs inside ``app.py``'s navigation, with its sidebar.

    Streamlit treats a folder named ``pages/`` as its older multipage layout until ``app.py`` first
    calls ``st.navigation``: a browser whose first request after a server start goes straight to
    ``/runs`` would run that page file alone, without the shared sidebar. Call this first thing in
    every page: it switches the old mode off and reruns through ``app.py``.
    """
    import streamlit as st
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def runs_or_stop(store_path, empty_message: str) -> tuple:
    """``(store, runs)`` from the run store; on an unreadable store or no runs, say so and stop."""
    import streamlit as st

    from nasviz.store import RunStore, StoreError

    try:
        store = RunStore(store_path)
        runs = store.list_runs()
    except StoreError as err:
        st.error(f"Cannot open the run store {store_path}: {err}")
        st.stop()
    if not runs:
        st.info(empty_message)
        st.stop()
    return store, runs


def current_table_or_stop(source):
    """The table of the sidebar's data source (``None`` if it has none); an unreadable one stops the page."""
    import streamlit as st

    from nasviz import explore
    from nasviz.objectives import TableError

    try:
        return explore.current_table(source)
    except (TableError, ValueError, OSError) as err:
        st.error(f"Cannot read the table: {err}")
        st.stop()


def resume_and_rerun(store_path, run_id: int) -> None:
    """Resume a run in the background and rerun the page; show the reason if it cannot resume
    (a running-search limit included)."""
    import streamlit as st

    from nasviz import live
    from nasviz.store import StoreError

    try:
        live.resume_run(store_path, run_id, session=session_token(), limits=serve_settings().limits)
    except (ValueError, StoreError) as err:
        st.error(str(err))
    else:
        st.rerun()


def session_token() -> str:
    """A random id of this browser session (kept in its session state), stored with the runs it
    starts so the per-session limit on running searches can count them. A reload is a new
    session; the limit on all running searches holds across sessions."""
    import secrets

    import streamlit as st

    return st.session_state.setdefault("_nasviz_session", secrets.token_hex(16))


def serve_settings():
    """The operator's :class:`~nasviz.settings.ServeSettings`; a bad ``NASVIZ_*`` value stops
    the page with a message naming it."""
    import streamlit as st

    from nasviz.errors import InputError
    from nasviz.settings import ServeSettings

    try:
        return ServeSettings.from_env()
    except InputError as err:
        st.error(f"The server is misconfigured: {err}")
        st.stop()
