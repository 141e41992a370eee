"""nasviz dashboard entry point: ``streamlit run app.py``."""

import streamlit as st

st.set_page_config(page_title="nasviz", layout="wide")
st.title("nasviz")
st.write("See neural architecture search work. The dashboard pages are being built.")
