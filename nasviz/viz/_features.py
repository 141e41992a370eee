"""WL feature gradients: which sub-structures push the GP's prediction up or down (paper 002)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from nasviz.viz._common import OKABE_ITO, empty_figure


@dataclass
class FeatureGradientInfo:
    """The ``top`` most positive and most negative features; arrays of shape ``(k,)``."""

    positive: list[str]
    positive_gradients: np.ndarray
    negative: list[str]
    negative_gradients: np.ndarray
    n_features: int


def _get_feature_gradient_info(features: Sequence[str], gradients: Sequence[float], top: int = 10) -> FeatureGradientInfo:
    """Rank WL features by the derivative of the GP mean with respect to their count.

    ``features`` (n,) names, ``gradients`` (n,) e.g. the mean over the evaluated architectures
    of dmu/dphi (paper 002 Sec. 3.3). Zero gradients are neither positive nor negative.
    """
    g = np.asarray(gradients, dtype=float).reshape(-1)
    if g.shape[0] != len(features):
        raise ValueError(f"{g.shape[0]} gradients for {len(features)} features")
    if top < 1:
        raise ValueError(f"top must be at least 1, got {top}")
    g = np.where(np.isfinite(g), g, 0.0)
    order = np.argsort(-g, kind="stable")
    pos = [i for i in order[:top] if g[i] > 0]
    neg = [i for i in order[::-1][:top] if g[i] < 0]
    return FeatureGradientInfo([str(features[i]) for i in pos], g[pos], [str(features[i]) for i in neg], g[neg], len(features))


def _get_feature_gradient_plot(info: FeatureGradientInfo, height: int = 380) -> go.Figure:
    """Horizontal bars: positive features in blue (top), negative in vermillion (bottom): Okabe-Ito
    colours, told apart with every common colour-vision deficiency (red against green is not)."""
    if not info.positive and not info.negative:
        return empty_figure("no WL feature gradients in this step", height)
    names = info.negative[::-1] + info.positive[::-1]  # plotly draws the first bar at the bottom
    vals = np.concatenate([info.negative_gradients[::-1], info.positive_gradients[::-1]])
    colors = [OKABE_ITO["vermillion"] if v < 0 else OKABE_ITO["blue"] for v in vals]
    short = [n if len(n) <= 48 else n[:45] + "..." for n in names]
    # Names as axis labels beside the bars, not text inside them: Plotly shrinks in-bar text to
    # the bar's length, so short bars (small gradients) had unreadable labels.
    fig = go.Figure(go.Bar(x=vals, y=list(range(len(names))), orientation="h", marker_color=colors,
                           hovertext=names, hovertemplate="%{hovertext}<br>%{x:.4g}<extra></extra>"))
    fig.update_yaxes(tickvals=list(range(len(names))), ticktext=short, automargin=True, tickfont=dict(size=11))
    height = max(height, 24 * len(names) + 90)
    fig.update_layout(height=height, margin=dict(l=20, r=20, t=40, b=40), xaxis_title="d(GP mean)/d(feature count)",
                      title=dict(text=f"WL feature gradients (top of {info.n_features} features)", x=0))
    return fig


def depth_labelled(features: Sequence[str], depths: Sequence[int] | None) -> list[str]:
    """``"h=d: name"`` for each WL feature when its depth is known: the same unfolding tree can be
    a feature of two WL iterations (``input -> (output)`` at h = 1 and h = 2), two distinct
    features that would otherwise read alike. The depth goes first so a shortened bar label keeps it."""
    if not depths:
        return [str(f) for f in features]
    if len(depths) != len(features):
        raise ValueError(f"{len(depths)} depths for {len(features)} features")
    return [f"h={int(d)}: {f}" for f, d in zip(features, depths)]


def plot_feature_gradients(features, gradients, top: int = 10, depths: Sequence[int] | None = None) -> go.Figure:
    """WL feature gradient figure (see :func:`_get_feature_gradient_info`); ``depths`` (n,) the
    features' WL iterations, shown with their names when given."""
    return _get_feature_gradient_plot(_get_feature_gradient_info(depth_labelled(features, depths), gradients, top))
