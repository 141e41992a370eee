"""Properties every registered kernel must have, checked on the same NAS-Bench-201 cells.

Parametrised over the registry (``nasviz.kernels.kernel_names()``, presets such as ``tw2g``
included).

* distances: symmetric, zero on the diagonal, non-negative (all kernels);
* triangle inequality on random triples where the paper proves it: TW (paper 000 Prop. 1),
  OTMANN's ``d`` (paper 001 Theorem 3), Auto-Keras's edit distance (paper 003) and its
  Euclidean Bourgain embedding;
* smallest eigenvalue of the default kernel matrix >= -1e-8 on 300 random cells for the kernels
  that are positive definite by construction (TW, WL, edit after Bourgain, path);
* architectures of different sizes and label sets (layer-space DAGs) give finite distances.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from nasviz.arch import Architecture
from nasviz.components import KERNELS
from nasviz.kernels import kernel_names, make_kernel
from nasviz.spaces import mlp, nb201
from nasviz.spaces.base import PARAMETERS

#: Kernels whose distance (or the listed components) satisfies the triangle inequality.
TRIANGLE: dict[str, tuple[str, ...] | None] = {"tw": None, "otmann": ("d_",), "edit": ("edit", "bourgain")}
#: Kernels that are positive semi-definite by construction.
PSD = ("tw", "wl", "edit", "path")
#: Kernels that solve a transport / assignment problem per pair: checked on fewer cells.
SLOW = ("otmann", "edit", "ot", "gw")


def _build(name: str):
    """The registry's kernel; kernels that read a space's categorical parameters are built for NB201."""
    return make_kernel(name, space=nb201.SPACE) if PARAMETERS in KERNELS.get(name).load().reads else make_kernel(name)


@pytest.fixture(scope="module")
def cells() -> list[Architecture]:
    return nb201.sample(np.random.default_rng(2024), 300)


@pytest.fixture(scope="module")
def kernel_cache() -> dict:
    return {}


@pytest.fixture(scope="module")
def distances(cells, kernel_cache):
    """Distance components per kernel on the first 40 cells (25 for the slow kernels), computed once."""
    results: dict[str, dict[str, np.ndarray]] = {}

    def get(name: str) -> dict[str, np.ndarray]:
        if name not in results:
            kernel = kernel_cache.setdefault(name, _build(name))
            sub = cells[: 25 if name in SLOW else 40]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results[name] = kernel.distances(sub, sub)
        return results[name]

    return get


@pytest.mark.parametrize("name", kernel_names())
def test_registry_builds_the_kernel(name):
    entry = KERNELS.get(name)
    kernel = _build(name)
    assert type(kernel) is entry.load()
    assert all(getattr(kernel, k) == v for k, v in entry.preset.items())  # tw2g is TW with ngram=2
    # The GraKeL baselines have no hyperparameter of their own (the GP learns amplitude and noise).
    assert kernel.hyperparameters or type(kernel).__module__ == "nasviz.kernels.graph_kernels", \
        "a kernel exposes its hyperparameters"
    assert len(kernel.default_theta()) == len(kernel.hyperparameters)


@pytest.mark.parametrize("name", kernel_names())
def test_distances_are_symmetric_zero_on_diagonal_non_negative(name, distances):
    comps = distances(name)
    assert comps, "at least one distance component"
    for comp, D in comps.items():
        assert D.ndim == 2 and D.shape[0] == D.shape[1], comp
        assert np.all(np.isfinite(D)), comp
        np.testing.assert_allclose(D, D.T, atol=1e-10, err_msg=f"{name}:{comp} not symmetric")
        assert np.abs(np.diag(D)).max() <= 1e-6, f"{name}:{comp} diagonal not zero"
        assert D.min() >= -1e-12, f"{name}:{comp} negative"


@pytest.mark.parametrize("name", list(TRIANGLE))
def test_triangle_inequality_on_random_triples(name, distances):
    comps = distances(name)
    prefixes = TRIANGLE[name]
    checked = [c for c in comps if prefixes is None or any(c.startswith(p) for p in prefixes)]
    assert checked, f"no component of {name} matched {prefixes}"
    rng = np.random.default_rng(0)
    n = next(iter(comps.values())).shape[0]
    i, j, k = rng.integers(0, n, size=(3, 500))
    for comp in checked:
        D = comps[comp]
        slack = D[i, j] + D[j, k] - D[i, k]
        assert slack.min() >= -1e-9 * max(1.0, D.max()), f"{name}:{comp} violates the triangle inequality"


@pytest.mark.parametrize("name", PSD)
def test_kernel_matrix_is_psd_on_300_cells(name, cells, kernel_cache):
    kernel = kernel_cache.setdefault(name, _build(name))
    assert kernel.positive_definite
    K = kernel.matrix(cells)
    assert K.shape == (300, 300)
    np.testing.assert_allclose(K, K.T, atol=1e-10)
    assert np.linalg.eigvalsh(K)[0] >= -1e-8


@pytest.mark.parametrize("name", [n for n in kernel_names() if KERNELS.get(n).load().reads <= mlp.SPACE.representations])
def test_different_sizes_and_labels(name):
    """Layer-space DAGs with 3 to 6 nodes, widths and activation labels."""
    archs = [
        Architecture(("input", "relu", "output"), ((0, 1), (1, 2)), (None, 64, None)),
        Architecture(("input", "relu", "tanh", "output"), ((0, 1), (1, 2), (2, 3)), (None, 32, 64, None)),
        Architecture(
            ("input", "relu", "relu", "logistic", "output"),
            ((0, 1), (0, 2), (1, 3), (2, 3), (3, 4)),
            (None, 16, 128, 64, None),
        ),
        Architecture(
            ("input", "elu", "relu", "tanh", "relu", "output"),
            ((0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 5), (1, 5)),
            (None, 8, 8, 16, 32, None),
        ),
    ]
    kernel = make_kernel(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comps = kernel.distances(archs, archs)
        K = kernel.matrix(archs)
    for comp, D in comps.items():
        assert np.all(np.isfinite(D)), comp
        np.testing.assert_allclose(np.diag(D), 0, atol=1e-6)
    assert np.all(np.isfinite(K))
    off = sum(comps.values())[~np.eye(4, dtype=bool)]
    assert np.all(off > 0), "different architectures are told apart"
