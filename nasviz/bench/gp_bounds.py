"""How often a search's GP fit ends on a bound of its hyperparameter box: ``python -m nasviz bench gp-bounds``.

``python -m nasviz bench gp-bounds --table data/nb201_digits.csv --metric valid_accuracy``

Runs ``--seeds`` searches of a ``bo-*`` strategy (default ``bo-tw2g-ucb``, budget 100) on a table
through the runner and its store, as the Search page does, and reads back every step's stored
GP fit (:class:`nasviz.state.GPFit`): ``bounds_hit`` names the hyperparameters that ended within
1 % of a bound of their ML-II search box (the page shows it as a warning). Reported: fits and
fits with any bound hit, per hyperparameter, and per run whether its last fit sits on one; apart
from them, fits resting on a floor the strategy chose (``floors_hit``: the noise at a raised
``min_noise``), which are a chosen value and no warning, and component rates at the low end of
their box (``switched_off``: that part of the kernel off), which are expected and no warning either. A fit on a bound is kept (it is the
best the data allow), but many of them mean the data do not determine the hyperparameters: the
reason issue 17 asked for a less noisy default table.
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

DESCRIPTION = "how often a BO search's ML-II GP fit ends on a bound of its hyperparameter box"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--table", required=True, help="benchmark CSV")
    parser.add_argument("--metric", required=True)
    parser.add_argument("--space", default="nb201")
    parser.add_argument("--strategy", default="bo-tw2g-ucb", help="a bo-* strategy (default bo-tw2g-ucb)")
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0 .. N-1 (default 5)")


def run(args: argparse.Namespace) -> dict[str, Any]:
    from nasviz.runner import start_run
    from nasviz.state import StepState
    from nasviz.store import RunStore

    runs = []
    names: Counter[str] = Counter()
    floors: Counter[str] = Counter()
    switched: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / "runs.sqlite")
        for seed in range(int(args.seeds)):
            result = start_run(store, {"objective": "table", "table": str(args.table), "metric": args.metric,
                                       "space": args.space, "strategy": args.strategy, "budget": int(args.budget),
                                       "seed": seed})
            fits = [state.gp for state in (StepState.from_dict(s.strategy) for s in store.snapshots(result.run_id))
                    if state.gp is not None]
            for fit in fits:
                names.update(fit.bounds_hit)
                floors.update(fit.floors_hit)
                switched.update(fit.switched_off)
            runs.append({"seed": seed, "fits": len(fits), "fits_on_bound": sum(bool(f.bounds_hit) for f in fits),
                         "fits_on_floor": sum(bool(f.floors_hit) for f in fits),
                         "last_fit_on_bound": list(fits[-1].bounds_hit) if fits else None})
    fits_total = sum(r["fits"] for r in runs)
    on_bound = sum(r["fits_on_bound"] for r in runs)
    return {"table": str(args.table), "metric": args.metric, "strategy": args.strategy, "budget": int(args.budget),
            "fits": fits_total, "fits_on_bound": on_bound,
            "fraction_on_bound": on_bound / fits_total if fits_total else None,
            "by_hyperparameter": dict(names.most_common()),
            "fits_on_floor": sum(r["fits_on_floor"] for r in runs),
            "on_floor_by_hyperparameter": dict(floors.most_common()),
            "switched_off_by_hyperparameter": dict(switched.most_common()),
            "runs_whose_last_fit_is_on_a_bound": sum(bool(r["last_fit_on_bound"]) for r in runs), "runs": runs}
