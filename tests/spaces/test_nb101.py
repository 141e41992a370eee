"""The NAS-Bench-101 space: text forms, pruning, module hash, enumeration, moves, tables.

Checks against NAS-Bench-101's published data use the shared tables (skipped when absent); the
enumeration is cross-checked against brute force over every raw spec of up to 5 vertices and,
in full, against NAS-Bench-101's count of 423,624 cells. The full enumeration is loaded from the
cache (``$NASVIZ_CACHE_DIR``, default ``~/.cache/nasviz``); the first run builds it (~25 s).
"""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import numpy as np
import pytest

from nasviz.arch import Architecture
from nasviz.spaces import nb101
from nasviz.spaces.nb101 import cache as nb101_cache
from nasviz.spaces.nb101.enumeration import _decode, _labelled_classes
from nasviz.spaces.nb101.moves import _apply, _moves
from nasviz.spaces.nb101 import InvalidCellError, NB101Cell, NB101ParseError

EXAMPLE = "01100|00011|00001|00001|00000;input,conv3x3-bn-relu,maxpool3x3,conv1x1-bn-relu,output"
TRIVIAL = "01|00;input,output"
CHAIN3 = "010|001|000;input,conv3x3-bn-relu,output"


def _shared(name: str) -> Path:
    path = nb101.shared_data_path(name)
    if path is None:
        pytest.skip(f"the shared table {name} is absent: set {nb101.SHARED_DATA_ENV} or place it at ../shared/data/{name}")
    return path


@pytest.fixture(scope="module")
def rows_500() -> list[dict[str, str]]:
    with open(_shared("nb101_500.csv"), newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def enumeration() -> nb101.Enumeration:
    return nb101.load_enumeration()


# ------------------------------------------------------------------------------ text and cells
def test_single_string_and_two_columns_round_trip():
    cell = nb101.parse(EXAMPLE)
    assert nb101.format(cell) == EXAMPLE == str(cell)
    matrix, ops = EXAMPLE.split(";")
    assert nb101.parse(matrix, ops) == cell
    assert (nb101.format_matrix(cell), nb101.format_ops(cell)) == (matrix, ops)
    assert cell.n_vertices == 5 and cell.n_edges == 6
    assert cell.edges == ((0, 1), (0, 2), (1, 3), (1, 4), (2, 4), (3, 4))
    assert nb101.parse(" 01|00 ; input , output ") == nb101.parse(TRIVIAL)  # whitespace tolerated


@pytest.mark.parametrize(
    "text, error, message",
    [
        ("", NB101ParseError, "must be '<matrix>;<ops>'"),
        ("01|00", NB101ParseError, "found 0 ';'"),
        ("01|00;input,output;x", NB101ParseError, "found 2 ';'"),
        ("011|00;input,output", NB101ParseError, r"row 0 '011' has 3 digit\(s\); a 2-row matrix needs 2"),
        ("012|001|000;input,conv3x3-bn-relu,output", NB101ParseError, "row 0 '012' has a character '2'"),
        ("01|00;input,,output", NB101ParseError, "label 1 is empty"),
        ("010|001|000;input,output", NB101ParseError, r"3 vertices but 2 operation\(s\)"),
        ("010|001|000;input,conv5x5,output", NB101ParseError, "vertex 1: unknown operation 'conv5x5'"),
        ("010|001|000;conv3x3-bn-relu,input,output", NB101ParseError, "vertex 0 must be 'input'"),
        ("010|001|000;input,output,conv3x3-bn-relu", NB101ParseError, r"vertex 2 \(the last\) must be 'output'"),
        ("010|001|100;input,conv3x3-bn-relu,output", NB101ParseError, r"strictly upper triangular: entry \(2, 0\)"),
        ("011|000|000;input,conv3x3-bn-relu,output", InvalidCellError, r"\[1\] not on an input->output path"),
        ("010|000|000;input,conv3x3-bn-relu,output", InvalidCellError, "output is not reachable"),
        ("00|00;input,output", InvalidCellError, "output is not reachable"),
    ],
)
def test_malformed_or_invalid_text_says_what_is_wrong(text, error, message):
    with pytest.raises(error, match=message):
        nb101.parse(text)


def test_cell_limits_and_errors_are_value_errors():
    full7 = np.triu(np.ones((7, 7), dtype=int), 1)  # 21 edges
    with pytest.raises(InvalidCellError, match="21 edges; a cell has at most 9"):
        NB101Cell(full7, ("input", *[nb101.CONV3X3] * 5, "output"))
    chain8 = np.eye(8, k=1, dtype=int)
    with pytest.raises(InvalidCellError, match="2 to 7 vertices, got 8"):
        NB101Cell(chain8, ("input", *[nb101.CONV3X3] * 6, "output"))
    with pytest.raises(InvalidCellError, match="entries must be 0 or 1, got 2"):
        NB101Cell([[0, 2], [0, 0]], ("input", "output"))
    assert issubclass(NB101ParseError, ValueError) and issubclass(InvalidCellError, ValueError)


# ------------------------------------------------------------------------------------- pruning
def test_prune_rules_by_hand():
    c3, c1, mp = nb101.CONV3X3, nb101.CONV1X1, nb101.MAXPOOL3X3
    # vertex 1 has no in-edge (unreachable from the input), vertex 2 no out-edge: both go
    raw = [[0, 0, 1, 1, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1], [0, 0, 0, 0, 0]]
    assert nb101.prune(raw, ("input", c1, mp, c3, "output")) == nb101.parse(f"010|001|000;input,{c3},output")
    # the output cut off from the input: invalid even though other edges exist
    with pytest.raises(InvalidCellError, match="output is not reachable"):
        nb101.prune([[0, 1, 0], [0, 0, 0], [0, 0, 0]], ("input", c3, "output"))
    # 10 raw edges but 3 of them hang off a dead vertex: valid after pruning (limits apply to the pruned spec)
    raw = np.zeros((7, 7), dtype=int)
    for i, j in [(0, 1), (1, 2), (2, 3), (3, 6), (0, 6), (0, 2), (1, 3), (0, 5), (1, 5), (2, 5)]:
        raw[i, j] = 1
    cell = nb101.prune(raw, ("input", c3, c3, c3, c1, mp, "output"))
    assert cell.n_vertices == 5 and cell.n_edges == 7
    # more than 9 edges left after pruning: invalid
    raw = np.triu(np.ones((6, 6), dtype=int), 1)  # 15 edges, nothing to prune
    with pytest.raises(InvalidCellError, match="15 edges after pruning"):
        nb101.prune(raw, ("input", c3, c3, c3, c3, "output"))
    # a raw spec of 8 vertices is fine if pruning leaves 7 or fewer
    raw = np.eye(8, k=1, dtype=int)
    raw[3, 4] = 0
    raw[0, 7] = 1
    assert nb101.prune(raw, ("input", *[c3] * 6, "output")) == nb101.parse(TRIVIAL)
    assert not nb101.is_valid_spec(np.eye(8, k=1, dtype=int), ("input", *[c3] * 6, "output"))


def test_prune_reproduces_the_pruned_spec_of_all_500_rows(rows_500):
    mismatches = [
        k
        for k, row in enumerate(rows_500)
        if nb101.format(nb101.prune(*nb101.parse_raw(row["raw_matrix"], row["raw_ops"])))
        != f"{row['matrix']};{row['ops']}"
    ]
    assert len(rows_500) == 500 and mismatches == []


# ---------------------------------------------------------------------------------------- hash
def test_module_hash_of_all_500_rows(rows_500):
    cells = [nb101.parse(row["matrix"], row["ops"]) for row in rows_500]
    assert [c.hash for c in cells] == [row["nb101_hash"] for row in rows_500]
    assert len({c.hash for c in cells}) == 292  # the distinct cells the data README counts


def test_hash_is_isomorphism_invariant_and_sees_labels_and_edges():
    cell = nb101.parse(EXAMPLE)
    # swap the middle vertices 2 and 3 (both fed by earlier vertices, both feed 4): same DAG
    perm = [0, 1, 3, 2, 4]
    m = cell.array()[np.ix_(perm, perm)]
    swapped = NB101Cell(np.triu(m) + np.tril(m).T, tuple(cell.ops[p] for p in perm))
    assert swapped != cell and swapped.hash == cell.hash
    relabelled = NB101Cell(cell.matrix, (cell.ops[0], nb101.CONV1X1, *cell.ops[2:]))
    assert relabelled.hash != cell.hash
    fewer = nb101.prune(cell.array() - _unit(5, 0, 2), cell.ops)  # vertex 2 loses its only input
    assert fewer.n_vertices == 4 and fewer.hash != cell.hash
    assert nb101.canonical_key(cell) == cell.hash and len(cell.hash) == 32


def _unit(n: int, i: int, j: int) -> np.ndarray:
    u = np.zeros((n, n), dtype=int)
    u[i, j] = 1
    return u


def test_batch_hash_equals_the_single_hash():
    rng = np.random.default_rng(3)
    for n in (3, 5, 6):
        bits, codes = _labelled_classes(n)
        pick = rng.choice(len(bits), size=min(40, len(bits)), replace=False)
        mats, labels = _decode(n, bits[pick], codes[pick])
        batch = nb101.module_hash_batch(mats, labels)
        ops = [("input", *(nb101.OPERATIONS[x] for x in row[1:-1]), "output") for row in labels]
        assert [h.decode() for h in batch] == [nb101.module_hash(m, o) for m, o in zip(mats, ops)]


# --------------------------------------------------------------------------------- enumeration
@pytest.mark.slow
def test_enumeration_up_to_5_vertices_equals_brute_force_over_raw_specs():
    """Every raw (matrix, labelling) with 2..5 vertices, pruned and hashed, as NAS-Bench-101 does."""
    found: set[str] = set()
    for n in range(2, 6):
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
        for bits in range(1 << len(pairs)):
            raw = np.zeros((n, n), dtype=np.int8)
            for b, (i, j) in enumerate(pairs):
                raw[i, j] = bits >> b & 1
            try:  # pruning depends on the matrix only: prune once, then label the survivors
                keep = nb101.prune(raw, ("input", *[nb101.CONV3X3] * (n - 2), "output"))
            except InvalidCellError:
                continue
            for labels in itertools.product(nb101.OPERATIONS, repeat=keep.n_vertices - 2):
                found.add(nb101.module_hash(keep.matrix, ("input", *labels, "output")))
    small = nb101.build_enumeration(max_vertices=5)
    assert {h.decode() for h in small.hashes} == found
    assert len(found) == small.info["isomorphism_classes"] == 2532
    # every stored cell is in canonical form and hashes to its key
    for i in range(0, len(small), 17):
        cell = small.cell(i)
        assert nb101.canonical(NB101Cell(cell.matrix, cell.ops)) == cell
        assert nb101.module_hash(cell.matrix, cell.ops) == small.hashes[i].decode()


@pytest.mark.slow
def test_full_enumeration_has_nas_bench_101s_423624_cells(enumeration):
    assert nb101.count() == len(enumeration) == nb101.PUBLISHED_CELL_COUNT == 423_624
    # no two non-isomorphic cells share a hash (otherwise classes > cells)
    assert enumeration.info["isomorphism_classes"] == 423_624
    assert bool(np.all(enumeration.hashes[1:] > enumeration.hashes[:-1]))
    counts = np.bincount(enumeration.n_vertices, minlength=8)[2:]
    assert counts.tolist() == [enumeration.info["per_vertex_count"][n] for n in range(2, 8)]
    rng = np.random.default_rng(0)
    for i in rng.integers(0, len(enumeration), 60):
        cell = enumeration.cell(int(i))
        again = NB101Cell(cell.matrix, cell.ops)  # validated constructor
        assert again == cell and nb101.module_hash(cell.matrix, cell.ops) == cell.hash
        assert nb101.canonical(again) == cell
        assert nb101.index_of_hash(cell.hash) == i and nb101.cell_of_hash(cell.hash) == cell


def test_every_500_row_is_enumerated_under_its_canonical_form(rows_500, enumeration):
    for row in rows_500:
        cell = nb101.parse(row["matrix"], row["ops"])
        assert nb101.cell_of_hash(row["nb101_hash"]) == nb101.canonical(cell)
    with pytest.raises(KeyError, match="no NAS-Bench-101 cell has the module hash"):
        nb101.index_of_hash("0" * 32)
    assert "0" * 32 not in enumeration and "not a hash" not in enumeration


def test_every_hash_of_the_20k_table_is_enumerated(enumeration):
    with open(_shared("nb101_hash_20k.csv"), newline="") as handle:
        hashes = [row["hash"] for row in csv.DictReader(handle)]
    missing = [h for h in hashes if h not in enumeration]
    assert len(hashes) == 20_001 and missing == []


def test_cache_round_trip_and_rejection_of_bad_files(tmp_path):
    small = nb101.build_enumeration(max_vertices=4)
    path = tmp_path / "cells.npz"
    nb101_cache._save(small, path)
    back = nb101_cache._load(path)
    assert back is not None and len(back) == len(small) == 91
    for name in ("hashes", "n_vertices", "bits", "codes"):
        assert np.array_equal(getattr(back, name), getattr(small, name))
    assert back.info["per_vertex_count"] == {2: 1, 3: 6, 4: 84}
    np.savez(path, version=np.int64(999), hashes=small.hashes)  # stale version
    assert nb101_cache._load(path) is None
    path.write_bytes(b"not an npz file")
    assert nb101_cache._load(path) is None
    assert nb101_cache._load(tmp_path / "absent.npz") is None


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(nb101.CACHE_ENV, str(tmp_path))
    assert nb101.cache_dir() == tmp_path
    monkeypatch.delenv(nb101.CACHE_ENV)
    assert nb101.cache_dir() == Path.home() / ".cache" / "nasviz"


# ------------------------------------------------------------------------- sampling and moves
def test_sampling_is_uniform_over_unique_cells(enumeration):
    rng = np.random.default_rng(0)
    cells = nb101.sample(rng, 4000)
    assert all(c == nb101.canonical(c) for c in cells[:50])
    share7 = np.mean([c.n_vertices == 7 for c in cells])
    expected = enumeration.info["per_vertex_count"][7] / len(enumeration)  # 0.848
    assert abs(share7 - expected) < 4 * np.sqrt(expected * (1 - expected) / len(cells))
    assert len({c.hash for c in cells}) > 3950  # 4000 draws from 423,624: few repeats


@pytest.mark.slow
def test_generator_draws_pruned_random_specs_as_nas_bowl_does(enumeration):
    """NAS-BOWL's sampler (random 7-vertex specs, pruned): valid cells, small ones favoured, the
    two-vertex cell once per call, other repeats kept; reproducible from the generator."""
    from nasviz.spaces.nb101.moves import generate

    cells = generate(np.random.default_rng(0), 2000)
    again = generate(np.random.default_rng(0), 2000)
    assert [c.hash for c in cells] == [c.hash for c in again]
    assert all(nb101.prune(c.matrix, c.ops) == c for c in cells[:200])  # already pruned, hence valid
    assert all(c.n_edges <= nb101.MAX_EDGES for c in cells)
    sizes = np.bincount([c.n_vertices for c in cells], minlength=8)
    assert sizes[2] <= 1
    # Uniform over unique cells, 85 % have 7 vertices; pruning random specs gives very few.
    assert sizes[7] / len(cells) < 0.02 < enumeration.info["per_vertex_count"][7] / len(enumeration)
    assert sizes[3] / len(cells) > 0.1  # the 6 three-vertex cells carry a large share...
    assert len({c.hash for c in cells}) < 0.8 * len(cells)  # ...so repeats are common
    space_draws = nb101.NB101Space().generate(np.random.default_rng(0), 50)
    assert [nb101.NB101Space().canonical_key(a) for a in space_draws] == [c.hash for c in cells[:50]]


def test_categorical_parameters_are_nas_bench_101s_encoding_and_prune_as_it_does():
    """21 edge bits and 5 vertex operations (NAS-Bench-101 Sec. 5): every cell survives the round
    trip, an assignment is pruned as NAS-Bench-101 prunes the spec, and a rejected spec is no cell."""
    space = nb101.NB101Space()
    choices = space.parameter_choices()
    assert len(choices) == 26 and choices["edge 0->6"] == ("0", "1") and choices["op 5"] == nb101.OPERATIONS
    rng = np.random.default_rng(5)
    for arch in space.sample(rng, 100) + space.generate(rng, 100):
        assert space.from_parameters(space.to_parameters(arch)) == arch
    trivial = space.to_parameters(space.parse(TRIVIAL))
    assert [name for name, bit in trivial.items() if bit == "1"] == ["edge 0->6"]
    rows, cols = np.triu_indices(7, k=1)
    for _ in range(300):  # random raw specs: the same verdict and cell as prune()
        bits = rng.integers(0, 2, 21)
        ops = [nb101.OPERATIONS[k] for k in rng.integers(0, 3, 5)]
        params = {**{f"edge {i}->{j}": str(b) for i, j, b in zip(rows, cols, bits)},
                  **{f"op {v}": op for v, op in enumerate(ops, start=1)}}
        matrix = np.zeros((7, 7), dtype=np.int8)
        matrix[rows, cols] = bits
        raw = ("input", *ops, "output")
        expected = space.parse(nb101.format(nb101.prune(matrix, raw))) if nb101.is_valid_spec(matrix, raw) else None
        assert space.from_parameters(params) == expected
    with pytest.raises(ValueError, match="'op 3'"):
        space.from_parameters({**trivial, "op 3": "conv5x5"})
    with pytest.raises(ValueError, match="'edge 2->4' is missing"):
        space.from_parameters({k: v for k, v in trivial.items() if k != "edge 2->4"})


def test_neighbours_by_hand():
    trivial = nb101.parse(TRIVIAL)
    grown = nb101.neighbours(trivial)
    assert sorted(c.ops[1] for c in grown) == sorted(nb101.OPERATIONS)
    assert all(nb101.format_matrix(c) == "011|001|000" for c in grown)
    assert nb101.neighbours(trivial, grow=False) == []
    with pytest.raises(InvalidCellError, match="no valid mutation"):
        nb101.mutate(trivial, np.random.default_rng(0), grow=False)
    chain = nb101.parse(CHAIN3)
    # 2 op changes + 1 valid flip (add 0->2; removing either edge cuts the output off)
    # + 3 insertion positions x 3 operations, all distinct
    assert len(nb101.neighbours(chain)) == 12
    assert len(nb101.neighbours(chain, grow=False)) == 3


def test_neighbours_are_valid_distinct_and_one_move_away():
    rng = np.random.default_rng(1)
    cells = [nb101.parse(EXAMPLE), nb101.parse(CHAIN3)]
    while len(cells) < 8:  # random raw specs, as NAS-Bench-101 samples them
        raw = np.triu(rng.integers(0, 2, (7, 7)), 1)
        if nb101.is_valid_spec(raw, ops := ("input", *rng.choice(nb101.OPERATIONS, 5), "output")):
            cells.append(nb101.prune(raw, ops))
    for cell in cells:
        nbrs = nb101.neighbours(cell)
        hashes = [n.hash for n in nbrs]
        assert len(set(hashes)) == len(hashes) and cell.hash not in hashes
        # deduplicated by canonical form: exactly one neighbour per module hash of the valid moves
        children = {c.hash for dim in _moves(cell, True) for move in dim if (c := _apply(cell, move, None)) is not None}
        assert set(hashes) == children - {cell.hash}
        for n in nbrs:
            assert n == nb101.canonical(n)
            dv, de = n.n_vertices - cell.n_vertices, n.n_edges - cell.n_edges
            # op change (0, 0); added edge (0, 1); growth (1, 2); a removed edge may prune vertices
            assert (dv, de) in {(0, 0), (0, 1), (1, 2)} or (dv <= 0 and de <= -1)
        same_shape = [n for n in nbrs if (n.n_vertices, n.n_edges) == (cell.n_vertices, cell.n_edges)]
        assert len(same_shape) <= 2 * (cell.n_vertices - 2)  # at most two other ops per vertex


def test_mutation_draws_a_neighbour():
    rng = np.random.default_rng(2)
    cell = nb101.parse(EXAMPLE)
    allowed = {n.hash for n in nb101.neighbours(cell)}
    children = [nb101.mutate(cell, rng) for _ in range(60)]
    assert {c.hash for c in children} <= allowed and len({c.hash for c in children}) > 10
    assert any(c.n_vertices == cell.n_vertices + 1 for c in children)  # the growth move is drawn


def test_moves_connect_the_smallest_cell_to_seven_vertex_cells():
    cell, path = nb101.parse(TRIVIAL), []
    while cell.n_vertices < nb101.MAX_VERTICES and len(path) < 10:
        cell = max(nb101.neighbours(cell), key=lambda c: (c.n_vertices, -c.n_edges, c.hash))
        path.append((cell.n_vertices, cell.n_edges))
    assert cell.n_vertices == 7, path


# ---------------------------------------------------------------------------- architectures
def test_architecture_round_trip_and_renumbering():
    cell = nb101.parse(EXAMPLE)
    arch = nb101.to_architecture(cell)
    assert arch.labels == cell.ops and arch.edges == cell.edges
    assert nb101.from_architecture(arch) == cell
    # the same DAG numbered out of topological order (only input first and output last fixed)
    relabel = {0: 0, 1: 3, 2: 1, 3: 2, 4: 4}
    labels = [None] * 5
    for old, new in relabel.items():
        labels[new] = cell.ops[old]
    shuffled = Architecture(tuple(labels), tuple((relabel[u], relabel[v]) for u, v in cell.edges))
    back = nb101.from_architecture(shuffled)
    assert back.hash == cell.hash
    # a dead node is pruned; a graph without an input->output path is refused
    dead = Architecture(("input", nb101.CONV3X3, nb101.MAXPOOL3X3, "output"), ((0, 1), (1, 3), (0, 2)))
    assert nb101.format(nb101.from_architecture(dead)) == f"010|001|000;input,{nb101.CONV3X3},output"
    with pytest.raises(InvalidCellError, match="output is not reachable"):
        nb101.from_architecture(Architecture(("input", nb101.CONV3X3, "output"), ((0, 1),)))
    with pytest.raises(InvalidCellError, match="node 0 must be 'input'"):
        nb101.from_architecture(Architecture(("conv3x3-bn-relu", "input", "output"), ((0, 1), (1, 2))))


# ---------------------------------------------------------------------------------- the import
def _small_hash_table(tmp_path, enumeration, columns: str, values: tuple[str, str, str, str]):
    """Two known cells' hashes and a CSV of four rows after the header ``hash,<columns>``: the
    first cell, an unknown hash, the second cell in upper case, the first cell again."""
    known = [enumeration.hashes[i].decode() for i in (5, 77_777)]
    hashes = (known[0], "f" * 32, known[1].upper(), known[0])
    src = tmp_path / "hashes.csv"
    src.write_text(f"hash,{columns}\n" + "".join(f"{h},{v}\n" for h, v in zip(hashes, values)))
    return known, src


def test_import_of_a_small_hash_table(tmp_path, enumeration):
    known, src = _small_hash_table(tmp_path, enumeration, "valid_accuracy_108,train_seconds_108,params",
                                   ("93.5,1500.5,123", "90.0,1.0,1", "91.25,900,456", "1,1,1"))
    result = nb101.import_hash_table(src, tmp_path / "out" / "table.csv")
    assert (result.rows_read, result.rows_joined) == (4, 2)
    assert result.unknown_hashes == ("f" * 32,) and result.duplicate_hashes == (known[0],)
    with open(result.out_path, newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["arch", "valid_accuracy_108", "train_seconds", "params"]
    assert [nb101.parse(r[0]).hash for r in rows[1:]] == known
    assert [r[1:] for r in rows[1:]] == [["93.5", "1500.5", "123"], ["91.25", "900", "456"]]
    with pytest.raises(ValueError, match="no 'hash' column"):
        nb101.import_hash_table(result.out_path, tmp_path / "again.csv")
    with pytest.raises(ValueError, match="refusing to overwrite"):
        nb101.import_hash_table(src, src)


def test_a_hash_table_loads_as_it_is(tmp_path, enumeration):
    """A table known only by module hash needs no import: the space finds each cell by its hash."""
    from nasviz.objectives import load_table

    known, src = _small_hash_table(tmp_path, enumeration, "valid_accuracy_4,valid_accuracy_108,train_seconds_108,params",
                                   ("40,93.5,1500.5,123", "1,90.0,1.0,1", "30,91.25,900,456", "50,92.5,1499.5,123"))
    table = load_table(src, space="nb101")
    assert [nb101.NB101Space().canonical_key(a) for a in table.archs] == known
    # the 108-epoch accuracy leads though the file lists the 4-epoch one first; seconds at 108
    # epochs are the cost, not a metric; the two rows of one cell are averaged
    assert table.metrics == ["valid_accuracy_108", "valid_accuracy_4"]
    assert table.lookup(table.archs[0], "valid_accuracy_108") == 93.0 and table.cost(table.archs[0]) == 1500.0
    info = table.info()
    assert info["arch_columns"] == ["hash"] and info["cost_column"] == "train_seconds_108"
    assert len(table.bad_rows) == 1 and table.bad_rows[0].line == 3
    assert "no NAS-Bench-101 cell has the module hash" in str(table.bad_rows[0])
    # a hash is one of the space's strings; anything else still has to be a matrix and ops
    assert nb101.NB101Space().parse(known[1]) == table.archs[1]
    with pytest.raises(NB101ParseError):
        nb101.NB101Space().parse("f" * 31)


@pytest.mark.slow
def test_the_20k_table_loads_by_hash_as_its_import_does(tmp_path, enumeration):
    from nasviz.objectives import load_table

    src = _shared("nb101_hash_20k.csv")
    direct = load_table(src, space="nb101")
    imported = load_table(nb101.import_hash_table(src, tmp_path / "nb101_20k.csv").out_path, space="nb101")
    assert len(direct) == 20_001 and direct.archs == imported.archs
    assert direct.metrics == imported.metrics
    for metric in direct.metrics:
        assert np.array_equal(direct.values[metric], imported.values[metric])


@pytest.mark.slow
def test_import_of_the_20k_table_joins_every_row(tmp_path, enumeration):
    src = _shared("nb101_hash_20k.csv")
    result = nb101.import_hash_table(src, tmp_path / "nb101_20k.csv")
    assert result.rows_read == result.rows_joined == 20_001
    with open(src, newline="") as a, open(result.out_path, newline="") as b:
        first_in, first_out = next(csv.DictReader(a)), next(csv.DictReader(b))
    assert nb101.parse(first_out["arch"]).hash == first_in["hash"]
    assert first_out["valid_accuracy_108"] == first_in["valid_accuracy_108"]
    assert first_out["train_seconds"] == first_in["train_seconds_108"]
