"""The NAS-Bench-101 space on the frame: registry, compatibility, canonical architectures, kernels, network."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from nasviz.arch import Architecture
from nasviz.components import SPACES, kernels_for, problems, strategies_for
from nasviz.errors import ConfigError
from nasviz.kernels import make_kernel
from nasviz.spaces import get_space, nb101

EXAMPLE = "01100|00011|00001|00001|00000;input,conv3x3-bn-relu,maxpool3x3,conv1x1-bn-relu,output"
# The same cell with vertices 2 and 3 exchanged.
SWAPPED = "01010|00101|00001|00001|00000;input,conv3x3-bn-relu,conv1x1-bn-relu,maxpool3x3,output"


@pytest.fixture(scope="module")
def space():
    return get_space("nb101")


def test_registered_with_its_representations(space):
    assert "nb101" in SPACES and isinstance(space, nb101.NB101Space)
    assert space.representations == {"labelled-dag", "operation-tree", "layers", "paths", "categorical-parameters"}
    assert space.size == nb101.PUBLISHED_CELL_COUNT == 423_624


def test_which_kernels_and_strategies_fit():
    kernels = kernels_for("nb101")
    for name in ("tw", "tw2g", "wl", "otmann", "edit", "path", "ot", "gw"):
        assert name in kernels
    strategies = strategies_for("nb101")
    assert {"random", "evolution", "bo", "bo-tw2g-ucb", "bo-tw2g-kdpp5"} <= set(strategies)
    # NAS-BOWL's gradient-guided pool mutates categorical parameters through the labels they name:
    # NB101's vertex operations (its edge bits name none) -- issue 48.
    assert "bo-wl-ei" in strategies and problems("nb101", "bo-wl-ei") == []
    assert problems("nb101", "bo", {"kernel": "wl", "pool": "mixed", "acquisition": "ei"}) == []


def test_parse_gives_the_canonical_cell_whatever_the_vertex_order(space):
    a, b = space.parse(EXAMPLE), space.parse(SWAPPED)
    assert a == b
    assert space.canonical_key(a) == nb101.parse(EXAMPLE).hash == nb101.parse(SWAPPED).hash
    text = space.format(a)
    assert space.parse(text) == a and space.format(space.parse(text)) == text
    assert space.contains(a)
    assert a.labels[0] == "input" and a.labels[-1] == "output" and len(a.edges) == 6
    with pytest.raises(ValueError, match="not reachable"):
        space.parse("010|000|000;input,conv3x3-bn-relu,output")


def test_two_columns_of_a_table_row(space):
    matrix, ops = EXAMPLE.split(";")
    assert space.parse_columns((matrix, ops)) == space.parse(EXAMPLE)
    assert space.parse_columns((EXAMPLE,)) == space.parse(EXAMPLE)
    assert space.table_columns == (("matrix", "ops"), ("hash",)) and space.table_duplicates == "average"
    assert space.parse_columns((space.canonical_key(space.parse(EXAMPLE)),)) == space.parse(EXAMPLE)  # by module hash


def test_moves_stay_in_the_space_and_are_canonical(space):
    rng = np.random.default_rng(0)
    for arch in space.sample(rng, 20):
        assert space.contains(arch)
        child = space.mutate(arch, rng)
        assert space.contains(child) and space.canonical_key(child) != space.canonical_key(arch)
    arch = space.parse(EXAMPLE)
    neighbours = space.neighbours(arch)
    assert neighbours and all(space.contains(n) for n in neighbours)
    assert len({space.canonical_key(n) for n in neighbours}) == len(neighbours)
    assert space.mutate(arch, np.random.default_rng(1)) in neighbours


def test_enumeration_yields_canonical_members(space):
    first = list(itertools.islice(space.enumerate(), 50))
    assert len(first) == 50 and all(isinstance(a, Architecture) and space.contains(a) for a in first)
    keys = [space.canonical_key(a) for a in first]
    assert keys == sorted(keys) and len(set(keys)) == 50


def test_otmann_reads_the_space_label_table(space):
    base = space.parse("0100|0010|0001|0000;input,conv3x3-bn-relu,conv3x3-bn-relu,output")
    conv = space.parse("0100|0010|0001|0000;input,conv3x3-bn-relu,conv1x1-bn-relu,output")
    pool = space.parse("0100|0010|0001|0000;input,conv3x3-bn-relu,maxpool3x3,output")
    kernel = make_kernel("otmann", space=space, n_jobs=1)
    d = kernel.otmann_distances([base], [conv, pool])[0, 0]
    assert 0 < d[0] < d[1]  # conv1x1 for conv3x3 costs 0.2 per unit; a pool cannot match a conv
    with pytest.raises(ValueError, match="unknown layer label 'conv3x3-bn-relu'"):
        make_kernel("otmann", n_jobs=1).otmann_distances([base], [conv])  # the built-in tables lack NB101


def test_tw_tree_groups_the_convolutions(space):
    kernel = make_kernel("tw1g", space=space)
    assert kernel.tree.group_of("conv1x1-bn-relu") == kernel.tree.group_of("conv3x3-bn-relu") == "convolution"
    assert kernel.tree.group_of("maxpool3x3") == "pooling"


def test_a_non_image_input_is_refused_and_a_cell_trains_forward(space):
    arch = space.parse(EXAMPLE)
    with pytest.raises(ConfigError, match="image inputs"):
        space.build_network(arch, (64,), 10)
    net = space.build_network(arch, (1, 8, 8), 10, **space.network_defaults())
    assert net(torch.zeros(3, 1, 8, 8)).shape == (3, 10)
    assert space.trainable_on() == {"image"}
