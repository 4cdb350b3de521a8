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
