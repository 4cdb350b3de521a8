"""Templates (deterministic builds, structure, macro variant) and filling them as a secretary would (the
filled_* helpers, shared with the exercises' tests)."""
from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

import xlcalib
from xlcalib.cli import main
from xlcalib.templates import KINDS, build

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("kind", KINDS)
def test_committed_templates_equal_a_fresh_build(kind, tmp_path):
    fresh = build(kind, tmp_path / f"{kind}.xlsx")[0]
    assert fresh.read_bytes() == (ROOT / "workbook_templates" / f"{kind}.xlsx").read_bytes(), \
        "workbook_templates is stale: run make templates"


def test_calibration_template_structure():
    wb = openpyxl.load_workbook(ROOT / "workbook_templates" / "panel_calibration.xlsx")
    assert wb.sheetnames == ["Instructions", "Settings", "Levels", "Assessors", "Objects", "Evaluations", "Import"]
    ev = wb["Evaluations"]
    assert "Evaluations" in ev.tables and [c.value for c in ev[1]] == ["Assessor", "Object", "Score", "Level"]
    kinds = sorted(dv.type for dv in ev.data_validations.dataValidation)
    assert kinds == ["decimal", "list", "list", "list"]
    assert ev["C2"].protection.locked is False  # input cells unlocked
    assert wb["Assessors"]["B2"].value.startswith("=IF(")
    # the lists are Excel Tables that grow (unprotected: Excel does not grow tables on protected sheets), their
    # count column is a calculated column, and the drop-downs refer to names that follow the table columns
    for sheet, prefix in (("Assessors", "Assessor"), ("Objects", "Object")):
        table = wb[sheet].tables[f"{prefix}List"]
        assert table.ref == f"A1:B{wb[sheet].max_row}" and not wb[sheet].protection.sheet
        assert [c.name for c in table.tableColumns] == [prefix, "Evaluations entered"]
        assert "[#This Row]" in table.tableColumns[1].calculatedColumnFormula.attr_text
        assert wb.defined_names[f"{prefix}Names"].attr_text == f"{prefix}List[{prefix}]"
    lists = sorted(dv.formula1 for dv in ev.data_validations.dataValidation if dv.type == "list")
    assert {"AssessorNames", "ObjectNames"} <= set(lists)
    # Import: the export to read, then the roles of its columns saved per review system (blank until an import)
    imp = wb["Import"]
    assert [imp.cell(row=r, column=1).value for r in range(2, 10)] == [
        "Export file", "From", "Round", "Scale", "Identity map", "Grid columns", "Evaluations imported", "Last import"]
    assert imp["B2"].protection.locked is False and not imp.protection.sheet
    assert [c.value for c in imp[11]] == ["Role", "hotcrp", "cmt", "easychair", "openreview", "grid"]
    assert imp["A12"].value == "menu" and imp["C12"].value.startswith("Chair Console")
    # Settings: funding line, interval level, model, lottery rows next to the scale, threshold and gauge
    settings = {r[0]: r[1] for r in wb["Settings"].iter_rows(min_row=2, values_only=True)}
    assert settings["Interval level"] == 0.95 and settings["Model"] == "random-assessors"
    assert "Funding line (top k)" in settings and "Funding line (score)" in settings and settings["Lottery"] == "no"
    # instructions: every wrapped line has a row height that holds it
    ins = wb["Instructions"]
    for row in range(3, 10):
        text = ins.cell(row=row, column=1).value or ""
        assert ins.row_dimensions[row].height >= 15 * -(-len(text) // 120), row


def test_macro_variant(tmp_path):
    xlsm, py = build("panel_calibration", tmp_path / "panel.xlsm", macro=True)
    assert xlsm.suffix == ".xlsm" and py.name == "panel.py"
    with zipfile.ZipFile(xlsm) as z:
        assert "xl/vbaProject.bin" in z.namelist()  # the xlwings VBA module from the standalone quickstart
    code = py.read_text()
    compile(code, str(py), "exec")
    # Run main calibrates, except on the Import sheet, where it imports the export named there
    from types import SimpleNamespace

    calls = []
    namespace: dict = {"__name__": "panel"}
    exec(code, namespace)
    for active, entry in (("Evaluations", "calibrate_panel"), ("Import", "import_export")):
        book = SimpleNamespace(sheets=SimpleNamespace(active=SimpleNamespace(name=active)))
        namespace["xw"] = SimpleNamespace(Book=SimpleNamespace(caller=lambda book=book: book))
        namespace["run_from_excel"] = lambda name, b: calls.append((name, b.sheets.active.name))
        namespace["main"]()
    namespace["import_export"]()
    assert calls == [("calibrate_panel", "Evaluations"), ("import_export", "Import"), ("import_export", "Import")]
    reliability = build("reliability", tmp_path / "rel.xlsm", macro=True)[1].read_text()
    assert 'run_from_excel("reliability_report", xw.Book.caller())' in reliability
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
    cell = result["Biases"].cell(row=header + 2 + list(table.index).index("=SUM(1)"), column=1)
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


def test_sd_variant_and_sizes(tmp_path):
    path = build("panel_calibration", tmp_path / "sd.xlsx", assessors=3, objects=5, scale=(0, 100), reads=2,
                 uncertainty="sd")[0]
    wb = openpyxl.load_workbook(path)
    ev = wb["Evaluations"]
    assert [c.value for c in ev[1]] == ["Assessor", "Object", "Score", "SD"] and ev.tables["Evaluations"].ref == "A1:D11"
    sd = next(dv for dv in ev.data_validations.dataValidation if "D2:D11" in str(dv.sqref))
    # an SD in score units: above 0 and at most the scale's width (consistent with --scale)
    assert (sd.type, sd.operator, sd.formula1, sd.formula2) == ("decimal", "between", "0.000001",
                                                                  "Settings!$B$3-Settings!$B$2")
    assert wb["Settings"]["B2"].value == 0 and wb["Settings"]["B3"].value == 100
    assert wb["Assessors"].max_row == 4 and wb["Objects"]["A6"].value == "Object 5"


def test_template_cli_options_and_errors(tmp_path, capsys):
    out = tmp_path / "t.xlsx"
    assert main(["template", "panel_calibration", "-o", str(out), "--assessors", "4", "--objects", "6",
                 "--scale", "1", "7", "--uncertainty", "sd"]) == 0
    wb = openpyxl.load_workbook(out)
    assert wb["Evaluations"]["D1"].value == "SD" and wb["Settings"]["B3"].value == 7
    assert main(["template", "reliability", "-o", str(tmp_path / "r.xlsx"), "--raters", "3", "--items", "9"]) == 0
    assert openpyxl.load_workbook(tmp_path / "r.xlsx")["Ratings"].max_column == 4
    assert main(["template", "panel_calibration", "-o", str(out), "--assessors", "0"]) == 2
    assert "--assessors must be at least 1" in capsys.readouterr().err
    assert main(["template", "panel_calibration", "-o", str(out), "--scale", "5", "1"]) == 2
    assert "needs MIN < MAX" in capsys.readouterr().err


def test_macro_book_keeps_the_vba_project_consistent(tmp_path):
    """The quickstart's VBA project has document modules Sheet1/Sheet2: both sheets survive (renamed / last)."""
    with pytest.raises(xlcalib.InputError, match="'My exercise' cannot be the name of a macro workbook.*e.g. My_exercise"):
        build("ordinal_agreement", tmp_path / "My exercise.xlsm", macro=True)
    assert not list(tmp_path.iterdir())
    xlsm, py = build("ordinal_agreement", tmp_path / "My_exercise.xlsm", macro=True)
    wb = openpyxl.load_workbook(xlsm, keep_vba=True)
    assert wb.sheetnames[0] == "Instructions" and wb.sheetnames[-1] == "_xlwings.conf"
    assert wb["Instructions"].sheet_properties.codeName == "Sheet1"
    assert 'xw.Book("My_exercise.xlsm").set_mock_caller()' in py.read_text()
    assert 'run_from_excel("ordinal_report", xw.Book.caller())' in py.read_text()
    again = build("ordinal_agreement", tmp_path / "again" / "My_exercise.xlsm", macro=True)[0]
    assert again.read_bytes() == xlsm.read_bytes()  # deterministic too


def test_merged_cells_are_explained(tmp_path, capsys):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Evaluations"
    for row in [["Assessor", "Object", "Score", "SD"], ["A", "x", 5, 1], ["A", "y", 6, 1], ["B", "x", 4, 1]]:
        ws.append(row)
    ws.merge_cells("A2:A3")
    wb.save(tmp_path / "m.xlsx")
    assert main(["calibrate", str(tmp_path / "m.xlsx")]) == 2
    err = capsys.readouterr().err
    assert "row 3, column Assessor (A3) is blank" in err and "inside merged cells A2:A3" in err
