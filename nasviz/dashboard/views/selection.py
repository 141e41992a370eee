"""The architectures the latest step chose, drawn as graphs with their values."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nasviz.dashboard.views.base import View, ViewOutput

if TYPE_CHECKING:
    from nasviz.dashboard.watching import RunWatcher

#: Graphs drawn at most (the rest of a large batch is listed in the run's evaluations).
MAX_GRAPHS = 5


class SelectionView(View):
    """Graphs of the latest step's proposals (the space's drawable graph)."""

    def applies(self, run: "RunWatcher") -> str | None:
        if run.latest is None or not run.latest.proposals:
            return "No step has finished yet, so no architecture has been selected."
        return None

    def render(self, run: "RunWatcher", **choices: Any) -> ViewOutput:
        from nasviz import viz

        latest = run.latest
        if latest is None:  # applies() says why; nothing to draw
            return ViewOutput(caption=self.applies(run))
        space = run.space
        values = {r.arch: r.value for r in latest.results}
        charts = []
        for i, s in enumerate(latest.proposals[:MAX_GRAPHS]):
            v = values.get(s)
            title = f"value {v:.4g}" if v is not None else "failed"
            charts.append((f"chart_arch_{i}", viz.plot_architecture(space.parse(s), title)))
        caption = f"Step {latest.step}: the {len(latest.proposals)} architecture(s) chosen."
        return ViewOutput(charts, caption, columns=True)
