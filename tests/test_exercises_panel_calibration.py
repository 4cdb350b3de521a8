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


@pytest.mark.parametrize("cell, method", [("yes", "informed"), (True, "informed"), ("Informed", "informed"),
                                          ("uniform band", "uniform band"), ("Uniform-band", "uniform band"),
                                          ("no", None)])
def test_the_lottery_and_its_public_seed_are_settings_rows(cell, method):
    book = _settings_book([["Funding line (top k)", 2], ["Lottery", cell], ["Public seed", "Panel 2026"]])
    run, frames, settings = compute_calibration(book)
    lottery = run.decisions.attrs["lottery"]
    assert (lottery.get("method"), lottery.get("seed")) == ((method, "Panel 2026") if method else (None, None))
    if method:
        assert f"{method} lottery (public seed 'Panel 2026')" in settings.describe() and lottery["declared"]


def test_a_bad_lottery_cell_is_named():
    book = _settings_book([["Funding line (top k)", 2], ["Lottery", "weighted"]])
    with pytest.raises(InputError, match=r"sheet Settings, cell B3 \(lottery\) must be yes \(the informed lottery\), "
                                         r"informed, uniform band or no, not 'weighted'"):
        compute_calibration(book)
    book = _settings_book([["Funding line (top k)", 2], ["Lottery", "yes"], ["Public seed", "tab\there"]])
    with pytest.raises(InputError, match=r"sheet Settings, cell B4 \(public seed\): the public seed 'tab\\there' "
                                         r"holds a control character"):
        compute_calibration(book)


def test_verify_draw_from_the_command_line(tmp_path, capsys):
    """calibrate --lottery writes a Lottery sheet (XlsxWriter); verify-draw re-runs it from that sheet alone: exit 0
    "matches"; a copy with one edited outcome: exit 3 "does not match" naming the row; bad files: exit 2."""
    from xlcalib.cli import main
    from xlcalib.demo import write_demo_exercise

    exercise, *_ = write_demo_exercise(tmp_path / "ex.xlsx")
    out = tmp_path / "res.xlsx"
    assert main(["calibrate", str(exercise), "-o", str(out), "--fund", "10", "--lottery", "--public-seed", "007"]) == 0
    printed = capsys.readouterr().out
    assert "Informed lottery:" in printed and "public seed '007'" in printed
    assert main(["verify-draw", str(out)]) == 0
    assert capsys.readouterr().out.startswith("matches: re-run from the public seed '007', the 10 place(s)")
    book = openpyxl.load_workbook(out)
    ws = book["Lottery"]
    row = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 4).value == 1)  # first in draw order
    ws.cell(row, 7).value = "not drawn" if ws.cell(row, 7).value == "funded by lottery" else "funded by lottery"
    book.save(tmp_path / "edited.xlsx")
    assert main(["verify-draw", str(tmp_path / "edited.xlsx")]) == 3
    assert capsys.readouterr().out.startswith(f"does not match: sheet Lottery, row {row} (")
    assert main(["verify-draw", str(exercise)]) == 2
    assert "has no sheet Lottery" in capsys.readouterr().err
    assert main(["calibrate", str(exercise), "-o", str(tmp_path / "band.xlsx"), "--fund", "10",
                 "--lottery", "uniform-band"]) == 0
    assert "uniform band lottery drew" in capsys.readouterr().out
    assert main(["verify-draw", str(tmp_path / "band.xlsx")]) == 0
