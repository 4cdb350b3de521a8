"""The agreement spreadsheet functions (REL_AGREEMENT ...) through xlwings' own code path: categories declared in
order, with values or as numbers typed as text; weights as a scheme or a range; bad input in cell words."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from udf_registry.registry import ERROR_PREFIX
from xlcalib import agreement

from . import xlwings_harness as harness

COL = lambda values: [[v] for v in values]  # noqa: E731
GRADES = [["B", "B", "C"], ["A", "A", "A"], ["C", "D", "D"], ["D", "D", "D"], ["A", "B", "A"], ["B", "B", "B"],
          ["C", "C", None], ["A", "A", "B"]]
ORDER = ["A", "B", "C", "D"]


def _text(got):
    text = got[0][0] if isinstance(got, list) else got
    assert isinstance(text, str) and text.startswith(ERROR_PREFIX), got
    assert "Traceback" not in text and len(text) <= 250
    return text


def _estimates(got) -> dict:
    assert got[0][:2] == ["coefficient", "estimate"], got
    return {row[0]: row[1] for row in got[1:]}


def test_weights_follow_the_declared_order_and_values():
    by_rank = _estimates(harness.call("REL_AGREEMENT", GRADES, "quadratic", None, COL(ORDER)))
    core = agreement.agreement_coefficients(GRADES, "quadratic", ORDER)
    assert list(by_rank.values()) == pytest.approx(core["estimate"].tolist(), rel=1e-12)
    # the same labels with a value each (two columns): the weights use the values, not the ranks
    values = [["A", 1.0], ["B", 2.0], ["C", 3.0], ["D", 10.0]]
    by_value = _estimates(harness.call("REL_AGREEMENT", GRADES, "quadratic", None, values))
    core = agreement.agreement_coefficients(GRADES, "quadratic", {"A": 1, "B": 2, "C": 3, "D": 10})
    assert list(by_value.values()) == pytest.approx(core["estimate"].tolist(), rel=1e-12)
    assert by_value["Gwet's AC2"] != pytest.approx(by_rank["Gwet's AC2"], abs=1e-3)
    # reversing the declared order reverses nothing that matters for symmetric weights ...
    assert _estimates(harness.call("REL_AGREEMENT", GRADES, "quadratic", None, COL(ORDER[::-1]))) == \
        pytest.approx(by_rank, rel=1e-12)
    # ... but another order does
    shuffled = _estimates(harness.call("REL_AGREEMENT", GRADES, "quadratic", None, COL(["A", "C", "B", "D"])))
    assert shuffled["Gwet's AC2"] != pytest.approx(by_rank["Gwet's AC2"], abs=1e-3)


def test_categories_as_a_row_blanks_skipped_and_numbers_typed_as_text():
    as_row = harness.call("REL_AGREEMENT", GRADES, "linear", None, [ORDER + [None, None]])
    assert as_row == harness.call("REL_AGREEMENT", GRADES, "linear", None, COL(ORDER + [None]))
    with_empty_values = harness.call("REL_AGREEMENT", GRADES, "linear", None, [[c, None] for c in ORDER])
    assert with_empty_values == as_row
    numbers = [[1.0, 2.0], [3.0, 3.0], [2.0, 2.0], [1.0, 1.0], [3.0, 2.0]]
    typed = [["1", 2.0], ["3", " 3 "], [2.0, "2"], [1.0, 1.0], ["3", 2.0]]
    assert harness.call("REL_AGREEMENT", typed, "quadratic") == harness.call("REL_AGREEMENT", numbers, "quadratic")


def test_custom_weight_matrix_range():
    w = [[1.0, 0.5, 0.0, 0.0], [0.5, 1.0, 0.5, 0.0], [0.0, 0.5, 1.0, 0.5], [0.0, 0.0, 0.5, 1.0]]
    got = _estimates(harness.call("REL_AGREEMENT", GRADES, w, None, COL(ORDER)))
    core = agreement.agreement_coefficients(GRADES, np.array(w), ORDER)
    assert list(got.values()) == pytest.approx(core["estimate"].tolist(), rel=1e-12)
    assert "Gwet's AC2" in got  # a custom matrix weighs: AC2, not AC1


def test_whole_column_selection_leaves_the_empty_rows_out():
    padded = GRADES + [[None, None, None]] * 30
    assert harness.call("REL_AGREEMENT", padded) == harness.call("REL_AGREEMENT", GRADES)


def test_level_sets_the_interval():
    wide = harness.call("REL_AGREEMENT", GRADES, None, 0.99)
    narrow = harness.call("REL_AGREEMENT", GRADES, None, 0.8)
    assert all(w[3] < n[3] and w[1] == n[1] for w, n in zip(wide[1:], narrow[1:]))


def test_pairs_and_matrix_name_the_raters():
    names = [["Ann", "Bob", "Cy"]]
    pairs = harness.call("REL_AGREEMENT_PAIRS", GRADES, "percent_agreement", None, None, None, names)
    assert [row[:2] for row in pairs[1:]] == [["Ann", "Bob"], ["Ann", "Cy"], ["Bob", "Cy"]]
    # Cy left one subject blank: it stays in the pair's n (rated once), as in irrCAC, but has no pair to agree
    assert pairs[1][3] == pytest.approx(6 / 8) and pairs[2][8] == 8 and pairs[2][3] == pytest.approx(4 / 7)
    matrix = harness.call("REL_AGREEMENT_MATRIX", GRADES, "percent_agreement", None, None, names)
    assert matrix[0] == ["rater", "Ann", "Bob", "Cy"] and matrix[1][1] == "" and matrix[1][2] == pytest.approx(6 / 8)
    unnamed = harness.call("REL_AGREEMENT_MATRIX", GRADES, "percent_agreement")
    assert unnamed[0] == ["rater", "1", "2", "3"]


def test_bootstrap_is_seeded():
    first = harness.call("REL_AGREEMENT_BOOTSTRAP", GRADES, None, None, 300, 5)
    assert first == harness.call("REL_AGREEMENT_BOOTSTRAP", GRADES, None, None, 300, 5)
    assert first != harness.call("REL_AGREEMENT_BOOTSTRAP", GRADES, None, None, 300, 6)
    assert first[1][0] == "Krippendorff's alpha" and first[1][3] < first[1][1] < first[1][4]


def test_crosstab_counts_the_subjects_both_rated():
    got = harness.call("REL_CROSSTAB", COL([r[0] for r in GRADES]), COL([r[2] for r in GRADES]), COL(ORDER))
    assert got[0] == ["rater1 \\ rater2", "A", "B", "C", "D"]
    table = pd.DataFrame([row[1:] for row in got[1:]], index=[row[0] for row in got[1:]], columns=ORDER)
    assert table.to_numpy().sum() == 7 and table.loc["B", "C"] == 1 and table.loc["C", "D"] == 1


@pytest.mark.parametrize("name, args, expected", [
    ("REL_AGREEMENT", (GRADES, "quadratic"), "quadratic weights need the order of the categories"),
    ("REL_AGREEMENT", (GRADES, "cubic"), "weights must be one of identity, linear, quadratic"),
    ("REL_AGREEMENT", (GRADES, None, 1.5), "the level argument must be in (0, 1), not 1.5"),
    ("REL_AGREEMENT", (GRADES, None, "95 percent"), "the level argument is text ('95 percent')"),
    ("REL_AGREEMENT", (GRADES, None, None, COL(["A", "B", "C"])),
     "row 3, column 2 of the ratings range: category 'D' is not in the category list"),
    ("REL_AGREEMENT", ([[1.0, 2.0], [2.0, "2,5"], [3.0, 3.0]], "linear"),
     "row 2, column 2 of the ratings range is the text '2,5' with a decimal comma"),
    ("REL_AGREEMENT", ([[1.0, True], [2.0, 2.0]],), "row 1, column 2 of the ratings range is a logical value"),
    ("REL_AGREEMENT", ([[1.0, "x"], [2.0, -2146826246], [3.0, 3.0]], None, None, COL([1.0, 2.0, 3.0])),
     "2 problems in the ratings: row 2, column 2 of the ratings range holds the Excel error #N/A"),
    ("REL_AGREEMENT", ([[1.0, 2.0], [2.0, 2.0]], [[1.0, 0.5], [0.5, 0.9]]), "weight matrix diagonal entry 2 is 0.9"),
    ("REL_AGREEMENT", ([[1.0, 2.0], [2.0, 2.0]], [[1.0, "x"], [0.5, 1.0]]), "row 1, column 2 of the weights range"),
    ("REL_AGREEMENT", (GRADES, None, None, [["A", 1.0], [None, 2.0], ["C", 3.0]]),
     "row 2 of the categories range has a value (2.0) but no category"),
    ("REL_AGREEMENT", (GRADES, None, None, [["A", 1.0], ["B", "two"]]), "the value of category 'B' must be a number"),
    ("REL_AGREEMENT", (GRADES, None, None, COL(["A", "B", "A", "C", "D"])), "category 'A' is listed twice"),
    ("REL_AGREEMENT", ([["A", "B"]],), "at least 2 rated subjects"),
    ("REL_AGREEMENT_PAIRS", (GRADES, "kappa"), "the coefficient argument must be one of percent_agreement"),
    ("REL_AGREEMENT_PAIRS", (GRADES, None, None, None, None, [["Ann", "Bob"]]),
     "the raters range has 2 name(s) for 3 column(s) of ratings"),
    ("REL_AGREEMENT_PAIRS", (GRADES, None, None, None, None, [["Ann", "Bob", "Ann"]]), "rater name 'Ann' appears twice"),
    ("REL_AGREEMENT_PAIRS", ([["A", "B", "Q"], ["B", "B", "A"]], None, None, None, COL(ORDER), [["Ann", "Bob", "Cy"]]),
     "row 1 of the ratings range (rater 'Cy'): category 'Q' is not in the category list"),
    ("REL_AGREEMENT_BOOTSTRAP", (GRADES, None, None, 1.0), "n_boot argument must be a whole number >= 2"),
    ("REL_AGREEMENT_BOOTSTRAP", (GRADES, None, None, None, -1.0), "seed argument must be a whole number >= 0"),
    ("REL_CROSSTAB", (COL(["A", "B"]), COL(["A"])), "the ranges must be the same size"),
    ("REL_CROSSTAB", (COL(["A", "B", "C"]), COL(["A", "B", "Q"]), COL(ORDER)),
     "row 3 of the rater2 range: category 'Q' is not in the category list"),
    ("REL_AGREEMENT_WEIGHTS", (None,), "the categories range is blank"),
    ("REL_AGREEMENT_WEIGHTS", (COL([0.0, 1.0, 2.0]), "ratio"), "ratio weights need positive category values"),
])
def test_bad_input_in_cell_words(name, args, expected):
    assert expected in _text(harness.call(name, *args))


def test_weights_table_shows_ranks_for_text_and_values_for_numbers():
    by_rank = harness.call("REL_AGREEMENT_WEIGHTS", COL(["low", "mid", "high"]), "linear")
    assert by_rank[0] == ["category", "low", "mid", "high"] and by_rank[1][1:] == pytest.approx([1.0, 0.5, 0.0])
    by_value = harness.call("REL_AGREEMENT_WEIGHTS", [["low", 0.0], ["mid", 1.0], ["high", 4.0]], "linear")
    assert by_value[1][1:] == pytest.approx([1.0, 0.75, 0.0])


# ----------------------------------------------------------------------------- a header row selected with the ratings
_NAMES = ["Ann", "Bo", "Cy", "Di"]
_RATED = [["K", "L", "K", "M"], ["L", "L", "L", "L"], ["M", "K", "M", "M"], ["K", "K", "K", "L"],
          ["L", "M", "L", "L"], ["M", "M", "K", "M"]]


@pytest.mark.parametrize("name", ["REL_AGREEMENT", "REL_AGREEMENT_PAIRS", "REL_AGREEMENT_MATRIX"])
def test_a_header_row_selected_with_the_ratings_names_the_raters(name):
    """B1:E7 with the raters' names in row 1 -- what people select -- is six subjects rated by Ann, Bo, Cy and
    Di, not seven subjects one of whose categories are the names (percent agreement 0.286 instead of 0.333)."""
    with_header = harness.call(name, [_NAMES, *_RATED])
    if name == "REL_AGREEMENT":
        assert with_header == harness.call(name, _RATED)
        assert _estimates(with_header)["Percent agreement"] == pytest.approx(
            agreement.percent_agreement(np.array(_RATED, dtype=object)).estimate, abs=1e-15)
    else:
        before_raters = 4 if name == "REL_AGREEMENT_PAIRS" else 3  # the arguments between ratings and raters
        assert with_header == harness.call(name, _RATED, *([None] * before_raters), [_NAMES])  # as if named there
        flat = {c for row in with_header for c in row}
        assert set(_NAMES) <= flat and "1" not in {str(c) for c in flat}


def test_a_first_row_of_ratings_is_not_taken_for_a_header():
    """A first subject whose categories the others use too (or that are declared categories) is a subject."""
    rows = [["K", "L", "K", "M"], *_RATED]
    assert harness.call("REL_AGREEMENT", rows) != harness.call("REL_AGREEMENT", rows[1:])
    unique_first = [["X", "Y", "Z", "W"], *_RATED]  # categories nobody else used -- but declared
    declared = harness.call("REL_AGREEMENT", unique_first, None, None, [["K"], ["L"], ["M"], ["W"], ["X"], ["Y"], ["Z"]])
    assert declared != harness.call("REL_AGREEMENT", _RATED, None, None, [["K"], ["L"], ["M"], ["W"], ["X"], ["Y"], ["Z"]])


def test_messages_name_the_cell_below_a_header_row():
    bad = [_NAMES, *[row[:] for row in _RATED]]
    bad[3][2] = True
    assert _text(harness.call("REL_AGREEMENT", bad)) == (f"{ERROR_PREFIX}row 4 of the ratings range (rater 'Cy') is a "
                                                         "logical value; type the category as text or a number")


@pytest.mark.parametrize("name", ["REL_ICC", "REL_KALPHA"])
def test_a_header_row_over_numeric_ratings_is_left_out(name):
    ratings = [[1, 2, 2], [2, 3, 3], [3, 3, 5], [4, 5, 4], [2, 2, 3]]
    assert harness.call(name, [["Ann", "Bo", "Cy"], *ratings]) == harness.call(name, ratings)
    text = _text(harness.call(name, [["Ann", "Bo", "Cy"], *ratings[:2], [3, "three", 5], *ratings[3:]]))
    assert "row 4, column 2 of the ratings range" in text


def test_a_level_typed_as_a_percentage_is_that_share():
    """'95%' in a text cell is 0.95, as Excel reads what it shows: the same table as the number."""
    assert harness.call("REL_AGREEMENT", GRADES, None, "95%") == harness.call("REL_AGREEMENT", GRADES, None, 0.95)
