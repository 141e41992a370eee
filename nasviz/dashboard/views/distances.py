"""A kernel's distance components between the evaluated architectures, one heatmap each
(TW: operations, in-degree, out-degree, as in paper 000 Fig. 10)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nasviz.dashboard.kernels import distance_components, parse_archs
from nasviz.dashboard.views.base import Control, View, ViewOutput

if TYPE_CHECKING:
    from nasviz.dashboard.watching import RunWatcher

ORDERS = ("evaluation", "value")


class DistanceView(View):
    """Distance components of any kernel that can read the run's space (default: the run's own)."""

    def controls(self, run: "RunWatcher") -> list[Control]:
        from nasviz.components import kernels_for

        kernels = tuple(kernels_for(run.space_name))
        default = run.model_kernel if run.model_kernel in kernels else (kernels[0] if kernels else "")
        return [Control("view_kernel", "Kernel", kernels, default, help="Any kernel that can read this search space."),
                Control("dist_order", "Order", ORDERS, "evaluation", radio=True)]

    def applies(self, run: "RunWatcher") -> str | None:
        from nasviz.components import kernels_for

        if len(run.evaluations) < 2:
            return f"Distances need at least two evaluated architectures; this run has {len(run.evaluations)} so far."
        if not kernels_for(run.space_name):
            return f"No registered kernel can read the {run.space_name!r} space."
        return None

    def render(self, run: "RunWatcher", *, view_kernel: str = "", dist_order: str = "evaluation",
               **choices: Any) -> ViewOutput:
        from nasviz import viz

        kernel = view_kernel or self.controls(run)[0].default
        evals = list(run.evaluations)
        values = [e["value"] if e["status"] == "ok" else None for e in evals]
        idx = viz.heatmap_indices(values, dist_order, viz.MAX_HEATMAP_SIZE)
        strings = [evals[i]["arch"] for i in idx]

        def compute():
            return distance_components(run.kernels.get(kernel, run.space_name), parse_archs(strings, run.space_name))

        comps = run.memo(("dist", kernel, dist_order, len(evals)), compute)
        panels = viz.plot_distance_panels(comps, strings, [values[i] for i in idx], dist_order, n_total=len(evals))
        return ViewOutput([(f"chart_distances_{name}", fig) for name, fig in panels],
                          f"{kernel} distances, one panel per component; "
                          f"{viz.distance_note(len(strings), len(evals), dist_order)}. Dark = near, yellow = far; each "
                          f"component has its own colour bar (they differ in scale), and the diagonal is each "
                          f"architecture against itself (0).", columns=True)
