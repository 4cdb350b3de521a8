"""A real spreadsheet application: every template and every result workbook opens in LibreOffice Calc
(headless), is recalculated, shows no error cell, and the template formulas compute the expected values.

Skipped, with the reason shown, when LibreOffice is not installed (.ci/run installs it).  One soffice
start converts all files (each start costs seconds); a private profile avoids lock clashes.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import openpyxl
import pytest

from xlcalib.cli import main
from xlcalib.templates import KINDS, build

from .test_templates import (
    ROOT,
    filled_calibration,
    filled_ground_truth,
    filled_ordinal,
    filled_reliability,
)

ERROR_TEXTS = ("#NAME?", "#VALUE!", "#REF!", "#DIV/0!", "#N/A", "#NUM!", "#NULL!", "Err:")


def _soffice():
    return shutil.which("soffice") or shutil.which("libreoffice")


@pytest.mark.skipif(_soffice() is None, reason="LibreOffice (soffice) not installed; .ci/run installs it")
def test_libreoffice_opens_and_recalculates_everything(tmp_path):
    """Every template and every result workbook opens in LibreOffice Calc, recalculates, and shows no error."""
    files = [ROOT / "workbook_templates" / f"{k}.xlsx" for k in KINDS]
    files += [build("panel_calibration", tmp_path / "macro_panel.xlsm", macro=True)[0],
              build("panel_calibration", tmp_path / "sd_panel.xlsx", uncertainty="sd", assessors=3, objects=4)[0]]
    filled, evaluations = filled_calibration(tmp_path / "filled_calibration.xlsx")
    files.append(filled)
    assert main(["calibrate", str(filled), "-o", str(tmp_path / "calibration_result.xlsx")]) == 0
    files.append(tmp_path / "calibration_result.xlsx")
    for kind, maker in (("reliability", filled_reliability), ("ordinal", filled_ordinal), ("ground_truth", filled_ground_truth)):
        src = maker(tmp_path / f"filled_{kind}.xlsx")
        src = src[0] if isinstance(src, tuple) else src
        assert main(["report", kind, str(src), "-o", str(tmp_path / f"{kind}_result.xlsx")]) == 0
        files.append(tmp_path / f"{kind}_result.xlsx")
    out = tmp_path / "lo"
    profile = f"file:///tmp/lo_profile_{os.getpid()}"
    proc = subprocess.run([_soffice(), f"-env:UserInstallation={profile}", "--headless", "--calc", "--convert-to", "xlsx",
                           "--outdir", str(out), *map(str, files)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for f in files:
        converted = out / (f.stem + ".xlsx")
        assert converted.exists(), f"LibreOffice could not open {f.name}: {proc.stdout} {proc.stderr}"
        wb = openpyxl.load_workbook(converted, data_only=True)
        for ws in wb.worksheets:
            for row in ws.iter_rows(values_only=True):
                for v in row:
                    assert not (isinstance(v, str) and v.startswith(ERROR_TEXTS) and v != "=SUM(1)"), (f.name, ws.title, v)
    # template formulas compute what they should in a real spreadsheet application
    filled_lo = openpyxl.load_workbook(out / "filled_calibration.xlsx", data_only=True)
    counts = {r[0]: r[1] for r in filled_lo["Assessors"].iter_rows(min_row=2, values_only=True) if r[0]}
    expected = evaluations["Assessor"].value_counts()
    assert counts == {name: int(expected[name]) for name in counts}
    assert filled_lo["Instructions"]["B10"].value == len(evaluations)
    assert filled_lo["Instructions"]["B12"].value == pytest.approx(len(evaluations) / 240)
    result_lo = openpyxl.load_workbook(out / "calibration_result.xlsx", data_only=True)
    assert any(r[0] == "=SUM(1)" for r in result_lo["Biases"].iter_rows(values_only=True))  # stayed text
    # report copies keep the template's progress formulas, and they count what was entered
    computed = {kind: openpyxl.load_workbook(out / f"{kind}_result.xlsx", data_only=True)["Instructions"]
                for kind in ("reliability", "ordinal", "ground_truth")}
    assert computed["reliability"]["B9"].value == 40 * 8 - 1  # one rating left blank
    assert computed["reliability"]["B10"].value == 40  # items with at least two ratings
    assert computed["ordinal"]["B9"].value == 59  # Fisher's 59 pairs
    assert computed["ordinal"]["B10"].value == 4  # the Categories table, counted through the drop-downs' name
    assert computed["ground_truth"]["B10"].value == 11  # non-blank annotations
    blank = openpyxl.load_workbook(out / "panel_calibration.xlsx", data_only=True)
    assert blank["Instructions"]["B10"].value == 0 and blank["Assessors"]["B2"].value == 0


@pytest.mark.skipif(_soffice() is None, reason="LibreOffice (soffice) not installed; .ci/run installs it")
def test_libreoffice_opens_a_template_filled_from_an_export(tmp_path):
    """A template filled by an import (its tables grown past their prepared rows) and an export's result workbook
    open in LibreOffice Calc; the template's counts follow the imported rows."""
    import numpy as np

    from .imports_writers import easychair_csv
    from .test_imports_roundtrip import connected_panel

    long = connected_panel()
    export = tmp_path / "review.csv"
    export.write_bytes(easychair_csv(long, np.random.default_rng(2)))
    panel = build("panel_calibration", tmp_path / "panel.xlsx", assessors=3, objects=2)[0]
    assert main(["import", str(export), "--into", str(panel), "-o", str(tmp_path / "filled.xlsx")]) == 0
    assert main(["calibrate", str(export), "-o", str(tmp_path / "export_result.xlsx")]) == 0
    files = [tmp_path / "filled.xlsx", tmp_path / "export_result.xlsx"]
    out = tmp_path / "lo"
    profile = (tmp_path / "lo_profile").as_uri()  # a private profile: no lock clash with another soffice
    proc = subprocess.run([_soffice(), f"-env:UserInstallation={profile}", "--headless", "--calc", "--convert-to", "xlsx",
                           "--outdir", str(out), *map(str, files)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for f in files:
        wb = openpyxl.load_workbook(out / f.name, data_only=True)
        for ws in wb.worksheets:
            for row in ws.iter_rows(values_only=True):
                assert not any(isinstance(v, str) and v.startswith(ERROR_TEXTS) for v in row), (f.name, ws.title, row)
    filled = openpyxl.load_workbook(out / "filled.xlsx", data_only=True)
    counts = {r[0]: r[1] for r in filled["Assessors"].iter_rows(min_row=2, values_only=True) if r[0]}
    assert counts == long["assessor"].value_counts().to_dict()
    objects = {r[0]: r[1] for r in filled["Objects"].iter_rows(min_row=2, values_only=True) if r[0]}
    assert objects == long["object"].value_counts().to_dict()
    assert filled["Instructions"]["B10"].value == len(long)


#: The smallest median word height (pdftotext -bbox, in points) a table may print at.  A word's box is its
#: font's ascent plus descent: 1.3 times the font size for Calibri and its metric twin Carlito, so 9 pt text
#: has boxes 11.7 pt high.  Without either font LibreOffice lays the sheet out in a wider one, and only the
#: box itself can be held to 9 pt.
_NINE_POINT = 9 * 1.3 if subprocess.run(["fc-list", ":family=Carlito"], capture_output=True, text=True).stdout.strip() \
    or subprocess.run(["fc-list", ":family=Calibri"], capture_output=True, text=True).stdout.strip() else 9.0


def _median_word_heights(pdf) -> dict[str, list[float]]:
    """Median word-box height (points) of each printed page, grouped by sheet (the page footer names it)."""
    import re
    import statistics

    html = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    out: dict[str, list[float]] = {}
    for page in html.split("<page")[1:]:
        words = [(float(a), float(b), w) for a, b, w in
                 re.findall(r'<word xMin="[\d.]+" yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">([^<]*)</word>', page)]
        if not words:
            continue
        bottom = max(a for a, _, _ in words)  # the footer is the page's last line: "<sheet> - page i of n"
        footer = " ".join(w for a, _, w in words if a > bottom - 1)
        found = re.match(r"(.+?) - page \d+ of \d+$", footer)
        if found:
            out.setdefault(found.group(1), []).append(statistics.median(b - a for a, b, _ in words))
    return out


def _pdf_pages(pdf) -> dict[str, list[str]]:
    """Text of each printed page, grouped by sheet (every result sheet's footer reads '<sheet> - page i of n')."""
    import re

    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages: dict[str, list[str]] = {}
    for page in text.split("\f"):
        found = re.search(r"(\S[^\n]*?) - page \d+ of \d+", page)
        if found:
            pages.setdefault(found.group(1).strip(), []).append(page)
    return pages


@pytest.mark.skipif(_soffice() is None or shutil.which("pdftotext") is None,
                    reason="LibreOffice and poppler-utils (pdftotext) not installed; .ci/run installs them")
def test_result_workbooks_print_as_a_reader_sees_them(tmp_path):
    """Every result workbook printed to PDF by LibreOffice: the Ranking fits its pages with the header repeated,
    names and sentences are not cut, numbers show their formats, and the charts carry the intended series."""
    import math

    filled, evaluations = filled_calibration(tmp_path / "filled_calibration.xlsx")
    result_path = tmp_path / "calibration_result.xlsx"
    assert main(["calibrate", str(filled), "-o", str(result_path), "--feedback"]) == 0
    files = [result_path, ROOT / "workbook_templates" / "panel_calibration.xlsx"]
    for kind, maker in (("reliability", filled_reliability), ("ordinal", filled_ordinal), ("ground_truth", filled_ground_truth)):
        src = maker(tmp_path / f"filled_{kind}.xlsx")
        src = src[0] if isinstance(src, tuple) else src
        assert main(["report", kind, str(src), "-o", str(tmp_path / f"{kind}_result.xlsx")]) == 0
        files.append(tmp_path / f"{kind}_result.xlsx")
    out = tmp_path / "pdf"
    profile = f"file:///tmp/lo_profile_pdf_{os.getpid()}"
    proc = subprocess.run([_soffice(), f"-env:UserInstallation={profile}", "--headless", "--convert-to", "pdf",
                           "--outdir", str(out), *map(str, files)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for f in files:  # no number is too wide for its column anywhere ('###' is what a reader would see)
        printed = subprocess.run(["pdftotext", str(out / (f.stem + ".pdf")), "-"], capture_output=True, text=True,
                                 check=True).stdout
        assert "###" not in printed, f.name
    result = openpyxl.load_workbook(result_path)
    pages = _pdf_pages(out / "calibration_result.pdf")
    assert list(pages)[:6] == ["Ranking", "Ranking chart", "Summary", "Biases", "Biases chart", "Checks"]
    assert len(pages["Summary"]) == 1  # a one-page document for the minutes

    # every table prints at 9 pt or larger; charts print on pages of their own and cut no text
    heights = _median_word_heights(out / "calibration_result.pdf")
    for sheet in ("Ranking", "Summary", "Biases", "Checks", "Values", "Diagnostics", "Fit"):
        assert heights[sheet][0] >= _NINE_POINT, (sheet, heights[sheet])
    for kind, first in (("reliability", "ICC"), ("ordinal", "Svensson"), ("ground_truth", "Certainty")):
        got = _median_word_heights(out / f"{kind}_result.pdf")
        assert got[first][0] >= _NINE_POINT, (kind, first, got[first])
    for name, sheet_pages in pages.items():
        text = " ".join(" ".join(sheet_pages).split())
        assert "(not printed)" not in text, name  # a chart page prints the chart, not its numbers
        if not name.endswith("chart"):
            lines = list(result[name].iter_rows(max_row=12, values_only=True))
            lines = lines[:next(i for i, r in enumerate(lines) if all(c is None for c in r))]  # above the table
            settings_text = " ".join(str(r[0]) for r in lines[2:])
            assert " ".join(settings_text.split()[:12]) in text, name  # the lines above the table print whole

    # Ranking: every object listed, the header on every page, pages fit the rows (no runaway page count)
    ranking_rows = list(result["Ranking"].iter_rows(values_only=True))
    header = next(i for i, r in enumerate(ranking_rows) if r[0] == "rank")
    names = list(ranking_rows[header])
    body = ranking_rows[header + 1:]
    body = body[:next((i for i, r in enumerate(body) if all(c is None for c in r)), len(body))]
    n = len(body)
    assert n == evaluations["Object"].nunique()
    assert 1 <= len(pages["Ranking"]) <= math.ceil((n + header + 8) / 30)
    assert all({"raw", "rank", "mean", "reads"} <= set(page.split()) for page in pages["Ranking"])  # header repeated
    ranking_text = "\n".join(pages["Ranking"]).split()
    assert {r[1] for r in body} <= set(ranking_text)  # no object name cut
    shown = {f"{r[names.index('calibrated value')]:.2f}" for r in body}
    assert shown <= set(ranking_text)  # the 2-decimal format is what prints
    assert not any(len(t) > 6 and t.replace(".", "").isdigit() and "." in t and len(t.split(".")[1]) > 3
                   for t in ranking_text)  # no 10-digit General numbers

    # Biases and Summary: the plain sentences print whole (not cut by the next column)
    biases = list(result["Biases"].iter_rows(values_only=True))
    bh = next(i for i, r in enumerate(biases) if r[0] == "assessor")
    sentences = [r[list(biases[bh]).index("in plain words")] for r in biases[bh + 1:] if r[0] and r[2] is not None]
    biases_text = " ".join(" ".join(pages["Biases"]).split())
    assert all(s in biases_text for s in sentences)
    summary_text = " ".join(" ".join(pages["Summary"]).split())
    for topic, _ in (r[:2] for r in result["Summary"].iter_rows(min_row=6, values_only=True) if r[0]):
        assert topic in summary_text
    assert len(pages["Feedback"]) >= evaluations["Assessor"].nunique()  # one page (or more) per assessor
    # the letter's sentences and the Fit sheet's readings print whole (wrapped, not cut)
    feedback = list(result["Feedback"].iter_rows(values_only=True))
    fh = next(i for i, r in enumerate(feedback) if r[0] == "assessor")
    letters = [r[list(feedback[fh]).index("about you")] for r in feedback[fh + 1:]]
    feedback_text = " ".join(" ".join(pages["Feedback"]).split())
    assert all(" ".join(s.split()) in feedback_text for s in letters if s and len(s) < 60)
    assert all(s.split()[0] in feedback_text for s in letters if s)
    fit = list(result["Fit"].iter_rows(values_only=True))
    fit_header = next(i for i, r in enumerate(fit) if r[0] == "assessor")
    readings = {r[list(fit[fit_header]).index("reading")] for r in fit[fit_header + 1:] if r[0]}
    fit_text = " ".join(" ".join(pages["Fit"]).split())
    assert readings and all(s.split(":")[0] in fit_text for s in readings if s)
    assert "Unexpected" in pages

    # charts carry the intended series
    def series(ws):
        return [[s.tx.v if s.tx is not None and s.tx.v else (s.tx.strRef.f if s.tx is not None else "") for s in c.series]
                for c in ws._charts]

    assert "y = x (no change)" in series(result["Values chart"])[0]
    assert not result["Ranking"]._charts and not result["Values"]._charts  # charts never shrink a table
    assert series(result["Ranking chart"])[0][0] == "calibrated value"  # no funding line: one series, no line
    roc = openpyxl.load_workbook(tmp_path / "ordinal_result.xlsx")["ROC chart"]._charts[0]
    assert "no systematic difference" in [s.tx.v for s in roc.series]
    assert (roc.x_axis.scaling.min, roc.x_axis.scaling.max, roc.y_axis.scaling.max) == (0, 1, 1)
    assert roc.x_axis.title is not None
    curve = openpyxl.load_workbook(tmp_path / "reliability_result.xlsx")["kRR chart"]._charts[0]
    data_series = [s for s in curve.series if s.tx.v not in ("0.8 (good)", "0.9 (excellent)")]
    assert len(data_series) >= 3 and all(not s.graphicalProperties.line.noFill for s in data_series)
    colours = {str(s.graphicalProperties.line.solidFill.srgbClr) for s in data_series}
    assert len(colours) == len(data_series)  # distinguishable
    assert (curve.y_axis.scaling.min, curve.y_axis.scaling.max) == (0, 1)
    rel_pages = _pdf_pages(out / "reliability_result.pdf")
    assert "(quote this)" in " ".join(rel_pages["kRR"][0].split())
    # the Agreement sheets print the coefficient to quote and its whole reason (wrapped, not cut)
    for kind in ("reliability", "ordinal"):
        rows = list(openpyxl.load_workbook(tmp_path / f"{kind}_result.xlsx")["Agreement"].iter_rows(values_only=True))
        header = next(i for i, r in enumerate(rows) if r[0] == "coefficient")
        headline, reason = rows[header + 1][0], rows[header + 1][-1]
        printed = " ".join(" ".join(_pdf_pages(out / f"{kind}_result.pdf")["Agreement"]).split())
        words = set(printed.split())  # a wrapped cell's lines interleave with its neighbours' in the text
        assert headline.endswith("(quote this)") and set(headline.split()) <= words, kind
        assert set(reason.split()) <= words, kind

    # the template prints its instructions whole (row heights hold the wrapped text)
    template_text = subprocess.run(["pdftotext", str(out / "panel_calibration.pdf"), "-"], capture_output=True,
                                   text=True, check=True).stdout
    flat = " ".join(template_text.split())
    for line in (c.value for c in openpyxl.load_workbook(files[1])["Instructions"]["A"][2:9] if c.value):
        assert line[-40:] in flat, line[-40:]
