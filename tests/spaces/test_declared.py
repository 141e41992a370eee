"""Spaces declared without Python: spec files (TOML, JSON), a table's position columns, and what
each optional key unlocks (issue 48, "A space without Python")."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from nasviz.components import SPACES, kernels_for, strategies_for
from nasviz.errors import ConfigError, InputError
from nasviz.registry import Registry
from nasviz.spaces.base import LABELLED_DAG, OPERATION_SLOTS, OPERATION_TREE, PARAMETERS, PATHS
from nasviz.spaces.declared import read_spec_file, register_spec, space_class, spec_from_data, table_spec

GRAPH4 = textwrap.dedent('''\
    name = "graph4"
    description = "4 layers, each reading an earlier one, 9 operations"
    operations = ["conv1", "conv3", "conv5", "dconv3", "dconv5", "max3", "avg3", "skip_connect", "none"]
    positions = 4
    graph = "chain"

    [inputs]
    layer_2 = ["input", "layer_1"]
    layer_3 = ["input", "layer_1", "layer_2"]
    layer_4 = ["input", "layer_1", "layer_2", "layer_3"]

    [groups]
    conv = ["conv1", "conv3", "conv5", "dconv3", "dconv5"]
    pool = ["max3", "avg3"]
''')


def _space(data):
    return space_class(spec_from_data(data))()


def test_a_spec_file_with_input_choices_and_groups(tmp_path):
    path = tmp_path / "graph4.toml"
    path.write_text(GRAPH4)
    space = space_class(read_spec_file(path))()
    assert space.provided_representations() == {PARAMETERS, OPERATION_TREE, LABELLED_DAG, PATHS}
    assert list(space.parameter_choices()) == ["layer_1", "layer_2", "layer_2_input", "layer_3", "layer_3_input",
                                               "layer_4", "layer_4_input"]
    assert space.size == 9 ** 4 * 2 * 3 * 4
    arch = space.parse("conv3-max3<input-conv5<layer_1-none<layer_2")
    assert space.format(arch) == "conv3-max3<input-conv5<layer_1-none<layer_2"
    # layer_1 feeds layer_3; layer_2 feeds layer_4; layer_3 and layer_4 are read by nobody: they feed the output
    assert set(arch.edges) == {(0, 1), (0, 2), (1, 3), (2, 4), (3, 5), (4, 5)}
    assert arch.labels == ("input", "conv3", "max3", "conv5", "none", "output")
    neighbours = space.neighbours(arch)
    assert len(neighbours) == 4 * 8 + 1 + 2 + 3 and len(set(neighbours)) == len(neighbours)
    rng = np.random.default_rng(0)
    assert all(space.mutate(arch, rng) in neighbours for _ in range(50))
    assert all(space.parse(space.format(a)) == a for a in space.sample(rng, 30))
    groups = space.operation_groups()
    assert groups["conv"][:2] == ("conv1", "conv3") and groups["input"] == ("input",)


def test_json_and_toml_declare_the_same_space(tmp_path):
    import tomllib

    (tmp_path / "g.toml").write_text(GRAPH4)
    (tmp_path / "g.json").write_text(json.dumps(tomllib.loads(GRAPH4), indent=2))
    assert read_spec_file(tmp_path / "g.toml").to_dict() == read_spec_file(tmp_path / "g.json").to_dict()


def test_each_optional_key_unlocks_its_kernels():
    plain = {"name": "plain", "operations": ["a", "b", "c"], "positions": 3}
    registry_names = []
    for extra, provides, kernel in (
        ({}, {PARAMETERS, OPERATION_SLOTS}, "slots"),
        ({"groups": {"ab": ["a", "b"]}}, {PARAMETERS, OPERATION_SLOTS, OPERATION_TREE}, None),
        ({"graph": "chain"}, {PARAMETERS, OPERATION_SLOTS, LABELLED_DAG, PATHS}, "wl"),
        ({"graph": "chain", "groups": {"ab": ["a", "b"]}},
         {PARAMETERS, OPERATION_SLOTS, LABELLED_DAG, PATHS, OPERATION_TREE}, "tw2g-hamming"),
    ):
        spec = spec_from_data({**plain, **extra, "name": f"plain-{len(registry_names)}"})
        registry_names.append(spec.name)
        assert space_class(spec).provided_representations() == provides
        register_spec(spec, SPACES)
    try:
        assert set(kernels_for(registry_names[0])) == {"slots"}  # no graph: only the slot kernel reads it
        assert "wl" not in kernels_for(registry_names[1]) and "tw" not in kernels_for(registry_names[1])
        assert {"wl", "edit", "path"} <= set(kernels_for(registry_names[2])) and "tw" not in kernels_for(registry_names[2])
        assert "tw2g-hamming" in kernels_for(registry_names[3])
        assert "bo-tw2g-hamming-ei" in strategies_for(registry_names[3])  # the default needs all of them
        assert "optuna-tpe" in strategies_for(registry_names[0]) and "random" in strategies_for(registry_names[0])
    finally:
        for name in registry_names:
            SPACES.unregister(name)


@pytest.mark.parametrize("text, line, field, problem", [
    ('name = "x"\npositions = 2\noperations = ["a", "b"]\n[groups]\nab = ["a", "z"]\n', 5, "groups.ab",
     "'z' is not an operation of any position"),
    ('name = "x"\npositions = 3\noperations = ["a"]\n[inputs]\nlayer_2 = ["layer_3"]\n', 5, "inputs.layer_2",
     "'layer_3' is not an earlier position or 'input'"),
    ('name = "x"\npositions = 2\noperations = ["a-b", "c"]\n', 3, "operations", "contains the separator"),
    ('name = "x"\npositions = 2\noperations = ["a"]\n[inputs]\nlayer_2 = ["input"]\n', 4, "inputs",
     "input choices need the DAG template"),
    ('name = "x"\npositions = 2\noperations = ["a"]\ncolour = "red"\n', 4, "colour", "is not a spec key"),
    ('name = "x"\npositions = 2\noperations = ["a"\n', 3, None, "is not valid TOML"),
])
def test_a_bad_spec_names_the_file_the_line_and_the_field(tmp_path, text, line, field, problem):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_spec_file(path)
    err = caught.value
    assert (err.source, err.line, err.field) == (str(path), line, field) and problem in err.problem


def test_the_same_spec_twice_is_a_no_op_and_another_under_its_name_is_refused():
    registry = Registry("search space")
    spec = spec_from_data({"name": "twice", "operations": ["a", "b"], "positions": 2}, source="one.toml")
    first = register_spec(spec, registry, "spec file one.toml")
    assert register_spec(spec_from_data(spec.to_dict(), source="again.toml"), registry) is first
    with pytest.raises(ConfigError, match="'twice' is already registered .spec file one.toml.; other.toml declares"):
        register_spec(spec_from_data({"name": "twice", "operations": ["a", "c"], "positions": 2}, source="other.toml"),
                      registry)


def test_position_dependent_labels_guide_gradient_mutation():
    """Finding 7: the gradient pool looked gradients up by slot choice names, so a space whose node
    labels say where they stand got none. Here ``layer_2:b`` helps and ``layer_2:a`` harms: layer 2
    is the most likely position to change, and to ``b``."""
    from nasviz.candidates.gradient import gradient_pool, parameter_mutation_probabilities

    space = _space({"name": "where", "operations": ["a", "b", "c"], "positions": 3, "graph": "chain",
                    "labels": "position"})
    arch = space.parse("a-a-a")
    assert arch.labels[1:-1] == ("layer_1:a", "layer_2:a", "layer_3:a")
    grads = {"layer_1:a": 0.5, "layer_2:a": -2.0, "layer_2:b": 2.0, "layer_3:a": 0.5}
    probs = parameter_mutation_probabilities(space, arch, grads)
    assert probs.guided and int(np.argmax(probs.where)) == 1
    assert probs.choices[1][int(np.argmax(probs.to[1]))] == "b"
    pool = gradient_pool(space, np.random.default_rng(0), [arch], 6, op_gradients=grads)
    assert "fallback" not in pool.info and pool.origin.count("gradient") >= 4


COLUMNS_TABLE = textwrap.dedent('''\
    run_id,layer_1,layer_2,layer_3,val_acc,latency_ms,zip,note
    1,conv,conv,pool,90.1,3.2,00123,first
    2,conv,pool,pool,88.0,2.1,00456,
    3,pool,conv,conv,89.5,2.9,01234,
    4,pool,pool,pool,85.0,1.0,00042,slowest
    5,conv,conv,conv,91.0,3.9,00007,
''')


def test_a_table_spread_over_position_columns_declares_its_space(tmp_path):
    from nasviz.objectives import load_table

    path = tmp_path / "layers3.csv"
    path.write_text(COLUMNS_TABLE)
    spec = table_spec(path)
    assert spec.name == "layers3" and [p.name for p in spec.positions] == ["layer_1", "layer_2", "layer_3"]
    assert all(p.choices == ("conv", "pool") for p in spec.positions)
    register_spec(spec, SPACES)
    try:
        table = load_table(path, space="layers3")
        assert table.arch_columns == ("layer_1", "layer_2", "layer_3") and len(table) == 5
        assert table.metrics == ["val_acc", "latency_ms"]  # run_id is an identifier, zip codes are text
        assert table.direction("latency_ms") == "minimise" and table.optimum("latency_ms") == 1.0
        assert table.strings[0] == "conv-conv-pool"
    finally:
        SPACES.unregister("layers3")


def test_a_tables_schema_may_name_its_space_columns_and_add_spec_keys(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(COLUMNS_TABLE.replace("layer_", "L"))  # L1, L2, L3: no _n suffix needed
    (tmp_path / "t.schema.toml").write_text(
        'architecture = ["L1", "L2", "L3"]\n[space]\nname = "ell"\ngraph = "chain"\n[space.groups]\nall = ["conv", "pool"]\n')
    spec = table_spec(path)
    assert spec.name == "ell" and spec.graph == "chain" and spec.groups == (("all", ("conv", "pool")),)
    assert [p.name for p in spec.positions] == ["L1", "L2", "L3"]
