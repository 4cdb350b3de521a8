"""xlcalib.inputs, the evaluations-table check: header spellings, blank rows, merged cells (the cell rules
themselves are tested in test_cells.py; every problem of a table at once in test_input_checks.py)."""
from __future__ import annotations

import openpyxl
import pytest

from xlcalib.errors import InputError
from xlcalib.inputs import evaluations_from_rows


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


# --------------------------------------------------------------------------- one header rule for every reader
def _plain(name: str) -> str:
    return name


def _curly_and_nbsp(name: str) -> str:
    """Autocorrect's apostrophe (U+2019) and a web page's non-breaking space (U+00A0)."""
    return name.replace("'", "\u2019").replace(" ", "\u00a0")


def _upper_left_quote_narrow_space(name: str) -> str:
    """Capitals, a left single quote (U+2018) for the apostrophe, narrow no-break spaces (U+202F, French)."""
    return name.upper().replace("'", "\u2018").replace(" ", "\u202f")


def _modifier_apostrophe_wrapped(name: str) -> str:
    """A modifier-letter apostrophe (U+02BC) and a header wrapped onto two lines in its cell."""
    return name.replace("'", "\u02bc").replace(" ", "\n ", 1)


def _evaluations_check_reads(typed):
    """The Settings, Evaluations and group columns of a panel workbook, read and checked: what came out."""
    from xlcalib.inputs import CalibrationSettings, read_calibration_inputs, read_groups
    from xlcalib.workbook import open_book

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Evaluations"
    ws.append(["Assessor", "Object", "Score", typed("Confidence level"), typed("Reviewer's panel")])
    for row in (["A", "P1", 5, "High", "North"], ["B", "P1", 4, "Low", "North"], ["A", "P2", 3, "Medium", "South"],
                ["B", "P2", 6, "High", "South"]):
        ws.append(row)
    wb.create_sheet("Settings").append([typed("Group column"), "Reviewer's panel"])
    backend = open_book(wb)
    settings, panel = read_calibration_inputs(backend, CalibrationSettings())
    panel.raise_errors()
    groups = read_groups(backend, panel, settings.group_column, settings.origins.get("group_column"))
    return panel.kind, panel.frame["level"].tolist(), groups.to_dict()


def _assignment_sheet_reads(typed):
    """The Assignment sheet's three tables as read: their columns and rows."""
    from xlcalib.exercises.assignment import read_assignment

    rows = [["Assessor", typed("Max load"), None, "Object", typed("Reads wanted"), None, typed("Conflict assessor"),
             typed("Conflict object")],
            ["A", 2, None, "P1", 1, None, "A", "P2"], ["B", 2, None, "P2", 1, None, "B", "P1"]]
    return {kind: frame.to_dict("list") for kind, frame in read_assignment(rows).items()}


def _import_mapping_reads(typed):
    """A HotCRP export whose score field the saved mapping names (no preset pattern finds it): the scores read."""
    from xlcalib.imports import read_export

    header = '"' + typed("Reviewer's verdict") + '"'  # quoted: a wrapped header holds a line break
    export = (f"paper,title,review,reviewername,email,{header}\n"
              "1,Tea,1A,Ada,ada@example.org,3\n1,Tea,1B,Bo,bo@example.org,2\n2,Cake,2A,Ada,ada@example.org,5\n")
    result = read_export(export.encode(), source="hotcrp", mapping={"score": ["Reviewer's verdict"]})
    return result.evaluations[["object", "assessor", "score"]].to_dict("list")


@pytest.mark.parametrize("reader", [_evaluations_check_reads, _assignment_sheet_reads, _import_mapping_reads])
@pytest.mark.parametrize("typed", [_curly_and_nbsp, _upper_left_quote_narrow_space, _modifier_apostrophe_wrapped])
def test_a_header_typed_with_typographic_characters_reads_as_the_plain_one(reader, typed):
    """One rule (xlcalib.cells.header_key) for every reader of a header: a header with a typographic apostrophe,
    non-breaking spaces, a line break or other case matches in the evaluations check (and the Settings and
    group columns beside it), on the Assignment sheet and in an import's column mapping alike."""
    plain = reader(_plain)
    assert plain and reader(typed) == plain


def test_docstring_examples_run():
    import doctest
    import importlib

    for name in ("problems", "table", "columns", "names", "evaluations", "panel", "settings", "groups"):
        module = importlib.import_module(f"xlcalib.inputs.{name}")
        assert doctest.testmod(module).failed == 0, name


# --------------------------------------------------------------------------- letter grades
def _graded(scores, scale=None):
    from xlcalib.inputs import table_from_block
    from xlcalib.inputs.evaluations import check_evaluations
    from xlcalib.workbook.base import Block

    rows = [["Assessor", "Object", "Score", "Level"]] + [[f"A{i % 3}", f"P{i}", s, "High"]
                                                         for i, s in enumerate(scores)]
    return check_evaluations(table_from_block(Block(rows, 1, 1), "Evaluations"), scale=scale)


def test_letter_grades_are_read_as_a_ladder_and_said():
    """A column of grades only is read on the ladder its grades make (A best, the alphabet filled between the
    best and the worst grade seen), higher = better, and the checks say how; nothing is read as a number silently."""
    panel = _graded(["A", "C", "d", " B ", None, "A"])
    assert panel.frame["score"].tolist() == [4.0, 2.0, 1.0, 3.0, 4.0]  # A=4 ... D=1; the blank one is pending
    notes = [p.message for p in panel.problems if "letter grades" in p.message]
    assert len(notes) == 1 and "A=4, B=3, C=2, D=1" in notes[0] and "made from the grades present" in notes[0]
    assert panel.settings["scale"] is None  # an inferred ladder's ends are not the scale's: not read as censored


def test_a_declared_ladder_reads_grades_and_names_cells_off_it():
    from xlcalib.inputs.values import scale_argument

    ladder = scale_argument("A+, A, B, C, D, E", "--scale")
    panel = _graded(["A+", "E", "B"], ladder)
    assert panel.frame["score"].tolist() == [6.0, 1.0, 4.0] and panel.settings["scale"] == (1.0, 6.0)
    assert any("on the ladder declared" in p.message for p in panel.problems)
    bad = _graded(["A", "F", 3], ladder)  # a grade off the ladder and a number among the grades: both named
    errors = [p for p in bad.problems if p.severity == "error"]
    assert [p.cell for p in errors] == ["C3", "C4"]
    assert "'F' is not on the declared scale" in errors[0].message and "is a number where the scale" in errors[1].message


def test_other_text_among_grades_is_named_and_the_grades_read():
    panel = _graded(["A", "N/A", "C", "B"])
    errors = [p for p in panel.problems if p.severity == "error"]
    assert [p.cell for p in errors] == ["C3"] and "'N/A' is neither a number nor a scale symbol" in errors[0].message


def test_a_column_of_numbers_with_one_letter_is_not_read_as_grades():
    """One stray letter in a column of numbers is a typing slip, not a ladder: the cell is an error as before."""
    panel = _graded([3, 4, "B", 5])
    assert [p.cell for p in panel.problems if p.severity == "error"] == ["C4"]
    assert not any("letter grades" in p.message for p in panel.problems)


@pytest.mark.parametrize("title_rows", [[["Panel scores 2026"]], [["Panel scores 2026"], [], ["as of 1 March"]], []])
def test_an_evaluations_sheet_with_a_heading_is_read_from_its_header(tmp_path, title_rows):
    """A heading above the table (a title, a date, blank rows) is how people lay a sheet out: the table is read
    from its header row, its cells named by their own rows; a sheet whose first row of several cells is not the
    header still names what it found there."""
    from xlcalib.inputs import read_panel
    from xlcalib.workbook import open_book
    from xlcalib.workbook.reader import FastBook

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Evaluations"
    for row in title_rows:
        sheet.append(row or [None])
    sheet.append(["Assessor", "Object", "Score", "SD"])
    sheet.append(["A", "x", 5, 1])
    sheet.append(["B", "x", "six", 1])
    book.save(tmp_path / "p.xlsx")
    header = len(title_rows) + 1
    backends = [open_book(book)]  # the workbook in hand, and the file's reader where python-calamine is installed
    try:
        import python_calamine  # noqa: F401
    except ImportError:  # xlwings Lite (Pyodide) has no compiled calamine; its reader is tested where it is
        pass
    else:
        backends.append(FastBook(tmp_path / "p.xlsx"))
    for backend in backends:
        panel = read_panel(backend)
        assert [p.message for p in panel.errors] == [
            f"sheet Evaluations, row {header + 2}, column Score (C{header + 2}) is text ('six'); a number is required"]
        assert panel.frame.to_dict("list")["assessor"] == ["A"] and panel.sheet_rows.tolist() == [header + 1]
    sheet.insert_rows(1)
    sheet["A1"], sheet["B1"] = "Name", "Note"
    with pytest.raises(InputError, match=r"header row 1: missing column\(s\) Assessor, Object, Score"):
        read_panel(open_book(book))
