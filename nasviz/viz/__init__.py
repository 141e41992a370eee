"""Figure builders for the dashboard: plain data in, plotly figures out; no Streamlit here.

Each view is split as Optuna splits its plots: ``_get_*_info(data) -> small dataclass`` computes
what is drawn (tested without a browser), ``_get_*_plot(info) -> go.Figure`` draws it, and a
public ``plot_*`` does both. Large runs stay responsive: scatter traces are downsampled to
:data:`MAX_SCATTER_POINTS` and heatmaps capped at :data:`MAX_HEATMAP_SIZE`, with a note on the plot.
"""

from nasviz.viz._common import MAX_HEATMAP_SIZE, MAX_SCATTER_POINTS, empty_figure
from nasviz.viz._distances import DistanceMatrixInfo, heatmap_indices, plot_distance_matrices
from nasviz.viz._embedding import PoolInfo, classical_mds, plot_pool
from nasviz.viz._features import FeatureGradientInfo, plot_feature_gradients
from nasviz.viz._graph import GraphInfo, plot_architecture
from nasviz.viz._history import HistoryInfo, plot_history
from nasviz.viz._hyperparameters import HyperparameterInfo, plot_hyperparameters
from nasviz.viz._progress import ProgressInfo, format_seconds, get_progress_info

__all__ = [
    "DistanceMatrixInfo",
    "FeatureGradientInfo",
    "GraphInfo",
    "HistoryInfo",
    "HyperparameterInfo",
    "MAX_HEATMAP_SIZE",
    "MAX_SCATTER_POINTS",
    "PoolInfo",
    "ProgressInfo",
    "classical_mds",
    "empty_figure",
    "format_seconds",
    "get_progress_info",
    "heatmap_indices",
    "plot_architecture",
    "plot_distance_matrices",
    "plot_feature_gradients",
    "plot_history",
    "plot_hyperparameters",
    "plot_pool",
]
