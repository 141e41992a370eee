"""The GP's learned hyperparameters over the steps (paper 000 Fig. 4: TW's lambda_1..3; WL's
depth; the GP's amplitude and noise), with the ones the last fit left on a bound named, and
those resting on a floor the strategy chose (the noise at ``min_noise``) and the kernel parts the
fit switched off (a component's rate at the low end of its box) named apart in plain words, without
the warning: their values are expected."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nasviz.dashboard.views.base import View, ViewOutput, no_model

if TYPE_CHECKING:
    from nasviz.dashboard.watching import RunWatcher
    from nasviz.state import GPFit


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
        if last is not None:
            caption = " ".join(m for m in (bounds_message(last), switched_off_message(last), floor_message(last))
                               if m) or None
        return ViewOutput([("chart_hyperparameters", viz.plot_hyperparameters(rows))], caption)


def _with_values(fit: "GPFit", names: tuple[str, ...]) -> str:
    """``"noise = 0.001, amplitude = 0.01"``: ``names`` with the values ``fit`` traces for them."""
    values = fit.traced()
    return ", ".join(f"{name} = {values[name]:.3g}" if name in values else name for name in names)


def bounds_message(fit: "GPFit") -> str | None:
    """One sentence naming the hyperparameters of ``fit`` that ended on a bound of their search
    box, with their values (None when none did). Shown as a warning above a run's views: the
    pool view and the batch choices of such a fit rest on values the data did not determine."""
    if not fit.bounds_hit:
        return None
    one = len(fit.bounds_hit) == 1
    return (f"The GP's last fit ({fit.n_observations} observations) left {_with_values(fit, fit.bounds_hit)} on a "
            f"bound of {'its' if one else 'their'} search box: the data do not pin {'it' if one else 'them'} down "
            f"yet, so the surrogate's view (pool, acquisition, batch) rests on "
            f"{'an arbitrary value' if one else 'arbitrary values'}.")


def floor_message(fit: "GPFit") -> str | None:
    """One sentence naming the hyperparameters of ``fit`` that rest on a floor the strategy chose
    (``GPFit.floors_hit``; None when none do). Not a warning: the data alone would have fitted a
    smaller value, and the floor keeps the GP from interpolating noisy measurements."""
    if not fit.floors_hit:
        return None
    one = len(fit.floors_hit) == 1
    return (f"The GP's last fit keeps {_with_values(fit, fit.floors_hit)} on the floor the strategy sets (for the "
            f"noise, `min_noise`): the data alone would fit {'a smaller value' if one else 'smaller values'}, and "
            "the floor stops the surrogate from trusting one noisy measurement per architecture as exact.")


def switched_off_message(fit: "GPFit") -> str | None:
    """One plain sentence naming the component rates the fit switched off (``GPFit.switched_off``;
    None when none): an expected outcome, shown in the Hyperparameters view, never as a warning.

    A rate ``l`` weighs a distance component in ``exp(-l x distance)``; at the low end of its box
    that factor is about 1 for every pair, so the GP predicts from the other components: the data
    say this one does not help (the default's Hamming factor on NAS-Bench-201, whose TW distance
    already separates the cells)."""
    if not fit.switched_off:
        return None
    one = len(fit.switched_off) == 1
    names = ", ".join(fit.switched_off)
    return (f"The GP switched {'this part' if one else 'these parts'} of its kernel off: {names} "
            f"{'sits' if one else 'sit'} at the smallest value allowed, so {'that distance' if one else 'those distances'} "
            f"no longer change{'s' if one else ''} the prediction. That is what the data say: the other parts of the "
            "kernel already tell the measured architectures apart. Nothing is wrong.")
