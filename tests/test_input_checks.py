"""Every input problem at once, by cell: pending rows, scale, lists, near-duplicate names, levels, duplicates."""
from __future__ import annotations

import numpy as np
import pytest

from xlcalib.errors import InputError, InputProblems
from xlcalib.inputs import (
    Problem,
    check_evaluations,
    checks_frame,
    evaluations_from_rows,
    read_panel,
    suggest_name,
    suggest_names,
    table_from_block,
)
from xlcalib.workbook.base import Block
from xlcalib.workbook.reader import FastBook

HEAD = ["Assessor", "Object", "Score", "SD"]


def _check(rows, **kw):
    return check_evaluations(table_from_block(Block([HEAD] + rows, sheet="Evaluations")), **kw)


def _messages(panel, severity=None):
    return [p.message for p in panel.problems if severity is None or p.severity == severity]


def test_pending_rows_are_counted_not_errors():
    panel = _check([["A", "x", 5, 1], ["A", "y", None, None], ["B", "x", 6, 1], ["B", "y", 7, None]])
    assert panel.pending.to_dict("list") == {"assessor": ["A"], "object": ["y"], "sheet_row": [3]}
    assert _messages(panel, "warning") == ["sheet Evaluations, row 3: A has not yet scored y (pending: left out of this run)"]
    # a scored row still needs its uncertainty
    assert _messages(panel, "error") == ["sheet Evaluations, row 5, column SD (D5) is blank; a number is required"]
    assert panel.sheet_rows.tolist() == [2, 4]


def test_all_problems_are_collected_in_one_pass_by_cell():
    rows = [["A", "x", "3,5", 1], ["A", "y", "#N/A", 1], [True, "z", 4, 1], ["B", "x", 5, -1], ["B", "y", 6, "abc"],
            [None, "z", 5, 1], ["C", "x", 75, 1], ["A", "x", 5, 1]]
    panel = _check(rows, scale=(1, 9), scale_where="sheet Settings, B2:B3")
    errors = _messages(panel, "error")
    expected = [
        "sheet Evaluations, row 2, column Score (C2) is the text '3,5' with a decimal comma",
        "sheet Evaluations, row 3, column Score (C3) holds the Excel error #N/A",
        "sheet Evaluations, row 4, column Assessor (A4) is a logical value",
        "sheet Evaluations, row 5, column SD (D5) is -1; an SD must be greater than 0",
        "sheet Evaluations, row 6, column SD (D6) is text ('abc'); a number is required",
        "sheet Evaluations, row 7, column Assessor (A7) is blank; a name or id is required",
        "sheet Evaluations, row 8, column Score (C8) is 75, outside the score scale 1 to 9 (sheet Settings, B2:B3) "
        "(7.5 typed as 75?)",
        "assessor A evaluated object x more than once (sheet Evaluations, rows 2, 9); keep one evaluation per pair",
    ]
    for text in expected:
        assert any(text in e for e in errors), (text, errors)
    with pytest.raises(InputProblems) as info:
        panel.raise_errors()
    assert len(info.value.problems) == len(panel.problems) and len(info.value.errors) == len(errors)
    assert isinstance(info.value, InputError)  # adapters that catch InputError keep working


def test_names_against_the_lists_with_suggestions():
    assessors = [("Dr Chen Wei", "Assessors!A2"), ("Ann Lee", "Assessors!A3"), ("Bo Park", "Assessors!A4")]
    objects = [(f"GR-2025-{i:02d}", f"Objects!A{i + 1}") for i in range(1, 81)]
    rows = [["Dr Chen Wei", "GR-2025-01", 5, 1], ["Ann Lee", "GR-2025-01", 6, 1], ["Dr Chen  Wei", "GR-2025-02", 5, 1],
            ["Ann Lee", "GR-2025-81", 6, 1], ["ann lee", "GR-2025-02", 4, 1], ["Ann Lea", "GR-2025-03", 4, 1]]
    panel = _check(rows, assessors=assessors, objects=objects)
    errors = _messages(panel, "error")
    assert "Assessor 'Dr Chen  Wei' (Evaluations!A4) is not on the Assessors list; did you mean 'Dr Chen Wei'?" in errors
    assert "Assessor 'ann lee' (Evaluations!A6) is not on the Assessors list; did you mean 'Ann Lee'?" in errors
    assert "Assessor 'Ann Lea' (Evaluations!A7) is not on the Assessors list; did you mean 'Ann Lee'?" in errors
    # ten listed ids are one slip away: no arbitrary guess, but the list's size
    assert "Object 'GR-2025-81' (Evaluations!B5) is not on the Objects list (80 names); add it to the Objects sheet or " \
           "correct it" in errors
    warnings = _messages(panel, "warning")
    assert "Assessor 'Bo Park' (Assessors!A4) is on the Assessors list but has no scores yet" in warnings
    assert "Object 'GR-2025-80' (Objects!A81) is on the Objects list but has no scores yet" in warnings


def test_near_duplicates_without_a_list_are_warnings_and_still_used():
    rows = [["Dr Chen Wei", "x", 5, 1], ["Dr Chen  Wei", "y", 6, 1], ["B", "x", 4, 1], ["B", "y", 5, 1]]
    panel = _check(rows)
    assert not panel.errors
    assert _messages(panel, "warning") == [
        "Assessors: 'Dr Chen Wei' (Evaluations!A2) and 'Dr Chen  Wei' (Evaluations!A3) differ only in case or spaces; "
        "they are counted as different assessors (is it one name typed two ways?)"]
    assert panel.frame["assessor"].nunique() == 3


def test_levels_not_in_the_levels_table():
    head = ["Assessor", "Object", "Score", "Level"]
    rows = [head, ["A", "x", 5, "High"], ["A", "y", 5, "Hgh"], ["B", "x", 5, "hgh"], ["B", "y", 5, "medium"]]
    panel = check_evaluations(table_from_block(Block(rows, sheet="Evaluations")), levels=["High", "Medium", "Low"])
    errors = _messages(panel, "error")
    assert errors == ["Level 'Hgh' (Evaluations!D3) is not in the Levels table (High, Medium, Low); did you mean 'High'?",
                      "Level 'hgh' (Evaluations!D4) is not in the Levels table (High, Medium, Low); did you mean 'High'?"]


def test_control_characters_and_overlong_names_are_refused_by_cell():
    panel = _check([["A\x00B", "x", 5, 1], ["B", "y" * 40_000, 5, 1]])
    errors = _messages(panel, "error")
    assert errors[0] == ("sheet Evaluations, row 2, column Assessor (A2) holds a control character (code 0x00 at "
                         "position 2) that a workbook cannot store; retype the name")
    assert errors[1].startswith("sheet Evaluations, row 3, column Object (B3) is 40,000 characters long; a name may "
                                "have at most 32,767")


def test_only_pending_rows_is_an_error_and_empty_table():
    panel = _check([["A", "x", None, None], ["B", "x", "", None]])
    assert _messages(panel, "error") == ["sheet Evaluations: no scores yet (2 evaluations are allocated and all are "
                                         "pending)"]
    panel = _check([[None, None, None, None]])
    assert _messages(panel, "error") == ["sheet Evaluations has a header row but no evaluations below it"]


def test_checks_frame_and_problem_api():
    problems = [Problem("warning", "Evaluations", "C3", 3, "Score", "pending"),
                Problem("error", "Evaluations", "A2", 2, "Assessor", "bad")]
    frame = checks_frame(problems)
    assert frame.columns.tolist() == ["severity", "sheet", "cell", "problem"]
    assert frame["severity"].tolist() == ["error", "warning"] and frame["cell"].tolist() == ["A2", "C3"]
    assert checks_frame([]).columns.tolist() == ["severity", "sheet", "cell", "problem"]
    assert str(problems[1]) == "bad"


def test_evaluations_from_rows_raises_every_problem_and_keeps_messages():
    with pytest.raises(InputProblems) as info:
        evaluations_from_rows([HEAD, ["A", "x", "3,5", 1], ["A", "y", 4, "#DIV/0!"]])
    assert len(info.value.errors) == 2
    assert "row 3, column SD (D3) holds the Excel error #DIV/0!" in str(info.value)
    frame, kind, rows = evaluations_from_rows([HEAD, ["A", "x", 5, 1], [3.0, "y", "4.5", 1], [None] * 4])
    assert kind == "sd" and rows == [2, 3] and frame["assessor"].tolist() == ["A", "3"]
    assert frame["score"].tolist() == [5.0, 4.5]


def test_suggest_name():
    assert suggest_name("Dr Chen  Wei", ["Dr Chen Wei"]) == "Dr Chen Wei"
    assert suggest_names("GR-2025-18", ["GR-2025-81", "GR-2025-11"]) == ["GR-2025-81", "GR-2025-11"]
    assert suggest_names("GR-2025-81", [f"GR-2025-{i:02d}" for i in range(1, 81)]) == []  # too many to guess
    assert suggest_name("Bo Prak", ["Bo Park"]) == "Bo Park"  # two swapped letters
    assert suggest_name("Zed", ["Ann", "Bob"]) is None


def test_column_wise_equals_cell_by_cell_rules():
    """The vectorised checks accept and reject exactly what parse_number / parse_label do, cell by cell."""
    from xlcalib.cells import parse_label, parse_number

    rng = np.random.default_rng(7)
    pool = [1, 2.5, "3", " 4.5 ", "3,5", "1,234", "abc", "#N/A", True, None, "", " ", float("nan"), float("inf"),
            "1e3", "-2", 0, "nan", "inf"]
    scores = [pool[i] for i in rng.integers(0, len(pool), 200)]
    rows = [[f"A{i % 5}", f"o{i}", s, 1] for i, s in enumerate(scores)]
    panel = _check(rows)
    bad_rows = {p.row for p in panel.errors}
    for i, s in enumerate(scores):
        try:
            value = parse_number(s, "x")
            ok = np.isfinite(value)
        except InputError:
            ok = False
        blank = s is None or (isinstance(s, str) and not s.strip()) or (isinstance(s, float) and np.isnan(s))
        assert (i + 2 in bad_rows) == (not ok and not blank), (s, i)
    labels = [pool[i] for i in rng.integers(0, len(pool), 100)]
    panel = _check([[lab, "x", 5, 1] for lab in labels])
    bad_rows = {p.row for p in panel.errors if p.column == "Assessor"}
    for i, lab in enumerate(labels):
        try:
            parse_label(lab, "x")
            ok = True
        except InputError:
            ok = False
        blank = lab is None or (isinstance(lab, str) and not lab.strip()) or (isinstance(lab, float) and np.isnan(lab))
        assert (i + 2 in bad_rows) == (not ok or blank), (lab, i)


def _template(tmp_path, rows, scale=(1, 9)):
    from xlcalib.templates import BUILDERS

    wb = BUILDERS["panel_calibration"](assessors=3, objects=4, scale=scale)
    for sheet, names in (("Assessors", ["Dr Chen Wei", "Ann Lee", "Bo Park"]), ("Objects", ["P1", "P2", "P3", "P4"])):
        for r, name in enumerate(names, start=2):
            wb[sheet].cell(row=r, column=1, value=name)
    for r, row in enumerate(rows, start=2):
        for c, value in enumerate(row, start=1):
            wb["Evaluations"].cell(row=r, column=c, value=value)
    path = tmp_path / "panel.xlsx"
    wb.save(path)
    return path


def test_read_panel_uses_the_workbooks_settings_lists_and_levels(tmp_path):
    rows = [["Dr Chen Wei", "P1", 7.5, "High"], ["Ann Lee", "P1", 75, "Medium"], ["Dr Chen  Wei", "P2", 6, "Low"],
            ["Ann Lee", "P2", None, None], ["Bo Park", "P5", 5, "Hgh"]]
    book = FastBook(_template(tmp_path, rows))
    panel = read_panel(book, levels=["High", "Medium", "Low"])
    errors = _messages(panel, "error")
    assert any("row 3, column Score (C3) is 75, outside the score scale 1 to 9 (sheet Settings, B2:B3) (7.5 typed as "
               "75?)" in e for e in errors)
    assert "Assessor 'Dr Chen  Wei' (Evaluations!A4) is not on the Assessors list; did you mean 'Dr Chen Wei'?" in errors
    assert "Object 'P5' (Evaluations!B6) is not on the Objects list (4 names); add it to the Objects sheet or correct " \
           "it" in errors
    assert any(e.startswith("Level 'Hgh' (Evaluations!D6) is not in the Levels table") for e in errors)
    warnings = _messages(panel, "warning")
    assert "sheet Evaluations, row 5: Ann Lee has not yet scored P2 (pending: left out of this run)" in warnings
    assert "Object 'P4' (Objects!A5) is on the Objects list but has no scores yet" in warnings
    assert "Object 'P2' (Objects!A3) is on the Objects list but has no scores yet" not in warnings  # P2 has a read
    assert panel.settings["scale"] == (1.0, 9.0) and panel.settings["assessors"] == 3
    book.close()


def test_mid_panel_workbook_runs_and_lists_checks(tmp_path):
    from xlcalib.exercises import calibrate_file

    rows = [["Dr Chen Wei", "P1", 7.5, "High"], ["Ann Lee", "P1", 6, "Medium"], ["Dr Chen Wei", "P2", 6, "Low"],
            ["Ann Lee", "P2", 5, "High"], ["Bo Park", "P2", 4, "High"], ["Bo Park", "P3", 5, "High"],
            ["Ann Lee", "P3", None, None]]
    run, out = calibrate_file(_template(tmp_path, rows), tmp_path / "r.json", fmt="json")
    result = run.result
    import json

    payload = json.loads(out.read_text())
    checks = payload["Checks"]
    assert {"severity": "warning", "sheet": "Evaluations", "cell": "C8",
            "problem": "sheet Evaluations, row 8: Ann Lee has not yet scored P3 (pending: left out of this run)"} in checks
    assert any(c["problem"] == "Object 'P4' (Objects!A5) is on the Objects list but has no scores yet" for c in checks)
    assert result.stats["n_evaluations"] == 6
    lines = run.input_checks.splitlines()
    assert lines[0].startswith("input checks: 1 pending evaluation(s)") and "1 warning(s)" in lines[0]
    assert lines[1:] == ["  warning: Object 'P4' (Objects!A5) is on the Objects list but has no scores yet"]


def test_command_line_shows_the_first_warnings_in_full(tmp_path, capsys, monkeypatch):
    """Pending reads are counted; other warnings are printed (up to SHOWN_WARNINGS), then how many more."""
    from xlcalib import cli
    from xlcalib.exercises import calibration_file

    monkeypatch.setattr(calibration_file, "SHOWN_WARNINGS", 2)
    lines = ["Assessor,Object,Score,SD"] + [f"{a},O{o},{5 + (o + k) % 3},1" for o in range(6)
                                              for k, a in enumerate(("Ann", "Bo", "Cy"))]
    lines += ["ann,O1,5,1", "bo,O2,6,1", "cy,O0,7,1", "Ann,O9,,"]  # three case variants, one pending read
    path = tmp_path / "p.csv"
    path.write_text("\n".join(lines) + "\n")
    assert cli.main(["calibrate", str(path), "--format", "csv", "-o", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(out) if line.startswith("input checks:"))
    assert out[start] == ("input checks: 1 pending evaluation(s) (allocated, no score yet) left out; 3 warning(s) "
                          "(listed in Checks)")
    assert out[start + 1].startswith("  warning: Assessors: 'Ann' (Evaluations!A2) and 'ann' (Evaluations!A20) "
                                     "differ only in case or spaces")
    assert out[start + 2].startswith("  warning: Assessors: 'Bo'")
    assert out[start + 3] == "  ... and 1 more warning(s) in Checks" and out[start + 4].startswith("results written")


# --------------------------------------------------------------------------- the bulk paths equal the cell rules
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st

from xlcalib.cells import MAX_TEXT_CHARS  # noqa: E402
from xlcalib.inputs import RawTable  # noqa: E402
from xlcalib.inputs.columns import _plain_names  # noqa: E402

_NAME_PIECES = st.sampled_from(["a", "B", " ", "#", "|", "\t", "\n", "\xa0", "\x01", "\u2028", "é", "ß", "N/A", "1"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_NAME_PIECES, max_size=5).map("".join), max_size=8))
def test_plain_names_is_the_per_name_rule(names):
    """The whole-list test never passes a name the one-by-one rule refuses, and passes every list the rule passes
    unless a name holds its separator ("|": such lists are checked name by name instead)."""
    one_by_one = all(n and n.strip() == n and n.isprintable() and not n.startswith("#") and len(n) <= MAX_TEXT_CHARS
                     for n in names)
    if _plain_names(names):  # never a bad name let through (a name holding the separator may be checked one by one)
        assert one_by_one and names
    elif not any("|" in n for n in names):
        assert not (one_by_one and names)


def test_plain_names_refuses_non_text_and_overlong_names():
    assert not _plain_names(["A", 1]) and not _plain_names(["A", None]) and not _plain_names([])
    assert _plain_names(["x" * MAX_TEXT_CHARS, "y"]) and not _plain_names(["x" * (MAX_TEXT_CHARS + 1), "y"])


_CELLS = [None, float("nan"), "", "  ", "A", " A", "a", "B", "#N/A", "#x", "A\x01", True, 7, 7.0, "Dr  Lee", "dr lee"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_CELLS), st.sampled_from(_CELLS), st.sampled_from([5.0, float("nan")])),
                min_size=1, max_size=12))
def test_object_array_columns_check_like_cell_lists(rows):
    """A reader's object-array columns (the CSV path) give the same frame and problems as the same cells as lists."""
    def table(as_array):
        cols = [[r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [1.0] * len(rows)]
        if as_array:
            cols = [np.array(c, dtype=object) for c in cols[:2]] + cols[2:]  # the label columns as a reader's arrays
        return RawTable(HEAD, cols, np.arange(2, len(rows) + 2, dtype=np.intp), [1, 2, 3, 4], 1, "Evaluations")

    lists, arrays = check_evaluations(table(False)), check_evaluations(table(True))
    assert [p.message for p in arrays.problems] == [p.message for p in lists.problems]
    assert arrays.frame.to_dict("list") == lists.frame.to_dict("list")
    assert arrays.sheet_rows.tolist() == lists.sheet_rows.tolist() and arrays.pending.to_dict("list") == lists.pending.to_dict("list")


@pytest.mark.parametrize("shuffle", [False, True])
def test_repeated_pairs_found_when_the_pairs_outnumber_a_flag_table(shuffle):
    """3,000 assessors x 3,000 objects (9 million possible pairs, beyond a flag per pair): found by sorting."""
    n = 3000
    rows = [[f"A{i}", f"O{i}", 5, 1] for i in range(n)] + [[f"A{n - 1}", "O0", 5, 1], ["A7", "O7", 6, 1]]
    order = np.random.default_rng(3).permutation(len(rows)) if shuffle else np.arange(len(rows))
    table = RawTable(HEAD, [np.array([rows[i][j] for i in order], dtype=object) if j < 2 else
                            np.array([rows[i][j] for i in order], dtype=float) for j in range(4)],
                     np.arange(2, len(rows) + 2, dtype=np.intp), [1, 2, 3, 4], 1, "Evaluations")
    messages = _messages(check_evaluations(table), "error")
    assert len(messages) == 1 and messages[0].startswith("assessor A7 evaluated object O7 more than once")
    first, second = sorted(int(np.flatnonzero(order == k)[0]) + 2 for k in (7, n + 1))
    assert messages[0].endswith(f"(sheet Evaluations, rows {first}, {second}); keep one evaluation per pair")
