"""What every Search-page view is: a registered component that says whether it applies to a run
and, if it does, draws it.

A view reads a :class:`~nasviz.dashboard.watching.RunWatcher` only: the run's stored config,
its typed step states (:mod:`nasviz.state`) and its evaluations. Whether it applies is decided
from those and from the registries' capabilities (does the strategy fit a model, which kernels
read the space), never from a strategy's name; when it does not, :meth:`View.applies` says why
in one sentence, which the page shows instead of the view. Views build their figures with
:mod:`nasviz.viz` and never import Streamlit: the page draws :class:`ViewOutput`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

    from nasviz.dashboard.watching import RunWatcher


@dataclass(frozen=True)
class Control:
    """A setting the view asks the page for: a select box (or, ``radio=True``, a horizontal radio)
    with widget ``key``, one of ``options``, ``default`` first."""

    key: str
    label: str
    options: tuple[str, ...]
    default: str
    radio: bool = False
    help: str | None = None

    def index(self) -> int:
        return self.options.index(self.default) if self.default in self.options else 0


@dataclass
class TableOutput:
    """A table a view draws: ``frame`` under widget ``key``; ``links`` maps a column of
    addresses to the text its cells show."""

    key: str
    frame: "pd.DataFrame"
    links: dict[str, str] = field(default_factory=dict)


@dataclass
class ViewOutput:
    """What a view draws: ``charts`` as ``(widget key, figure)`` pairs, side by side when
    ``columns``, then ``tables``, and an optional ``caption`` under them."""

    charts: list[tuple[str, "go.Figure"]] = field(default_factory=list)
    caption: str | None = None
    columns: bool = False
    tables: list[TableOutput] = field(default_factory=list)


class View(ABC):
    """A Search-page view (registered in :data:`nasviz.components.VIEWS`)."""

    def controls(self, run: "RunWatcher") -> list[Control]:
        """The settings the page shows above the view (none by default)."""
        return []

    @abstractmethod
    def applies(self, run: "RunWatcher") -> str | None:
        """``None`` if the view has something to show for ``run``; else one sentence saying why not."""

    @abstractmethod
    def render(self, run: "RunWatcher", **choices: Any) -> ViewOutput:
        """The view's figures for ``run`` (only called when :meth:`applies` returned ``None``),
        with the page's values of :meth:`controls` by key."""


def no_model(run: "RunWatcher", what: str) -> str:
    """The sentence of a view that needs a surrogate model, for a strategy that fits none."""
    return f"The {run.strategy!r} strategy fits no surrogate model, so {what}."
