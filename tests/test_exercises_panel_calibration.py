"""The panel calibration exercise on a workbook: re-runs replace only the result sheets; the decisions on the
result are the Ranking sheet's."""
from __future__ import annotations

import openpyxl
import pytest

from xlcalib.errors import InputError
from xlcalib.exercises import RESULT_SHEETS, calibrate_panel, compute_calibration

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
    assert book.sheetnames == ["Evaluations", "Notes", *RESULT_SHEETS, "Next reads"]  # the Run main's result
    assert book["Notes"]["A1"].value == "keep me"
    assert [c.value for c in book["Evaluations"][1]] == GOOD[0]


def _settings_book(settings_rows):
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Evaluations"
    for row in GOOD:
        ws.append(row)
    settings = book.create_sheet("Settings")
    for row in [["Setting", "Value"], *settings_rows]:
        settings.append(row)
    return book


def test_the_funding_line_on_settings_decides_and_the_result_carries_the_ranking_sheets_decisions():
    result, frames, settings = compute_calibration(_settings_book([["Funding line (top k)", 1], ["Seed", 7]]))
    assert (settings.fund_top_k, settings.seed) == (1, 7)
    ranking = frames["Ranking"]
    assert list(ranking["object"]) == list(result.decisions.index)
    assert ranking["decision"].tolist() == result.decisions["decision"].tolist()
    assert ranking["decision"].tolist() == ["above", "below", "below"]  # one place: y, the clear best, takes it
    assert ranking.attrs == result.decisions.attrs and ranking.attrs["line"] == "top 1" and ranking.attrs["seed"] == 7


def test_both_funding_lines_set_is_refused_naming_both_cells():
    book = _settings_book([["Funding line (top k)", 1], ["Funding line (score)", 5.5]])
    with pytest.raises(InputError, match=r"two funding lines are set \(sheet Settings, cell B2 places and "
                                         r"sheet Settings, cell B3 a score\)"):
        compute_calibration(book)
