"""Every evaluation of the run as a table: sort by any column, filter by status and by text, and
open any architecture on the Architectures page (its graph, distances and neighbours)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from nasviz.dashboard.views.base import Control, TableOutput, View, ViewOutput
from nasviz.table_schema import metric_heading

if TYPE_CHECKING:
    from nasviz.dashboard.watching import RunWatcher

#: The Architectures page's address (``st.Page``'s default path for ``pages/architectures.py``).
ARCHITECTURES_PAGE = "architectures"
SHOW = ("all", "ok", "failed")


def architecture_link(space: str, arch: str) -> str:
    """The relative address of the Architectures page showing ``arch`` (of ``space``) as A."""
    return f"{ARCHITECTURES_PAGE}?{urlencode({'space': space, 'a': arch})}"


class EvaluationView(View):
    """The run's evaluations (:meth:`RunWatcher.evaluations`) as one sortable table."""

    def controls(self, run: "RunWatcher") -> list[Control]:
        return [Control("eval_show", "Show", SHOW, "all", radio=True,
                        help="Evaluations that produced a value (ok) or failed; sort by clicking a column header, "
                             "search with the table's magnifier.")]

    def applies(self, run: "RunWatcher") -> str | None:
        return None if run.evaluations else "No evaluation has been stored yet."

    def render(self, run: "RunWatcher", **choices: Any) -> ViewOutput:
        import pandas as pd

        show = choices.get("eval_show", "all")
        rows = [e for e in run.evaluations if show == "all" or (e["status"] == "ok") == (show == "ok")]
        frame = pd.DataFrame({
            "#": [int(e["index"]) + 1 for e in rows],
            "step": [int(e["step"]) for e in rows],
            "architecture": [str(e["arch"]) for e in rows],
            metric_heading(run.search.objective.metric or "value", run.direction): [run.shown(e["value"]) for e in rows],
            "status": [e["status"] for e in rows],
            "error": [e.get("error") or "" for e in rows],
            "open": [architecture_link(run.space_name, str(e["arch"])) for e in rows],
        })
        shown = f"{len(rows):,} of {len(run.evaluations):,} evaluations"
        return ViewOutput(tables=[TableOutput("table_evaluations", frame, links={"open": "Architectures page"})],
                          caption=f"{shown}. 'open' shows an architecture's graph, its distances to another and "
                                  f"its neighbours on the Architectures page.")
