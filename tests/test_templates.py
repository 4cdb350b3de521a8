"""Templates, macro reports, and a real spreadsheet application (LibreOffice) opening what we write."""
from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

import xlcalib
from xlcalib.cli import main
from xlcalib.macros import ground_truth_report, ordinal_report, reliability_report
from xlcalib.templates import KINDS, build

ROOT = Path(__file__).resolve().parent.parent
ERROR_TEXTS = ("#NAME?", "#VALUE!", "#REF!", "#DIV/0!", "#N/A", "#NUM!", "#NULL!", "Err:")


@pytest.mark.parametrize("kind", KINDS)
def test_committed_templates_equal_a_fresh_build(kind, tmp_path):
    fresh = build(kind, tmp_path / f"{kind}.xlsx")[0]
    assert fresh.read_bytes() == (ROOT / "workbook_templates" / f"{kind}.xlsx").read_bytes(), \
        "workbook_templates is stale: run make templates"


def test_calibration_template_structure():
    wb = openpyxl.load_workbook(ROOT / "workbook_templates" / "panel_calibration.xlsx")
    assert wb.sheetnames == ["Instructions", "Settings", "Levels", "Assessors", "Objects", "Evaluations"]
    ev = wb["Evaluations"]
    assert "Evaluations" in ev.tables and [c.value for c in ev[1]] == ["Assessor", "Object", "Score", "Level"]
    kinds = sorted(dv.type for dv in ev.data_validations.dataValidation)
    assert kinds == ["decimal", "list", "list", "list"]
    assert ev["C2"].protection.locked is False  # input cells unlocked
    assert wb["Assessors"]["B2"].protection.locked is True and wb["Assessors"].protection.sheet
    assert wb["Assessors"]["B2"].value.startswith("=IF(")


def test_macro_variant(tmp_path):
    xlsm, py = build("panel_calibration", tmp_path / "panel.xlsm", macro=True)
    assert xlsm.suffix == ".xlsm" and py.name == "panel.py"
    with zipfile.ZipFile(xlsm) as z:
        assert "xl/vbaProject.bin" in z.namelist()  # the xlwings VBA module from the standalone quickstart
    code = py.read_text()
    assert "def main():" in code and "calibrate_panel(xw.Book.caller())" in code
    compile(code, str(py), "exec")
    wb = openpyxl.load_workbook(xlsm, keep_vba=True)
    assert {"Instructions", "Evaluations", "Levels"} <= set(wb.sheetnames)


# --------------------------------------------------------------------------- filling templates like a secretary would
def filled_calibration(path: Path) -> tuple[Path, pd.DataFrame]:
    evaluations, _, _ = xlcalib.demo.demo_panel()
    evaluations.loc[0, "Assessor"] = "=SUM(1)"  # hostile-looking text must stay text everywhere
    evaluations.loc[evaluations["Assessor"] == "Assessor A", "Assessor"] = "=SUM(1)"
    build("panel_calibration", path, assessors=12, objects=60)
    wb = openpyxl.load_workbook(path)
    names = list(dict.fromkeys(evaluations["Assessor"]))
    for r, name in enumerate(names, start=2):
        wb["Assessors"].cell(row=r, column=1, value=name).data_type = "s"
    for r, name in enumerate(dict.fromkeys(evaluations["Object"]), start=2):
        wb["Objects"].cell(row=r, column=1, value=name)
    ev = wb["Evaluations"]
    for r, row in enumerate(evaluations.itertuples(index=False), start=2):
        for c, value in enumerate(row, start=1):
            ev.cell(row=r, column=c, value=value).data_type = "s" if isinstance(value, str) else "n"
    wb.save(path)
    return path, evaluations


def test_calibration_end_to_end_from_template(tmp_path):
    path, evaluations = filled_calibration(tmp_path / "exercise.xlsx")
    assert main(["calibrate", str(path), "-o", str(tmp_path / "result.xlsx")]) == 0
    result = openpyxl.load_workbook(tmp_path / "result.xlsx")
    core = xlcalib.calibrate(evaluations.rename(columns=str.lower))
    rows = list(result["Biases"].iter_rows(values_only=True))
    header = next(i for i, r in enumerate(rows) if r and r[0] == "assessor")
    table = pd.DataFrame(rows[header + 1:], columns=rows[header]).set_index("assessor")
    np.testing.assert_allclose(table.loc[core.biases.index, "bias"].astype(float), core.biases["bias"], atol=1e-12)
    cell = result["Biases"].cell(row=header + 2 + list(core.biases.index).index("=SUM(1)"), column=1)
    assert cell.value == "=SUM(1)" and cell.data_type == "s"


def filled_reliability(path: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    ws = xlcalib.datasets.wordsim353(set="2", raters=16).to_numpy()[:40]
    rep1, rep2 = ws[:, :8], ws[:, 8:]
    build("reliability", path, items=40, raters=8)
    wb = openpyxl.load_workbook(path)
    for sheet, data in (("Ratings", rep1), ("Replication2", rep2)):
        for i, row in enumerate(data, start=2):
            for j, v in enumerate(row, start=2):
                wb[sheet].cell(row=i, column=j, value=float(v))
    wb["Ratings"]["C2"].value = None  # one missing rating
    wb.save(path)
    rep1 = rep1.copy()
    rep1[0, 1] = np.nan
    return path, rep1, rep2


def test_reliability_report(tmp_path):
    path, rep1, _ = filled_reliability(tmp_path / "rel.xlsx")
    book = openpyxl.load_workbook(path)
    frames = reliability_report(book, n_boot=200)
    assert frames["ICC"]["ICC"].tolist() == pytest.approx(xlcalib.icc_table(rep1)["ICC"].tolist())
    # one rating missing: the empirical curve (complete replications only) is left out, and the sheet says why
    assert "empirical" not in frames["kRR curve"].columns
    assert "needs complete replications" in frames["kRR"].set_index("statistic").loc["kRR curve", "value"]
    wb = openpyxl.load_workbook(path)
    wb["Ratings"]["C2"].value = 3.0
    complete = reliability_report(wb, n_boot=50)
    assert "empirical" in complete["kRR curve"].columns
    assert {"ICC", "kRR", "kRR curve"} <= set(book.sheetnames) and book["kRR curve"]._charts


def test_reliability_report_names_bad_cell(tmp_path):
    path, _, _ = filled_reliability(tmp_path / "rel.xlsx")
    wb = openpyxl.load_workbook(path)
    wb["Ratings"]["D5"] = "7,5"
    wb.save(path)
    with pytest.raises(xlcalib.InputError, match=r"sheet Ratings, cell D5 is the text .7,5. with a decimal comma"):
        reliability_report(openpyxl.load_workbook(path))


FISHER = np.array([[3, 2, 0, 0], [0, 4, 1, 1], [0, 3, 9, 9], [1, 0, 2, 24]]).T  # radiologist 1 x 2


def filled_ordinal(path: Path) -> Path:
    build("ordinal_agreement", path, objects=60)
    wb = openpyxl.load_workbook(path)
    pairs = [(f"F{i + 1}", f"F{j + 1}") for i in range(4) for j in range(4) for _ in range(FISHER[i, j])]
    for r, (a, b) in enumerate(pairs, start=2):
        wb["Ratings"].cell(row=r, column=2, value=a)
        wb["Ratings"].cell(row=r, column=3, value=b)
    wb.save(path)
    return path


def test_ordinal_report_reproduces_fisher(tmp_path):
    book = openpyxl.load_workbook(filled_ordinal(tmp_path / "ord.xlsx"))
    frames = ordinal_report(book)
    values = frames["Svensson"].set_index("measure")["value"]
    assert round(values["RP"], 3) == -0.084 and round(values["RC"], 3) == 0.113 and values["n"] == 59
    assert book["ROC"]._charts


def filled_ground_truth(path: Path) -> Path:
    build("ground_truth", path, items=5, annotators=3)
    wb = openpyxl.load_workbook(path)
    ann = [["Melanoma > Nevus", "Nevus", "Melanoma = Nevus > Eczema"], ["Eczema", "Eczema > Hemangioma", None],
           ["Hemangioma", "Hemangioma > Nevus", "Nevus"], ["Nevus", "Nevus", "Nevus"], [None, None, None]]
    preds = [["Nevus", "Melanoma", "Eczema"], ["Eczema", "Nevus", "Melanoma"], ["Nevus", "Hemangioma", "Eczema"],
             ["Nevus", "Eczema", "Melanoma"], ["Nevus", "Eczema", "Melanoma"]]
    for r, (a, p) in enumerate(zip(ann, preds), start=2):
        for c, v in enumerate(a, start=2):
            wb["Annotations"].cell(row=r, column=c, value=v)
        for c, v in enumerate(p, start=2):
            wb["Predictions"].cell(row=r, column=c, value=v)
    wb.save(path)
    return path


def test_ground_truth_report(tmp_path):
    book = openpyxl.load_workbook(filled_ground_truth(tmp_path / "gt.xlsx"))
    frames = ground_truth_report(book)
    cert = frames["Certainty"]
    assert len(cert) == 4 and cert.loc[3, "certainty"] == 1.0  # unanimous single label
    ua = frames["UA metrics"].set_index("statistic")["value"]
    assert ua["UA top-3 accuracy"] <= ua["top-3 accuracy against the IRN labels"]


def test_report_cli_and_rerun_never_touches_inputs(tmp_path):
    path = filled_ordinal(tmp_path / "ord.xlsx")
    before = path.read_bytes()
    assert main(["report", "ordinal", str(path)]) == 0
    assert main(["report", "ordinal", str(path)]) == 0
    assert path.read_bytes() == before
    out = openpyxl.load_workbook(tmp_path / "ord_report.xlsx")
    assert out.sheetnames.count("Svensson") == 1 and out["Svensson"]["A1"].value == "xlcalib ordinal agreement"


# --------------------------------------------------------------------------- LibreOffice
def _soffice():
    return shutil.which("soffice") or shutil.which("libreoffice")


@pytest.mark.skipif(_soffice() is None, reason="LibreOffice (soffice) not installed; .ci/run installs it")
def test_libreoffice_opens_and_recalculates_everything(tmp_path):
    """Every template and every result workbook opens in LibreOffice Calc, recalculates, and shows no error."""
    files = [ROOT / "workbook_templates" / f"{k}.xlsx" for k in KINDS]
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
    profile = f"file://{tmp_path}/lo_profile"
    proc = subprocess.run([_soffice(), f"-env:UserInstallation={profile}", "--headless", "--calc", "--convert-to", "xlsx",
                           "--outdir", str(out), *map(str, files)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for f in files:
        converted = out / f.name
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
    blank = openpyxl.load_workbook(out / "panel_calibration.xlsx", data_only=True)
    assert blank["Instructions"]["B10"].value == 0 and blank["Assessors"]["B2"].value == 0
