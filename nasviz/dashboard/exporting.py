"""What the Runs page offers for a trained run's best network: its kept weights at once, a
bounded retraining job in a worker process, or one sentence with the command that exports it.

Why a worker job and not the request: most runs keep no weights (only warm-starting strategies
need them), so exporting means training the network again, as long as one evaluation of the
search took; in the request that would hold the page (and one of the server's few CPUs) with no
way to stop it. As an explorer job (:class:`~nasviz.jobs.export.ExportRequest`) it runs at low
priority, shows progress, can be cancelled, is killed when the tab closes, and is held to the same
per-visitor and server-wide budgets as the Kernels page's work. A retraining longer than one
visitor's budget (``NASVIZ_MAX_EXPLORER_SECONDS``), or one whose time on this CPU is unknown (the
search trained on another device), is refused with the command that does it, which the
operator can run where its time is theirs to give.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from nasviz.dashboard.locations import STORE_ENV
from nasviz.jobs.export import ExportRequest
from nasviz.spaces import get_space
from nasviz.store import RunStore

#: A retraining is estimated at the search's own training time of the network times this: the
#: search may have warm-started it (fewer epochs than from scratch), and the export also traces
#: the network and scores it on the test split.
RETRAIN_MARGIN = 2.0


@dataclass(frozen=True)
class ExportPlan:
    """How the page exports a trained run's best network: ``kept`` (its weights are in the store:
    a download at once), else ``request`` (a retraining job within the budget), else ``refusal``
    (one sentence)."""

    kept: bool = False
    request: ExportRequest | None = None
    refusal: str | None = None


def export_command(run_id: int) -> str:
    """The command that exports run ``run_id``'s best network on the server. The store is named by
    the variable the server reads it from (or the default's place in the project folder): exact for
    the operator, and no server path shown to visitors."""
    where = '"$NASVIZ_STORE"' if os.environ.get(STORE_ENV) else "runs/nasviz.sqlite"
    return f"python -m nasviz export --store {where} {int(run_id)} --out nasviz-run-{int(run_id)}-network"


def plan_export(store_path: str | os.PathLike, run_id: int, max_seconds: float) -> ExportPlan:
    """The :class:`ExportPlan` of run ``run_id``'s best network under a per-visitor budget of
    ``max_seconds`` CPU seconds."""
    store = RunStore(store_path)
    run = store.get_run(run_id)
    best = run.best_arch
    if not best:
        return ExportPlan(refusal="This run has no successful evaluation, so there is no network to export.")
    space = get_space(run.search.space)
    key = space.format(space.parse(best))
    if store.has_network(run_id, key):
        return ExportPlan(kept=True)
    trained = [ev for ev in store.evaluations(run_id) if ev.arch == key and ev.status == "ok"]
    last = trained[-1] if trained else None
    device = str(((last.info if last is not None else None) or {}).get("device") or "cpu")
    if last is None or last.cost is None or not device.startswith("cpu"):
        return ExportPlan(refusal=f"This run did not keep its best network's weights and how long retraining it "
                                  f"takes on this server is not known (the search trained it on {device}): whoever "
                                  f"runs the server can export it with {export_command(run_id)}")
    seconds = RETRAIN_MARGIN * float(last.cost)
    if seconds > max_seconds:
        return ExportPlan(refusal=f"This run did not keep its best network's weights, and retraining it would take "
                                  f"about {seconds:.0f} s of CPU, more than the {max_seconds:.0f} s this server "
                                  f"allows per visitor: whoever runs the server can export it with "
                                  f"{export_command(run_id)}")
    return ExportPlan(request=ExportRequest(str(store_path), int(run_id), key, float(run.created), cost_s=seconds))
