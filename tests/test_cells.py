"""xlcalib.cells, the ground floor: one cell or argument <-> a value, every rule with its message, and back."""
from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pandas as pd
import pytest

from xlcalib.cells import (
    MAX_WORK_BYTES,
    Uncalculated,
    as_rows,
    as_vector,
    cell_position,
    cell_value,
    check_memory,
    column_cells,
    column_letter,
    column_number,
    excel_error_code,
    format_bytes,
    label_vector,
    merged_range_of,
    number_grid,
    number_vector,
    parse_choice,
    parse_flag,
    parse_label,
    parse_number,
    probability_argument,
    real_argument,
    same_length,
    number_table_argument,
    seed_argument,
    whole_argument,
)
from xlcalib.errors import InputError


@pytest.mark.parametrize("value, expected", [(3, 3.0), (2.5, 2.5), ("4.5", 4.5), (" -3 ", -3.0), ("1e-3", 0.001),
                                             (np.float32(1.5), 1.5), ("\u00a012", 12.0)])
def test_numbers_accepted(value, expected):
    assert parse_number(value, "cell") == expected


@pytest.mark.parametrize("value, message", [
    ("3,5", "decimal comma"), ("1,234", "a thousands separator or a decimal comma"), ("abc", "is text"), (True, "logical value"),
    (dt.date(2024, 1, 2), "date or time"), (math.inf, "not a finite number"), ("#N/A", "Excel error #N/A"),
    (-2146826281, "Excel error #DIV/0!"), (None, "is blank"), ("  ", "is blank"), ([1], "type list"),
])
def test_numbers_rejected_with_reason(value, message):
    with pytest.raises(InputError, match=message):
        parse_number(value, "row 7 of the score range")


def test_blank_allowed_becomes_nan_and_labels():
    assert math.isnan(parse_number(None, "x", allow_blank=True))
    assert parse_label(3.0, "x") == "3" and parse_label(" Ann ", "x") == "Ann" and parse_label(2.5, "x") == "2.5"
    assert parse_label(None, "x", allow_blank=True) is None
    with pytest.raises(InputError, match="Excel error #REF!"):
        parse_label("#REF!", "x")


def test_shapes_rows_columns_ragged():
    assert as_rows(5) == [[5]] and as_rows([1, 2]) == [[1, 2]] and as_rows([[1], [2, 3]]) == [[1, None], [2, 3]]
    assert as_vector([[1], [2]], "s") == ([1, 2], "row") and as_vector([[1, 2]], "s") == ([1, 2], "column")
    with pytest.raises(InputError, match="2 rows x 2 columns; select a single row or a single column"):
        as_vector([[1, 2], [3, 4]], "score")
    with pytest.raises(InputError, match="column 2 of the score range is text"):
        number_vector([[1, "x"]], "score")  # a row: positions are columns
    with pytest.raises(InputError, match="row 2 of the score range"):
        number_vector([[1], ["x"]], "score")
    g = number_grid([[1, None], ["2", 3]], "ratings")
    assert np.isnan(g[0, 1]) and g[1, 0] == 2
    assert label_vector([["a"], [1.0]], "ids") == ["a", "1"]


def test_small_helpers():
    assert excel_error_code(" #value! ") == "#VALUE!" and excel_error_code("x") is None
    assert parse_flag(None, "header", True) and not parse_flag("no", "header", True) and parse_flag(1, "h", False)
    with pytest.raises(InputError, match="TRUE or FALSE"):
        parse_flag("maybe", "header", True)
    assert parse_choice("SIMPLE", "gauge", ("weighted", "simple"), "weighted") == "simple"
    with pytest.raises(InputError, match="must be one of weighted, simple"):
        parse_choice("mean", "gauge", ("weighted", "simple"), "weighted")
    with pytest.raises(InputError, match="scores has 2, sd has 3"):
        same_length(scores=[1, 2], sd=[1, 2, 3])
    assert [column_letter(i) for i in (1, 26, 27, 702, 703, 16384)] == ["A", "Z", "AA", "ZZ", "AAA", "XFD"]


@pytest.mark.parametrize("value, expected", [(None, 7), ("", 7), (3, 3), (3.0, 3), ("12", 12), (0.0, 0)])
def test_parse_whole_accepts_whole_numbers(value, expected):
    from xlcalib.cells import parse_whole

    assert parse_whole(value, "k", 7, low=0) == expected


@pytest.mark.parametrize("value, message", [(2.5, "whole number, not 2.5"), (-1, ">= 0, not -1"), ("2,5", "decimal comma"),
                                            (True, "logical value"), ("#N/A", "Excel error #N/A")])
def test_parse_whole_rejects_instead_of_truncating(value, message):
    from xlcalib.cells import parse_whole

    with pytest.raises(InputError, match=message):
        parse_whole(value, "k", 7, low=0)


def test_is_blank_range():
    from xlcalib.cells import is_blank_range

    assert is_blank_range(None) and is_blank_range([[None, ""], [" ", None]]) and is_blank_range("")
    assert not is_blank_range([[None, 0.0]]) and not is_blank_range("x")


def test_trim_trailing_blanks_only_where_all_ranges_are_blank():
    from xlcalib.cells import trim_trailing_blanks

    a = [["x"], ["y"], [None], [None]]
    b = [[1.0], [2.0], [""], [None]]
    assert trim_trailing_blanks(a, b) == ([["x"], ["y"]], [[1.0], [2.0]])
    assert a == [["x"], ["y"], [None], [None]]  # input untouched
    # a value in one range keeps the row (the blank next to it is reported later)
    c = [[1.0], [2.0], [3.0], [None]]
    assert trim_trailing_blanks(a, c) == ([["x"], ["y"], [None]], [[1.0], [2.0], [3.0]])
    # rows stay rows; a blank inside the data stays
    assert trim_trailing_blanks([["x", None, "z", None]], [[1.0, None, 3.0, None]]) == ([["x", None, "z"]], [[1.0, None, 3.0]])
    # different lengths or 2-D blocks: unchanged, for the parsers to report
    assert trim_trailing_blanks(a, [[1.0], [None]]) == (a, [[1.0], [None]])
    block = [[1.0, 2.0], [None, None]]
    assert trim_trailing_blanks(block, block) == (block, block)
    assert trim_trailing_blanks([[None]], [[None]]) == ([[None]], [[None]])  # all blank: left for "is blank"


# ----------------------------------------------------------------------------- properties (hypothesis)
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

finite = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(finite)
def test_numbers_and_their_text_read_back_exactly(x):
    assert parse_number(x, "cell") == x
    assert parse_number(repr(x), "cell") == x  # a number stored as text, in Python's shortest round-trip form
    assert parse_number(f" {x!r}\u00a0", "cell") == x


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 999))
def test_text_with_a_comma_is_never_silently_a_number(whole, part):
    with pytest.raises(InputError):
        parse_number(f"{whole},{part:03d}", "cell")
    with pytest.raises(InputError):
        parse_number(f"{whole},{part}", "cell")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-10**9, 10**9), min_size=1, max_size=30))
def test_ids_typed_as_numbers_or_text_are_the_same_labels(ids):
    as_numbers = label_vector([[float(i)] for i in ids], "ids")
    as_text = label_vector([[str(i)] for i in ids], "ids")
    assert as_numbers == as_text == [str(i) for i in ids]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), finite, st.text(max_size=5)), min_size=1, max_size=20))
def test_row_and_column_give_the_same_cells_and_input_is_untouched(cells):
    column = [[c] for c in cells]
    row = [list(cells)]
    snapshot = ([list(r) for r in column], [list(r) for r in row])
    col_cells, col_kind = as_vector(column, "x")
    row_cells, row_kind = as_vector(row, "x")
    assert col_cells == row_cells == list(cells)
    assert col_kind == "row" and row_kind == ("column" if len(cells) > 1 else "row")  # how positions are named
    assert (column, row) == snapshot


@pytest.mark.parametrize("text, expected", [("4.5", True), (" -3 ", True), ("1e-3", True), ("\u00a012", True),
                                            ("3,5", False), ("High", False), ("", False), ("1.2.3", False)])
def test_is_number_text_agrees_with_parse_number(text, expected):
    from xlcalib.cells import is_number_text

    assert is_number_text(text) is expected
    if expected:
        parse_number(text, "cell")


def test_the_text_1e999_is_not_infinity():
    with pytest.raises(InputError, match="beyond the largest number"):
        parse_number("1e999", "cell B2")
    with pytest.raises(InputError, match="text"):
        parse_number("nan", "cell B2")


def test_never_calculated_formulas_are_named_as_such_not_as_blank():
    formula = Uncalculated("=B2*2")
    for parse in (parse_number, parse_label):
        with pytest.raises(InputError, match="cell C4 is a formula whose value was never calculated"):
            parse(formula, "cell C4", allow_blank=True)
    assert repr(formula) == "Uncalculated('=B2*2')" and formula == "=B2*2"


# ----------------------------------------------------------------------------- arguments
@pytest.mark.parametrize("value, expected", [(3, 3), (np.int64(4), 4), (5.0, 5), ("6", 6), ([[7]], 7), (np.array([8.0]), 8)])
def test_whole_argument_accepts_whole_numbers_in_any_cell_form(value, expected):
    assert whole_argument(value, "samples") == expected


@pytest.mark.parametrize("value, low, high, message", [
    (2.5, 1, None, "the samples argument must be a whole number, not 2.5"),
    (True, 1, None, "logical value"),
    (0, 1, None, "must be a whole number >= 1, not 0"),
    (20_000, 1, 16_384, "must be at most 16,384, not 20,000 \\(Excel has 16,384 columns\\)"),
    (2**60, 1, None, "larger than any count or seed"),
    (float("nan"), 1, None, "not a number \\(NaN\\)"),
    ("ten", 1, None, "is text"),
])
def test_whole_argument_refuses_instead_of_truncating(value, low, high, message):
    with pytest.raises(InputError, match=message):
        whole_argument(value, "samples", low=low, high=high, why="Excel has 16,384 columns" if high else "")


def test_seed_argument_takes_zero_and_refuses_negatives():
    assert seed_argument(0) == 0 and seed_argument(2**53) == 2**53
    with pytest.raises(InputError, match="the seed argument must be a whole number >= 0, not -1"):
        seed_argument(-1)
    with pytest.raises(InputError, match="the seed argument \\(9.01e\\+15\\) is larger than any count or seed"):
        seed_argument(2**53 + 2)


def test_real_and_probability_arguments_name_their_interval():
    assert real_argument("0.5", "threshold", low=0, high=1) == 0.5
    assert real_argument(0, "threshold", low=0) == 0
    with pytest.raises(InputError, match="must be in \\(0, 1\\], not 0"):
        real_argument(0, "gamma", low=0, high=1, low_open=True)
    with pytest.raises(InputError, match="the threshold argument is not a finite number \\(inf\\)"):
        real_argument(float("inf"), "threshold")
    assert probability_argument(0.05, "alpha") == 0.05
    for bad in (0, 1, -0.1):
        with pytest.raises(InputError, match="the alpha argument must be in \\(0, 1\\)"):
            probability_argument(bad, "alpha")


def test_number_table_argument_refuses_text_and_logicals():
    table = number_table_argument([[1, None], [2.5, np.nan]], "counts", "items x classes")
    assert table.shape == (2, 2) and np.isnan(table[0, 1]) and np.isnan(table[1, 1])
    assert number_table_argument([1, 2, 3], "counts", "items x classes").shape == (1, 3)  # one row: one item
    for bad in ([[1, "nan"]], [[1, True]], np.array([["1"]])):
        with pytest.raises(InputError, match="ratings must be numbers \\(items x raters; blank = not rated\\); "
                                             "found text or TRUE/FALSE"):
            number_table_argument(bad, "ratings", "items x raters", "; blank = not rated")
    with pytest.raises(InputError, match="counts must be numbers \\(items x classes\\)$"):
        number_table_argument([[1, {}]], "counts", "items x classes")
    with pytest.raises(InputError, match="counts must be a 2-D items x classes table"):
        number_table_argument(np.zeros((2, 2, 2)), "counts", "items x classes")


def test_memory_is_refused_above_the_limit_with_the_need_named():
    check_memory(MAX_WORK_BYTES, "exactly the limit", "lower it")
    with pytest.raises(InputError, match="1000 replicates would need about 4 GiB of memory, more than the 2 GiB "
                                         "xlcalib allows for one request; lower n_boot"):
        check_memory(4 * 1024**3, "1000 replicates", "lower n_boot")
    assert [format_bytes(n) for n in (512, 2048, 3 * 1024**2, 1.5 * 1024**4)] == ["512 bytes", "2 KiB", "3 MiB",
                                                                                  "1.5 TiB"]


# ----------------------------------------------------------------------------- a value back into a cell
def test_cell_value_conversions():
    assert [cell_value(v) for v in (np.int64(3), np.float32(0.5), float("nan"), np.bool_(True), None, pd.NaT, [1])] == \
        [3, 0.5, None, True, None, None, "[1]"]


@pytest.mark.parametrize("value, expected", [
    (None, None), (pd.NA, None), (pd.NaT, None), (np.nan, None), (np.float64("nan"), None),
    (True, True), (np.bool_(False), False), (7, 7), (np.uint8(7), 7), (2.5, 2.5), (np.float16(0.5), 0.5),
    ("text", "text"), (Uncalculated("=A1"), "=A1"), (dt.date(2024, 1, 2), dt.date(2024, 1, 2)),
    (dt.datetime(2024, 1, 2, 3, 4), dt.datetime(2024, 1, 2, 3, 4)), (dt.time(5, 6), dt.time(5, 6)),
    (pd.Timestamp("2024-01-02"), pd.Timestamp("2024-01-02")), ((1, 2), "(1, 2)"),
])
def test_cell_value_kinds(value, expected):
    got = cell_value(value)
    assert got == expected and type(got) is type(expected)  # plain Python types only: str, not a str subclass


def test_cell_value_is_the_same_for_every_writer():
    """The result sheets and the spreadsheet functions write a value through the one function."""
    from udf_registry.registry import to_cells
    from xlcalib.workbook.base import frame_rows

    values = [np.int64(3), np.nan, pd.NaT, np.bool_(True), "x", dt.date(2024, 1, 2)]
    frame = pd.DataFrame({"v": pd.Series(values, dtype=object)})
    assert frame_rows(frame)[0][1:] == [[cell_value(v)] for v in values]
    assert to_cells(frame, header=False) == [[cell_value(v)] for v in values]
    assert [to_cells(v, header=False) for v in values] == [cell_value(v) for v in values]


COLUMNS = [
    np.array([1.5, np.nan, -0.0]), np.array([1, 2], dtype=np.int32), np.array([True, False]),
    pd.Series([1.0, None]), pd.Series([1, None], dtype="Int64"), pd.Series([True, None], dtype="boolean"),
    pd.Series(["a", None, "c"]), pd.Series(["a", "b"], dtype=object), pd.Series([1, "a", None, np.nan], dtype=object),
    pd.Series(pd.to_datetime(["2024-01-02", None])), pd.Series(pd.Categorical(["x", "y", "x"])),
    pd.Index([3.0, np.nan]), [1, None, "z", np.float32(0.25)], np.array([], dtype=float),
]


@pytest.mark.parametrize("column", COLUMNS, ids=range(len(COLUMNS)))
def test_column_cells_equals_cell_value_one_by_one(column):
    values = column.to_numpy(dtype=object) if hasattr(column, "to_numpy") else np.asarray(column, dtype=object)
    got = column_cells(column)
    expected = [cell_value(v) for v in values]
    assert got == expected and [type(v) for v in got] == [type(v) for v in expected]


# ----------------------------------------------------------------------------- cell references
def test_cell_references_both_ways():
    for index in (1, 26, 27, 702, 703, 16384):
        assert column_number(column_letter(index)) == index
    assert column_number(b"XFD") == 16384 and column_number("ab") == 28
    assert cell_position("C12") == (12, 3) and cell_position("$AB$7") == (7, 28) and cell_position(" xfd1048576 ") == \
        (1_048_576, 16_384)
    with pytest.raises(ValueError, match="not a cell reference"):
        cell_position("A")


def test_merged_range_of():
    merged = ("A2:A3", "C4:E6")
    assert merged_range_of("A3", merged) == "A2:A3" and merged_range_of("D5", merged) == "C4:E6"
    assert merged_range_of("B3", merged) is None and merged_range_of("A4", merged) is None
    assert merged_range_of("A2", ()) is None


def test_docstring_examples_run():
    import doctest

    import xlcalib.cells

    assert doctest.testmod(xlcalib.cells).failed == 0


def test_json_depth_counts_brackets_outside_strings():
    """Depth is checked before json.loads (which recurses once per level) on every JSON read from a file or cell."""
    from xlcalib.cells import MAX_JSON_DEPTH, json_depth

    assert json_depth('{"a": [1, [2, {"b": 3}]]}') == 4
    assert json_depth('{"a": "[[[[[[[[ not nesting ]]]", "b": "\\"[["}') == 1  # brackets and escaped quotes in strings
    assert json_depth("42") == 0
    assert json_depth("[" * 100_000 + "]" * 100_000) == 100_000 > MAX_JSON_DEPTH


def test_json_depth_agrees_with_parsing_on_random_documents():
    """Strings full of brackets, quotes and runs of backslashes (escaped or escaping) never count: the depth
    the vectorised scan finds is the depth of the parsed document, on 2,000 random documents (seeded)."""
    import json
    import random

    from xlcalib.cells import json_depth

    rng = random.Random(7)

    def document(depth: int):
        pick = rng.random()
        if depth > 5 or pick < 0.35:
            return "".join(rng.choice('[]{}"\\ab,:') for _ in range(rng.randint(0, 6)))
        if pick < 0.7:
            return [document(depth + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice('[]{}"\\') + str(k): document(depth + 1) for k in range(rng.randint(0, 3))}

    def nesting(value) -> int:
        if isinstance(value, list):
            return 1 + max((nesting(v) for v in value), default=0)
        if isinstance(value, dict):
            return 1 + max((nesting(v) for v in value.values()), default=0)
        return 0

    for _ in range(2000):
        value = document(0)
        assert json_depth(json.dumps(value)) == nesting(value)


@given(st.lists(st.one_of(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).map(lambda x: round(x, 3)),
                          st.integers(-99, 99), st.none(), st.sampled_from(["", "COI", "n/a", "A+"])),
                min_size=1, max_size=30))
def test_decimal_comma_column_reads_each_comma_number_as_its_point_form(cells):
    """A ';' file's column: each number with a decimal comma comes back as the text that parses to that number, and
    every other cell (whole numbers, blanks, marks, grades) as it was; a column with a point-decimal number too is
    left alone (None): two conventions in one column."""
    from xlcalib.cells import decimal_comma_column, parse_number

    written = [(f"{c:.3f}".replace(".", ",") if isinstance(c, float) else (str(c) if isinstance(c, int) else c))
               for c in cells]
    read = decimal_comma_column(written)
    if not any(isinstance(c, float) for c in cells):
        assert read is None
        return
    assert read is not None and len(read) == len(cells)
    for cell, text, out in zip(cells, written, read):
        if isinstance(cell, float):
            # the cell was rounded to 3 decimals and written with 3: its text reads back as the same double
            assert parse_number(out, "x") == cell
        else:
            assert out == text
    assert decimal_comma_column(written + ["2.5"]) is None


@pytest.mark.parametrize("text, number", [("85%", 0.85), (" 33.3 %", 0.333), ("100%", 1.0), ("-5%", -0.05),
                                          ("\u22122", -2.0), ("\u20132.5", -2.5), ("\u2212.5", -0.5)])
def test_percentages_and_typographic_minus_read_as_they_say(text, number):
    """'85%' is 0.85, as Excel reads the text it writes for a percent cell into a CSV file (the decimal point is
    moved in the text, so '33.3%' is the same double as '0.333'); a typographic minus or en dash before digits is
    the minus a word processor or web form typed."""
    from xlcalib.cells import is_number_text, parse_number

    assert parse_number(text, "X") == number and is_number_text(text)


@pytest.mark.parametrize("text", ["%", "abc%", "3,5%", "\u2212", "\u2013 2", "1e999%", "85%%"])
def test_texts_that_only_look_like_percentages_or_minus_are_refused(text):
    from xlcalib.cells import is_number_text, parse_number

    with pytest.raises(InputError, match="X is"):
        parse_number(text, "X")
    assert not is_number_text(text)


def test_a_column_of_percentages_and_plain_numbers_is_pointed_out():
    """Percent cells and plain numbers in one column are two scales as often as not: read as Excel reads them,
    with a warning naming an example of each."""
    from xlcalib.inputs import RawTable, check_evaluations

    def checked(rows):
        columns = [[r[j] for r in rows[1:]] for j in range(4)]
        return check_evaluations(RawTable(rows[0], columns, np.arange(2, len(rows) + 1), [1, 2, 3, 4], 1,
                                          "Evaluations"))

    rows = [["Assessor", "Object", "Score", "SD"], ["A", "x", "85%", 1], ["A", "y", 70, 1], ["B", "x", "60%", 1],
            ["B", "y", "", 1]]
    panel = checked(rows)
    assert panel.frame["score"].tolist() == [0.85, 70.0, 0.6]
    assert [p.message for p in panel.warnings if "percentages" in p.message] == [
        "sheet Evaluations, column Score: 2 value(s) written as percentages (e.g. C2, read as 0.85) and 1 as plain "
        "numbers (e.g. C3, 70): one scale for the column? Check the cells"]
    alone = checked([r if i != 2 else ["A", "y", "70%", 1] for i, r in enumerate(rows)])
    assert alone.frame["score"].tolist() == [0.85, 0.7, 0.6] and not any("percent" in p.message for p in alone.problems)
