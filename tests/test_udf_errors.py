"""What the cell shows when the input is wrong, and the guarantees around it (headless, through xlwings)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import xlcalib
from udf_registry.registry import ERROR_PREFIX, REGISTRY

from . import xlwings_harness as harness

COL = lambda values: [[v] for v in values]  # noqa: E731
ROW = lambda values: [list(values)]  # noqa: E731
A = ["A", "B", "C", "A", "B", "C", "A", "B"]
O = ["x", "x", "y", "y", "z", "z", "w", "w"]
S = [5.0, 6.0, 5.0, 6.0, 7.0, 8.0, 4.0, 5.0]
U = [1.0] * 8


def _with(values, i, bad):
    out = list(values)
    out[i] = bad
    return out


def _text(got):
    text = got[0][0] if isinstance(got, list) else got
    assert isinstance(text, str) and text.startswith(ERROR_PREFIX), got
    assert "Traceback" not in text and len(text) <= 250
    return text


@pytest.mark.parametrize("which, i, bad, expected", [
    ("uncertainty", 6, None, "row 7 of the uncertainty range is blank"),  # beside a score; a blank score is pending
    ("scores", 6, "3,5", "row 7 of the score range is the text '3,5' with a decimal comma"),
    ("scores", 3, -2146826246, "row 4 of the score range holds the Excel error #N/A"),
    ("uncertainty", 2, -1.0, "row 3 of the uncertainty range (assessor C, object y): sd must be positive"),
    ("uncertainty", 4, 0.0, "row 5 of the uncertainty range (assessor B, object z): sd must be positive"),
    ("uncertainty", 2, "Huge", "row 3 of the uncertainty range is 'Huge' but other cells hold numbers"),
    ("assessors", 3, None, "row 4 of the assessor range is blank"),
    ("objects", 5, -2146826281, "row 6 of the object range holds the Excel error #DIV/0!"),
])
def test_calibration_errors_name_the_cell_of_the_selected_range(which, i, bad, expected):
    args = {"assessors": A, "objects": O, "scores": S, "uncertainty": U}
    args[which] = _with(args[which], i, bad)
    text = _text(harness.call("CALIB_VALUES", *(COL(args[k]) for k in ("assessors", "objects", "scores", "uncertainty"))))
    assert expected in text


def test_a_single_row_range_reports_columns():
    text = _text(harness.call("CALIB_BIASES", ROW(A), ROW(O), ROW(S), ROW(_with(U, 2, -1.0))))
    assert "column 3 of the uncertainty range" in text
    text = _text(harness.call("CALIB_BIASES", ROW(A), ROW(O), ROW(_with(S, 1, "abc")), ROW(U)))
    assert "column 2 of the score range is text ('abc')" in text


def test_unknown_level_and_levels_table():
    levels = ["High", "Low", "Medium", "High", "Low", "Medium", "Huge", "Low"]
    text = _text(harness.call("CALIB_VALUES", COL(A), COL(O), COL(S), COL(levels)))
    assert "row 7 of the uncertainty range" in text and "unknown confidence level 'Huge'" in text
    # the same level known through a levels table: a number comes back
    table = [["Level", "SD"], ["Huge", 4.0], ["High", 0.5], ["Medium", 1.0], ["Low", 2.0]]
    got = harness.call("CALIB_VALUES", COL(A), COL(O), COL(S), COL(levels), "level", table)
    assert got[0] == ["object", "value", "se", "lower", "upper", "n", "raw_mean"] and isinstance(got[1][1], float)
    text = _text(harness.call("CALIB_VALUES", COL(A), COL(O), COL(S), COL(levels), "level", [["Huge", "four"]]))
    assert "row 1 of the levels range (SD) is text ('four')" in text


def test_duplicate_pair_and_disconnected_panel_in_cell_words():
    text = _text(harness.call("CALIB_VALUES", COL(A[:7] + ["A"]), COL(O[:7] + ["x"]), COL(S), COL(U)))
    assert "assessor A evaluated object x more than once (rows 1, 8 of the ranges)" in text
    got = harness.call("CALIB_VALUES", COL(["A", "A", "B", "B"]), COL(["x", "y", "z", "w"]),
                       COL([1.0, 2.0, 3.0, 4.0]), COL([1.0] * 4))
    # the default model compares unconnected groups through its prior: values, with the biases' uncertainty in the SE
    assert got[0][:3] == ["object", "value", "se"] and all(row[2] > 1.0 for row in got[1:-1])
    assert got[-1][0].startswith("note: 2 groups share no object")  # and the cells say what the comparison rests on


def test_design_errors_and_whole_numbers():
    text = _text(harness.call("CALIB_DESIGN", COL(["A", "A", "B", "A"]), COL(["x", "y", "x", "x"])))
    assert "row 4 of the ranges: assessor A is assigned object x twice" in text
    assert "whole number, not 2.5" in _text(harness.call("CALIB_DESIGN", COL(A), COL(O), None, 2.5))
    assert ">= 0" in _text(harness.call("CALIB_DESIGN", COL(A), COL(O), None, -1.0))
    got = harness.call("CALIB_DESIGN", COL(A), COL(O), None, 0.0)
    assert not any(str(row[0]).startswith("add ") for row in got)
    got = harness.call("CALIB_DESIGN", COL(A), COL(O), None, 2.0)
    assert [row[0] for row in got if str(row[0]).startswith("add ")] == ["add 1", "add 2"]


@pytest.mark.parametrize("name, args, expected", [
    ("REL_KRR_BOOTSTRAP", ([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]], None, 10.7), "n_boot argument must be a whole number"),
    ("REL_KRR_BOOTSTRAP", ([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]], None, 10.0, -1.0), "seed argument must be a whole number >= 0"),
    ("REL_KRR_CURVE", ([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]], None, 0.0), "k_max argument must be a whole number >= 1"),
    ("GT_CERTAINTY", ([["a"], ["b > a"]], COL(["a", "b"]), None, 99.5), "samples argument must be a whole number"),
    ("REL_ICC", ([[1.0, 2.0], [3.0, 4.0]], "ICC9"), "form argument must be one of ICC1, ICC2"),
    ("REL_KALPHA", ([[1.0, 2.0], [3.0, "3,5"]], "interval"), "row 2, column 2 of the ratings range is the text '3,5'"),
])
def test_option_arguments_checked_not_guessed(name, args, expected):
    assert expected in _text(harness.call(name, *args))


@pytest.mark.parametrize("bad", ["maybe", 2.0, -2146826273])
def test_bad_header_flag(bad):
    text = _text(harness.call("CALIB_VALUES", COL(A), COL(O), COL(S), COL(U), None, None, None, bad))
    assert "header argument must be TRUE or FALSE" in text


@pytest.mark.parametrize("flag, rows", [(True, 5), (False, 4), ("no", 4), (0.0, 4), (None, 5)])
def test_header_flag_spellings(flag, rows):
    got = harness.call("CALIB_VALUES", COL(A), COL(O), COL(S), COL(U), None, None, None, flag)
    assert len(got) == rows


def test_internal_errors_become_text_never_raise(monkeypatch):
    from udf_registry import calibration as fam

    fam._cache.clear()

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(fam.xlcalib, "calibrate", boom)
    text = _text(harness.call("CALIB_VALUES", COL(A), COL(O), COL(S), COL(U)))
    assert text == "xlcalib: internal error in CALIB_VALUES (RuntimeError: boom)"
    fam._cache.clear()


def test_wrong_number_of_arguments_is_text():
    text = _text(REGISTRY["CALIB_VALUES"].func(COL(A), COL(O)))
    assert "CALIB_VALUES" in text and "scores" in text
    text = _text(REGISTRY["REL_ICC"].func([[1.0]], "ICC1", 3, 4))
    assert "REL_ICC" in text and "too many" in text


def test_long_messages_are_shortened_for_the_cell():
    from udf_registry.registry import MAX_ERROR_CHARS, error_text

    text = error_text("x " * 400)
    assert len(text) == MAX_ERROR_CHARS and text.endswith("...")


def test_every_function_survives_garbage_in_every_argument():
    """No argument of any function, whatever Excel hands over, raises out of the function."""
    garbage = [None, "", "#REF!", -2146826265, "abc", True, [[None, "x"], [1.0, -2146826246]], 1e308]
    internal = []
    for name, entry in REGISTRY.items():
        for position in range(len(entry.args)):
            for bad in garbage:
                args = [[[1.0, 2.0], [3.0, 4.0]]] * len(entry.args)
                args[position] = bad
                got = harness.call(name, *args)  # must not raise
                cell = got[0][0] if isinstance(got, list) else got
                if isinstance(cell, str) and "internal error" in cell:
                    internal.append((name, entry.args[position].name, bad, cell))
    assert not internal, internal[:5]  # bad input is an InputError with a message, not a bug report


CORE_MODULES = ["xlcalib.calibration", "xlcalib.reliability", "xlcalib.agreement", "xlcalib.ordinal",
                "xlcalib.scoring", "xlcalib.ground_truth", "xlcalib.inputs"]


def test_core_never_imports_xlwings():
    code = textwrap.dedent(f"""
        import sys, importlib
        for m in {CORE_MODULES!r}:
            importlib.import_module(m)
        assert "xlwings" not in sys.modules, sorted(m for m in sys.modules if m.startswith("xlwings"))
    """)
    subprocess.run([sys.executable, "-c", code], check=True)


def test_catalogue_importable_without_xlwings():
    code = textwrap.dedent("""
        import sys
        sys.modules["xlwings"] = None  # as if xlwings were not installed
        from udf_registry import CALIB_VALUES, REL_SPEARMAN_BROWN, __all__
        assert abs(REL_SPEARMAN_BROWN(0.5, 2) - 2 / 3) < 1e-12
        assert "CALIB_VALUES" in __all__ and not hasattr(CALIB_VALUES, "__xlfunc__")
    """)
    subprocess.run([sys.executable, "-c", code], check=True)


def test_calibrate_core_still_equal_after_error_calls():
    """Errors are not cached: a bad call followed by the good one gives the core's numbers."""
    harness.call("CALIB_VALUES", COL(A), COL(O), COL(_with(S, 1, "abc")), COL(U))
    got = harness.call("CALIB_VALUES", COL(A), COL(O), COL(S), COL(U))
    core = xlcalib.calibrate(assessors=A, objects=O, scores=S, sd=U).values
    assert [row[1] for row in got[1:]] == pytest.approx(core["value"].tolist(), rel=1e-12)


def test_ground_truth_classes_typed_as_numbers_and_error_cells():
    """Class 3 typed as a number arrives as 3.0; it must match the class '3' of the class list."""
    classes = COL([1.0, 2.0, 3.0])
    got = harness.call("GT_IRN", [[1.0, "2 > 1"], ["3", None]], classes)
    assert got[0] == ["item", "1", "2", "3"]
    assert got[1][1:] == pytest.approx([0.6, 0.4, 0.0]) and got[2][1:] == pytest.approx([0.0, 0.0, 1.0])
    got = harness.call("GT_UA_ACCURACY", [[1.0, "2 > 1"], ["3", None]], classes, [[1.0, 2.0], [3.0, 1.0]], 1.0)
    assert got[3] == ["point estimate (IRN) version", pytest.approx(1.0)]  # both top-1 predictions are IRN argmax
    text = _text(harness.call("GT_IRN", [[-2146826246, "2 > 1"], ["3", None]], classes))
    assert text == "xlcalib: row 1, column 1 of the annotations range holds the Excel error #N/A"
    text = _text(harness.call("GT_UA_ACCURACY", [[1.0], ["3"]], classes, [["#N/A", 1.0], [3.0, 1.0]]))
    assert "row 1, column 1 of the predictions range holds the Excel error #N/A" in text


def test_omitted_middle_arguments_take_their_defaults():
    """=CALIB_VALUES(A, O, S, U, , , , FALSE): VBA hands over 'missing' for the skipped Optional arguments."""
    m = harness.MISSING
    skipped = harness.call("CALIB_VALUES", COL(A), COL(O), COL(S), COL(U), m, m, m, False)
    spelled = harness.call("CALIB_VALUES", COL(A), COL(O), COL(S), COL(U), "sd", None, "weighted", False)
    assert skipped == spelled and skipped[0][0] == "x"  # no header row
    # a referenced empty cell (None after conversion) means the default as well
    assert harness.call("CALIB_VALUES", COL(A), COL(O), COL(S), COL(U), None, None, None, None)[0] == [
        "object", "value", "se", "lower", "upper", "n", "raw_mean"]


def test_whole_column_selection_with_blank_rows_below_the_data():
    """=CALIB_VALUES(A2:A2000, ...) over 8 evaluations: the blank rows below are not evaluations."""
    pad = [None] * 50
    got = harness.call("CALIB_VALUES", COL(A + pad), COL(O + pad), COL(S + pad), COL(U + pad))
    assert got == harness.call("CALIB_VALUES", COL(A), COL(O), COL(S), COL(U))
    # a blank score next to a named assessor and object is a pending read: left out, and CALIB_STATS says where
    pending = (COL(A + ["C"] + pad), COL(O + ["w"] + pad), COL(S + [None] + pad), COL(U + [1.0] + pad))
    assert harness.call("CALIB_VALUES", *pending) == got
    stats = {row[0]: row[1] for row in harness.call("CALIB_STATS", *pending)[1:]}
    assert stats["input checks"] == ("1 pending evaluation(s) (blank score: allocated, not scored yet) left out, the "
                                     "first in row 9 of the score range")
    assert "input checks" not in {row[0] for row in harness.call("CALIB_STATS", COL(A), COL(O), COL(S), COL(U))[1:]}
    got = harness.call("CALIB_DESIGN", COL(A + pad), COL(O + pad))
    assert got == harness.call("CALIB_DESIGN", COL(A), COL(O))


def test_block_where_a_column_is_expected():
    text = _text(harness.call("CALIB_VALUES", [[a, o] for a, o in zip(A, O)], COL(O), COL(S), COL(U)))
    assert "the assessor range is 8 rows x 2 columns; select a single row or a single column" in text


def test_calibration_does_not_depend_on_the_order_of_the_rows():
    """Sorting the evaluation table in Excel must not change any calibrated value (hypothesis-free: all 8! is too many,
    so a fixed set of permutations including the reversal)."""
    import numpy as np

    base = {row[0]: row[1:] for row in harness.call("CALIB_VALUES", COL(A), COL(O), COL(S), COL(U))[1:]}
    rng = np.random.default_rng(1)
    for perm in [list(range(8))[::-1], *[rng.permutation(8).tolist() for _ in range(5)]]:
        got = harness.call("CALIB_VALUES", *(COL([v[i] for i in perm]) for v in (A, O, S, U)))
        assert {row[0]: pytest.approx(row[1:], rel=1e-9, abs=1e-12) for row in got[1:]} == base


def test_an_undefined_scalar_says_so_instead_of_a_blank_cell():
    same = COL(["K", "K", "K"])
    text = _text(harness.call("ORD_RC", same, same, COL(["K", "L", "M"])))
    assert text.startswith("xlcalib: RC is not defined: ") and "single category" in text  # and why
    assert harness.call("ORD_RP", same, same, COL(["K", "L", "M"])) == [[0.0]]  # defined: no shift


def test_cache_key_copes_with_date_cells(monkeypatch):
    """Cells marshal cannot serialise (dates) fall back to pickle; the solve is still shared."""
    import datetime as dt

    from udf_registry import calibration as fam

    fam._cache.clear()
    calls = []
    real = xlcalib.calibrate
    monkeypatch.setattr(fam.xlcalib, "calibrate", lambda *a, **k: calls.append(1) or real(*a, **k))
    days = {"x": dt.datetime(2024, 1, 1), "y": dt.datetime(2024, 1, 2), "z": dt.datetime(2024, 1, 3),
            "w": dt.datetime(2024, 1, 4)}
    objects = COL([days[o] for o in O])  # e.g. objects identified by a session date
    first = harness.call("CALIB_VALUES", COL(A), objects, COL(S), COL(U))
    second = harness.call("CALIB_BIASES", COL(A), objects, COL(S), COL(U))
    assert first[1][0] == "2024-01-01T00:00:00" and second[0] == ["assessor", "bias", "se", "lower", "upper", "n"]
    assert len(calls) == 1
    fam._cache.clear()


def test_cells_comparing_unconnected_groups_carry_the_assumption():
    """Two groups of assessors that share no object, fitted together by the default model: the tables that
    compare objects or assessors across the panel end with the short form of the Summary's sentence, and
    CALIB_RANKING ranks them (one rule with the command line); CALIB_STATS needs no such note."""
    a = ["A", "A", "B", "B", "C", "C", "D", "D", "E", "E", "F", "F"]
    o = ["x", "y", "x", "y", "x", "z", "u", "v", "u", "v", "u", "w"]
    s = [5, 7, 6, 8, 5, 6, 3, 4, 4, 5, 3, 6]
    args = (COL(a), COL(o), COL(s), COL([1.0] * 12))
    for name, extra in (("CALIB_VALUES", ()), ("CALIB_BIASES", ()), ("CALIB_RANKING", (2,))):
        rows = harness.call(name, *args, *extra)
        assert str(rows[-1][0]).startswith("note: 2 groups share no object") and "as strict as the panel" in rows[-1][0]
        assert all(c in (None, "") for c in rows[-1][1:]) and not str(rows[-2][0]).startswith("note")
    assert not any(str(r[0]).startswith("note") for r in harness.call("CALIB_STATS", *args))
