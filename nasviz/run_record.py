"""The store side of a search: the run's row, its lease, its heartbeat and what it already holds.

:func:`nasviz.runner.run_search` persists through one :class:`RunRecord`: it creates or claims
the run, loads the stored steps a resume replays, beats the heartbeat in a background thread,
commits each step's evaluations (before the strategy hears of them), keeps and restores the
trained weights a strategy needs after a resume, writes snapshots and the final status. Every
write carries the lease (see "Leases" in :mod:`nasviz.store`).
"""

from __future__ import annotations

import threading
import warnings
from typing import TYPE_CHECKING, Any, Callable, Sequence

from nasviz.errors import LeaseLostError
from nasviz.fidelity.ladder import FidelityOutcome, arch_of
from nasviz.objectives.base import Evaluation, Objective
from nasviz.strategies.base import Strategy

if TYPE_CHECKING:
    from nasviz.store import RunStore, StoredEvaluation


class ReplayMismatchWarning(UserWarning):
    """A resumed strategy proposed something other than what the stored run evaluated."""


class RunRecord:
    """One run of a :class:`~nasviz.store.RunStore` as the search loop writes it.

    Attributes
    ----------
    run_id, lease : int
        The run and the lease this process holds on it.
    replay : dict step -> list of :class:`~nasviz.store.StoredEvaluation`
        What a resume replays (empty for a new run); steps are popped as they are replayed.
    snapshot_steps : set of int
        Steps whose snapshot is stored (a fully replayed step does not write its snapshot again).
    elapsed_before : float
        Seconds the run had already taken before this resume.
    """

    def __init__(self, store: RunStore, run_id: int | None, *, strategy: Strategy, objective: Objective,
                 budget: int, batch_size: int, resume: bool, lease: int | None,
                 format_arch: Callable[[Any], str], parse_arch: Callable[[str], Any] | None) -> None:
        self.store, self.strategy, self.format_arch = store, strategy, format_arch
        if run_id is None:
            run_id = store.create_run({
                "strategy": getattr(strategy, "name", type(strategy).__name__),
                "objective": getattr(objective, "name", type(objective).__name__),
                "metric": getattr(objective, "metric", None), "budget": budget, "batch_size": batch_size,
            })
        elif not resume and store.n_evaluations(run_id):
            raise ValueError(f"run {run_id} already has {store.n_evaluations(run_id)} evaluations; "
                             "pass resume=True to continue it")
        self.run_id = run_id
        # Callers that must not steal a live run claim it first and pass their lease.
        self.lease = lease if lease is not None else store.claim_run(run_id, force=True).lease
        self.replay: dict[int, list[StoredEvaluation]] = {}
        self.snapshot_steps: set[int] = set()
        self.elapsed_before = 0.0
        if resume:
            for ev in store.evaluations(run_id):
                self.replay.setdefault(ev.step, []).append(ev)
            self.snapshot_steps = set(store.snapshot_steps(run_id))
            last = store.latest_snapshot(run_id)
            self.elapsed_before = last.elapsed if last is not None else 0.0
        if parse_arch is None:
            space = getattr(strategy, "space", None) or getattr(objective, "space", None)
            parse_arch = getattr(space, "parse", None)
        self.parse_arch = parse_arch
        self._beating = threading.Event()
        self._beater: threading.Thread | None = None

    # -- heartbeat ------------------------------------------------------------------------------
    def start_heartbeat(self, every: float | None) -> None:
        """Refresh the run's heartbeat every ``every`` seconds (default: a third of the store's
        ``stale_after``, at most 10 s) in a daemon thread, until :meth:`stop_heartbeat`."""
        every = min(10.0, self.store.stale_after / 3) if every is None else every
        if every > 0:
            self._beater = threading.Thread(target=_heartbeat, args=(self.store, self.run_id, self.lease, every,
                                                                     self._beating),
                                            name=f"nasviz-heartbeat-{self.run_id}", daemon=True)
            self._beater.start()

    def stop_heartbeat(self) -> None:
        self._beating.set()
        if self._beater is not None:
            self._beater.join()
            self._beater = None

    # -- between steps ----------------------------------------------------------------------------
    def stop_requested(self) -> bool:
        """Whether a stop was requested; raises :class:`LeaseLostError` for a process woken from
        a pause whose run was taken over (it stops here, writing nothing)."""
        self.store.check_lease(self.run_id, self.lease)
        return self.store.stop_requested(self.run_id)

    # -- writes -------------------------------------------------------------------------------------
    def commit(self, results: Sequence[Evaluation], start_index: int, step: int) -> None:
        """Commit one step's evaluations (durably) and the weights the strategy keeps of them."""
        self.store.add_evaluations(self.run_id, [_plain(ev, self.format_arch) for ev in results], start_index,
                                   step=step, lease=self.lease)
        _keep_networks(self.store, self.run_id, self.lease, self.strategy, results, self.format_arch)

    def replayed(self, stored: list[StoredEvaluation], proposals: Sequence[Any],
                 step: int) -> tuple[list[Evaluation], bool]:
        """The stored results of a replayed step (see :func:`replayed_results`), with the
        strategy given back the weights stored for them."""
        results, matched = replayed_results(stored, proposals, self.format_arch, self.parse_arch, step)
        _restore_networks(self.store, self.run_id, self.strategy, results, self.format_arch)
        return results, matched

    def snapshot(self, snapshot: Any) -> None:
        self.store.add_snapshot(self.run_id, snapshot, lease=self.lease)

    def fail(self, err: BaseException) -> None:
        """Record why the search ended early (``failed``, or ``interrupted`` for a
        KeyboardInterrupt); a run whose lease was lost is not ours to mark."""
        if isinstance(err, LeaseLostError):
            return
        self._beating.set()
        failed = isinstance(err, Exception)
        self.store.set_status(self.run_id, "failed" if failed else "interrupted",
                              error=f"{type(err).__name__}: {err}" if failed else None, lease=self.lease)

    def finish(self, stopped: bool, best_arch: str | None) -> None:
        """Final status; a finished run drops the weights kept for resumes (the best one stays
        for export)."""
        self.store.set_status(self.run_id, "stopped" if stopped else "finished", lease=self.lease)
        if not stopped:
            self.store.drop_networks(self.run_id, lease=self.lease, keep=best_arch)


def _keep_networks(store: RunStore, run_id: int, lease: int | None, strategy: Strategy,
                   results: Sequence[Evaluation], format_arch: Callable[[Any], str]) -> None:
    """Store the trained weights a strategy will need after a resume (``strategy.network_state``).

    Auto-Keras warm-starts children from their trained ancestors; replay restores its choices
    but not weights, so without this a resumed run trains those children from scratch and
    differs from an uninterrupted one. A failure to store is a warning, never a stopped search.
    """
    export = getattr(strategy, "network_state", None)
    if export is None:
        return
    for ev in results:
        if not ev.ok:
            continue
        try:
            arrays = export(ev.arch)
            if arrays is not None:
                store.add_network(run_id, format_arch(ev.arch), arrays, lease=lease)
        except LeaseLostError:
            raise
        except Exception as err:  # noqa: BLE001 - losing a warm start must not lose the run
            warnings.warn(f"could not store the trained weights of {format_arch(ev.arch)}: {err}", stacklevel=2)


def _restore_networks(store: RunStore, run_id: int, strategy: Strategy, results: Sequence[Evaluation],
                      format_arch: Callable[[Any], str]) -> None:
    """Give a replaying strategy the weights :func:`_keep_networks` stored (before it is told)."""
    restore = getattr(strategy, "restore_network", None)
    if restore is None:
        return
    for ev in results:
        if not ev.ok:
            continue
        try:
            arrays = store.network(run_id, format_arch(ev.arch))
            if arrays is not None:
                restore(ev.arch, arrays)
        except Exception as err:  # noqa: BLE001 - the child then trains from scratch
            warnings.warn(f"could not restore the trained weights of {format_arch(ev.arch)}: {err}", stacklevel=2)


def _heartbeat(store: RunStore, run_id: int, lease: int | None, every: float, done: threading.Event) -> None:
    try:
        while not done.wait(every):
            store.heartbeat(run_id, lease)
    except Exception:  # a heartbeat is best effort: a stale one only marks the run interrupted
        pass
    finally:
        store.close()


def _plain(ev: Evaluation, format_arch: Callable[[Any], str]) -> dict[str, Any]:
    """The stored fields of an evaluation; its fidelity (multi-fidelity searches) goes in ``info``."""
    info = ev.info if ev.fidelity is None else {**ev.info, "fidelity": ev.fidelity.to_dict()}
    return {"arch": format_arch(ev.arch), "value": ev.value, "cost": ev.cost, "status": ev.status,
            "error": ev.error, "info": info}


def replayed_results(stored: list[StoredEvaluation], proposals: Sequence[Any], format_arch: Callable[[Any], str],
                      parse_arch: Callable[[str], Any] | None, step: int) -> tuple[list[Evaluation], bool]:
    """The stored evaluations of one step as :class:`Evaluation` objects, and whether they match.

    When the replayed proposals match the stored architectures (in order; the stored list may
    be a prefix if the process died mid-step), the proposals' own objects are reused; otherwise
    the stored strings are parsed and a :class:`ReplayMismatchWarning` is issued.
    """
    strings = [format_arch(arch_of(a)) for a in proposals]
    stored_strings = [ev.arch for ev in stored]
    matched = strings[: len(stored)] == stored_strings
    if matched:
        archs = [arch_of(a) for a in proposals[: len(stored)]]
    else:
        warnings.warn(
            f"replaying step {step}: the strategy proposed {strings} but the stored run evaluated "
            f"{stored_strings}; telling it the stored results (is the strategy deterministic given its seed?)",
            ReplayMismatchWarning, stacklevel=3)
        if parse_arch is None:
            raise ValueError("cannot replay a diverging run without parse_arch (the space's parse)")
        archs = [parse_arch(s) for s in stored_strings]
    return [_stored_evaluation(arch, ev) for arch, ev in zip(archs, stored)], matched


def _stored_evaluation(arch: Any, ev: StoredEvaluation) -> Evaluation:
    """An :class:`Evaluation` from its stored fields (the fidelity back out of ``info``)."""
    info = dict(ev.info or {})
    fidelity = FidelityOutcome.from_dict(info.pop("fidelity", None))
    return Evaluation(arch, ev.value, ev.cost if ev.cost is not None else 0.0, ev.status, ev.error, info, fidelity)
