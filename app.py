"""nasviz dashboard entry point: ``streamlit run app.py``.

Pages live in ``pages/`` and call :mod:`nasviz.dashboard` thinly; this file sets up navigation and
the sidebar every page shares (:mod:`nasviz.dashboard.sidebar`): the search space and where
evaluations come from (the embedded table, an uploaded CSV, a CSV in the operator's data folder,
live training on a bundled dataset that fits the space).

Nothing here unpickles: the official NAS-Bench-201 file is converted on the command line
(``python -m nasviz table import-nb201``). Server-side paths are offered only when the operator
named a data folder (``NASVIZ_DATA_DIR``), and only files inside it are read.
"""

from __future__ import annotations

import streamlit as st

from nasviz.dashboard.sidebar import data_source_sidebar

st.set_page_config(page_title="nasviz", page_icon=":material/hub:", layout="wide")

pages = [
    st.Page("pages/search.py", title="Search", icon=":material/travel_explore:", default=True),
    st.Page("pages/learn.py", title="Learn", icon=":material/school:"),
    st.Page("pages/runs.py", title="Runs", icon=":material/list:"),
    st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
    st.Page("pages/kernels.py", title="Kernels", icon=":material/grid_on:"),
    st.Page("pages/architectures.py", title="Architectures", icon=":material/account_tree:"),
    st.Page("pages/interpretability.py", title="Interpretability", icon=":material/insights:"),
]
nav = st.navigation(pages)
data_source_sidebar()
nav.run()
