"""The step's candidate pool, embedded in 2-D by the GP kernel's own distance (classical MDS),
coloured by posterior mean, sized by posterior std, the chosen batch starred."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nasviz.dashboard.kernels import kernel_distance, parse_archs
from nasviz.dashboard.views.base import View, ViewOutput, no_model

if TYPE_CHECKING:
    from nasviz.dashboard.watching import RunWatcher


def pool_kernel(run: "RunWatcher") -> str | None:
    """The kernel of the GP that scored the pool: the one the step's fit names, else the
    strategy's by its registry entry (older stores did not name it in the fit)."""
    from nasviz.components import KERNELS

    gp = run.state.gp
    if gp is not None and gp.kernel in KERNELS:
        return gp.kernel
    return run.model_kernel


class PoolView(View):
    """Candidate pool of the latest step (:class:`~nasviz.state.PoolState`)."""

    def applies(self, run: "RunWatcher") -> str | None:
        from nasviz.components import kernel_fits

        pool = run.state.pool
        if pool is None or not len(pool):
            if not run.has_model:
                return no_model(run, "its steps have no candidate pool")
            if run.state.phase in ("", "init", "random"):
                return ("This step has no candidate pool: it belongs to the initial random design, before the "
                        "first GP fit.")
            return f"The latest step ({run.state.phase}) reported no candidate pool."
        kernel = pool_kernel(run)
        if kernel is None:
            return "The GP kernel that scored this pool is not known to this installation, so it cannot be embedded."
        if not kernel_fits(kernel, run.space_name):
            return f"The {kernel!r} kernel cannot read the {run.space_name!r} space, so the pool cannot be embedded."
        return None

    def render(self, run: "RunWatcher", **choices: Any) -> ViewOutput:
        from nasviz import viz

        state, pool = run.state, run.state.pool
        kernel = pool_kernel(run)
        step = run.steps[-1].step if run.steps else None
        theta = state.gp.hyperparameters if state.gp is not None else None

        evaluated, values, left_out = evaluated_before(run, step)

        def embed():
            archs = parse_archs([*pool.candidates, *evaluated], run.space_name)
            return kernel_distance(run.kernels.get(kernel, run.space_name), archs, theta)

        D = run.memo(("pool", step, kernel, len(evaluated)), embed)
        n = len(pool)
        batch = state.batch
        sign = -1.0 if run.direction == "minimise" else 1.0  # scores -> a minimised metric's own values
        fig = viz.plot_pool(list(pool.candidates), D, [sign * m for m in pool.mean] if len(pool.mean) == n else None,
                            pool.std if len(pool.std) == n else None, batch.indices if batch else (),
                            batch.qualities if batch and batch.qualities and len(batch.qualities) == n else None,
                            step, f"the {kernel} kernel's distance", evaluated, [sign * v for v in values])
        parts = ["Crosses: the architectures evaluated before this step, embedded with the pool"
                 + (f" (the best {len(evaluated)}; {left_out} more are not drawn)" if left_out else "") + "."]
        if sign < 0:
            parts.append(f"The metric, {run.search.objective.metric}, is minimised: lower means and values are better.")
        if batch is not None:
            parts.append(f"Batch selector: {batch.method}" + ("; hover a point for its k-DPP quality." if batch.qualities
                                                              else "."))
        return ViewOutput([("chart_pool", fig)], " ".join(parts))


#: At most this many evaluated architectures are drawn with the pool (the MDS is cubic in the total).
MAX_EVALUATED_DRAWN = 200


def evaluated_before(run: "RunWatcher", step: int | None) -> tuple[list[str], list[float], int]:
    """The distinct architectures measured before ``step`` (the best :data:`MAX_EVALUATED_DRAWN`),
    their values and how many more were left out."""
    best: dict[str, float] = {}
    for e in run.successful():
        if step is None or int(e.get("step") or 0) < step:
            best[e["arch"]] = max(float(e["value"]), best.get(e["arch"], float("-inf")))
    ranked = sorted(best.items(), key=lambda kv: -kv[1])
    kept = ranked[:MAX_EVALUATED_DRAWN]
    return [a for a, _ in kept], [v for _, v in kept], len(ranked) - len(kept)
