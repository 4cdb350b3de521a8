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
