"""Computations behind the dashboard's explorer pages (kernels, architectures, interpretability,
run comparison). Plain data in, plain data out: no Streamlit, no plotting (figures are in
:mod:`nasviz.viz`). The pages call these and draw the results.

Kernels are taken from :func:`nasviz.live.get_kernel` so their per-architecture caches survive
page refreshes; tables from :func:`nasviz.live.table_from_path`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from nasviz import live
from nasviz.arch import Architecture
from nasviz.objectives import Table

if TYPE_CHECKING:
    from nasviz.settings import Limits

# ----------------------------------------------------------------------------- samples


@dataclass
class Sample:
    """Architectures with their values, best first.

    ``archs`` / ``strings`` length ``n``; ``values`` shape ``(n,)`` (finite); ``source`` says where
    they come from ("table", "run 3").
    """

    archs: list[Architecture]
    strings: list[str]
    values: np.ndarray
    metric: str
    source: str


def _best_first(archs: list, strings: list[str], values: np.ndarray, metric: str, source: str) -> Sample:
    order = np.argsort(-values, kind="stable")
    return Sample([archs[i] for i in order], [strings[i] for i in order], values[order], metric, source)


def sample_table(table: Table, metric: str, n: int, seed: int = 0) -> Sample:
    """``n`` distinct rows drawn uniformly without replacement among those with a finite value of
    ``metric``, ordered by value (best first). ``ValueError`` for ``n < 2`` or an unknown metric;
    ``n`` larger than the table is capped at the table's size."""
    metric = table.check_metric(metric)
    if int(n) < 2:
        raise ValueError(f"the number of architectures must be at least 2, got {n}")
    values = np.asarray(table.values[metric], dtype=float)
    ok = np.flatnonzero(np.isfinite(values))
    if len(ok) < 2:
        raise ValueError(f"table {table.source} has fewer than 2 rows with a {metric} value")
    rng = np.random.default_rng(seed)
    idx = rng.choice(ok, size=min(int(n), len(ok)), replace=False)
    return _best_first([table.archs[i] for i in idx], [table.strings[i] for i in idx], values[idx], metric, "table")


def sample_run(evaluations: Sequence[Mapping[str, Any]], metric: str, n: int, space: str = "nb201",
               source: str = "run") -> Sample:
    """The run's successful evaluations (distinct architectures, latest value kept), at most ``n``
    of them (the best ``n``), best first."""
    seen: dict[str, float] = {}
    for e in evaluations:
        v = e.get("value")
        if e.get("status", "ok") == "ok" and v is not None and np.isfinite(float(v)):
            seen[str(e["arch"])] = float(v)
    if len(seen) < 2:
        raise ValueError(f"{source} has fewer than 2 successful evaluations")
    strings = list(seen)
    values = np.array([seen[s] for s in strings])
    sample = _best_first(live.parse_archs(strings, space), strings, values, metric, source)
    k = min(int(n), len(strings))
    return Sample(sample.archs[:k], sample.strings[:k], sample.values[:k], metric, source)


# ----------------------------------------------------------------------------- kernels


def kernel_distances(spec: str, archs: Sequence[Architecture]) -> dict[str, np.ndarray]:
    """The kernel's distance components between ``archs``, each ``(n, n)`` (TW: ``operations``,
    ``in_degree``, ``out_degree`` as in paper 000 Fig. 10)."""
    return live.get_kernel(spec).distances(list(archs), list(archs))


def kernel_matrix(spec: str, archs: Sequence[Architecture]) -> np.ndarray:
    """The Gram matrix ``(n, n)`` with the kernel's default hyperparameters."""
    k = live.get_kernel(spec)
    archs = list(archs)
    return k.combine(k.components(archs, archs), k.default_theta())


def induced_distance(K: np.ndarray) -> np.ndarray:
    """The distance a square Gram matrix ``(n, n)`` induces, ``sqrt(k(a,a) + k(b,b) - 2 k(a,b))``
    (clipped at 0 for kernels that are not PD). Shape ``(n, n)``."""
    d = np.diag(K)
    return np.sqrt(np.maximum(d[:, None] + d[None, :] - 2.0 * K, 0.0))


def kernel_distance(spec: str, archs: Sequence[Architecture]) -> np.ndarray:
    """One distance per pair, the one the kernel induces with its default hyperparameters
    (:func:`induced_distance` of :func:`kernel_matrix`). Shape ``(n, n)``."""
    return induced_distance(kernel_matrix(spec, archs))


def kernel_views(spec: str, archs: Sequence[Architecture]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Distance components (each ``(n, n)``) and the Gram matrix ``(n, n)`` with default
    hyperparameters, computing the expensive components once: for distance kernels (OTMANN,
    OT, GW, ...) the distance components *are* the kernel's components."""
    from nasviz.kernels.base import Kernel

    k = live.get_kernel(spec)
    archs = list(archs)
    dist = k.distances(archs, archs)
    comps = dist if type(k).distances is Kernel.distances else k.components(archs, archs)
    return dist, k.combine(comps, k.default_theta())


@dataclass
class SurrogateQuality:
    """Paper 002 §5.1 for one kernel: Spearman's rho per trial ``(trials,)``, its mean and standard
    error, and the last trial's test set for Fig. 8: ``truth``, ``mean``, ``std`` each ``(n_test,)``."""

    kernel: str
    spearman: np.ndarray
    spearman_mean: float
    spearman_se: float
    coverage_95: float
    truth: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    transform: str


def surrogate_quality(table: Table, metric: str, spec: str, *, n_train: int = 50, n_test: int = 100,
                      trials: int = 5, seed: int = 0, n_restarts: int = 1,
                      on_trial: Callable[[int], None] | None = None) -> SurrogateQuality:
    """The rank-correlation protocol of paper 002 §5.1 (one trial is
    :func:`nasviz.bench.surrogate.trial`): per trial ``n_train`` + ``n_test`` distinct rows, GP
    fitted by ML-II on the first, Spearman's rho of its posterior mean on the others.
    ``on_trial(i)`` is called after trial ``i`` (progress bars). ``ValueError`` if the table is
    too small or a count is below 1.
    """
    from nasviz.bench.surrogate import choose_transform, trial

    metric = table.check_metric(metric)
    for name, v in (("training architectures", n_train), ("test architectures", n_test), ("trials", trials)):
        if int(v) < 1:
            raise ValueError(f"the number of {name} must be at least 1, got {v}")
    values = np.asarray(table.values[metric], dtype=float)
    ok = np.flatnonzero(np.isfinite(values))
    if n_train + n_test > len(ok):
        raise ValueError(f"{n_train} training + {n_test} test architectures exceed the {len(ok)} rows with a "
                         f"{metric} value")
    name, options = live.resolve_kernel(spec)
    transform = choose_transform(values[ok], "auto")
    rhos, cover, last = [], [], None
    for i, child in enumerate(np.random.SeedSequence(seed).spawn(int(trials))):
        rng = np.random.default_rng(child)
        idx = ok[rng.choice(len(ok), n_train + n_test, replace=False)]
        last = trial(table, values, idx[:n_train], idx[n_train:], name, options, transform,
                     n_restarts=n_restarts, seed=int(rng.integers(2**31)))
        rhos.append(last["spearman"])
        cover.append(last["coverage_95"])
        if on_trial is not None:
            on_trial(i)
    rho = np.asarray(rhos)
    se = float(rho.std(ddof=1) / np.sqrt(len(rho))) if len(rho) > 1 else 0.0
    return SurrogateQuality(spec, rho, float(rho.mean()), se, float(np.mean(cover)), last["truth"], last["mean"],
                            last["std"], transform)


# ----------------------------------------------------------------------------- a pair of architectures


def pair_distances(specs: Sequence[str], a: Architecture, b: Architecture) -> list[dict[str, Any]]:
    """Every kernel's distance components between ``a`` and ``b``: rows
    ``{"kernel", "component", "distance"}`` (one per component, in the kernel's order)."""
    rows = []
    for spec in specs:
        for comp, D in live.get_kernel(spec).distances([a], [b]).items():
            rows.append({"kernel": spec, "component": comp, "distance": float(np.asarray(D)[0, 0])})
    return rows


def otmann_plan(a: Architecture, b: Architecture):
    """OTMANN's transport plan between the layers of ``a`` and ``b``
    (:class:`nasviz.kernels.otmann.TransportPlan`, paper 001 Eq. (6); plan ``(n_a + 1, n_b + 1)``,
    the last row/column the non-assignment layer)."""
    return live.get_kernel("otmann").transport_plan(a, b)


@dataclass
class TreeEdgeMass:
    """One edge ``e`` of TW's operation tree for the n-gram order ``n``: its deeper node
    ``node`` (readable), length ``weight`` (``w_e``), the subtree masses ``mass_a`` / ``mass_b``
    (``omega(Gamma(v_e))``) and ``contribution = w_e |mass_a - mass_b| / N`` (``N`` orders are
    averaged), so the contributions sum to ``W_o`` (paper 000 Eq. (2))."""

    order: int
    node: str
    level: str  # "group" (root -> group-sequence edge) or "leaf" (group -> n-gram edge)
    weight: float
    mass_a: float
    mass_b: float
    contribution: float


def _node_name(node: Any) -> tuple[str, str]:
    if isinstance(node, tuple) and len(node) == 2 and node[0] in ("group", "op"):
        label = " → ".join(str(x) for x in node[1])
        return label, "group" if node[0] == "group" else "leaf"
    if isinstance(node, tuple) and node and node[0] == "empty":
        return "(no n-gram)", "leaf"
    return str(node), "leaf"


def tw_edge_masses(a: Architecture, b: Architecture, spec: str = "tw2g") -> list[TreeEdgeMass]:
    """Per-edge subtree masses of the two n-gram measures on TW's operation tree (paper 000 §2.2,
    Eq. (2)): which subtrees carry the operation distance ``W_o``. Edges where both masses are
    zero are left out. Sorted by contribution, largest first."""
    k = live.get_kernel(spec)
    if not hasattr(k, "tree"):
        raise ValueError(f"kernel {spec!r} is not a tree-Wasserstein kernel")
    rows = []
    measures_a, measures_b = k.ngram_measures(a), k.ngram_measures(b)
    for n in k.orders:
        mu_a, mu_b = measures_a[n], measures_b[n]
        ma, mb = k.tree.subtree_masses(mu_a), k.tree.subtree_masses(mu_b)
        weights = {node: w for leaf in list(mu_a) + list(mu_b) for node, w in k.tree.path(leaf)}
        for node, w in weights.items():
            x, y = ma.get(node, 0.0), mb.get(node, 0.0)
            name, level = _node_name(node)
            rows.append(TreeEdgeMass(n, name, level, float(w), x, y, float(w * abs(x - y) / len(k.orders))))
    rows.sort(key=lambda r: -r.contribution)
    return rows


def neighbour_values(arch: Architecture, table: Table | None, metric: str | None,
                     space: str = "nb201") -> list[dict[str, Any]]:
    """The one-edit neighbours of ``arch`` (NB201: 24) with the edge changed and their table value
    (``None`` if not in the table), best first (unknown values last)."""
    from nasviz.spaces import get_space

    sp = get_space(space)
    ops = sp.operations(arch) if hasattr(sp, "operations") else None
    rows = []
    for nb in sp.neighbours(arch):
        change = ""
        if ops is not None:
            new = sp.operations(nb)
            change = ", ".join(f"edge {k + 1}: {o} → {p}" for k, (o, p) in enumerate(zip(ops, new)) if o != p)
        value = None
        if table is not None and metric and nb in table:
            value = table.lookup(nb, metric)
        rows.append({"arch": sp.format(nb), "change": change, "value": value})
    rows.sort(key=lambda r: (r["value"] is None, -(r["value"] or 0.0)))
    return rows


# ----------------------------------------------------------------------------- interpretability


@dataclass
class Interpretation:
    """A WL GP fitted on a sample and its feature gradients (paper 002 §3.2, Fig. 2).

    ``gradients`` is a :class:`nasviz.interpret.FeatureGradients` over the sample's candidates;
    ``profiles`` the :func:`~nasviz.interpret.operation_gradient_profile` of its ``h = 0`` features
    with true values; ``op_gradients`` the mean gradient per operation (what gradient-guided
    mutation uses); ``sample`` the architectures and values.
    """

    sample: Sample
    gradients: Any
    profiles: list
    op_gradients: dict[str, float]
    h: int
    transform: str
    fit_seconds: float = 0.0
    top_positive: list[tuple[str, float]] = field(default_factory=list)
    top_negative: list[tuple[str, float]] = field(default_factory=list)


def interpret_sample(sample: Sample, *, top: int = 5, seed: int = 0, n_restarts: int = 1) -> Interpretation:
    """Fit a GP with the WL kernel (ML-II) on ``sample`` and compute the WL feature gradients of
    its posterior mean at the same architectures (paper 002 Eq. 3.2), the Fig. 2 profiles and the
    ``top`` most positive / negative features present in the sample."""
    import time

    from nasviz.bench.surrogate import choose_transform
    from nasviz.gp import GaussianProcess
    from nasviz.interpret import operation_gradient_profile, wl_feature_gradients

    if len(sample.archs) < 3:
        raise ValueError(f"interpretation needs at least 3 architectures, got {len(sample.archs)}")
    transform = choose_transform(sample.values, "auto")
    gp = GaussianProcess(live.get_kernel("wl"), transform=transform, n_restarts=n_restarts, seed=seed)
    t0 = time.perf_counter()
    gp.fit(sample.archs, sample.values)
    fit_seconds = time.perf_counter() - t0
    fg = wl_feature_gradients(gp, sample.archs)
    profiles = operation_gradient_profile(fg, sample.values)
    h0 = fg.depths == 0
    op_gradients = {fg.names[j]: float(fg.mean_gradient[j]) for j in np.flatnonzero(h0)
                    if fg.names[j] not in ("input", "output")}
    present = (fg.counts > 0).any(axis=0)
    order = [j for j in np.argsort(-fg.mean_gradient) if present[j]]
    pos = [(fg.names[j], float(fg.mean_gradient[j])) for j in order[:top] if fg.mean_gradient[j] > 0]
    neg = [(fg.names[j], float(fg.mean_gradient[j])) for j in order[::-1][:top] if fg.mean_gradient[j] < 0]
    return Interpretation(sample, fg, profiles, op_gradients, fg.h, transform, fit_seconds, pos, neg)


_TOKEN = re.compile(r"<-|->|\(|\)|,|[^\s(),]+")


@dataclass
class FeatureTree:
    """A WL feature (unfolding tree, :func:`nasviz.kernels.wl.wl_labels`) parsed into nodes:
    ``labels[i]`` and ``parent[i]`` (``-1`` for the root), ``direction[i]`` ``"<-"`` (an
    in-neighbour of its parent) or ``"->"`` (an out-neighbour)."""

    labels: list[str]
    parent: list[int]
    direction: list[str]


def parse_wl_feature(name: str) -> FeatureTree:
    """Parse ``"nor_conv_3x3 -> (output, avg_pool_3x3 -> (output))"`` into a :class:`FeatureTree`.
    ``ValueError`` on text that is not a WL feature name."""
    tokens = [t.strip() for t in _TOKEN.findall(name) if t.strip()]
    labels: list[str] = []
    parent: list[int] = []
    direction: list[str] = []
    pos = 0

    def node(par: int, dirn: str) -> None:
        nonlocal pos
        if pos >= len(tokens) or tokens[pos] in ("<-", "->", "(", ")", ","):
            raise ValueError(f"not a WL feature name: {name!r}")
        me = len(labels)
        labels.append(tokens[pos]); parent.append(par); direction.append(dirn)
        pos += 1
        while pos < len(tokens) and tokens[pos] in ("<-", "->"):
            d = tokens[pos]
            if pos + 1 >= len(tokens) or tokens[pos + 1] != "(":
                raise ValueError(f"not a WL feature name: {name!r}")
            pos += 2
            node(me, d)
            while pos < len(tokens) and tokens[pos] == ",":
                pos += 1
                node(me, d)
            if pos >= len(tokens) or tokens[pos] != ")":
                raise ValueError(f"not a WL feature name: {name!r}")
            pos += 1

    node(-1, "")
    if pos != len(tokens):
        raise ValueError(f"not a WL feature name: {name!r}")
    return FeatureTree(labels, parent, direction)


def mutation_probabilities(arch: Architecture, op_gradients: Mapping[str, float],
                           space: str = "nb201") -> dict[str, Any]:
    """How gradient-guided mutation (paper 002 App. C, :func:`nasviz.candidates.gradient_mutation_probabilities`)
    would mutate ``arch``: ``ops`` (its edge operations, length E), ``where`` ``(E,)`` the
    probability of mutating each edge, ``to`` ``(E, n_ops)`` the replacement probabilities,
    ``joint`` ``(E, n_ops)`` = ``where[:, None] * to``, ``operations`` the column names."""
    from nasviz.candidates import gradient_mutation_probabilities, supports_gradient_mutation
    from nasviz.spaces import get_space

    sp = get_space(space)
    if not supports_gradient_mutation(sp):
        raise ValueError(f"space {space!r} has no per-edge operations for gradient-guided mutation")
    ops = list(sp.operations(arch))
    where, to = gradient_mutation_probabilities(ops, sp.OPERATIONS, op_gradients)
    return {"ops": ops, "where": where, "to": to, "joint": where[:, None] * to, "operations": list(sp.OPERATIONS)}


# ----------------------------------------------------------------------------- comparing runs


@dataclass
class RunCurve:
    """One run's values in evaluation order: ``values`` ``(n,)`` (NaN where an evaluation failed),
    ``strategy`` and ``seed`` from its configuration, ``optimum`` the table's optimum (or None)."""

    run_id: int
    name: str
    strategy: str
    seed: int
    metric: str
    values: np.ndarray
    archs: list[str]
    optimum: float | None
    budget: int


def run_curves(store_path, run_ids: Sequence[int]) -> list[RunCurve]:
    """Read the chosen runs from the store (``KeyError``-free: unknown ids raise ``ValueError``)."""
    from nasviz.store import RunStore, UnknownRunError

    store = RunStore(store_path)
    curves = []
    for rid in run_ids:
        try:
            run = store.get_run(int(rid))
            evals = store.evaluations(int(rid))
        except UnknownRunError:
            raise ValueError(f"run {rid} is not in the store") from None
        cfg = run.get("config") or {}
        values = np.array([float(e["value"]) if e["status"] == "ok" and e["value"] is not None else np.nan
                           for e in evals], dtype=float)
        optimum = None
        if cfg.get("objective", "table") == "table" and cfg.get("table"):
            try:
                optimum = live.table_from_path(cfg["table"], cfg.get("space", "nb201")).optimum(cfg["metric"])
            except (ValueError, KeyError, OSError):
                optimum = None
        curves.append(RunCurve(int(rid), str(run.get("name") or ""), str(cfg.get("strategy", "?")),
                               int(cfg.get("seed", 0)), str(cfg.get("metric", "value")), values,
                               [e["arch"] for e in evals], optimum, int(cfg.get("budget", len(evals)))))
    return curves


def start_study(store_path, source: "live.DataSource", metric: str, strategies: Sequence[str],
                seeds: Sequence[int], budget: int, *, background: bool | None = None, session: str | None = None,
                limits: "Limits | None" = None) -> list[int]:
    """Launch one run per (strategy, seed) through :func:`nasviz.live.start_runs` (background
    workers unless ``NASVIZ_SYNC_RUNS``); every configuration is validated, and the study checked
    against ``limits`` (its size, each budget, the running searches of ``session``), before any
    starts. Returns the run ids."""
    from nasviz.settings import ServeSettings

    if not strategies:
        raise ValueError("choose at least one strategy")
    if not seeds:
        raise ValueError("choose at least one seed")
    limits = limits or ServeSettings.from_env().limits
    limits.check_study(len(strategies) * len(seeds))
    configs = [(s, seed, live.make_config(source, metric=metric, strategy=s, budget=budget, seed=int(seed),
                                         batch_size=live.preset_batch_size(s)))
               for s in strategies for seed in seeds]
    return live.start_runs(store_path, [cfg for _, _, cfg in configs], names=[f"study {s} seed {seed}" for s, seed, _ in configs],
                           background=background, session=session, limits=limits)


__all__ = [
    "FeatureTree", "Interpretation", "RunCurve", "Sample", "SurrogateQuality", "TreeEdgeMass", "interpret_sample",
    "induced_distance", "kernel_distance", "kernel_distances", "kernel_views", "kernel_matrix", "mutation_probabilities", "neighbour_values",
    "otmann_plan", "pair_distances", "parse_wl_feature", "run_curves", "sample_run", "sample_table",
    "start_study", "surrogate_quality", "tw_edge_masses",
]


def current_table(source: "live.DataSource | None") -> Table | None:
    """The table behind the sidebar's data source (``None`` for live training or no source)."""
    if source is None or source.kind != "table" or not source.path:
        return None
    return source.table()
