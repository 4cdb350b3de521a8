"""The ordinal model in the workbook, on the command line and in the Settings sheet: its sheets (FACETS' tables,
the Wright map and the category curves as native charts), rendered alike by every backend."""
from __future__ import annotations

import datetime
import json
import zipfile

import openpyxl
import pandas as pd
import pytest

from xlcalib.calibration.rasch.simulate import simulate_ordinal_panel
from xlcalib.cli import main
from xlcalib.exercises import CalibrationSettings, compute_calibration, write_calibration
from xlcalib.exercises.panel_calibration import RASCH_SHEETS
from xlcalib.presentation import rasch_sheets
from xlcalib.workbook import XlsxWriterBook, new_workbook, save_atomically

from .test_workbook_xlsxwriter import _cells_look_alike, _chart
from .test_workbook_xlwings import Book, Sheet

NOW = datetime.datetime(2024, 5, 1, 12, 0)


def _evaluations(**kwargs) -> pd.DataFrame:
    p = simulate_ordinal_panel(12, 60, 4, n_categories=5, seed=21, **kwargs)
    return p.evaluations.rename(columns=str.capitalize)


def _workbook(model: str | None = None, ev: pd.DataFrame | None = None):
    ev = _evaluations() if ev is None else ev
    wb = new_workbook()
    ws = wb.create_sheet("Evaluations")
    ws.append(list(ev.columns))
    for row in ev.itertuples(index=False):
        ws.append(list(row))
    if model is not None:
        settings = wb.create_sheet("Settings")
        settings.append(["Setting", "Value"])
        settings.append(["Model", model])
    return wb


def _chart_xml(path, sheet: str) -> str:
    """The XML of the chart that draws cells of *sheet*."""
    with zipfile.ZipFile(path) as z:
        charts = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
    return next(x for x in charts if f"'{sheet}'!" in x)


def test_command_line_writes_facets_tables_and_native_charts(tmp_path, capsys):
    src = tmp_path / "panel.csv"
    _evaluations().to_csv(src, index=False)
    assert main(["calibrate", str(src), "--model", "facets", "--fund", "8", "--lottery", "--scale", "1-5"]) == 0
    out = capsys.readouterr().out
    assert "model rating-scale" in out and "ordered categories" in out and "funded by lottery" in out
    book = openpyxl.load_workbook(tmp_path / "panel_calibrated.xlsx")
    expected = [name for name in RASCH_SHEETS if name != "Thresholds"]
    expected.insert(3, "Lottery")  # the lottery's public record, after the Summary
    assert book.sheetnames == expected
    record = book["Lottery"]
    assert any("SHA-256" in str(c.value) for row in record.iter_rows() for c in row if c.value)
    assert main(["verify-draw", str(tmp_path / "panel_calibrated.xlsx")]) == 0  # the ordinal model's draw re-runs
    for name in ("Wright map", "Category curves", "Ranking chart"):
        assert len(book[name]._charts) == 1, name
    curves = _chart_xml(tmp_path / "panel_calibrated.xlsx", "Category curves")
    assert curves.count('<c:marker><c:symbol val="none"/></c:marker>') >= 5  # plain lines for the five categories
    assert '<c:crosses val="min"/>' in curves  # the probability axis at the left edge, not at 0 logits
    header = next(r for r in book["Ranking"].iter_rows(values_only=True) if r and r[0] == "rank")
    assert list(header[:6]) == ["rank", "object", "measure", "± (95% interval)", "fair average", "observed average"]
    categories = [r for r in book["Categories"].iter_rows(values_only=True)]
    assert any(r and r[0] == "category" for r in categories)


def test_json_output_holds_the_ordinal_tables(tmp_path):
    src = tmp_path / "panel.csv"
    _evaluations().to_csv(src, index=False)
    out = tmp_path / "result.json"
    assert main(["calibrate", str(src), "--model", "partial-credit", "--format", "json", "-o", str(out)]) == 0
    payload = json.loads(out.read_text())
    assert {"Measures", "Severities", "Categories", "Thresholds", "Residuals", "Diagnostics", "Fit", "Unexpected",
            "Separation"} <= set(payload)
    assert payload["stats"]["model"] == "partial-credit"
    assert {"measure", "fair_average", "infit", "outfit_zstd"} <= set(payload["Measures"][0])


def test_a_fair_average_line_outside_the_categories_is_one_line(tmp_path, capsys):
    src = tmp_path / "panel.csv"
    _evaluations().to_csv(src, index=False)
    assert main(["calibrate", str(src), "--model", "rating-scale", "--threshold", "5"]) == 2
    err = capsys.readouterr().err
    assert "strictly between the lowest and highest category used (1 and 5)" in err and "Traceback" not in err


def test_the_settings_row_switches_model_and_no_sheet_of_the_other_model_is_left():
    """Model = partial-credit on the Settings sheet: the Thresholds sheet; back to the linear default: Biases and
    Values, and the ordinal sheets an earlier run wrote are gone (no sheet shows another model's numbers)."""
    wb = _workbook("partial-credit")
    run, frames, settings = compute_calibration(wb)
    write_calibration(wb, run, frames, settings, now=NOW)
    assert run.result.stats["model"] == "partial-credit" and "Thresholds" in wb.sheetnames
    assert wb["Settings"]["B2"].value == "partial-credit"
    wb["Settings"]["B2"] = "random-assessors"
    run, frames, settings = compute_calibration(wb)
    write_calibration(wb, run, frames, settings, now=NOW)
    assert {"Biases", "Values"} <= set(wb.sheetnames)
    assert not {"Measures", "Severities", "Categories", "Thresholds", "Wright map"} & set(wb.sheetnames)
    wb["Settings"]["B2"] = "rating-scale"
    run, frames, settings = compute_calibration(wb)
    write_calibration(wb, run, frames, settings, now=NOW)
    assert not {"Biases", "Values", "Fit", "Thresholds"} & set(wb.sheetnames) and "Measures" in wb.sheetnames


def test_openpyxl_and_xlsxwriter_render_the_ordinal_workbook_alike(tmp_path):
    run, frames, settings = compute_calibration(_workbook("rating-scale"),
                                                CalibrationSettings(fund_top_k=10, draws=1000))
    paths = {}
    for kind, book in (("openpyxl", new_workbook()), ("xlsxwriter", XlsxWriterBook())):
        write_calibration(book, run, frames, settings, now=NOW)
        paths[kind] = save_atomically(book, tmp_path / f"{kind}.xlsx")
    a, b = (openpyxl.load_workbook(paths[k]) for k in ("openpyxl", "xlsxwriter"))
    assert a.sheetnames == b.sheetnames
    for name in a.sheetnames:
        wa, wb_ = a[name], b[name]
        assert _cells_look_alike(wa, wb_, name)
        assert [_chart(c) for c in wa._charts] == [_chart(c) for c in wb_._charts], name
    assert a["Category curves"]._charts[0].y_axis.crosses == b["Category curves"]._charts[0].y_axis.crosses == "min"


def test_the_xlwings_book_gets_the_same_sheets():
    ev = _evaluations()
    rows = [list(ev.columns)] + ev.astype(object).values.tolist()
    book = Book([Sheet("Evaluations", rows)])
    wb = _workbook()
    for target in (wb, book):
        run, frames, settings = compute_calibration(target, CalibrationSettings(model="rating-scale"))
        write_calibration(target, run, frames, settings, now=NOW)
    for name in ("Measures", "Severities", "Categories", "Unexpected"):
        ours = [list(r) for r in wb[name].iter_rows(values_only=True)]
        theirs = book.sheets[name].rows()
        width = max(len(r) for r in ours)
        assert ours == [list(r) + [None] * (width - len(r)) for r in theirs], name


def test_every_ordinal_table_prints_at_nine_points_or_larger():
    from xlcalib.workbook.base import MIN_PRINT_SCALE

    run, frames, settings = compute_calibration(_workbook("partial-credit"),
                                                CalibrationSettings(fund_top_k=10, draws=1000))
    preamble = [["xlcalib calibration"], ["run"], ["settings: " + settings.describe()]]
    for spec in rasch_sheets(run.result, frames, settings, preamble):
        assert spec.one_page or spec.printable().print_scale() >= MIN_PRINT_SCALE, (spec.name, spec.print_scale())


@pytest.mark.parametrize("option", ["--per-component", "--scale-use=on"])
def test_options_the_ordinal_model_cannot_honour_are_refused(tmp_path, capsys, option):
    src = tmp_path / "panel.csv"
    _evaluations().to_csv(src, index=False)
    assert main(["calibrate", str(src), "--model", "rating-scale", option]) == 2
    err = capsys.readouterr().err
    assert err.startswith("xlcalib: error: ") and err.count("\n") == 1


def test_letter_grades_go_through_the_command_line_and_the_settings_sheet(tmp_path, capsys):
    """A rubric written as letters (A best) is the same panel as its numbers: the ordinal model gives the same
    measures whether the grades come as numbers, as letters on a ladder made from them, as letters on a ladder
    given with --scale, or with the ladder in the Settings row Score scale points."""
    from xlcalib import calibrate

    ev = _evaluations()
    letters = ev.assign(Score=ev["Score"].map({5: "A", 4: "B", 3: "C", 2: "D", 1: "E"}))
    letters.to_csv(tmp_path / "letters.csv", index=False)
    expected = calibrate(ev.rename(columns=str.lower), model="rating-scale", scale=(1, 5)).values["measure"]
    assert main(["calibrate", str(tmp_path / "letters.csv"), "--model", "rating-scale", "--scale", "A, B, C, D, E",
                 "--format", "csv", "-o", str(tmp_path / "cli")]) == 0
    out = capsys.readouterr().out
    assert "scores read as letter grades, higher = better: A=5, B=4, C=3, D=2, E=1, on the ladder declared" in out
    measures = pd.read_csv(next((tmp_path / "cli").glob("*Measures*.csv"))).set_index("object")["measure"]
    pd.testing.assert_series_equal(measures.loc[expected.index], expected, check_names=False, rtol=1e-9)
    wb = _workbook("rating-scale", letters)
    wb["Settings"].append(["Score scale points", "A, B, C, D, E"])
    run, frames, _settings = compute_calibration(wb)
    assert "on the ladder declared" in " ".join(frames["Checks"].astype(str).to_numpy().ravel())
    pd.testing.assert_series_equal(run.result.values["measure"].loc[expected.index], expected, rtol=1e-9)
