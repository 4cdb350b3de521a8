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

from .test_templates import ROOT, filled_calibration, filled_ground_truth, filled_ordinal, filled_reliability

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
    assert computed["ground_truth"]["B10"].value == 11  # non-blank annotations
    blank = openpyxl.load_workbook(out / "panel_calibration.xlsx", data_only=True)
    assert blank["Instructions"]["B10"].value == 0 and blank["Assessors"]["B2"].value == 0
