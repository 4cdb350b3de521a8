"""The panel calibration exercise on a workbook: re-runs replace only the result sheets."""
from __future__ import annotations

import openpyxl

from xlcalib.exercises import RESULT_SHEETS, calibrate_panel

from .test_cli import GOOD


def test_macro_rerun_replaces_only_result_sheets():
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Evaluations"
    for row in GOOD:
        ws.append(row)
    book.create_sheet("Notes")["A1"] = "keep me"
    calibrate_panel(book)
    calibrate_panel(book)
    assert book.sheetnames == ["Evaluations", "Notes", *RESULT_SHEETS]
    assert book["Notes"]["A1"].value == "keep me"
    assert [c.value for c in book["Evaluations"][1]] == GOOD[0]

