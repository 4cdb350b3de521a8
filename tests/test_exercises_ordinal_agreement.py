"""The ordinal agreement exercise on a filled template (Fisher's radiologists), and the report job on a file:
results in a copy, the input never touched."""
from __future__ import annotations

import openpyxl

from xlcalib.cli import main
from xlcalib.exercises import ordinal_report

from .test_templates import filled_ordinal


def test_ordinal_report_reproduces_fisher(tmp_path):
    book = openpyxl.load_workbook(filled_ordinal(tmp_path / "ord.xlsx"))
    frames = ordinal_report(book)
    values = frames["Svensson"].set_index("measure")["value"]
    assert round(values["RP"], 3) == -0.084 and round(values["RC"], 3) == 0.113 and values["n"] == 59
    assert book["ROC"]._charts


def test_report_cli_and_rerun_never_touches_inputs(tmp_path):
    path = filled_ordinal(tmp_path / "ord.xlsx")
    before = path.read_bytes()
    assert main(["report", "ordinal", str(path)]) == 0
    assert main(["report", "ordinal", str(path)]) == 0
    assert path.read_bytes() == before
    out = openpyxl.load_workbook(tmp_path / "ord_report.xlsx")
    assert out.sheetnames.count("Svensson") == 1 and out["Svensson"]["A1"].value == "xlcalib ordinal agreement"
    assert out["Instructions"]["B9"].value.startswith("=SUMPRODUCT(")  # the copy keeps the template's formulas
    assert out["Ratings"].data_validations.dataValidation  # and its validation
    assert main(["report", "ordinal", str(path), "-o", str(tmp_path / "r.csv")]) == 2
