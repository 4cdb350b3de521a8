"""The one place that normalises spreadsheet cells: every rule, with its message."""
from __future__ import annotations

import datetime as dt
import math

import numpy as np
import openpyxl
import pytest

from xlcalib.cells import (
    as_rows,
    as_vector,
    column_letter,
    excel_error_code,
    label_vector,
    number_grid,
    number_vector,
    parse_choice,
    parse_flag,
    parse_label,
    parse_number,
    same_length,
)
from xlcalib.errors import InputError
from xlcalib.inputs import evaluations_from_rows


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


def test_evaluations_table_reading_rules():
    rows = [[None] * 5, ["ASSESSOR", "object", "Score", "Level", "notes"], ["A", "P1", "4.5", "High", "x"],
            [None] * 5, ["B", 2.0, 3, "low", None], [None] * 5]
    frame, kind, sheet_rows = evaluations_from_rows(rows, "Evaluations", first_row=1)
    assert kind == "level" and sheet_rows == [3, 5] and frame["object"].tolist() == ["P1", "2"]
    with pytest.raises(InputError, match="found several uncertainty columns \\(SD, Level\\)"):
        evaluations_from_rows([["Assessor", "Object", "Score", "SD", "Level"], ["A", "x", 1, 1, "High"]])
    with pytest.raises(InputError, match="missing column\\(s\\) Score"):
        evaluations_from_rows([["Assessor", "Object", "SD"], ["A", "x", 1]])
    with pytest.raises(InputError, match="two columns could be 'score'"):
        evaluations_from_rows([["Assessor", "Object", "Score", "Mark", "SD"]])


def test_merged_cells_are_reported_by_row(tmp_path):
    from xlcalib.cli import main

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Evaluations"
    for row in [["Assessor", "Object", "Score", "SD"], ["A", "x", 5, 1], ["A", "y", 6, 1], ["B", "x", 4, 1], ["B", "y", 7, 1]]:
        ws.append(row)
    ws.merge_cells("A2:A3")  # a person merged the assessor cells of two rows
    path = tmp_path / "merged.xlsx"
    wb.save(path)
    assert main(["calibrate", str(path)]) == 2


def test_merged_cells_message(tmp_path, capsys):
    from xlcalib.cli import main

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Evaluations"
    for row in [["Assessor", "Object", "Score", "SD"], ["A", "x", 5, 1], ["A", "y", 6, 1], ["B", "x", "4", 1], ["B", "y", 7, 1]]:
        ws.append(row)
    ws.merge_cells("A2:A3")
    wb.save(tmp_path / "m.xlsx")
    main(["calibrate", str(tmp_path / "m.xlsx")])
    assert "sheet Evaluations, row 3, column Assessor (A3) is blank" in capsys.readouterr().err


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
