"""The GP's learned hyperparameters over the steps (paper 000 Fig. 4: TW's lambda_1..3; WL's
depth; the GP's amplitude and noise), with the ones the last fit left on a bound named."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nasviz.dashboard.views.base import View, ViewOutput, no_model

if TYPE_CHECKING:
    from nasviz.dashboard.watching import RunWatcher


class HyperparameterView(View):
    """Traces of :meth:`nasviz.state.GPFit.traced` over the steps that fitted a GP."""

    def applies(self, run: "RunWatcher") -> str | None:
        if run.last_fit() is not None:
            return None
        if not run.has_model:
            return no_model(run, "it has no hyperparameters to trace")
        return "No GP has been fitted yet: the first steps are the initial random design."

    def render(self, run: "RunWatcher", **choices: Any) -> ViewOutput:
        from nasviz import viz

        rows = [{"step": s.step, "strategy": {"hyperparameters": s.gp.traced()}} for s in run.steps if s.gp is not None]
        last = run.last_fit()
        caption = None
        if last is not None and last.bounds_hit:
            caption = (f"At the last fit {', '.join(last.bounds_hit)} sat on a bound of the search box: the data do "
                       f"not pin {'it' if len(last.bounds_hit) == 1 else 'them'} down yet.")
        return ViewOutput([("chart_hyperparameters", viz.plot_hyperparameters(rows))], caption)
