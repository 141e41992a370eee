"""Kernels configured from a space's representations (``make_kernel(..., space=...)``)."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.kernels import make_kernel
from nasviz.kernels.otmann import INCOMPATIBLE_COST, LabelTable
from nasviz.spaces import get_space


def test_label_table_checks_what_a_space_declares():
    labels = ("a", "b", "input", "output")
    M = np.array([[0, 0.2, np.inf, np.inf], [0.2, 0, np.inf, np.inf], [np.inf, np.inf, 0, np.inf], [np.inf] * 3 + [0]])
    table = LabelTable.build({"a": "unit", "b": "pool", "input": "input", "output": "output"}, labels, M)
    assert table.mismatch[0, 2] == INCOMPATIBLE_COST and table.mismatch[0, 1] == 0.2
    assert table.groups == {"a": "conv", "b": "pool"}
    with pytest.raises(ValueError, match="symmetric"):
        LabelTable.build({"a": "unit"}, labels, M + np.triu(np.ones((4, 4)), 1))
    with pytest.raises(ValueError, match="no row"):
        LabelTable.build({"c": "unit"}, labels, M)
    with pytest.raises(ValueError, match="unknown layer kind"):
        LabelTable.build({"a": "conv"}, labels, M)
    with pytest.raises(ValueError, match="must be \\(4, 4\\)"):
        LabelTable.build({"a": "unit"}, labels, M[:3, :3])


@pytest.mark.parametrize("name", ["nb201", "layers"])
def test_a_space_table_gives_the_distances_of_the_builtin_one(name):
    space = get_space(name)
    archs = space.sample(np.random.default_rng(3), 12)
    own = make_kernel("otmann", space=space, n_jobs=1).otmann_distances(archs, archs)
    builtin = make_kernel("otmann", n_jobs=1).otmann_distances(archs, archs)
    # equal up to round-off: the tables number labels differently, so the layers enter the
    # simplex in another (canonical) order
    assert np.allclose(own, builtin, rtol=1e-12, atol=1e-9)


def test_options_the_caller_gives_win_over_the_space():
    space = get_space("nb201")
    tree = {"everything": ("nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")}
    assert make_kernel("tw", space=space, tree=tree).tree.group_of("avg_pool_3x3") == "everything"
    assert make_kernel("tw", space=space).tree.group_of("avg_pool_3x3") == "pooling"
