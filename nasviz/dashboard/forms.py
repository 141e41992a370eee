"""Streamlit widgets generated from the registries: the strategy and component select boxes, the
settings a strategy really takes, and a Search-page view drawn from its :class:`ViewOutput`.

Every choice offered fits the chosen space: strategies from
:func:`nasviz.components.strategies_for`, kernels from :func:`~nasviz.components.kernels_for`,
candidate pools whose needed representation the space provides, batch selectors whose
``min_batch`` the batch size meets. A combination that cannot run anyway (an option changed in
the settings) is named by :func:`nasviz.components.problems` before anything starts.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

import streamlit as st

from nasviz import defaults
from nasviz.components import (BATCH_SELECTORS, DEFAULT_STRATEGY, KERNELS, POOLS, STRATEGIES, default_batch_size,
                               kernels_for, space_provides, strategies_for)
from nasviz.errors import ConfigError
from nasviz.registry import Entry, Option
from nasviz.dashboard.text import chart, plain

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from nasviz.dashboard.views.base import View
    from nasviz.dashboard.watching import RunWatcher

#: The strategy whose components the visitor chooses; the other model-based entries are presets
#: of it with their components fixed (``bo-wl-ei``: WL kernel, EI, gradient pool, top-k).
GENERIC = "bo"
#: Options drawn as one row of select boxes (when the strategy's entry lists them).
COMPONENTS = ("kernel", "acquisition", "pool", "batch")
#: Options not drawn in the settings: the batch size has its own box (the run's batch size; the
#: strategy option of that name only names a run and cannot be given beside it).
NOT_SETTINGS = frozenset({*COMPONENTS, "batch_size"})
#: The choice of a setting whose default the strategy decides itself.
DEFAULT = "(strategy's default)"
#: Strategies offered first, in this order: :data:`nasviz.components.DEFAULT_STRATEGY` (chosen
#: across every shared table against Optuna's samplers, docs/benchmarks.md); on spaces without categorical
#: parameters, which its Hamming factor reads (wired graphs, layer and CNN networks), paper 000's
#: ``bo-tw2g-ucb`` (the default before EI was measured), then NAS-BOWL's preset, then the generic
#: BO and random search.
PREFERRED = defaults.STRATEGY_PREFERENCE


def default_index(options: Sequence[str], preferred: Sequence[str]) -> int:
    return next((list(options).index(p) for p in preferred if p in options), 0)


def strategy_box(space: str, container: Any = st, key: str = "strategy") -> str:
    """A select box of the strategies that can search ``space``, described on hover."""
    names = strategies_for(space)
    return container.selectbox("Strategy", names, key=key, index=default_index(names, PREFERRED),
                               help="\n".join(f"- **{n}**: {STRATEGIES.get(n).description}" for n in names))


def component_choices(option: str, space: str, batch_size: int) -> list[str]:
    """The values of component ``option`` that fit ``space`` (and, for ``batch``, the batch size)."""
    if option == "kernel":
        return kernels_for(space)
    if option == "pool":
        return POOLS.names(lambda e: set(e.capabilities.get("needs", ())) <= space_provides(space))
    if option == "batch":
        return BATCH_SELECTORS.names(lambda e: batch_size >= int(e.capabilities.get("min_batch", 1)))
    return list(STRATEGIES.get(GENERIC).option(option).allowed())


def _describe(registry_of: str, name: str) -> str:
    registry = {"kernel": KERNELS, "pool": POOLS, "batch": BATCH_SELECTORS}.get(registry_of)
    return f"{name}: {registry.get(name).description}" if registry is not None and name in registry else name


def components_row(strategy: str, space: str, batch_size: int) -> dict[str, Any]:
    """One select box per component the strategy's entry takes: chosen for :data:`GENERIC`,
    shown fixed (disabled, with the preset's value) for a preset. Returns the chosen ones."""
    entry = STRATEGIES.get(strategy)
    shown = [o for o in COMPONENTS if entry.option(o) is not None]
    if not shown:
        fixed = entry.capabilities.get("kernel")
        if fixed:
            st.caption(f"GP kernel: {_describe('kernel', str(fixed))} (fixed by the strategy).")
        return {}
    defaults = entry.defaults()
    chosen: dict[str, Any] = {}
    for column, option in zip(st.columns(len(COMPONENTS)), shown):
        label = entry.option(option).help.capitalize()
        if strategy == GENERIC:
            options = component_choices(option, space, batch_size)
            chosen[option] = column.selectbox(label, options, key=option, index=default_index(options, [defaults[option]]),
                                              format_func=lambda n, o=option: _describe(o, n))
        else:
            value = str(defaults[option])
            column.selectbox(label, [value], key=f"{option}_{strategy}", disabled=True,
                             format_func=lambda n, o=option: _describe(o, n),
                             help=f"{strategy} fixes its {option}; choose '{GENERIC}' to pick your own.")
    return chosen


def _option_widget(option: Option, default: Any, key: str) -> Any:
    """One setting's widget, typed by the option's kind, starting at its default."""
    label = f"{option.name}: {option.help}"
    if option.kind == "bool":
        return st.checkbox(label, value=bool(default), key=key)
    if option.kind == "choice":  # no default: the strategy decides (random's init: the space's pool if any)
        allowed = ([DEFAULT] if default is None else []) + list(option.allowed())
        return st.selectbox(label, allowed, index=default_index(allowed, [str(default)]), key=key)
    low, high = _widget_range(option)
    if option.kind == "int":
        return st.number_input(label, value=int(default if default is not None else 1), step=1, key=key,
                               min_value=None if low is None else math.ceil(low),
                               max_value=None if high is None else math.floor(high))
    if option.kind == "float":
        return st.number_input(label, value=float(default if default is not None else 0.0), key=key, format="%.6g",
                               min_value=None if low is None else float(low),
                               max_value=None if high is None else float(high))
    return st.text_input(label + " (none: off)", value="none" if default is None else str(default), key=key)


def _widget_range(option: Option) -> tuple[float | None, float | None]:
    """The values a widget offers: the option's minimum and its page range together (the server
    checks the range again when the search starts)."""
    page_low, page_high = option.page_range or (None, None)
    lows = [v for v in (option.minimum, page_low) if v is not None]
    return (max(lows) if lows else None), page_high


def _changed(option: Option, value: Any, default: Any) -> bool:
    """Whether the visitor changed a setting (compared as the option's type: 1 is 1.0)."""
    if value == DEFAULT:
        return False
    try:
        return option.parse(value, "form") != (None if default is None else option.parse(default, "form"))
    except ConfigError:
        return True  # kept: the config's validation names it


def settings_expander(strategy: str) -> dict[str, Any]:
    """The strategy's own settings (its entry's options other than the components), starting at
    :meth:`Entry.defaults`; returns only those the visitor changed, as entered (the config's
    validation names a bad one)."""
    entry: Entry = STRATEGIES.get(strategy)
    options = [o for o in entry.options if o.name not in NOT_SETTINGS]
    if not options:
        return {}
    defaults = entry.defaults()
    changed: dict[str, Any] = {}
    with st.expander(f"Settings of {strategy} ({len(options)})"):
        for option in options:
            value = _option_widget(option, defaults.get(option.name), key=f"opt_{strategy}_{option.name}")
            if _changed(option, value, defaults.get(option.name)):
                changed[option.name] = value
    return changed


def strategy_options(strategy: str, space: str, batch_size: int) -> dict[str, Any]:
    """The form's options for ``strategy``: its components row and its changed settings."""
    options = components_row(strategy, space, batch_size)
    options.update(settings_expander(strategy))
    return options


def batch_size_box(strategy: str, container: Any = st) -> int:
    """Proposals per step; starts at what the strategy was designed for (5 for ``bo-tw2g-kdpp5``)."""
    return int(container.number_input("Batch size", min_value=0, value=default_batch_size(strategy), step=1,
                                      key=f"batch_size_{strategy}", help="Architectures proposed per step."))


# ----------------------------------------------------------------------------- views


def _control_values(view: "View", run: "RunWatcher", prefix: str = "") -> dict[str, Any]:
    controls = view.controls(run)
    values: dict[str, Any] = {}
    for column, control in zip(st.columns(max(len(controls), 1)), controls):
        if control.radio:
            values[control.key] = column.radio(control.label, list(control.options), index=control.index(),
                                               key=prefix + control.key, horizontal=True, help=control.help)
        else:
            values[control.key] = column.selectbox(control.label, list(control.options), index=control.index(),
                                                   key=prefix + control.key, help=control.help)
    return values


#: Charts per row of a grid (a narrow screen stacks Streamlit's columns, so a phone shows one per row).
CHARTS_PER_ROW = 4


def chart_grid(charts: Sequence[tuple[str, "go.Figure"]], key_prefix: str = "", per_row: int = CHARTS_PER_ROW) -> None:
    """``(key, figure)`` pairs side by side, at most ``per_row`` to a row of page columns."""
    for start in range(0, len(charts), per_row):
        row = charts[start:start + per_row]
        for column, (key, fig) in zip(st.columns(min(len(charts), per_row)), row):
            chart(column, fig, key=key_prefix + key)


def show_view(view: "View", run: "RunWatcher", key_prefix: str = "") -> None:
    """Draw ``view`` for ``run``: its controls and figures, or the one sentence why it does not apply.
    ``key_prefix`` keeps the widget keys of two runs drawn on one page apart."""
    reason = view.applies(run)
    if reason is not None:
        st.info(plain(reason, limit=2000))
        return
    output = view.render(run, **_control_values(view, run, key_prefix))
    if output.columns and output.charts:
        chart_grid(output.charts, key_prefix)
    else:
        for key, fig in output.charts:
            chart(st, fig, key=key_prefix + key)
    for table in output.tables:
        st.dataframe(table.frame, key=key_prefix + table.key, hide_index=True, width="stretch",
                     column_config={column: st.column_config.LinkColumn(column, display_text=text)
                                    for column, text in table.links.items()})
    if output.caption:
        st.caption(plain(output.caption, limit=2000))
