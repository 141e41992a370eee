"""Property-based fuzzing of what reads outside input: the CSV table loader and the architecture
string parsers. Whatever bytes or text arrive, they either load or raise one of the project's own
error types (a :class:`~nasviz.errors.NasvizError`, with its location); never a raw ``csv.Error``,
``UnicodeDecodeError``, ``IndexError``, ``OverflowError``... and never a value that is not finite.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nasviz.errors import ArchitectureError, NasvizError, TableError
from nasviz.objectives import load_table
from nasviz.spaces import mlp, nb201
from nasviz.spaces.strings import parse_architecture

FUZZ = settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

#: Pieces that CSV files and architecture strings are made of, so that generated text reaches the
#: parsers' deeper branches (quotes, separators, operation names, numbers in odd notations).
TOKENS = ["arch", "acc", "time", ",", '"', '""', "\n", "\r\n", "\r", " ", "|", "~", "+", "0", "1", "2", "9",
          "1e308", "-1e308", "1_000", "\uff11\uff12", "nan", "inf", ".5", "-", "e", "\x00", "\ufeff",
          *nb201.OPERATIONS, *mlp.LABELS, ";", ":", "<", "64", "x" * 300]

#: Eight distinct NB201 cells.
ARCHS = [nb201.format(a) for a in itertools.islice(nb201.enumerate_all(), 8)]

csv_like = st.lists(st.sampled_from(TOKENS), max_size=60).map("".join)


def _check_table(table) -> None:
    for values in table.values.values():
        assert np.isfinite(values).all() and (np.abs(values) <= 1e15).all()
    assert len(table.archs) == len(table.strings) and len(table) > 0


@FUZZ
@given(st.binary(max_size=400))
def test_arbitrary_bytes_load_or_raise_a_table_error(data):
    try:
        _check_table(load_table(data, name="fuzz.csv"))
    except TableError as err:
        assert err.source == "fuzz.csv"


@pytest.mark.slow
@FUZZ
@given(st.one_of(csv_like, st.text(max_size=300)))
def test_arbitrary_text_loads_or_raises_a_table_error(text):
    try:
        _check_table(load_table(text.encode("utf-8", "surrogatepass"), name="fuzz.csv"))
    except TableError as err:
        assert err.source == "fuzz.csv"
        assert err.line is None or err.line >= 1


@FUZZ
@given(st.lists(st.tuples(st.sampled_from([nb201.format(a) for a in nb201.sample(np.random.default_rng(0), 6)]
                                          + ["", "|x~0|", '"|none~0|"']),
                          st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr),
                                    st.sampled_from(["1_000", "\uff11", "1e308", " 7 ", "", '"3"', "+.5e-3"]))),
                max_size=12))
def test_tables_of_nearly_valid_rows_keep_only_finite_bounded_values(rows):
    text = "arch,acc\n" + "".join(f"{a},{v}\n" for a, v in rows)
    try:
        table = load_table(text.encode("utf-8", "surrogatepass"), name="rows.csv")
    except TableError:
        return
    _check_table(table)
    for bad in table.bad_rows:
        assert bad.line >= 2 and "rows.csv" not in bad.redacted()


@FUZZ
@given(st.one_of(st.text(max_size=200), csv_like))
def test_architecture_strings_parse_or_raise_an_architecture_error(text):
    for space in (nb201.SPACE, mlp.SPACE):
        try:
            arch = parse_architecture(space, text, source="cell")
        except ArchitectureError as err:
            assert err.source == "cell"
        else:
            assert space.parse(space.format(arch)) == arch  # what parses also round-trips


@FUZZ
@given(st.one_of(st.text(max_size=200), csv_like))
def test_the_layer_parser_raises_only_project_errors(text):
    try:
        mlp.parse(text)
    except NasvizError:
        pass


def test_the_number_rules_the_fuzzing_relies_on():
    """Fixed cases of point 4: what ``float()`` takes but a table must not."""
    cells = ["1_000", "\uff11\uff12", "1e308", "-1e308", "nan", "12.5", "7", "-3e2"]
    text = "arch,acc\n" + "".join(f"{s},{v}\n" for s, v in zip(ARCHS, cells))
    table = load_table(text.encode(), name="n.csv")
    assert list(table.values["acc"]) == [12.5, 7.0, -300.0]
    assert [b.reason for b in table.bad_rows] == ["non-numeric value", "non-numeric value", "value outside +-1e+15",
                                                  "value outside +-1e+15", "non-numeric value"]
    assert not math.isinf(table.optimum("acc"))


def _registered_spaces():
    from nasviz.components import SPACES
    from nasviz.spaces import get_space

    return [get_space(entry.name) for entry in SPACES]


#: What breaks number parsing and nesting: huge, negative, non-finite and odd-notation numbers,
#: separators of every space's format, long runs.
NASTY = ["1e999", "-1", "-0", "nan", "inf", "9" * 400, "0x1f", "1_0", "\uff11", ".", "..", ",", ";", "|", "-", "=",
         ":", "<", "(", ")", "[", "]", "~", "+", "", " ", "\x00", "((((((((((", "[[[[[[[[", "<" * 50, "0-" * 200]


@FUZZ
@given(st.data())
def test_every_registered_spaces_parser_reads_a_mutated_example_or_refuses_it(data):
    """Issue 47: each space's parser (wired's ``seed=1e999`` raised OverflowError) reached through the
    one entry point raises only :class:`ArchitectureError`; what parses round-trips."""
    import re

    for space in _registered_spaces():
        example = space.examples[0] if space.examples else ""
        numbers = list(re.finditer(r"\d+(?:\.\d+)?", example))
        if numbers and data.draw(st.booleans(), label=f"{space.name}: replace a number"):
            m = numbers[data.draw(st.integers(0, len(numbers) - 1), label="which number")]
            odd = data.draw(st.sampled_from(["1e999", "-1", "nan", "inf", "9" * 400, "0x1f", "-0", "1_0", "\uff11", ""]))
            example = example[:m.start()] + odd + example[m.end():]
        i = data.draw(st.integers(0, len(example)), label=f"{space.name} start")
        j = data.draw(st.integers(i, min(len(example), i + 12)), label=f"{space.name} end")
        inserted = data.draw(st.lists(st.sampled_from(NASTY), max_size=3).map("".join), label="inserted")
        text = example[:i] + inserted + example[j:]
        try:
            arch = parse_architecture(space, text, source="link")
        except ArchitectureError as err:
            assert err.source == "link" and len(str(err)) < 1000  # a short message, never the whole input
        else:
            assert parse_architecture(space, space.format(arch)) == arch, (space.name, text)


@FUZZ
@given(st.one_of(st.text(max_size=300), csv_like))
def test_every_registered_spaces_parser_refuses_arbitrary_text_with_its_own_error(text):
    for space in _registered_spaces():
        try:
            parse_architecture(space, text)
        except ArchitectureError:
            pass
