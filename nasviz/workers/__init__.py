"""Worker processes of the engine: what runs outside the Streamlit process.

* :mod:`.search`: ``python -m nasviz.workers.search`` runs one search to its end, writing every
  step to the run store (started by :mod:`nasviz.dashboard.launching`).

A worker never imports Streamlit; it talks to the dashboard only through the store.
"""
