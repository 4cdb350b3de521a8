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
    run, frames, settings = compute_calibration(_settings_book([["Funding line (top k)", 1], ["Seed", 7]]))
    result = run.result
    assert (settings.fund_top_k, settings.seed) == (1, 7)
    ranking = frames["Ranking"]
    assert list(ranking["object"]) == list(run.decisions.index)
    assert ranking["decision"].tolist() == run.decisions["decision"].tolist()
    assert ranking["decision"].tolist() == ["above", "below", "below"]  # one place: y, the clear best, takes it
    assert ranking.attrs == run.decisions.attrs and ranking.attrs["line"] == "top 1" and ranking.attrs["seed"] == 7


def test_both_funding_lines_set_is_refused_naming_both_cells():
    book = _settings_book([["Funding line (top k)", 1], ["Funding line (score)", 5.5]])
    with pytest.raises(InputError, match=r"two funding lines are set \(sheet Settings, cell B2 places and "
                                         r"sheet Settings, cell B3 a score\)"):
        compute_calibration(book)


@pytest.mark.parametrize("cell, expected", [(0.25, 0.25), ("25%", 0.25), (25, 0.25), (None, 0.05)])
def test_the_borderline_cut_off_is_a_settings_row(cell, expected):
    book = _settings_book([["Funding line (top k)", 1], ["Borderline cut-off", cell]])
    run, frames, settings = compute_calibration(book)
    result = run.result
    assert settings.epsilon == pytest.approx(expected)
    assert run.decisions.attrs["epsilon"] == pytest.approx(expected)
    assert f"borderline between {expected:.0%} and {1 - expected:.0%}" in settings.describe()


def test_a_bad_borderline_cut_off_is_named_by_its_cell():
    book = _settings_book([["Funding line (top k)", 1], ["Borderline cut-off", 0.7]])
    with pytest.raises(InputError, match=r"sheet Settings, cell B3 \(borderline cut-off\) must be a share above 0 "
                                         r"and below 50%"):
        compute_calibration(book)


def test_the_borderline_cut_off_from_the_command_line(tmp_path, capsys):
    import json

    from xlcalib.cli import main
    from xlcalib.demo import write_demo_exercise

    exercise, *_ = write_demo_exercise(tmp_path / "ex.xlsx")
    assert main(["calibrate", str(exercise), "-o", str(tmp_path / "r.json"), "--format", "json", "--fund", "10",
                 "--borderline", "0.25"]) == 0
    assert "Borderline means P(above) between 25% and 75%" in capsys.readouterr().out
    assert json.loads((tmp_path / "r.json").read_text())["ranking"]["epsilon"] == 0.25
    assert main(["calibrate", str(exercise), "--fund", "10", "--borderline", "0.5"]) == 2
    assert "--borderline must be a share above 0 and below 0.5" in capsys.readouterr().err
