"""What the dashboard's pages call: the flow from a data source to a watched run.

::

    sources     where evaluations come from (tables, uploads, server CSVs, live training)
       │  search_config(): one validated SearchConfig
    launching   start / stop / resume searches and studies, bounded by the server's limits
       │  python -m nasviz.workers.search: the search runs, writing typed step states
    watching    RunWatcher: reads new evaluations and StepStates incrementally
       │
    views       the Search page's registered views (nasviz.components.VIEWS)
    explorer    the Kernels, Architectures, Interpretability and Compare pages' computations

``kernels`` gives each browser session its own kernels; ``ui``, ``forms`` and ``sidebar`` are
the only modules here that import Streamlit. Nothing here imports benchmark code or unpickles.
"""
