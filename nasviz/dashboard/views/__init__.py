"""The Search page's views, one module each, registered in :data:`nasviz.components.VIEWS`.

============================  =====================================================
``pool``                      the step's candidate pool, embedded by the GP kernel
``hyperparameters``           the GP's learned hyperparameters over the steps
``distances``                 a kernel's distance components between the evaluations
``features``                  WL feature gradients of the GP (NAS-BOWL)
``selection``                 the architectures the last step chose
``evaluations``               every evaluation as a sortable, filterable table
``curves``                    learning curves (live training, or a table's epoch columns)
============================  =====================================================

The page builds one tab per registered view (:func:`views`), asks each whether it applies to
the watched run and draws it, or shows the one sentence saying why not.
"""

from __future__ import annotations

from nasviz.dashboard.views.base import Control, TableOutput, View, ViewOutput


def views() -> list[tuple[str, str, View]]:
    """``(name, tab title, view)`` of every registered view, in registry order."""
    from nasviz.components import VIEWS

    return [(e.name, str(e.capabilities.get("title", e.name)), VIEWS.create(e.name)) for e in VIEWS]


__all__ = ["Control", "TableOutput", "View", "ViewOutput", "views"]
