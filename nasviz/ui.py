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
