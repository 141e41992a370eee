"""Figure builders for the dashboard: plain data in, plotly figures out; no Streamlit here.

Each view is split as Optuna splits its plots: ``_get_*_info(data) -> small dataclass`` computes
what is drawn (tested without a browser), ``_get_*_plot(info) -> go.Figure`` draws it, and a
public ``plot_*`` does both. Large runs stay responsive: scatter traces are downsampled to
:data:`MAX_SCATTER_POINTS` and heatmaps capped at :data:`MAX_HEATMAP_SIZE`, with a note on the plot.
"""

from nasviz.viz._common import MAX_HEATMAP_SIZE, MAX_SCATTER_POINTS, clear_of_toolbar, empty_figure
from nasviz.viz._curves import FidelityCurveInfo, LearningCurveInfo, plot_fidelity_curves, plot_learning_curves
from nasviz.viz._distances import DistanceMatrixInfo, distance_note, heatmap_indices, plot_distance_panels
from nasviz.viz._embedding import PoolInfo, classical_mds, plot_pool
from nasviz.viz._features import FeatureGradientInfo, plot_feature_gradients
from nasviz.viz._graph import GraphInfo, plot_architecture
from nasviz.viz._history import HistoryInfo, plot_history
from nasviz.viz._hyperparameters import HyperparameterInfo, plot_hyperparameters
from nasviz.viz._progress import ProgressInfo, StepProgress, format_seconds, get_progress_info, step_time_detail, step_time_text
from nasviz.viz._lesson import plot_growth, plot_lesson_bars, plot_lesson_steps, plot_prediction_check
from nasviz.viz._kernels import (DistancePerformanceInfo, KernelQualityInfo, SurrogateInfo, plot_distance_performance,
                                 plot_kernel_quality, plot_surrogate_quality, scale_to_unit)
from nasviz.viz._pair import TransportPlanInfo, TreeMassInfo, plot_transport_plan, plot_tree_masses
from nasviz.viz._interpret import (FeatureGraphInfo, MutationInfo, OperationProfileInfo, plot_feature_graph,
                                   plot_mutation, plot_operation_profile, plot_slot_importance)
from nasviz.viz._compare import (X_AXES, CurvesInfo, FinalValuesInfo, ParallelInfo, SlotAxes, best_so_far, curves_table, evaluations_table,
                                 final_table, plot_curves, plot_final_values, plot_parallel)

__all__ = [
    # explorer pages (kernels, architectures, interpretability, compare)
    "CurvesInfo", "DistancePerformanceInfo", "FeatureGraphInfo", "FinalValuesInfo", "KernelQualityInfo",
    "MutationInfo", "OperationProfileInfo", "ParallelInfo", "SurrogateInfo", "TransportPlanInfo", "TreeMassInfo",
    "X_AXES", "SlotAxes", "best_so_far", "curves_table", "evaluations_table", "final_table", "plot_curves", "plot_distance_performance", "plot_feature_graph",
    "plot_final_values", "plot_kernel_quality", "plot_mutation", "plot_operation_profile", "plot_parallel",
    "plot_surrogate_quality", "plot_transport_plan", "plot_tree_masses", "scale_to_unit",
    "DistanceMatrixInfo",
    "plot_slot_importance",
    "FidelityCurveInfo", "LearningCurveInfo",
    "plot_fidelity_curves", "plot_learning_curves",
    "FeatureGradientInfo",
    "GraphInfo",
    "HistoryInfo",
    "HyperparameterInfo",
    "MAX_HEATMAP_SIZE",
    "MAX_SCATTER_POINTS",
    "PoolInfo",
    "ProgressInfo",
    "StepProgress",
    "classical_mds",
    "clear_of_toolbar",
    "empty_figure",
    "format_seconds",
    "get_progress_info",
    "step_time_detail",
    "step_time_text",
    "heatmap_indices",
    "plot_architecture",
    "plot_distance_panels",
    "distance_note",
    "plot_feature_gradients",
    "plot_history",
    "plot_hyperparameters",
    "plot_pool",
    "plot_growth",
    "plot_lesson_bars",
    "plot_lesson_steps",
    "plot_prediction_check",
]
