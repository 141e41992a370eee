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
        if not (run.latest or {}).get("proposals"):
            return "No step has finished yet, so no architecture has been selected."
        return None

    def render(self, run: "RunWatcher", **choices: Any) -> ViewOutput:
        from nasviz import viz

        latest = run.latest or {}
        space = run.space
        values = {r["arch"]: r.get("value") for r in latest.get("results") or []}
        proposals = list(latest.get("proposals") or [])
        charts = []
        for i, s in enumerate(proposals[:MAX_GRAPHS]):
            v = values.get(s)
            title = f"value {v:.4g}" if isinstance(v, (int, float)) else "failed"
            charts.append((f"chart_arch_{i}", viz.plot_architecture(space.parse(s), title)))
        return ViewOutput(charts, f"Step {latest.get('step')}: the {len(proposals)} architecture(s) chosen.", columns=True)
