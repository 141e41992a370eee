"""WL feature gradients of the run's GP (paper 002 Eq. 3.2): which sub-structures push the
predicted value up or down, from the newest step that reported them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nasviz.dashboard.views.base import View, ViewOutput, no_model

if TYPE_CHECKING:
    from nasviz.dashboard.watching import RunWatcher

#: Features drawn on each side (most positive, most negative).
TOP = 10


class FeatureGradientView(View):
    """The :class:`~nasviz.state.FeatureGradients` a step's state carries (WL kernels only)."""

    def applies(self, run: "RunWatcher") -> str | None:
        if run.features is not None and run.features.features:
            return None
        if not run.has_model:
            return no_model(run, "there are no WL feature gradients")
        fit = run.last_fit()
        if fit is None:
            return "No WL feature gradients yet: they come with the first GP fit after the initial random design."
        kernel = fit.kernel or run.model_kernel or "another kernel"
        return f"WL feature gradients are shown when the search uses the WL kernel; this run's GP reported none ({kernel})."

    def render(self, run: "RunWatcher", **choices: Any) -> ViewOutput:
        from nasviz import viz

        fg = run.features
        fig = viz.plot_feature_gradients(list(fg.features), list(fg.gradients), TOP, depths=list(fg.depths))
        return ViewOutput([("chart_wl_gradients", fig)],
                          f"Mean derivative of the GP mean with respect to each WL feature's count, depth h = {fg.h}.")
