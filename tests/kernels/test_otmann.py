"""OTMANN distance and the NASBOT kernel ensemble (paper 001 Sec. 3, 4.1, App. A)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from nasviz.arch import Architecture
from nasviz.kernels import make_kernel
from nasviz.kernels.otmann import (
    BETA_RANGE,
    CNN_LABEL_MISMATCH,
    LABEL_MISMATCH,
    MLP_LABEL_MISMATCH,
    MLP_LABELS,
    NB201_LABEL_MISMATCH,
    OTMANNKernel,
    OTMANNScales,
    layer_masses,
    path_lengths,
    transport_plan,
)
from nasviz.spaces import nb201

MLP_ACTIVATIONS = ("relu", "crelu", "leaky-relu", "softplus", "elu", "logistic", "tanh")


def mlp(layers: list[tuple[str, int | None]], edges: list[tuple[int, int]], input_width: int = 8) -> Architecture:
    """An MLP: node 0 input, the given layers, last node output."""
    labels = ("input", *[label for label, _ in layers], "output")
    widths = (input_width, *[w for _, w in layers], None)
    return Architecture(labels, edges, widths)


def chain(layers: list[tuple[str, int | None]], input_width: int = 8) -> Architecture:
    n = len(layers) + 2
    return mlp(layers, [(i, i + 1) for i in range(n - 1)], input_width)


def random_mlp(rng: np.random.Generator) -> Architecture:
    """A random feed-forward MLP with skip connections and one or two linear decision layers."""
    n_hidden = int(rng.integers(1, 6))
    hidden = [(MLP_ACTIVATIONS[int(rng.integers(len(MLP_ACTIVATIONS)))], int(rng.choice([8, 16, 32, 64]))) for _ in range(n_hidden)]
    n_dec = int(rng.integers(1, 3))
    layers = hidden + [("linear", None)] * n_dec
    out = n_hidden + n_dec + 1
    edges = [(i, i + 1) for i in range(n_hidden)]  # input -> h1 -> ... -> h_last
    for u in range(n_hidden - 1):  # random skips among hidden layers
        for v in range(u + 2, n_hidden + 1):
            if rng.random() < 0.2:
                edges.append((u, v))
    for k in range(n_dec):  # decision layers read the last hidden layer (and maybe another)
        dec = n_hidden + 1 + k
        edges.append((n_hidden, dec))
        if n_hidden > 1 and rng.random() < 0.5:
            edges.append((int(rng.integers(1, n_hidden)), dec))
        edges.append((dec, out))
    return mlp(layers, edges)


def cell(ops: list[str]) -> Architecture:
    return nb201.from_operations(ops)


# ---------------------------------------------------------------------------- label tables
def test_mismatch_tables_are_symmetric_zero_diagonal_and_metric():
    for M in (MLP_LABEL_MISMATCH, CNN_LABEL_MISMATCH, NB201_LABEL_MISMATCH, LABEL_MISMATCH):
        assert np.allclose(M, M.T)
        assert np.all(np.diag(M) == 0)
        # Theorem 3's condition: M(x, z) <= M(x, y) + M(y, z) for all labels.
        assert np.all(M[:, None, :] <= M[:, :, None] + M[None, :, :] + 1e-12)


def test_mlp_table_matches_paper_table_5():
    idx = {label: i for i, label in enumerate(MLP_LABELS)}
    M = MLP_LABEL_MISMATCH
    assert M[idx["relu"], idx["crelu"]] == 0.1
    assert M[idx["leaky-relu"], idx["elu"]] == 0.1
    assert M[idx["relu"], idx["logistic"]] == 0.25
    assert M[idx["logistic"], idx["tanh"]] == 0.1
    assert M[idx["tanh"], idx["softplus"]] == 0.25
    # blanks (infinite): linear and ip/op with anything but themselves
    for other in ("relu", "tanh", "input", "output"):
        assert M[idx["linear"], idx[other]] > 2
    assert M[idx["input"], idx["output"]] > 2


# ---------------------------------------------------------------------------- masses and paths
def test_masses_follow_the_zeta_rule_for_an_mlp():
    # input(8) -> relu 16 -> tanh 32 -> two linear decision layers -> output
    arch = mlp([("relu", 16), ("tanh", 32), ("linear", None), ("linear", None)],
               [(0, 1), (1, 2), (2, 3), (2, 4), (3, 5), (4, 5)])
    m = layer_masses(arch)
    proc = 16 * 8 + 32 * 16
    assert m[1] == 16 * 8 and m[2] == 32 * 16
    assert m[0] == m[5] == pytest.approx(0.1 * proc)
    assert m[3] == m[4] == pytest.approx(0.1 * proc / 2)


def test_masses_concatenate_parents_in_layer_spaces():
    # Sec. 2.2 / Fig. 1b: a layer with two parents of 16 units sees 32 incoming units.
    arch = mlp([("relu", 16), ("relu", 16), ("relu", 32), ("linear", None)],
               [(0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (4, 5)])
    assert layer_masses(arch)[3] == 32 * (16 + 16)


def test_nb201_masses_use_fixed_channels():
    arch = cell(["nor_conv_3x3", "avg_pool_3x3", "nor_conv_1x1", "none", "none", "nor_conv_3x3"]).reduced()
    m = layer_masses(arch, cell_channels=16)
    by_label = dict(zip(arch.labels, m))
    assert by_label["nor_conv_3x3"] == 256 and by_label["nor_conv_1x1"] == 256 and by_label["avg_pool_3x3"] == 16
    proc = sum(v for l, v in zip(arch.labels, m) if l not in ("input", "output"))
    assert m[0] == m[-1] == pytest.approx(0.1 * proc)


def test_path_lengths_by_hand():
    # 0 -> 1 -> 2 -> 3 -> 4 and a skip 0 -> 3: the six lengths of Sec. 2 / Algorithm 1.
    arch = Architecture(("input", "relu", "relu", "relu", "output"), [(0, 1), (1, 2), (2, 3), (0, 3), (3, 4)], (4, 8, 8, 8, None))
    P = path_lengths(arch)
    # layer 3: from input sp 1 (skip), lp 3, rw = 1 + mean(rw(2)=2, rw(0)=0) = 2
    assert P[3, :3].tolist() == [1, 3, 2]
    # input to output: sp 2, lp 4, rw = 1 + mean(rw(1)=3, rw(3)=1) = 3
    assert P[0, 3:].tolist() == [2, 4, 3]
    assert P[4, 3:].tolist() == [0, 0, 0] and P[0, :3].tolist() == [0, 0, 0]


# ---------------------------------------------------------------------------- the distance
@pytest.fixture(scope="module")
def kernel() -> OTMANNKernel:
    return OTMANNKernel(n_jobs=1)


def test_self_distance_is_zero(kernel):
    rng = np.random.default_rng(0)
    archs = nb201.sample(rng, 20) + [random_mlp(rng) for _ in range(20)]
    for arch in archs:
        assert transport_plan(arch, arch, 0.4).distance == pytest.approx(0.0, abs=1e-9)
    d = kernel.otmann_distances(archs, archs)
    assert np.allclose(np.diagonal(d, axis1=1, axis2=2), 0.0)


def test_one_label_change_costs_mismatch_times_mass(kernel):
    base = ["nor_conv_3x3"] * 6
    changed = list(base)
    changed[3] = "nor_conv_1x1"
    d = kernel.otmann_distances([cell(base)], [cell(changed)])[:, 0, 0]
    # conv3x3 -> conv1x1 costs 0.2 per unit and the layer carries 16 * 16 units of mass.
    assert np.allclose(d, 0.2 * 256)

    a = chain([("relu", 16), ("relu", 32), ("tanh", 16), ("linear", None)])
    b = chain([("relu", 16), ("elu", 32), ("tanh", 16), ("linear", None)])
    c = chain([("relu", 16), ("logistic", 32), ("tanh", 16), ("linear", None)])
    mass = 32 * 16
    for other, cost in ((b, 0.1), (c, 0.25)):
        plan = transport_plan(a, other, 0.4)
        assert plan.distance == pytest.approx(cost * mass)
        assert plan.label_cost == pytest.approx(cost * mass)
        assert plan.structural_cost == pytest.approx(0.0) and plan.non_assignment_cost == pytest.approx(0.0)


def test_matches_the_original_program_3_solved_as_an_lp():
    """Program (3) with inequality constraints == OT program (6) (Theorem 2)."""
    rng = np.random.default_rng(1)
    for _ in range(6):
        a, b = random_mlp(rng), random_mlp(rng)
        nu = 0.3
        plan = transport_plan(a, b, nu)
        C = plan.label_costs + nu * plan.structural_costs
        n_a, n_b = C.shape
        # minimise <Z, C> + sum_i (m_i - row_i) + sum_j (m_j - col_j) = const + <Z, C - 2>
        A_ub = np.vstack([np.kron(np.eye(n_a), np.ones((1, n_b))), np.kron(np.ones((1, n_a)), np.eye(n_b))])
        b_ub = np.concatenate([plan.masses_a, plan.masses_b])
        res = linprog((C - 2.0).ravel(), A_ub=A_ub, b_ub=b_ub, bounds=(0, None), method="highs")
        assert res.status == 0
        assert plan.distance == pytest.approx(res.fun + b_ub.sum(), rel=1e-9, abs=1e-6)


def test_transport_plan_marginals_and_terms(kernel):
    rng = np.random.default_rng(2)
    for a, b in [(random_mlp(rng), random_mlp(rng)), tuple(nb201.sample(rng, 2))]:
        plan = kernel.transport_plan(a, b, nu_str=0.2)
        n_a, n_b = len(plan.masses_a), len(plan.masses_b)
        assert plan.plan.shape == (n_a + 1, n_b + 1)
        assert np.allclose(plan.plan.sum(1)[:n_a], plan.masses_a)
        assert np.allclose(plan.plan.sum(0)[:n_b], plan.masses_b)
        d = kernel.otmann_distances([a], [b])[kernel.nu_str.index(0.2), 0, 0]
        assert plan.distance == pytest.approx(d, rel=1e-9)
        assert plan.normalised == pytest.approx(d / (plan.masses_a.sum() + plan.masses_b.sum()))
        assert plan.distance == pytest.approx(plan.label_cost + 0.2 * plan.structural_cost + plan.non_assignment_cost)


def test_symmetry_and_triangle_inequality(kernel):
    """Theorem 3: d (not dbar) is a pseudo-distance when M satisfies the triangle inequality."""
    rng = np.random.default_rng(3)
    cells = nb201.sample(rng, 40)
    mlps = [random_mlp(rng) for _ in range(40)]
    for archs in (cells, mlps):
        D = kernel.otmann_distances(archs, archs)
        assert np.all(D >= -1e-9)
        assert np.allclose(D, np.transpose(D, (0, 2, 1)), rtol=1e-9, atol=1e-6)
        triples = rng.integers(0, len(archs), size=(300, 3))
        for Dn in D:
            i, j, k = triples.T
            assert np.all(Dn[i, k] <= Dn[i, j] + Dn[j, k] + 1e-6 * (1 + Dn[i, k]))


def test_dbar_is_normalised(kernel):
    rng = np.random.default_rng(4)
    archs = nb201.sample(rng, 15) + [random_mlp(rng) for _ in range(15)]
    comps = kernel.components(archs, archs)
    for nu in kernel.nu_str:
        dbar = comps[f"dbar_{nu:g}"]
        assert np.all(dbar <= 1 + 1e-12) and np.all(dbar >= 0)
        tm = kernel.total_masses(archs)
        assert np.allclose(dbar * (tm[:, None] + tm[None, :]), comps[f"d_{nu:g}"])


def test_fig1_style_triple():
    # a and b: feed-forward relu nets that differ by a split layer and a width; c: a wide
    # sigmoid network with skips and two decision layers.
    a = chain([("relu", 16), ("relu", 16), ("relu", 32), ("relu", 32), ("linear", None)])
    b = mlp([("relu", 16), ("relu", 8), ("relu", 8), ("relu", 32), ("relu", 32), ("linear", None)],
            [(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 5), (5, 6), (6, 7)])
    c = mlp([("tanh", 128), ("logistic", 256), ("tanh", 64), ("linear", None), ("linear", None)],
            [(0, 1), (1, 2), (0, 2), (2, 3), (1, 3), (3, 4), (2, 5), (4, 6), (5, 6)])
    k = OTMANNKernel(nu_str=(0.1, 0.5, 0.8), n_jobs=1)
    comps = k.components([a, b, c], [a, b, c])
    for name, D in comps.items():
        assert D[0, 1] < D[0, 2] and D[0, 1] < D[1, 2], name


def test_cache_and_isomorphic_graphs(kernel):
    rng = np.random.default_rng(5)
    archs = nb201.sample(rng, 12)
    full = kernel.otmann_distances(archs, archs)
    again = OTMANNKernel(n_jobs=1).otmann_distances(archs[:6], archs[6:])
    assert np.allclose(full[:, :6, 6:], again)
    # a conv3x3 -> conv1x1 chain through cell node 1 or through cell node 2: isomorphic
    x = cell(["nor_conv_3x3", "none", "none", "none", "nor_conv_1x1", "none"])
    y = cell(["none", "nor_conv_3x3", "none", "none", "none", "nor_conv_1x1"])
    assert x != y and x.canonical_key() == y.canonical_key()
    assert np.allclose(kernel.otmann_distances([x], [y]), 0.0)
    z = cell(["nor_conv_1x1", "none", "none", "none", "nor_conv_3x3", "none"])  # reversed order
    assert np.all(kernel.otmann_distances([x], [z]) > 0)


def test_parallel_equals_serial():
    rng = np.random.default_rng(6)
    archs = nb201.sample(rng, 30)
    serial = OTMANNKernel(n_jobs=1).otmann_distances(archs, archs)
    parallel = OTMANNKernel(n_jobs=2).otmann_distances(archs, archs)
    assert np.allclose(serial, parallel)


def test_grouped_structure_variant():
    rng = np.random.default_rng(7)
    mlps = [random_mlp(rng) for _ in range(12)]
    k = OTMANNKernel(structure="grouped", n_jobs=1)
    D = k.otmann_distances(mlps, mlps)
    assert np.allclose(np.diagonal(D, axis1=1, axis2=2), 0)
    i, j, l = np.array(list(itertools.permutations(range(12), 3))).T
    assert np.all(D[:, i, l] <= D[:, i, j] + D[:, j, l] + 1e-6)


# ---------------------------------------------------------------------------- the kernel
def test_kernel_gradients_match_finite_differences(kernel):
    rng = np.random.default_rng(8)
    archs = nb201.sample(rng, 10)
    comps = kernel.components(archs, archs)
    theta = kernel.default_theta() * np.exp(rng.normal(0, 0.3, len(kernel.default_theta())))
    K, grads = kernel.combine_with_gradients(comps, theta)
    assert np.allclose(K, kernel.combine(comps, theta))
    assert len(grads) == len(kernel.hyperparameters) == 2 + 2 * len(kernel.nu_str)
    for i in range(len(theta)):
        h = 1e-6 * theta[i]
        up, down = theta.copy(), theta.copy()
        up[i] += h
        down[i] -= h
        fd = (kernel.combine(comps, up) - kernel.combine(comps, down)) / (2 * h)
        assert np.allclose(grads[i], fd, rtol=1e-4, atol=1e-8), kernel.hyperparameters[i].name
        assert np.abs(grads[i]).max() > 0  # every hyperparameter moves the kernel


def test_kernel_equation_4_and_psd_jitter():
    rng = np.random.default_rng(9)
    archs = nb201.sample(rng, 60)
    k = make_kernel("otmann", n_jobs=1)
    assert k.positive_definite is False
    comps = k.components(archs, archs)
    theta = k.default_theta()
    alpha, alpha_bar, beta, beta_bar = theta[0], theta[1], theta[2:6], theta[6:]
    d = np.stack([comps[f"d_{nu:g}"] for nu in k.nu_str])
    dbar = np.stack([comps[f"dbar_{nu:g}"] for nu in k.nu_str])
    expected = alpha * np.exp(-np.einsum("i,ijk->jk", beta, d)) + alpha_bar * np.exp(-np.einsum("i,ijk->jk", beta_bar, dbar**2))
    assert np.allclose(k.combine(comps, theta), expected)
    K, jitter = k.psd_matrix(comps, theta)
    assert k.last_jitter == jitter >= 0
    np.linalg.cholesky(K)
    lam = np.linalg.eigvalsh(k.combine(comps, theta))[0]
    assert (jitter > 0) == (lam < 0) or lam > -1e-10


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="unknown layer label 'conv9'"):
        layer_masses(Architecture(("input", "conv9", "output"), [(0, 1), (1, 2)], (3, 16, None)))
    with pytest.raises(ValueError, match="positive width"):
        layer_masses(Architecture(("input", "relu", "linear", "output"), [(0, 1), (1, 2), (2, 3)], (3, None, None, None)))
    with pytest.raises(ValueError, match="nu_str"):
        OTMANNKernel(nu_str=())
    with pytest.raises(ValueError, match="theta must have"):
        k = OTMANNKernel(n_jobs=1)
        a = nb201.sample(np.random.default_rng(0), 2)
        k.combine(k.components(a, a), [1.0, 2.0])


def test_degenerate_cells_are_finite():
    empty = cell(["none"] * 6)  # output unreachable: reduces to input, output, no edge
    skip_only = cell(["skip_connect", "none", "none", "skip_connect", "none", "none"])  # input -> output
    conv = cell(["nor_conv_3x3", "none", "none", "none", "nor_conv_3x3", "none"])
    k = OTMANNKernel(n_jobs=1)
    comps = k.components([empty, skip_only, conv], [empty, skip_only, conv])
    for name, D in comps.items():
        assert np.all(np.isfinite(D)), name
        assert np.allclose(np.diag(D), 0)
    assert comps["d_0.1"][0, 1] > 0  # same unit masses, different structure
    assert layer_masses(empty.reduced()).tolist() == [1.0, 1.0]


# ---------------------------------------------------------------------------- call history
def test_kernel_defaults_and_matrices_do_not_depend_on_call_history():
    """A kernel is an immutable configuration: what it computed before must not change what it
    gives for B (regression: the default betas were the medians of its first components call)."""
    rng = np.random.default_rng(10)
    A = [random_mlp(rng) for _ in range(8)]  # layer-space distances are ~50x those of NB201 cells
    B = nb201.sample(rng, 12)
    used, fresh = OTMANNKernel(n_jobs=1), OTMANNKernel(n_jobs=1)
    used.components(A, A)
    comps_used, comps_fresh = used.components(B, B), fresh.components(B, B)
    assert used.hyperparameters == fresh.hyperparameters
    assert np.array_equal(used.default_theta(), fresh.default_theta())
    for name in fresh.component_names:
        assert np.array_equal(comps_used[name], comps_fresh[name]), name
    assert np.array_equal(used.matrix(B), fresh.matrix(B))


def test_gp_fit_does_not_depend_on_what_its_kernel_saw_before():
    from nasviz.gp import GaussianProcess

    rng = np.random.default_rng(11)
    A = [random_mlp(rng) for _ in range(8)]
    B = nb201.sample(rng, 15)
    y = rng.normal(size=len(B))
    used = OTMANNKernel(n_jobs=1)
    used.components(A, A)
    fits = [GaussianProcess(k, n_restarts=2, seed=0).fit(B, y) for k in (used, OTMANNKernel(n_jobs=1))]
    assert fits[0].theta == fits[1].theta
    assert (fits[0].amplitude, fits[0].noise) == (fits[1].amplitude, fits[1].noise)


def test_distances_are_bit_identical_whatever_the_kernel_saw_first():
    """Each pair is solved in one orientation (by canonical key) on layers in a canonical order,
    so neither the order in which architectures arrive nor which of two isomorphic numberings
    came first changes a single bit."""
    rng = np.random.default_rng(12)
    B = nb201.sample(rng, 25) + [random_mlp(rng) for _ in range(15)]
    seen = OTMANNKernel(n_jobs=1)
    seen.otmann_distances(B[::-1], B[::-1])
    assert np.array_equal(seen.otmann_distances(B, B), OTMANNKernel(n_jobs=1).otmann_distances(B, B))
    # two numberings of one MLP (the parallel branches swapped) and a third network
    x = mlp([("relu", 16), ("tanh", 32), ("linear", None)], [(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)])
    y = mlp([("tanh", 32), ("relu", 16), ("linear", None)], [(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)])
    assert x != y and x.canonical_key() == y.canonical_key()
    others = [random_mlp(rng) for _ in range(40)]
    first_x, first_y = OTMANNKernel(n_jobs=1), OTMANNKernel(n_jobs=1)
    first_x.otmann_distances([x], others)
    first_y.otmann_distances([y], others)
    assert np.array_equal(first_x.otmann_distances([y], others), first_y.otmann_distances([y], others))


def test_hyperparameters_come_from_the_configured_scales():
    k = OTMANNKernel(nu_str=(0.1, 0.4), d_scale=(100.0, 200.0), dbar_scale=0.5, n_jobs=1)
    hps = {h.name: h for h in k.hyperparameters}
    assert hps["beta_0.1"].default == pytest.approx(1 / (2 * 100.0)) and hps["beta_0.4"].default == pytest.approx(1 / (2 * 200.0))
    assert hps["beta_bar_0.1"].default == hps["beta_bar_0.4"].default == pytest.approx(1 / (2 * 0.5**2))
    lo, hi = hps["beta_0.1"].bounds
    assert lo == pytest.approx(hps["beta_0.1"].default / BETA_RANGE) and hi == pytest.approx(hps["beta_0.1"].default * BETA_RANGE)
    for bad in ({"d_scale": 0.0}, {"dbar_scale": -1.0}, {"d_scale": (1.0, 2.0, 3.0)}, {"d_scale": float("nan")}):
        with pytest.raises(ValueError, match="scale"):
            OTMANNKernel(nu_str=(0.1, 0.4), **bad)


def test_hyperparameters_for_components_put_the_median_pair_at_exp_minus_one():
    """The data-dependent defaults are a pure function of the components they are given."""
    rng = np.random.default_rng(13)
    archs = nb201.sample(rng, 20)
    k = OTMANNKernel(n_jobs=1)
    before = k.hyperparameters
    comps = k.components(archs, archs)
    hps = k.hyperparameters_for(comps)
    assert k.hyperparameters == before  # nothing stored
    assert k.hyperparameters_for(comps) == hps
    beta = {h.name: h.default for h in hps}
    d_half = sum(beta[f"beta_{nu:g}"] * np.median(comps[f"d_{nu:g}"][comps[f"d_{nu:g}"] > 0]) for nu in k.nu_str)
    dbar_half = sum(beta[f"beta_bar_{nu:g}"] * np.median(comps[f"dbar_{nu:g}"][comps[f"dbar_{nu:g}"] > 0]) ** 2 for nu in k.nu_str)
    assert d_half == pytest.approx(1.0) and dbar_half == pytest.approx(1.0)
    # no positive distance (one architecture): the configured scales
    one = k.components(archs[:1], archs[:1])
    assert k.hyperparameters_for(one) == k.hyperparameters
    assert OTMANNScales.from_distances(np.zeros((4, 1, 1)), np.zeros((4, 1, 1)), k.scales) == k.scales


def test_a_shared_kernel_gives_every_thread_the_same_distances():
    """The memo is shared state: threads filling it at once must not mix up rows."""
    import sys

    rng = np.random.default_rng(14)
    archs = nb201.sample(rng, 40)
    reference = OTMANNKernel(n_jobs=1)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, so an unguarded memo shows its races
    try:
        _fill_shared_kernel_from_threads(rng, archs, reference)
    finally:
        sys.setswitchinterval(interval)


def _fill_shared_kernel_from_threads(rng, archs, reference) -> None:
    from concurrent.futures import ThreadPoolExecutor

    for _ in range(6):
        subsets = [[archs[i] for i in rng.permutation(len(archs))[:12]] for _ in range(8)]
        shared = OTMANNKernel(n_jobs=1)
        with ThreadPoolExecutor(8) as pool:  # every thread meets new architectures at once
            results = list(pool.map(lambda s: shared.otmann_distances(s, archs), subsets))
        for subset, got in zip(subsets, results):
            assert np.array_equal(got, reference.otmann_distances(subset, archs))


def test_kernel_pickles_with_its_memo():
    import pickle

    archs = nb201.sample(np.random.default_rng(15), 6)
    k = OTMANNKernel(n_jobs=1)
    d = k.otmann_distances(archs, archs)
    copy = pickle.loads(pickle.dumps(k))
    assert len(copy._memo) == len(k._memo) and copy.hyperparameters == k.hyperparameters
    assert np.array_equal(copy.otmann_distances(archs, archs), d)
