"""The least a Streamlit page with one Plotly figure can cost a browser: ``bench browser`` serves
this script beside the app and times it in a new tab, in the same run, as the floor that the
Compare page's figure cannot go under (Streamlit's bundle, then Plotly's, in a fresh tab)."""

import plotly.graph_objects as go
import streamlit as st

st.title("One figure")
st.plotly_chart(go.Figure(go.Scatter(y=[3.0, 1.0, 2.0])), key="chart_floor")
