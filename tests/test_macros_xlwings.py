"""The macros through the xlwings backend (stand-in Book from test_workbook_xlwings): same numbers as the core,
the same sheets as through openpyxl, inputs untouched, re-runs replace only their own sheets and charts."""
from __future__ import annotations

import numpy as np
import openpyxl
import pandas as pd
import pytest

import xlcalib
from xlcalib.exercises import RESULT_SHEETS
from xlcalib.macros import calibrate_panel

from .test_workbook_xlwings import Book, Formula, Sheet


def _table(sheet_rows, first):
    header = next(i for i, r in enumerate(sheet_rows) if r and r[0] == first)
    return pd.DataFrame(sheet_rows[header + 1:], columns=sheet_rows[header]).set_index(first), header + 1


def _demo_book():
    evaluations, _, _ = xlcalib.demo.demo_panel()
    evaluations.loc[evaluations["Assessor"] == "Assessor A", "Assessor"] = "=cmd|' /C calc'!A0"
    evaluations.loc[5, "Score"] += 9.0  # one gross error: an anomalous evaluation to highlight
    rows = [list(evaluations.columns)] + evaluations.astype(object).values.tolist()
    book = Book([Sheet("Evaluations", rows),
                 Sheet("Settings", [["Setting", "Value"], ["Gauge", "simple"], ["Anomaly threshold", 2.5]]),
                 Sheet("Levels", [["Level", "SD"], ["High", 0.5], ["Medium", 1.0], ["Low", 2.0]])])
    return book, evaluations


def test_calibrate_panel_through_the_xlwings_backend():
    book, evaluations = _demo_book()
    before = {s.name: dict(s.cells) for s in book.sheets}
    result = calibrate_panel(book).result
    core = xlcalib.calibrate(evaluations.rename(columns=str.lower), gauge="simple", anomaly_threshold=2.5,
                             levels={"High": 0.5, "Medium": 1.0, "Low": 2.0})  # the Levels sheet gives SDs
    np.testing.assert_allclose(result.values["value"], core.values["value"], atol=1e-12)
    names = [s.name for s in book.sheets]
    assert names == ["Evaluations", "Settings", "Levels", *RESULT_SHEETS, "Next reads"]
    table, header_row = _table(book.sheets["Biases"].rows(), "assessor")
    np.testing.assert_allclose(table.loc[core.biases.index, "bias"].astype(float), core.biases["bias"], atol=1e-12)
    assert "=cmd|' /C calc'!A0" in table.index  # the hostile name stayed text
    assert not any(isinstance(v, Formula) for s in book.sheets for v in s.cells.values())
    assert {s.name: s.cells for s in book.sheets if s.name in before} == before  # inputs untouched
    values_rows = book.sheets["Values"].rows()
    assert "gauge=simple" in " ".join(str(r[0]) for r in values_rows[2:8] if r and r[0])  # the settings lines
    charts = {s.name: s.charts for s in book.sheets if s.charts}  # each chart on a page of its own
    assert sorted(charts) == ["Biases chart", "Ranking chart", "Values chart"]
    assert all(len(c) == 1 for c in charts.values())
    bias_chart = charts["Biases chart"][0]
    n = len(core.biases)
    _, chart_header = _table(book.sheets["Biases chart"].rows(), "assessor")
    assert bias_chart.source == ((chart_header, 2), (chart_header + n, 3))  # the biases and the line at 0
    assert bias_chart.x_values == ((chart_header + 1, 1), (chart_header + n, 1))
    # anomalous residual rows are highlighted
    res, res_header = _table(book.sheets["Residuals"].rows(), "assessor")
    flagged = np.flatnonzero((res["stands out"] == "yes").to_numpy())
    assert len(flagged) == int(core.residuals["anomalous"].sum()) > 0
    fmt = book.sheets["Residuals"].formats
    assert all(fmt[(res_header + 1 + i, 1)].get("color") == (255, 199, 206) for i in flagged)
    calibrate_panel(book)  # re-run replaces its own sheets (and charts) only
    assert [s.name for s in book.sheets] == names and len(book.sheets["Values chart"].charts) == 1


@pytest.mark.parametrize("gauge", ["weighted", "simple"])
def test_both_backends_write_the_same_cells(gauge):
    import datetime

    now = datetime.datetime(2024, 5, 1, 12, 0)
    book, evaluations = _demo_book()
    book.sheets["Settings"].cells[(2, 2)] = gauge
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for sheet in book.sheets:
        ws = wb.create_sheet(sheet.name)
        for (r, c), v in sheet.cells.items():
            ws.cell(row=r, column=c, value=v).data_type = "s" if isinstance(v, str) else "n"
    calibrate_panel(book, now=now)
    calibrate_panel(wb, now=now)
    for name in RESULT_SHEETS:
        ours = [list(r) for r in wb[name].iter_rows(values_only=True)]
        theirs = book.sheets[name].rows()
        width = max(len(r) for r in ours)
        theirs = [list(r) + [None] * (width - len(r)) for r in theirs]
        assert ours == theirs, name


def test_never_overwrites_an_input_sheet_named_like_a_result():
    book, _ = _demo_book()
    book.sheets.append(Sheet("Values", [["my", "own"], ["data", 1.0]], book=book))
    with pytest.raises(xlcalib.InputError, match="sheet Values holds data that xlcalib did not write"):
        calibrate_panel(book)
    assert book.sheets["Values"].cells == {(1, 1): "my", (1, 2): "own", (2, 1): "data", (2, 2): 1.0}
    assert "Biases" not in [s.name for s in book.sheets]  # refused before anything was written


def test_every_input_problem_gets_its_own_checks_line():
    from types import SimpleNamespace

    from xlcalib.macros import _tell_excel  # the Excel path's own message writer

    problems = [SimpleNamespace(severity="error", sheet="Evaluations", cell="C7", message="score 75 is outside 1..9"),
                SimpleNamespace(severity="warning", sheet="Evaluations", cell="A9", message="'Dr Chen  Wei' looks like "
                                                                                           "'Dr Chen Wei'")]
    book = Book([Sheet("Evaluations", [["Assessor"]])])
    _tell_excel(book, "2 problems", {}, "Please fix the input", problems)
    rows = [r for r in book.sheets["Checks"].rows() if r and r[0] in ("error", "warning")]
    assert [(r[1], r[2], r[3]) for r in rows] == [(p.sheet, p.cell, p.message) for p in problems]


def test_run_main_shows_its_steps_on_excels_status_bar_and_clears_it():
    """The Run main button's long wait: each step on Excel's status bar while it runs, Excel's own text back
    (status_bar = False) at the end -- also when the run stops at a problem of the input."""
    from xlcalib.macros import run_from_excel

    class App:
        def __init__(self):
            self.shown = []

        @property
        def status_bar(self):
            return self.shown[-1] if self.shown else False

        @status_bar.setter
        def status_bar(self, text):
            self.shown.append(text)

        def alert(self, *args, **kwargs):
            pass

    book, _ = _demo_book()
    book.app = App()
    assert run_from_excel("calibrate_panel", book)
    shown = book.app.shown
    assert any(str(s).startswith("xlcalib: fitting the ") for s in shown)
    assert any(str(s).startswith("xlcalib: writing the result sheets ...") and s.endswith("%") for s in shown)
    assert shown[-1] is False
    broken = Book([Sheet("Evaluations", [["Assessor", "Object", "Score", "SD"], ["A", "x", "lots", 1.0]])])
    broken.app = App()
    assert not run_from_excel("calibrate_panel", broken)
    assert broken.app.shown[-1] is False
